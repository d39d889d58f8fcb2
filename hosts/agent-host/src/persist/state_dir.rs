//! Where agent-host keeps its state (sessions, saved tool outputs, checkpoints of unsaved
//! sessions, MCP servers' logs), and keeping that folder private: other sessions' histories
//! hold file contents and command output, so only the user may enter it (0700).
//!
//! The first time a process asks for the folder it is made 0700 if it is missing, and an
//! existing one that other users can enter (an older agent-host, or `mkdir -p`, left it
//! 0755) is narrowed to 0700 with a warning, together with agent-host's own folders inside
//! it. A folder that is not agent-host's to narrow is left as it is (see [`narrowable`]).

use std::collections::HashSet;
use std::fs::{DirBuilder, Permissions};
use std::os::unix::fs::{DirBuilderExt, MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, PoisonError};

/// The variable that chooses the state folder.
pub const STATE_DIR_VAR: &str = "AGENT_HOST_STATE_DIR";

const PRIVATE_MODE: u32 = 0o700;

/// agent-host's folders inside the state folder, narrowed with it.
const OWN_FOLDERS: &[&str] = &["sessions", "outputs", "checkpoints-unsaved", "mcp-logs"];

/// Where sessions are kept: `$AGENT_HOST_STATE_DIR`, else the platform's state directory
/// (`$XDG_STATE_HOME`, `~/.local/state`) + `agent-host`, else `~/.local/state/agent-host`.
/// Made private the first time this process asks (see the module's documentation).
pub fn default_state_dir() -> Option<PathBuf> {
    let dir = state_dir_location()?;
    make_private_once(&dir);
    Some(dir)
}

/// Where the state folder is, without touching it.
pub(crate) fn state_dir_location() -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os(STATE_DIR_VAR).filter(|d| !d.is_empty()) {
        return Some(PathBuf::from(dir));
    }
    dirs::state_dir()
        .or_else(|| dirs::home_dir().map(|home| home.join(".local/state")))
        .map(|dir| dir.join("agent-host"))
}

/// [`make_private`] once per folder and process: the folder is asked for by every
/// environment, sandbox and store.
fn make_private_once(dir: &Path) {
    static DONE: Mutex<Option<HashSet<PathBuf>>> = Mutex::new(None);
    let mut done = DONE.lock().unwrap_or_else(PoisonError::into_inner);
    if done.get_or_insert_with(HashSet::new).insert(dir.to_path_buf()) {
        make_private(dir);
    }
}

/// Creates `dir` 0700 (its missing parents with the usual mode) or narrows an existing one
/// and agent-host's folders in it. Failures are logged: the state is then only as private as
/// the folder already was, and saving a session reports its own errors.
pub(crate) fn make_private(dir: &Path) {
    if let Some(parent) = dir.parent().filter(|p| !p.as_os_str().is_empty())
        && let Err(error) = std::fs::create_dir_all(parent)
    {
        tracing::debug!(%error, "cannot create {}", parent.display());
        return;
    }
    match DirBuilder::new().mode(PRIVATE_MODE).create(dir) {
        // The umask may have taken bits away, never added any; set exactly 0700.
        Ok(()) => set_private(dir),
        Err(error) if error.kind() == std::io::ErrorKind::AlreadyExists => {
            narrow(dir);
            for name in OWN_FOLDERS {
                let own = dir.join(name);
                if own.is_dir() {
                    narrow(&own);
                }
            }
        }
        Err(error) => tracing::debug!(%error, "cannot create {}", dir.display()),
    }
}

/// Narrows `dir` to 0700 when others can enter it and it is agent-host's to narrow.
fn narrow(dir: &Path) {
    let Ok(meta) = std::fs::metadata(dir) else {
        return;
    };
    let mode = meta.mode() & 0o7777;
    if !meta.is_dir() || mode & 0o077 == 0 || !narrowable(dir, &meta) {
        return;
    }
    set_private(dir);
    tracing::warn!(
        "{} was open to other users (mode {mode:o}); narrowed to 700 (only you)",
        dir.display()
    );
}

/// Whether agent-host may narrow `dir`: the user's own folder, not a shared one (sticky,
/// like `/tmp`) and not the home folder or one that holds it (a state folder set to `~`).
fn narrowable(dir: &Path, meta: &std::fs::Metadata) -> bool {
    let own = meta.uid() == nix::unistd::geteuid().as_raw();
    let sticky = meta.mode() & 0o1000 != 0;
    let canonical = dir.canonicalize().unwrap_or_else(|_| dir.to_path_buf());
    let holds_home = dirs::home_dir()
        .and_then(|home| home.canonicalize().ok())
        .is_some_and(|home| home.starts_with(&canonical));
    own && !sticky && !holds_home
}

fn set_private(dir: &Path) {
    if let Err(error) = std::fs::set_permissions(dir, Permissions::from_mode(PRIVATE_MODE)) {
        tracing::warn!(%error, "cannot make {} private (700)", dir.display());
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn mode(path: &Path) -> u32 {
        std::fs::metadata(path).unwrap().permissions().mode() & 0o7777
    }

    #[test]
    fn a_new_state_folder_is_private_and_an_open_one_is_narrowed_with_its_own_folders() {
        let root = tempfile::tempdir().unwrap();
        let fresh = root.path().join("a/state");
        make_private(&fresh);
        assert_eq!(mode(&fresh), 0o700);

        let open = root.path().join("open");
        for dir in ["sessions", "outputs", "unrelated"] {
            std::fs::create_dir_all(open.join(dir)).unwrap();
            std::fs::set_permissions(open.join(dir), Permissions::from_mode(0o755)).unwrap();
        }
        std::fs::set_permissions(&open, Permissions::from_mode(0o755)).unwrap();
        make_private(&open);
        assert_eq!(
            [
                mode(&open),
                mode(&open.join("sessions")),
                mode(&open.join("outputs"))
            ],
            [0o700; 3]
        );
        assert_eq!(
            mode(&open.join("unrelated")),
            0o755,
            "only agent-host's own folders"
        );

        // A shared folder (sticky, like /tmp) is never narrowed.
        let shared = root.path().join("shared");
        std::fs::create_dir(&shared).unwrap();
        std::fs::set_permissions(&shared, Permissions::from_mode(0o1777)).unwrap();
        make_private(&shared);
        assert_eq!(mode(&shared), 0o1777);
    }
}
