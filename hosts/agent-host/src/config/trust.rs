//! Workspace trust: a project's `.agent/config.toml` arrives with the repository, so until
//! the user trusts it, it may make a run stricter but never give anything away.
//!
//! What an untrusted project file may not do (each ignored with one warning naming it):
//! point endpoints elsewhere or name their key variables (`[endpoints]`), declare command
//! tools (`[[tools]]`), load plugins or grant them capabilities (`[plugins]`), or loosen
//! the approval mode, the variable policy or a limit below what the user's file and the
//! defaults give. Provider, model and reasoning effort pick among what the user configured
//! and stay.
//!
//! Trust is recorded in the user's configuration folder (`trusted-projects.toml`, written by
//! `agent-host trust`), bound to the file's canonical path and the SHA-256 of its bytes: a
//! changed file is untrusted again. A file named with `--config` is the user's own choice
//! and trusted as such.

use crate::approval::ApprovalMode;
use crate::config::file::{FileLayer, toml_error};
use crate::config::source::Sourced;
use crate::content_hash::sha256_hex;
use crate::environments::env_vars::EnvPolicy;
use crate::sandbox::{NetworkAccess, SandboxMode};
use egress_proxy::AllowList;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// The file, next to the user's `config.toml`, listing trusted project files.
pub const TRUST_FILE: &str = "trusted-projects.toml";

/// A project file that is not trusted and what was ignored in it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UntrustedProject {
    pub file: PathBuf,
    /// The settings ignored, each as `key (line N)`.
    pub ignored: Vec<String>,
}

impl UntrustedProject {
    /// The one warning a command prints, or `None` when nothing was ignored.
    pub fn warning(&self) -> Option<String> {
        if self.ignored.is_empty() {
            return None;
        }
        let workspace = self
            .file
            .parent()
            .and_then(Path::parent)
            .unwrap_or(Path::new("."));
        Some(format!(
            "the project file {} is not trusted, so these settings in it were ignored: {}. Review \
             the file, then run `agent-host trust {}` to use them.",
            self.file.display(),
            self.ignored.join(", "),
            workspace.display()
        ))
    }
}

#[derive(Serialize, Deserialize, Default)]
struct TrustFile {
    #[serde(default)]
    project: Vec<TrustedProject>,
}

#[derive(Serialize, Deserialize, Clone, PartialEq, Eq)]
struct TrustedProject {
    /// The project file's canonical path.
    file: String,
    /// SHA-256 of its bytes, in hex.
    sha256: String,
}

/// The trusted project files of one user.
#[derive(Debug, Clone)]
pub struct TrustStore {
    path: PathBuf,
}

/// Whether the project file or its `.agent` folder is a symbolic link.
fn linked(file: &Path) -> bool {
    let is_link = |path: &Path| std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink());
    is_link(file) || file.parent().is_some_and(is_link)
}

fn canonical(file: &Path) -> Result<String, String> {
    std::fs::canonicalize(file)
        .map(|p| p.display().to_string())
        .map_err(|e| format!("cannot resolve {}: {e}", file.display()))
}

impl TrustStore {
    /// The store next to the user's configuration file (`None` without a configuration
    /// folder).
    pub fn next_to(user_config_file: Option<&Path>) -> Option<Self> {
        user_config_file.and_then(Path::parent).map(|dir| Self {
            path: dir.join(TRUST_FILE),
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    fn read(&self) -> Result<TrustFile, String> {
        match std::fs::read_to_string(&self.path) {
            Ok(text) => toml::from_str(&text).map_err(|e| toml_error(&self.path, &text, &e)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(TrustFile::default()),
            Err(e) => Err(format!("cannot read {}: {e}", self.path.display())),
        }
    }

    fn write(&self, file: &TrustFile) -> Result<(), String> {
        let text = toml::to_string(file).map_err(|e| format!("cannot write {}: {e}", self.path.display()))?;
        let text = format!(
            "# Project configuration files agent-host trusts, each bound to the SHA-256 of its\n\
             # bytes (written by `agent-host trust`; a changed file is untrusted again).\n{text}"
        );
        crate::private_files::write_private(&self.path, text.as_bytes())
    }

    /// Whether the project file at `file`, whose bytes are `contents`, is trusted. A linked
    /// file never is: a repository could link a file the user trusted elsewhere, and its
    /// relative commands and plugin paths would then resolve inside the repository.
    pub fn is_trusted(&self, file: &Path, contents: &[u8]) -> bool {
        if linked(file) {
            return false;
        }
        let (Ok(store), Ok(file)) = (self.read(), canonical(file)) else {
            return false;
        };
        let sha256 = sha256_hex(contents);
        store.project.iter().any(|p| p.file == file && p.sha256 == sha256)
    }

    /// Holds the list's lock while the list is read, changed and written, so two
    /// `agent-host trust` at once lose neither entry.
    fn locked(&self) -> Result<std::fs::File, String> {
        let fail = |e: std::io::Error| format!("cannot lock {}: {e}", self.path.display());
        if let Some(dir) = self.path.parent() {
            crate::private_files::create_private_dir(dir).map_err(fail)?;
        }
        let lock = crate::private_files::private_options()
            .write(true)
            .create(true)
            .truncate(false)
            .open(self.path.with_extension("lock"))
            .map_err(fail)?;
        lock.lock().map_err(fail)?;
        Ok(lock)
    }

    /// Trusts the project file at `file` as it is now (replacing an older entry for it).
    pub fn trust(&self, file: &Path) -> Result<(), String> {
        if linked(file) {
            return Err(format!(
                "{} (or its folder) is a symbolic link, which is never trusted: a workspace's \
                 configuration must be its own file",
                file.display()
            ));
        }
        let contents = crate::config::reading::project_file(file)?
            .ok_or_else(|| format!("cannot read {}: there is no such file", file.display()))?;
        let entry = TrustedProject {
            file: canonical(file)?,
            sha256: sha256_hex(contents.as_bytes()),
        };
        let _lock = self.locked()?;
        let mut store = self.read()?;
        store.project.retain(|p| p.file != entry.file);
        store.project.push(entry);
        self.write(&store)
    }

    /// Forgets the project file at `file`; whether it was trusted.
    pub fn forget(&self, file: &Path) -> Result<bool, String> {
        let file = canonical(file)?;
        let _lock = self.locked()?;
        let mut store = self.read()?;
        let before = store.project.len();
        store.project.retain(|p| p.file != file);
        if store.project.len() == before {
            return Ok(false);
        }
        self.write(&store).map(|()| true)
    }
}

/// Removes from an untrusted project layer what only trust allows whatever the other layers
/// say: endpoints, command tools and plugins. Returns what was removed.
pub fn drop_authority(layer: &mut FileLayer) -> Vec<String> {
    let mut ignored = Vec::new();
    for (name, endpoint) in std::mem::take(&mut layer.endpoints) {
        ignored.push(format!("endpoints.{name} ({})", endpoint.at));
    }
    if let Some(at) = layer.tools_at.take() {
        ignored.push(format!("[[tools]] ({at})"));
        layer.agent.tools.clear();
    }
    if let Some(at) = layer.plugins_at.take() {
        ignored.push(format!("[plugins] ({at})"));
        layer.agent.plugins = Default::default();
    }
    // Starting an MCP server runs its command here.
    for (name, at) in std::mem::take(&mut layer.mcp_servers_at) {
        ignored.push(format!("mcp_servers.{name} ({at})"));
    }
    layer.agent.mcp_servers.clear();
    // A hook runs its command here on every call.
    if let Some(at) = layer.hooks_at.take() {
        ignored.push(format!("[hooks] ({at})"));
        layer.agent.hooks = Default::default();
    }
    ignored
}

/// How strict an approval mode is: higher asks more.
fn approval_rank(mode: ApprovalMode) -> u8 {
    match mode {
        ApprovalMode::Auto => 0,
        ApprovalMode::Ask => 1,
        ApprovalMode::ReadOnly => 2,
    }
}

/// How strict a variable policy is: higher passes fewer variables.
fn env_policy_rank(policy: EnvPolicy) -> u8 {
    match policy {
        EnvPolicy::InheritAll => 0,
        EnvPolicy::CoreOnly => 1,
        EnvPolicy::None => 2,
    }
}

/// Whether `value` is at most `base` for a count where 0 means unlimited.
fn within_count(value: u32, base: u32) -> bool {
    value != 0 && (base == 0 || value <= base)
}

/// Keeps an untrusted value only when `stricter(value, base)`; else drops it and names it.
fn keep_if<T: Copy>(
    value: &mut Option<Sourced<T>>,
    base: T,
    key: &str,
    stricter: impl Fn(T, T) -> bool,
    ignored: &mut Vec<String>,
) {
    if let Some(v) = value.as_ref()
        && !stricter(v.value, base)
    {
        ignored.push(format!("{key} ({})", v.source));
        *value = None;
    }
}

/// The values under an untrusted project layer, which it may only tighten.
pub struct Baseline {
    pub approval: ApprovalMode,
    pub env_policy: EnvPolicy,
    pub sandbox: SandboxMode,
    pub sandbox_network: NetworkAccess,
    /// The hosts the user's own settings allow (with `allow-list`).
    pub network_allow: AllowList,
    /// Whether the command line says what commands reach (`--sandbox-network`,
    /// `--network-allow`): the user's word then, which the project's does not mix with.
    pub network_from_flags: bool,
    /// One LLM request's overall limit in seconds (0: none).
    pub request_timeout_secs: u64,
    pub limits: agent_protocol::Limits,
    /// The user's cap, if any (without one, the model's own limit applies).
    pub max_output_tokens: Option<u32>,
}

impl Baseline {
    /// The defaults with the user's file over them.
    pub fn of(user: Option<&FileLayer>) -> Self {
        let mut limits = agent_protocol::Limits::default();
        if let Some(l) = user.map(|u| &u.limits) {
            macro_rules! over {
                ($($field:ident),*) => {$(
                    if let Some(v) = &l.$field {
                        limits.$field = v.value;
                    }
                )*};
            }
            over!(
                max_session_tokens,
                max_cost_cents,
                max_turns,
                max_tool_rounds_per_input,
                max_command_timeout_ms,
                enable_loop_detection,
                stale_read_guard,
                loop_detection_window,
                max_subagent_depth
            );
        }
        Self {
            approval: user
                .and_then(|u| u.approval.as_ref())
                .map_or(ApprovalMode::default(), |a| a.value),
            env_policy: user
                .and_then(|u| u.env_policy.as_ref())
                .map_or(EnvPolicy::default(), |p| p.value),
            sandbox: user
                .and_then(|u| u.sandbox.as_ref())
                .map_or(SandboxMode::default(), |m| m.value),
            sandbox_network: NetworkAccess::given_or_implied(
                user.and_then(|u| u.sandbox_network.as_ref()).map(|n| n.value),
                user.and_then(|u| u.network_allow.as_ref())
                    .is_some_and(|l| !l.value.is_empty()),
            ),
            network_allow: user
                .and_then(|u| u.network_allow.as_ref())
                .map(|l| l.value.clone())
                .unwrap_or_default(),
            network_from_flags: false,
            request_timeout_secs: user
                .and_then(|u| u.request_timeout_secs.as_ref())
                .map_or(crate::transport::response::REQUEST_TIMEOUT_SECS, |t| t.value),
            limits,
            max_output_tokens: user
                .and_then(|u| u.limits.max_output_tokens.as_ref())
                .map(|v| v.value),
        }
    }
}

/// Drops the untrusted layer's approval mode, variable policy, sandbox and limits where they are
/// looser than `base`. Returns what was dropped.
pub fn keep_only_stricter(layer: &mut FileLayer, base: &Baseline) -> Vec<String> {
    let mut ignored = Vec::new();
    keep_if(
        &mut layer.approval,
        base.approval,
        "approval",
        |v, b| approval_rank(v) >= approval_rank(b),
        &mut ignored,
    );
    keep_if(
        &mut layer.env_policy,
        base.env_policy,
        "env_policy",
        |v, b| env_policy_rank(v) >= env_policy_rank(b),
        &mut ignored,
    );
    // Modes are ordered from the strictest (read-only) to none (danger-full-access).
    keep_if(
        &mut layer.sandbox,
        base.sandbox,
        "sandbox",
        |v, b| v <= b,
        &mut ignored,
    );
    if base.network_from_flags {
        // Mixed in, its list would become the one enforced (`--sandbox-network=allow-list`)
        // or be added to (`--network-allow HOST`): not what the user asked for.
        for (key, source) in [
            ("sandbox_network", layer.sandbox_network.take().map(|v| v.source)),
            ("network_allow", layer.network_allow.take().map(|v| v.source)),
        ] {
            if let Some(source) = source {
                ignored.push(format!("{key} ({source}; the command line decides)"));
            }
        }
    }
    keep_if(
        &mut layer.sandbox_network,
        base.sandbox_network,
        "sandbox_network",
        |v, b| v <= b,
        &mut ignored,
    );
    // Its list may only narrow the user's: an entry survives when the user's list allows
    // everything it allows (any entry, when the user lets commands reach every host).
    if let Some(list) = &mut layer.network_allow
        && base.sandbox_network != NetworkAccess::On
    {
        let (kept, dropped) = list.value.narrowed_to(&base.network_allow);
        for entry in dropped {
            ignored.push(format!("network_allow entry {entry} ({})", list.source));
        }
        // An emptied list must still say "nothing": dropping it would let the user's
        // wider list through.
        list.value = kept;
    }
    // A shorter limit ends a request sooner; none at all is the loosest.
    keep_if(
        &mut layer.request_timeout_secs,
        base.request_timeout_secs,
        "request_timeout_secs",
        |v, b| v != 0 && (b == 0 || v <= b),
        &mut ignored,
    );
    let l = &mut layer.limits;
    let b = &base.limits;
    keep_if(
        &mut l.max_turns,
        b.max_turns,
        "limits.max_turns",
        within_count,
        &mut ignored,
    );
    keep_if(
        &mut l.max_tool_rounds_per_input,
        b.max_tool_rounds_per_input,
        "limits.max_tool_rounds_per_input",
        within_count,
        &mut ignored,
    );
    // A budget may only be set or lowered.
    keep_if(
        &mut l.max_session_tokens,
        b.max_session_tokens,
        "limits.max_session_tokens",
        |v, b| v != 0 && (b == 0 || v <= b),
        &mut ignored,
    );
    keep_if(
        &mut l.max_cost_cents,
        b.max_cost_cents,
        "limits.max_cost_cents",
        |v, b| v > 0.0 && (b <= 0.0 || v <= b),
        &mut ignored,
    );
    keep_if(
        &mut l.max_command_timeout_ms,
        b.max_command_timeout_ms,
        "limits.max_command_timeout_ms",
        |v, b| v <= b,
        &mut ignored,
    );
    // A command's default timeout is bounded by the maximum, so it is held to that.
    keep_if(
        &mut l.default_command_timeout_ms,
        b.max_command_timeout_ms,
        "limits.default_command_timeout_ms",
        |v, b| v <= b,
        &mut ignored,
    );
    keep_if(
        &mut l.enable_loop_detection,
        b.enable_loop_detection,
        "limits.enable_loop_detection",
        |v, b| v || !b,
        &mut ignored,
    );
    keep_if(
        &mut l.stale_read_guard,
        b.stale_read_guard,
        "limits.stale_read_guard",
        |v, b| v || !b,
        &mut ignored,
    );
    // A longer window sees a repetition later (a huge one never).
    keep_if(
        &mut l.loop_detection_window,
        b.loop_detection_window,
        "limits.loop_detection_window",
        |v, b| v <= b,
        &mut ignored,
    );
    // More output tokens cost more; only a cap under the user's own stays.
    keep_if(
        &mut l.max_output_tokens,
        base.max_output_tokens.unwrap_or(0),
        "limits.max_output_tokens",
        |v, b| v <= b,
        &mut ignored,
    );
    keep_if(
        &mut l.max_subagent_depth,
        b.max_subagent_depth,
        "limits.max_subagent_depth",
        |v, b| v <= b,
        &mut ignored,
    );
    ignored
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    /// A repository linking a file the user trusted elsewhere could borrow that trust (path
    /// and hash matched once resolved).
    #[test]
    fn a_linked_project_file_is_never_trusted() {
        let root = tempfile::tempdir().unwrap();
        let store = TrustStore {
            path: root.path().join("user/trusted-projects.toml"),
        };
        let trusted = root.path().join("mine/.agent/config.toml");
        std::fs::create_dir_all(trusted.parent().unwrap()).unwrap();
        std::fs::write(&trusted, "[[tools]]\n").unwrap();
        store.trust(&trusted).unwrap();
        assert!(store.is_trusted(&trusted, b"[[tools]]\n"));
        assert!(!store.is_trusted(&trusted, b"[[tools]]\nchanged\n"));
        let hostile = root.path().join("repo/.agent");
        std::fs::create_dir_all(&hostile).unwrap();
        std::os::unix::fs::symlink(&trusted, hostile.join("config.toml")).unwrap();
        assert!(!store.is_trusted(&hostile.join("config.toml"), b"[[tools]]\n"));
        assert!(store.trust(&hostile.join("config.toml")).is_err());
        let linked_folder = root.path().join("repo2");
        std::fs::create_dir_all(&linked_folder).unwrap();
        std::os::unix::fs::symlink(trusted.parent().unwrap(), linked_folder.join(".agent")).unwrap();
        assert!(!store.is_trusted(&linked_folder.join(".agent/config.toml"), b"[[tools]]\n"));
    }
}
