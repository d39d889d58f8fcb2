//! Putting the workspace back to a recorded state.
//!
//! Every recorded file that differs (or is gone) gets its recorded bytes and executable bit
//! back. A file the state does not hold is removed only when the state is complete, did not
//! skip it, the ignore files (`.gitignore`, `.ignore`) are as the state holds them (so the
//! listing hides what it hid then), and the file was created after the state was recorded:
//! a file that predates the checkpoint is left and reported, never deleted. Every path is
//! reached without following links (see [`confined`]). Folders created since stay.

use super::CheckpointError;
use super::objects::{Objects, hash};
use super::snapshot::{self, FileEntry, State};
use super::{confined, names};
use cap_std::fs::{Dir, PermissionsExt};
use std::ffi::OsStr;
use std::path::{Path, PathBuf};

/// What a restore changed, by workspace-relative path (a byte that is not UTF-8 written
/// `\xNN`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Changes {
    /// Files written back with their recorded content (changed or deleted since).
    pub restored: Vec<String>,
    /// Files created since the checkpoint, removed.
    pub removed: Vec<String>,
    /// Files not in the checkpoint that were left as they are, and why.
    pub left: Vec<(String, String)>,
    /// Files that could not be restored or removed, and why.
    pub failed: Vec<(String, String)>,
}

/// How far a file's time may lag the clock the checkpoint was timed with: the kernel
/// stamps files from a coarse clock, up to a scheduler tick (10 ms at 100 Hz) behind, so a
/// file created just after a checkpoint can look older than it.
const CLOCK_SLACK_NS: u64 = 20_000_000;

pub fn restore(
    workspace: &Path,
    excluded: &[PathBuf],
    objects: &Objects,
    state: &State,
    recorded_ns: u64,
) -> Result<Changes, CheckpointError> {
    let root = Dir::open_ambient_dir(workspace, cap_std::ambient_authority())
        .map_err(|e| CheckpointError::io("open the workspace", workspace, e))?;
    let mut changes = Changes::default();
    for (name, entry) in &state.files {
        let shown = names::shown(name);
        let Some(path) = names::path(name) else {
            changes
                .failed
                .push((shown, "the checkpoint's name for it is damaged".to_string()));
            continue;
        };
        // Denied since it was recorded (a session resumed with another --deny-dir).
        if excluded.iter().any(|x| workspace.join(&path).starts_with(x)) {
            changes
                .left
                .push((shown, "the session now denies it".to_string()));
            continue;
        }
        match unchanged(&root, &path, entry) {
            Ok(true) => continue,
            Ok(false) => {}
            Err(reason) => {
                changes.failed.push((shown, reason));
                continue;
            }
        }
        let written = objects.get(&entry.hash).and_then(|bytes| {
            confined::write(&root, &path, &bytes, entry.executable)
                .map_err(|e| CheckpointError::io("write", Path::new(&path), e))
        });
        match written {
            Ok(()) => changes.restored.push(shown),
            Err(error) => changes.failed.push((shown, error.to_string())),
        }
    }
    // Unlimited: a file the listing did not reach could be neither removed nor reported.
    let (current, incomplete) = snapshot::list(workspace, excluded, usize::MAX);
    // The recorded ignore files were written back above; one that is new, or that failed,
    // could hide now what the checkpoint saw, or show what it did not.
    let ignores_differ = current
        .iter()
        .any(|f| is_ignore_file(&f.path) && !state.files.contains_key(&f.path))
        // A failed file is named as shown to people; its last part is still the file's name.
        || changes.failed.iter().any(|(shown, _)| is_ignore_file(shown));
    for file in current {
        if state.files.contains_key(&file.path) {
            continue;
        }
        let reason = if state.partial {
            Some("the checkpoint is incomplete (its file limit, or a folder it could not read)")
        } else if state.skipped.contains(&file.path) {
            Some("the checkpoint skipped it (too large, unreadable, or holding a credential)")
        } else if ignores_differ {
            Some("the ignore files differ from the checkpoint's, so it may have been hidden then")
        } else if file.born_ns.is_none() {
            // A modification time can be set (`touch`): it proves nothing.
            Some("its filesystem keeps no creation time to tell it is new")
        } else if file
            .born_ns
            .is_some_and(|born| born.saturating_add(CLOCK_SLACK_NS) < recorded_ns)
        {
            Some("it is older than the checkpoint")
        } else {
            None
        };
        let shown = names::shown(&file.path);
        if let Some(reason) = reason {
            changes.left.push((shown, reason.to_string()));
            continue;
        }
        match confined::remove(&root, file.relative.as_os_str()) {
            Ok(()) => changes.removed.push(shown),
            Err(error) => changes.failed.push((shown, error.to_string())),
        }
    }
    if incomplete {
        changes.failed.push((
            ".".to_string(),
            "some folders could not be read: files created there since were not removed".to_string(),
        ));
    }
    Ok(changes)
}

/// Whether the file a state names `name` is an ignore file, in whatever folder.
fn is_ignore_file(name: &str) -> bool {
    let file_name = names::file_name(name);
    file_name == b".gitignore" || file_name == b".ignore"
}

/// Whether `path` is a regular file with the recorded content and executable bit; an
/// error for what a file cannot replace (a folder now stands there).
pub(super) fn unchanged(root: &Dir, path: &OsStr, entry: &FileEntry) -> Result<bool, String> {
    let meta = match confined::metadata(root, path) {
        Ok(meta) => meta,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(false),
        Err(error) => return Err(error.to_string()),
    };
    if meta.is_dir() {
        return Err("a folder stands where the file was".to_string());
    }
    if !meta.is_file() || meta.len() != entry.size {
        return Ok(false);
    }
    let executable = meta.permissions().mode() & 0o111 != 0;
    let same = confined::read(root, path, entry.size).is_ok_and(|bytes| hash(&bytes) == entry.hash);
    Ok(same && executable == entry.executable)
}
