//! The folder where cut tool outputs are saved in full for the model: a private (0700)
//! folder outside the workspace, removed when the environment goes, in a folder of such
//! folders that is private too. Its name carries the process id, so a later agent-host
//! removes what a killed one left. Commands cannot write it (the sandbox's writable roots do
//! not include it), and a local environment keeps it in agent-host's state folder, which the
//! sandbox hides from every command (see `sandbox::denied`).

use std::path::Path;

const PREFIX: &str = "agent-host-outputs-";

/// A scratch folder, removed when dropped.
#[derive(Debug)]
pub struct ScratchFolder(tempfile::TempDir);

impl ScratchFolder {
    /// A new folder in `parent` (the system's temporary folder when `None`); `None`, with a
    /// warning, when it cannot be made (long outputs are then only cut).
    pub fn create(parent: Option<&Path>) -> Option<Self> {
        let prefix = format!("{PREFIX}{}-", std::process::id());
        let mut builder = tempfile::Builder::new();
        builder
            .prefix(&prefix)
            .permissions(std::os::unix::fs::PermissionsExt::from_mode(0o700));
        let made = match parent {
            Some(parent) => {
                // The folder of every process's outputs: only the user may enter it, whoever
                // made it and however (an older agent-host made it 0755).
                if let Err(error) = crate::private_files::create_private_dir(parent) {
                    tracing::warn!(%error, "no folder for saved tool outputs; long outputs are only cut");
                    return None;
                }
                remove_orphans(parent);
                builder.tempdir_in(parent)
            }
            None => builder.tempdir(),
        };
        match made {
            Ok(dir) => Some(Self(dir)),
            Err(error) => {
                tracing::warn!(%error, "no folder for saved tool outputs; long outputs are only cut");
                None
            }
        }
    }

    pub fn path(&self) -> &Path {
        self.0.path()
    }
}

/// Removes the scratch folders in `parent` whose process is gone.
fn remove_orphans(parent: &Path) {
    let Ok(entries) = std::fs::read_dir(parent) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name
            .to_str()
            .and_then(|n| n.strip_prefix(PREFIX))
            .and_then(|rest| rest.split('-').next())
            .and_then(|pid| pid.parse::<u32>().ok())
        else {
            continue;
        };
        if !Path::new(&format!("/proc/{pid}")).exists() {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_folder_is_private_named_after_the_process_and_a_dead_ones_is_removed() {
        use std::os::unix::fs::PermissionsExt;
        let parent = tempfile::tempdir().unwrap();
        // What a killed agent-host left: no process has this id (above pid_max).
        let orphan = parent.path().join(format!("{PREFIX}4294967-abc"));
        std::fs::create_dir(&orphan).unwrap();
        std::fs::write(orphan.join("out.txt"), "old output").unwrap();
        let unrelated = parent.path().join("sessions");
        std::fs::create_dir(&unrelated).unwrap();
        std::fs::set_permissions(parent.path(), std::fs::Permissions::from_mode(0o755)).unwrap();

        let folder = ScratchFolder::create(Some(parent.path())).unwrap();
        assert!(!orphan.exists(), "a dead process's outputs are removed");
        assert!(unrelated.exists(), "nothing else is touched");
        let name = folder.path().file_name().unwrap().to_string_lossy().into_owned();
        assert!(
            name.starts_with(&format!("{PREFIX}{}-", std::process::id())),
            "{name}"
        );
        let mode = std::fs::metadata(folder.path()).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o700);
        let parent_mode = std::fs::metadata(parent.path()).unwrap().permissions().mode();
        assert_eq!(
            parent_mode & 0o777,
            0o700,
            "the folder of outputs is narrowed too"
        );
        let path = folder.path().to_path_buf();
        drop(folder);
        assert!(!path.exists(), "removed with the environment");
    }
}
