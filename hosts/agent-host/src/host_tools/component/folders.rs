//! The folders a component's policy grants, opened afresh for every call: a relative one
//! through the workspace's own directory handle (so no link or `..` leads out of it), then
//! checked by where it really is: never inside or around a folder `--deny-dir` keeps from the
//! session, and never writable around `.git` or `.agent`, from which git and agent-host run
//! code.

use super::policy::Preopen;
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};

/// Where the folders of policies are found, and what this run forbids.
#[derive(Debug, Clone, Default)]
pub struct FolderRules {
    /// The local workspace; `None` when it is on another machine (no folders then).
    pub workspace: Option<PathBuf>,
    /// Folders kept from the session (`--deny-dir`), absolute.
    pub denied: Vec<PathBuf>,
    /// Paths commands may not read (agent-host's list of credentials and its own folders,
    /// `sandbox_deny_read`), absolute: a component is not granted what a command is denied.
    pub denied_reads: Vec<PathBuf>,
    /// Folders besides the workspace that the model's tools may write (`--allow-dir`).
    pub model_writable: Vec<PathBuf>,
    /// Why no component may change anything now (a replay without `--replay-trusted`,
    /// `--read-only`): its folders are all read-only and its requests refused.
    pub changes_refused: Option<String>,
}

/// A granted folder, open, ready to hand to WASI.
pub struct OpenFolder {
    dir: cap_std::fs::Dir,
    pub guest_name: String,
    pub writable: bool,
}

impl OpenFolder {
    /// A path that opens this very directory (not whatever has its name by now).
    pub fn handle_path(&self) -> String {
        format!("/proc/self/fd/{}", self.dir.as_raw_fd())
    }
}

impl FolderRules {
    /// The rules of a session built from `options` over `workspace` (local, or `None`).
    pub fn for_environment(options: &crate::environments::EnvOptions, workspace: Option<PathBuf>) -> Self {
        let here = std::env::current_dir().unwrap_or_default();
        let absolute = |dirs: &[PathBuf]| -> Vec<PathBuf> {
            match workspace.is_some() {
                true => dirs.iter().map(|d| here.join(d)).collect(),
                false => Vec::new(),
            }
        };
        let read_only = options
            .read_only
            .then(|| "agent-host runs with --read-only".to_string());
        let denied_reads = crate::sandbox::SandboxConfig {
            deny_read: options.sandbox_deny_read.iter().map(|d| here.join(d)).collect(),
            ..Default::default()
        }
        .denied_reads();
        Self {
            denied: absolute(&options.deny_dirs),
            denied_reads,
            model_writable: absolute(&options.allow_dirs),
            changes_refused: options.changes_refused.clone().or(read_only),
            workspace,
        }
    }

    /// Whether the model's own tools could have written `path`: the file it names (links
    /// followed) or any place on the way to it as written (a link there could be repointed)
    /// lies in the workspace or an `--allow-dir` folder.
    pub fn model_could_write(&self, path: &Path) -> bool {
        let as_written = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
        let target = path.canonicalize().unwrap_or_else(|_| as_written.clone());
        self.workspace.iter().chain(&self.model_writable).any(|root| {
            let real_root = root.canonicalize().unwrap_or_else(|_| root.clone());
            [&as_written, &target]
                .iter()
                .any(|p| p.starts_with(root) || p.starts_with(&real_root))
        })
    }

    /// Opens `preopen` for one call, or says why it cannot be granted.
    pub fn open(&self, preopen: &Preopen) -> Result<OpenFolder, String> {
        let name = &preopen.path;
        let Some(workspace) = &self.workspace else {
            return Err(format!(
                "the folder {name:?} cannot be granted: the workspace is not on this machine"
            ));
        };
        let authority = cap_std::ambient_authority();
        let dir = match Path::new(name).is_absolute() {
            true => cap_std::fs::Dir::open_ambient_dir(name, authority),
            false => cap_std::fs::Dir::open_ambient_dir(workspace, authority).and_then(|root| {
                match name.as_str() {
                    "." => Ok(root),
                    relative => root.open_dir(relative),
                }
            }),
        }
        .map_err(|e| format!("cannot open the granted folder {name:?}: {e}"))?;
        let real = std::fs::read_link(format!("/proc/self/fd/{}", dir.as_raw_fd()))
            .map_err(|e| format!("cannot tell where the granted folder {name:?} is: {e}"))?;
        let writable = preopen.writable && self.changes_refused.is_none();
        self.check(name, &real, workspace, writable)?;
        Ok(OpenFolder {
            dir,
            guest_name: name.clone(),
            writable,
        })
    }

    fn check(&self, name: &str, real: &Path, workspace: &Path, writable: bool) -> Result<(), String> {
        for denied in &self.denied {
            let denied = denied.canonicalize().unwrap_or_else(|_| denied.clone());
            if real.starts_with(&denied) || denied.starts_with(real) {
                return Err(format!(
                    "the granted folder {name:?} holds or lies in {}, which --deny-dir keeps from the session",
                    denied.display()
                ));
            }
        }
        // A denied path that does not exist yet is resolved through its nearest existing
        // folder: `~/.aws` under a linked home would otherwise never match, and a writable
        // grant of the home could make it.
        for denied in &self.denied_reads {
            let denied = crate::environments::nearest_real_path(denied).unwrap_or_else(|_| denied.clone());
            if real.starts_with(&denied) || denied.starts_with(real) {
                return Err(format!(
                    "the granted folder {name:?} holds or lies in {}, which no component is granted: agent-host's \
                     list of credential folders, its own configuration and state folders and /dev, and \
                     sandbox_deny_read (what sandboxed commands may not read either); grant a folder beside it",
                    denied.display()
                ));
            }
        }
        if writable {
            let workspace = workspace
                .canonicalize()
                .unwrap_or_else(|_| workspace.to_path_buf());
            // A `.git` or `.agent` an earlier call made would be caught only afterwards.
            if workspace.starts_with(real) {
                return Err(format!(
                    "the folder {name:?} cannot be granted for writing: it is the workspace (or holds it), \
                     where `.git` and `.agent` could be made; grant its subfolders instead"
                ));
            }
            let mut protected = crate::sandbox::protected_paths(&workspace);
            protected.extend(crate::sandbox::protected_paths(real));
            if let Some(found) = protected
                .iter()
                .find(|p| p.starts_with(real) || real.starts_with(p))
            {
                return Err(format!(
                    "the folder {name:?} cannot be granted for writing: it holds or lies in {}, from which git or agent-host run code",
                    found.display()
                ));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rules(workspace: &Path, denied: Vec<PathBuf>) -> FolderRules {
        FolderRules {
            workspace: Some(workspace.to_path_buf()),
            denied,
            ..FolderRules::default()
        }
    }

    fn folder(path: &str, writable: bool) -> Preopen {
        Preopen {
            path: path.into(),
            writable,
        }
    }

    #[test]
    fn a_link_out_of_the_workspace_is_not_followed() {
        let outside = tempfile::tempdir().unwrap();
        let work = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink(outside.path(), work.path().join("out")).unwrap();
        let error = rules(work.path(), vec![])
            .open(&folder("out", false))
            .err()
            .unwrap();
        assert!(error.contains("cannot open"), "{error}");
        std::fs::create_dir(work.path().join("docs")).unwrap();
        let open = rules(work.path(), vec![]).open(&folder("docs", false)).unwrap();
        assert!(open.handle_path().starts_with("/proc/self/fd/"));
    }

    #[test]
    fn denied_and_protected_folders_are_refused() {
        let work = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(work.path().join("secret/inner")).unwrap();
        std::fs::create_dir(work.path().join(".git")).unwrap();
        let denied = rules(work.path(), vec![work.path().join("secret")]);
        assert!(
            denied
                .open(&folder(".", false))
                .err()
                .unwrap()
                .contains("--deny-dir")
        );
        assert!(denied.open(&folder("secret/inner", false)).is_err());
        let plain = rules(work.path(), vec![]);
        assert!(plain.open(&folder(".", false)).is_ok());
        assert!(
            plain
                .open(&folder(".", true))
                .err()
                .unwrap()
                .contains("it is the workspace")
        );
        assert!(plain.open(&folder(".git", true)).err().unwrap().contains(".git"));
        assert!(plain.open(&folder("secret", true)).unwrap().writable);
        let replaying = FolderRules {
            changes_refused: Some("a replay".into()),
            ..rules(work.path(), vec![])
        };
        assert!(!replaying.open(&folder("secret", true)).unwrap().writable);
        // A link in the workspace to a component elsewhere: the model could repoint it.
        let elsewhere = tempfile::tempdir().unwrap();
        std::fs::write(elsewhere.path().join("c.wasm"), b"x").unwrap();
        std::os::unix::fs::symlink(elsewhere.path().join("c.wasm"), work.path().join("c.wasm")).unwrap();
        assert!(plain.model_could_write(&work.path().join("c.wasm")));
        assert!(!plain.model_could_write(&elsewhere.path().join("c.wasm")));
        let remote = FolderRules::default();
        assert!(
            remote
                .open(&folder(".", false))
                .err()
                .unwrap()
                .contains("not on this machine")
        );
    }

    #[test]
    fn what_commands_may_not_read_is_not_granted_either() {
        let work = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(work.path().join("keys/deploy")).unwrap();
        std::fs::create_dir(work.path().join("docs")).unwrap();
        let options = crate::environments::EnvOptions {
            sandbox_deny_read: vec![work.path().join("keys")],
            ..Default::default()
        };
        let session = FolderRules::for_environment(&options, Some(work.path().to_path_buf()));
        for name in ["keys", "keys/deploy", "."] {
            let error = session.open(&folder(name, false)).err().unwrap();
            assert!(error.contains("sandbox_deny_read"), "{name}: {error}");
        }
        assert!(session.open(&folder("docs", false)).is_ok());
        // The user's home holds ~/.ssh, on agent-host's own list whatever the settings say.
        let home = dirs::home_dir().unwrap();
        let error = session
            .open(&folder(home.to_str().unwrap(), false))
            .err()
            .unwrap();
        assert!(
            error.contains(".ssh") || error.contains("holds or lies in"),
            "{error}"
        );
    }
}
