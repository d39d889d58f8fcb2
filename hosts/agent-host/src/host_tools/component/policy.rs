//! What a plain-export component may reach: folders of the workspace (read-only or
//! read-write), environment variables by name, hosts over `wasi:http`, and its limits.
//! Everything not listed is denied. A policy is granted only by the configuration file that
//! loads the component (`[plugins.policy.NAME]`: the user's, or a project's the user
//! trusted); a `NAME.policy.toml` beside the component says what its author asks for and
//! grants nothing, as a tool-plugin's manifest. A component the model's tools could rewrite
//! (in the workspace or an `--allow-dir` folder) keeps its policy only while its SHA-256 is
//! the one the policy pins.

use crate::host_tools::plugin::PluginLimits;
use serde::Deserialize;
use std::path::{Component, Path};
use std::time::Duration;

/// A policy as written (in its own file or under `[plugins.policy.NAME]`).
#[derive(Debug, Clone, Default, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct PolicyFile {
    /// The SHA-256 (hex) of the component this policy is for; required when the component
    /// lies where the model's tools can write.
    pub sha256: Option<String>,
    #[serde(default)]
    pub files: FilesPolicy,
    #[serde(default)]
    pub env: EnvPolicy,
    #[serde(default)]
    pub http: HttpPolicy,
    #[serde(default)]
    pub limits: LimitsPolicy,
}

#[derive(Debug, Clone, Default, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct FilesPolicy {
    /// Folders the component may read, relative to the workspace ("." is all of it).
    #[serde(default)]
    pub read: Vec<String>,
    /// Folders it may read and write.
    #[serde(default)]
    pub write: Vec<String>,
}

#[derive(Debug, Clone, Default, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct EnvPolicy {
    /// Variables of agent-host's environment the component sees, by name.
    #[serde(default)]
    pub vars: Vec<String>,
}

#[derive(Debug, Clone, Default, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct HttpPolicy {
    /// Hosts it may send requests to, in the network allow-list's syntax.
    #[serde(default)]
    pub allow: Vec<String>,
}

#[derive(Debug, Clone, Copy, Default, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct LimitsPolicy {
    pub memory_mib: Option<usize>,
    pub cpu_ms: Option<u64>,
    pub timeout_ms: Option<u64>,
    pub output_kib: Option<usize>,
}

/// Where a policy was written: decides whether it may name folders outside the workspace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PolicySource {
    /// The user's own configuration file.
    UserConfig(String),
    /// A project's configuration file (trusted, or it would load no components).
    ProjectConfig(String),
    /// No policy in the configuration: nothing is granted.
    None,
}

impl PolicySource {
    pub fn describe(&self) -> String {
        match self {
            PolicySource::UserConfig(file) => format!("[plugins.policy] of the user's configuration {file}"),
            PolicySource::ProjectConfig(file) => {
                format!("[plugins.policy] of the project's configuration {file}")
            }
            PolicySource::None => "none: nothing granted".to_string(),
        }
    }
}

/// A folder the component sees, under the name it is given inside the component.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Preopen {
    /// As written: relative to the workspace, or absolute (user's configuration only).
    pub path: String,
    pub writable: bool,
}

/// A checked policy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ComponentPolicy {
    pub sha256: Option<String>,
    pub preopens: Vec<Preopen>,
    pub env_vars: Vec<String>,
    pub http_allow: Vec<String>,
    pub limits: PluginLimits,
    pub source: PolicySource,
}

impl ComponentPolicy {
    /// Nothing granted, the given limits.
    pub fn deny_all(limits: PluginLimits) -> Self {
        Self {
            sha256: None,
            preopens: Vec::new(),
            env_vars: Vec::new(),
            http_allow: Vec::new(),
            limits,
            source: PolicySource::None,
        }
    }

    /// Checks `file` (from `source`) over the default `limits`.
    pub fn from_file(file: &PolicyFile, source: PolicySource, limits: PluginLimits) -> Result<Self, String> {
        let place = source.describe();
        let outside_allowed = matches!(source, PolicySource::UserConfig(_));
        let mut preopens = Vec::new();
        for (paths, writable) in [(&file.files.read, false), (&file.files.write, true)] {
            for path in paths {
                check_folder(path, outside_allowed).map_err(|e| format!("{place}: files: {e}"))?;
                if preopens.iter().any(|p: &Preopen| p.path == *path) {
                    return Err(format!("{place}: files: {path:?} is listed twice"));
                }
                preopens.push(Preopen {
                    path: path.clone(),
                    writable,
                });
            }
        }
        for name in &file.env.vars {
            if name.is_empty() || name.contains('=') || name.contains('\0') {
                return Err(format!("{place}: env.vars: {name:?} is not a variable name"));
            }
        }
        egress_proxy::AllowList::parse(&file.http.allow).map_err(|e| format!("{place}: http.allow: {e}"))?;
        let mut limits = limits;
        let given = file.limits;
        if let Some(mib) = given.memory_mib {
            limits.memory_bytes = mib.saturating_mul(1 << 20);
        }
        if let Some(ms) = given.cpu_ms {
            limits.cpu = Duration::from_millis(ms);
        }
        if let Some(ms) = given.timeout_ms {
            limits.wall = Duration::from_millis(ms);
        }
        if let Some(kib) = given.output_kib {
            limits.output_bytes = kib.saturating_mul(1 << 10);
        }
        if let Some(digest) = &file.sha256
            && (digest.len() != 64 || !digest.chars().all(|c| c.is_ascii_hexdigit()))
        {
            return Err(format!(
                "{place}: sha256: {digest:?} is not a SHA-256 in hex (64 digits)"
            ));
        }
        Ok(Self {
            sha256: file.sha256.as_ref().map(|d| d.to_ascii_lowercase()),
            preopens,
            env_vars: file.env.vars.clone(),
            http_allow: file.http.allow.clone(),
            limits,
            source,
        })
    }

    /// `NAME.policy.toml` beside `component`, if there is one: what its author asks for.
    pub fn asked_for(component: &Path) -> Option<std::path::PathBuf> {
        let stem = component.file_stem()?;
        let mut name = stem.to_os_string();
        name.push(".policy.toml");
        let path = component.with_file_name(name);
        path.is_file().then_some(path)
    }

    /// Whether a call may change anything outside the component (for approvals).
    pub fn writes(&self) -> bool {
        self.preopens.iter().any(|p| p.writable) || !self.http_allow.is_empty()
    }

    /// Whether it grants anything at all (limits aside).
    pub fn grants_anything(&self) -> bool {
        !self.preopens.is_empty() || !self.env_vars.is_empty() || !self.http_allow.is_empty()
    }
}

/// Parses a policy file's text.
pub fn parse(text: &str, file: &Path) -> Result<PolicyFile, String> {
    toml::from_str(text).map_err(|e| format!("{}: {}", file.display(), e.message()))
}

/// A folder entry: relative without `..` (absolute too when the user's own configuration
/// says so).
fn check_folder(path: &str, outside_allowed: bool) -> Result<(), String> {
    let as_path = Path::new(path);
    if path.is_empty() {
        return Err("an empty folder name: write \".\" for the workspace".into());
    }
    if as_path.is_absolute() {
        return match outside_allowed {
            true => Ok(()),
            false => Err(format!(
                "{path:?} is outside the workspace: only the user's own configuration may grant such a folder"
            )),
        };
    }
    if as_path.components().any(|c| matches!(c, Component::ParentDir)) {
        return Err(format!("{path:?} leaves the workspace (`..`)"));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn policy(text: &str, source: PolicySource) -> Result<ComponentPolicy, String> {
        let file = parse(text, Path::new("p.toml"))?;
        ComponentPolicy::from_file(&file, source, PluginLimits::default())
    }

    #[test]
    fn a_policy_lists_folders_variables_hosts_and_limits() {
        let p = policy(
            "[files]\nread = [\".\"]\nwrite = [\"out\"]\n[env]\nvars = [\"LANG\"]\n[http]\nallow = [\"example.com\"]\n[limits]\nmemory_mib = 8\ncpu_ms = 100\n",
            PolicySource::ProjectConfig("p.toml".into()),
        )
        .unwrap();
        assert_eq!(p.preopens.len(), 2);
        assert!(p.preopens[1].writable);
        assert_eq!(p.env_vars, ["LANG"]);
        assert_eq!(p.limits.memory_bytes, 8 << 20);
        assert_eq!(p.limits.cpu, Duration::from_millis(100));
        assert!(p.writes());
    }

    #[test]
    fn folders_outside_the_workspace_need_the_user_s_own_configuration() {
        let outside = "[files]\nread = [\"/etc\"]\n";
        let error = policy(outside, PolicySource::ProjectConfig("c".into())).unwrap_err();
        assert!(error.contains("outside the workspace"), "{error}");
        assert!(policy(outside, PolicySource::UserConfig("c".into())).is_ok());
        let up = policy(
            "[files]\nread = [\"a/../..\"]\n",
            PolicySource::UserConfig("c".into()),
        )
        .unwrap_err();
        assert!(up.contains(".."), "{up}");
    }

    #[test]
    fn mistakes_name_what_was_wrong() {
        let unknown = policy("[files]\nreed = [\".\"]\n", PolicySource::None).unwrap_err();
        assert!(unknown.contains("reed"), "{unknown}");
        let host = policy("[http]\nallow = [\"https://x.org/\"]\n", PolicySource::None).unwrap_err();
        assert!(host.contains("http.allow"), "{host}");
        let twice = policy("[files]\nread = [\"a\"]\nwrite = [\"a\"]\n", PolicySource::None).unwrap_err();
        assert!(twice.contains("twice"), "{twice}");
        let digest = policy("sha256 = \"abc\"\n", PolicySource::None).unwrap_err();
        assert!(digest.contains("not a SHA-256"), "{digest}");
    }
}
