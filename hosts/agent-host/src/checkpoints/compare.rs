//! What changed in the workspace since a checkpoint, file by file, for a diff (chat's
//! `/diff`): each recorded file whose content or executable bit differs now, or that is
//! gone, and each file the checkpoint did not hold and did not skip. Read like a restore
//! reads: every path reached without following links (see [`confined`]).

use super::CheckpointError;
use super::objects::Objects;
use super::restore::unchanged;
use super::snapshot::{self, State};
use super::{confined, names};
use cap_std::fs::Dir;
use std::path::{Path, PathBuf};

/// Files larger than this are reported without their contents.
const MAX_SHOWN_BYTES: u64 = 1024 * 1024;

/// One file that differs from the checkpoint. `None` where the file did not exist (or, for
/// `after`, is not a regular file any more); `too_large` where a side was not read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileDiff {
    /// Workspace-relative (a byte that is not UTF-8 written `\xNN`).
    pub path: String,
    pub before: Option<Vec<u8>>,
    pub after: Option<Vec<u8>>,
    pub too_large: bool,
}

pub fn changes_since(
    workspace: &Path,
    excluded: &[PathBuf],
    objects: &Objects,
    state: &State,
) -> Result<Vec<FileDiff>, CheckpointError> {
    let root = Dir::open_ambient_dir(workspace, cap_std::ambient_authority())
        .map_err(|e| CheckpointError::io("open the workspace", workspace, e))?;
    let mut diffs = Vec::new();
    for (name, entry) in &state.files {
        let Some(path) = names::path(name) else {
            continue;
        };
        if excluded.iter().any(|x| workspace.join(&path).starts_with(x)) {
            continue;
        }
        if unchanged(&root, &path, entry).unwrap_or(false) {
            continue;
        }
        let too_large = entry.size > MAX_SHOWN_BYTES;
        let before = match too_large {
            true => None,
            false => objects.get(&entry.hash).ok(),
        };
        let (after, after_too_large) = read_now(&root, &path);
        diffs.push(FileDiff {
            path: names::shown(name),
            before,
            after,
            too_large: too_large || after_too_large,
        });
    }
    let (current, _) = snapshot::list(workspace, excluded, usize::MAX);
    for file in current {
        // A file the checkpoint skipped, or did not reach, is not known to be new.
        if state.files.contains_key(&file.path) || state.skipped.contains(&file.path) || state.partial {
            continue;
        }
        let (after, too_large) = read_now(&root, file.relative.as_os_str());
        diffs.push(FileDiff {
            path: names::shown(&file.path),
            before: None,
            after,
            too_large,
        });
    }
    diffs.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(diffs)
}

/// The file's bytes now, unless it is gone, not a regular file, or too large (the flag).
fn read_now(root: &Dir, path: &std::ffi::OsStr) -> (Option<Vec<u8>>, bool) {
    match confined::metadata(root, path) {
        Ok(meta) if meta.is_file() && meta.len() > MAX_SHOWN_BYTES => (None, true),
        Ok(meta) if meta.is_file() => (confined::read(root, path, MAX_SHOWN_BYTES).ok(), false),
        _ => (None, false),
    }
}
