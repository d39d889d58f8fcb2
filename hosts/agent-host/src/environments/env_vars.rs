//! Which of the host's environment variables a command sees (spec 4.2).

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

/// Name endings that mark a credential (compared case-insensitively).
const SECRET_SUFFIXES: &[&str] = &[
    "_API_KEY",
    "_SECRET",
    "_TOKEN",
    "_PASSWORD",
    "_CREDENTIAL",
    "_CREDENTIALS",
];

/// How a command's environment is built from the host's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum EnvPolicy {
    /// Everything except credentials (`*_API_KEY`, `*_SECRET`, `*_TOKEN`, `*_PASSWORD`,
    /// `*_CREDENTIAL`).
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

/// Whether a variable holds a credential by its name.
pub fn is_secret_var(name: &str) -> bool {
    let upper = name.to_ascii_uppercase();
    SECRET_SUFFIXES.iter().any(|suffix| upper.ends_with(suffix))
}

fn is_core_var(name: &str) -> bool {
    CORE.contains(&name) || name.starts_with("LC_")
}

impl EnvPolicy {
    /// Whether a host variable is passed on.
    pub fn keeps(self, name: &str) -> bool {
        match self {
            Self::InheritAll => !is_secret_var(name),
            Self::CoreOnly => is_core_var(name),
            Self::None => false,
        }
    }

    /// The host variables a command gets under this policy.
    pub fn filter(self, vars: impl Iterator<Item = (String, String)>) -> Vec<(String, String)> {
        vars.filter(|(name, _)| self.keeps(name)).collect()
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
        ] {
            assert!(is_secret_var(name), "{name}");
        }
        for name in ["PATH", "TOKENIZERS_PARALLELISM", "KEY", "SECRETARY"] {
            assert!(!is_secret_var(name), "{name}");
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
            policy.filter(vars()).into_iter().map(|(k, _)| k).collect()
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
