//! Which of the host's environment variables a command sees (spec 4.2).

use crate::secrets::{host_var, is_secret_name, is_secret_value, is_withheld};
use std::str::FromStr;

/// Variables every policy but `None` keeps: what shells and toolchains need to work.
const CORE: &[&str] = &[
    "PATH",
    "HOME",
    "USER",
    "LOGNAME",
    "SHELL",
    "LANG",
    "LANGUAGE",
    "TERM",
    "TMPDIR",
    "TZ",
    // Toolchains find their installations through these.
    "CARGO_HOME",
    "RUSTUP_HOME",
    "GOPATH",
    "GOROOT",
    "GOBIN",
    "NVM_DIR",
    "NODE_PATH",
    "PYENV_ROOT",
    "VIRTUAL_ENV",
    "CONDA_PREFIX",
    "JAVA_HOME",
    "GRADLE_HOME",
    "MAVEN_HOME",
    "DOTNET_ROOT",
    "RBENV_ROOT",
    "GEM_HOME",
    "GEM_PATH",
    "DENO_DIR",
    "BUN_INSTALL",
    "PNPM_HOME",
];

/// How a command's environment is built from the host's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum EnvPolicy {
    /// Everything except credentials: variables named like one (`*KEY`, `*SECRET*`,
    /// `*TOKEN`, `*PASSWORD`, `*PASS`, `*_PAT`, `*CREDENTIAL*`, `*JWT`, `*DSN`, `*WEBHOOK*`,
    /// `*COOKIE*`, `*_SESSION`, auth headers, `AGENT_HOST_QUEUE`, ...; see
    /// [`crate::secrets::names`]), values shaped like one (a URL with a password, or a
    /// password, token, key or signature in its query; a provider key), and every
    /// endpoint's key variable.
    #[default]
    InheritAll,
    /// Only the core variables (PATH, HOME, USER, SHELL, LANG, LC_*, TERM, TMPDIR and
    /// toolchain locations).
    CoreOnly,
    /// A clean environment; only the variables a call sets itself.
    None,
}

impl FromStr for EnvPolicy {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "inherit-all" | "all" => Ok(Self::InheritAll),
            "core" | "core-only" => Ok(Self::CoreOnly),
            "none" => Ok(Self::None),
            other => Err(format!(
                "unknown environment policy {other:?}: use inherit-all, core or none"
            )),
        }
    }
}

fn is_core_var(name: &str) -> bool {
    CORE.contains(&name) || name.starts_with("LC_")
}

impl EnvPolicy {
    /// Whether a host variable is passed on (credentials never are, whatever the policy:
    /// a command gets one only when the user allows it by name).
    pub fn keeps(self, name: &str, value: &str) -> bool {
        let credential = is_secret_name(name) || is_secret_value(value) || is_withheld(name);
        !credential
            && match self {
                Self::InheritAll => true,
                Self::CoreOnly => is_core_var(name),
                Self::None => false,
            }
    }

    /// The host variables a command gets under this policy, plus the credentials the user
    /// allowed by name (`allow`; looked up among those withheld at start-up too).
    pub fn filter(
        self,
        vars: impl Iterator<Item = (String, String)>,
        allow: &[String],
    ) -> Vec<(String, String)> {
        let mut kept: Vec<(String, String)> = vars.filter(|(name, value)| self.keeps(name, value)).collect();
        for name in allow {
            if let Some(value) = host_var(name)
                && !kept.iter().any(|(kept_name, _)| kept_name == name)
            {
                kept.push((name.clone(), value));
            }
        }
        kept
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_are_recognised_case_insensitively() {
        for name in [
            "ANTHROPIC_API_KEY",
            "github_token",
            "Db_Password",
            "AWS_SECRET",
            "GCP_CREDENTIALS",
            // A bare `KEY` is a credential's name too.
            "KEY",
        ] {
            assert!(is_secret_name(name), "{name}");
        }
        for name in ["PATH", "TOKENIZERS_PARALLELISM", "SECRETARY"] {
            assert!(!is_secret_name(name), "{name}");
        }
    }

    #[test]
    fn each_policy_keeps_what_it_says() {
        let vars = || {
            [
                ("PATH", "/bin"),
                ("LC_ALL", "C"),
                ("CARGO_HOME", "/c"),
                ("MY_TOKEN", "t"),
                ("EDITOR", "vi"),
            ]
            .into_iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
        };
        let names = |policy: EnvPolicy| -> Vec<String> {
            policy.filter(vars(), &[]).into_iter().map(|(k, _)| k).collect()
        };
        assert_eq!(
            names(EnvPolicy::InheritAll),
            ["PATH", "LC_ALL", "CARGO_HOME", "EDITOR"]
        );
        assert_eq!(names(EnvPolicy::CoreOnly), ["PATH", "LC_ALL", "CARGO_HOME"]);
        assert!(names(EnvPolicy::None).is_empty());
        assert_eq!("core".parse::<EnvPolicy>(), Ok(EnvPolicy::CoreOnly));
        assert!(
            "some"
                .parse::<EnvPolicy>()
                .unwrap_err()
                .contains("inherit-all, core or none")
        );
    }
}

#[cfg(test)]
mod credential_tests {
    use super::*;
    use crate::secrets::withhold;

    /// Credentials the default policy once passed on to commands.
    #[test]
    fn credentials_by_name_or_value_never_reach_a_command_unless_allowed() {
        let vars = || {
            [
                ("AWS_SECRET_ACCESS_KEY", "wJalrXUtnFEMI/K7MDENG"),
                ("PGPASSWORD", "hunter2"),
                ("GITHUB_PAT", "github_pat_1234"),
                ("API_KEY", "abc"),
                ("DATABASE_URL", "postgres://app:hunter2@db/app"),
                ("EDITOR", "vi"),
                ("MY_LLM_VAR19", "plain"),
            ]
            .into_iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
        };
        let names = |kept: Vec<(String, String)>| kept.into_iter().map(|(k, _)| k).collect::<Vec<_>>();
        assert_eq!(
            names(EnvPolicy::InheritAll.filter(vars(), &[])),
            ["EDITOR", "MY_LLM_VAR19"]
        );
        for policy in [EnvPolicy::InheritAll, EnvPolicy::CoreOnly] {
            let kept = names(policy.filter(vars(), &[]));
            assert!(
                kept.iter().all(|k| k == "EDITOR" || k == "MY_LLM_VAR19"),
                "{policy:?}: {kept:?}"
            );
        }
        // An endpoint's key variable whose name says nothing.
        withhold("MY_LLM_VAR19");
        assert_eq!(names(EnvPolicy::InheritAll.filter(vars(), &[])), ["EDITOR"]);
    }

    /// Credentials the name rules missed (a CI job's token, a DSN, a webhook, an auth
    /// header, agent-host's own queue address with its password), and names around them
    /// that are no credential and that ordinary commands need.
    #[test]
    fn tokens_dsns_webhooks_auth_headers_and_queue_passwords_are_withheld() {
        let vars = || {
            [
                ("CI_JOB_JWT", "eyJhbGciOiJSUzI1NiJ9.e30.sig"),
                ("CI_JOB_JWT_V2", "eyJhbGciOiJSUzI1NiJ9.e30.sig2"),
                ("SENTRY_DSN", "https://abc123@o1.ingest.sentry.io/1"),
                ("SLACK_WEBHOOK_URL", "https://hooks.slack.com/services/T0/B0/XYZ"),
                ("AUTH_HEADER", "Bearer abc"),
                ("AGENT_HOST_QUEUE", "redis+unix:///run/redis.sock?pass=queue-pw"),
                ("UPLOAD_TARGET", "https://a.blob.core.windows.net/c?sv=1&sig=abc"),
                ("CACHE_ADDRESS", "redis://:cache-pw@cache:6379"),
                ("AUTHOR", "Ada"),
                ("GIT_AUTHOR_NAME", "Ada"),
                ("DESKTOP_SESSION", "ubuntu"),
                ("XDG_SESSION_ID", "3"),
                ("SSH_AUTH_SOCK", "/run/agent.sock"),
                ("DOCS_URL", "https://docs.example/search?q=x"),
            ]
            .into_iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
        };
        let kept: Vec<String> = EnvPolicy::InheritAll
            .filter(vars(), &[])
            .into_iter()
            .map(|(k, _)| k)
            .collect();
        assert_eq!(
            kept,
            [
                "AUTHOR",
                "GIT_AUTHOR_NAME",
                "DESKTOP_SESSION",
                "XDG_SESSION_ID",
                "SSH_AUTH_SOCK",
                "DOCS_URL"
            ]
        );
    }
}
