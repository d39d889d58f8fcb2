//! Recording the workspace's state: every file a listing of the workspace sees, by content.
//!
//! The listing honours `.gitignore` (and `.ignore`) files, includes hidden files, and skips
//! `.git` folders, symbolic links and anything but regular files. Files are read through a
//! capability handle on the workspace, so a link swapped in mid-walk cannot make the
//! snapshot read outside it. Limits (see [`super::LIMITS`]) keep a huge workspace from
//! stalling an input: what they leave out is named and never deleted by a restore. So is a
//! file that holds a credential agent-host knows (an endpoint's key in `.env`): session
//! files never hold one (THREAT-MODEL.md, row 2), and a copy could not be redacted.

use super::objects::{Objects, hash};
use super::{CheckpointError, LIMITS};
use super::{confined, names};
use crate::environments::ignore_rules::{WalkRules, walker};
use cap_std::fs::Dir;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::time::UNIX_EPOCH;

/// One recorded file (states name files as [`names`] says).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileEntry {
    pub hash: String,
    pub size: u64,
    /// Modification time in nanoseconds, to reuse the hash of an unchanged file.
    pub modified_ns: u64,
    pub executable: bool,
}

/// The workspace's files at one moment.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct State {
    pub files: BTreeMap<String, FileEntry>,
    /// Files seen but not recorded (too large, unreadable, over the byte budget, or holding a
    /// credential agent-host knows, which its session files never hold).
    pub skipped: BTreeSet<String>,
    /// The listing stopped at the file limit, or could not read a folder: files it did not
    /// reach are unknown.
    pub partial: bool,
}

/// A file the listing found, before it is read.
pub struct Listed {
    /// Its name in a state (see [`names`]).
    pub path: String,
    /// Its path from the workspace, as the filesystem has it.
    pub relative: PathBuf,
    pub size: u64,
    pub modified_ns: u64,
    /// When the file was created, where the filesystem keeps it.
    pub born_ns: Option<u64>,
    pub executable: bool,
}

/// The workspace's regular files (relative, `/`-separated, sorted), at most `limit`; the
/// flag says whether the listing is incomplete (cut at the limit, or a folder or an entry
/// could not be read). What is under `excluded` (the session's own folder, should the state
/// directory be inside the workspace, and what the environment's policies deny) is left out.
pub fn list(workspace: &Path, excluded: &[PathBuf], limit: usize) -> (Vec<Listed>, bool) {
    let excluded = excluded.to_vec();
    // Ignore files are always recorded: one that hides itself must not escape an undo.
    let rules = WalkRules {
        skip_hidden: false,
        gitignore_needs_git: false,
        list_ignore_files: true,
    };
    let walker = walker(workspace, rules, move |entry| {
        entry.file_name() != ".git" && !excluded.iter().any(|x| entry.path().starts_with(x))
    })
    .sort_by_file_name(|a, b| a.cmp(b))
    .build();
    let mut listed = Vec::new();
    let mut incomplete = false;
    for entry in walker {
        let Ok(entry) = entry else {
            incomplete = true;
            continue;
        };
        if !entry.file_type().is_some_and(|t| t.is_file()) {
            continue;
        }
        // Under the workspace, as the walk starts there; a name that is not UTF-8 is
        // recorded like any other.
        let Ok(relative) = entry.path().strip_prefix(workspace) else {
            incomplete = true;
            continue;
        };
        if listed.len() == limit {
            return (listed, true);
        }
        let Ok(meta) = entry.metadata() else {
            incomplete = true;
            continue;
        };
        let modified_ns = modified_ns(&meta);
        listed.push(Listed {
            path: names::of(relative),
            relative: relative.to_path_buf(),
            size: meta.len(),
            modified_ns,
            born_ns: meta.created().ok().map(nanos),
            executable: meta.permissions().mode() & 0o111 != 0,
        });
    }
    (listed, incomplete)
}

fn modified_ns(meta: &std::fs::Metadata) -> u64 {
    meta.modified().ok().map_or(0, nanos)
}

fn nanos(time: std::time::SystemTime) -> u64 {
    time.duration_since(UNIX_EPOCH)
        .map(|d| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX))
        .unwrap_or(0)
}

/// Records the workspace's files into `objects`; a file whose size and modification time
/// match `previous` keeps its recorded hash without being read again.
pub fn record(
    workspace: &Path,
    excluded: &[PathBuf],
    objects: &Objects,
    previous: Option<&State>,
) -> Result<State, CheckpointError> {
    let root = Dir::open_ambient_dir(workspace, cap_std::ambient_authority())
        .map_err(|e| CheckpointError::io("open the workspace", workspace, e))?;
    let (listed, partial) = list(workspace, excluded, LIMITS.files);
    let mut state = State {
        partial,
        ..State::default()
    };
    let mut budget = LIMITS.bytes_read;
    let credentials = crate::secrets::known_matcher();
    for file in listed {
        let known = previous.and_then(|p| p.files.get(&file.path)).filter(|e| {
            e.size == file.size && e.modified_ns == file.modified_ns && objects.contains(&e.hash)
        });
        if let Some(entry) = known {
            let entry = FileEntry {
                executable: file.executable,
                ..entry.clone()
            };
            state.files.insert(file.path, entry);
            continue;
        }
        if file.size > LIMITS.file_bytes || file.size > budget {
            state.skipped.insert(file.path);
            continue;
        }
        let Ok(bytes) = confined::read(&root, file.relative.as_os_str(), LIMITS.file_bytes) else {
            state.skipped.insert(file.path);
            continue;
        };
        budget = budget.saturating_sub(bytes.len() as u64);
        if credentials.as_ref().is_some_and(|c| c.is_match(&bytes)) {
            state.skipped.insert(file.path);
            continue;
        }
        let hash = hash(&bytes);
        objects.put(&hash, &bytes)?;
        state.files.insert(
            file.path,
            FileEntry {
                hash,
                size: bytes.len() as u64,
                modified_ns: file.modified_ns,
                executable: file.executable,
            },
        );
    }
    Ok(state)
}
