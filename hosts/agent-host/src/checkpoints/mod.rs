//! Checkpoints and undo: before each input, the workspace's files are recorded in a
//! content store of the session's own (never the user's `.git`), so the files can be put
//! back as they were before any input: `agent-host undo`, chat's `/undo` and `/rewind`, and
//! [`crate::embed::Session::restore`].
//!
//! Recording at each input's start (as Claude Code does per prompt) covers every way the
//! input changes files: the file tools, commands (a formatter, `sed -i`), command tools and
//! plugins. What a checkpoint cannot see is stated in [`snapshot`] and [`restore`]: files a
//! `.gitignore` hides, `.git` folders, symbolic links, files beyond [`LIMITS`], and files
//! outside the workspace (`--allow-dir` roots, `/tmp`). Only local workspaces have
//! checkpoints; an SSH or an application's own environment has none.
//!
//! On disk, in the session's folder (or a temporary folder for a session without a store):
//! `checkpoints/index.json` (one entry per input: its number, its first line, when, and the
//! state), `checkpoints/states/ID.json` (a state: path to hash, size, time, executable bit, a
//! path that is not UTF-8 written as [`names`] says; equal states are stored once) and
//! `checkpoints/objects/HASH` (file contents, once each).

mod compare;
mod confined;
mod names;
mod objects;
mod restore;
mod snapshot;

pub use compare::FileDiff;
pub use restore::Changes;

use objects::{Objects, write_atomically};
use serde::{Deserialize, Serialize};
use snapshot::State;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, PoisonError};
use std::time::{SystemTime, UNIX_EPOCH};

/// How much a checkpoint records at most; what is past a limit is named and never deleted.
pub struct Limits {
    /// Files listed (a larger workspace's checkpoint is partial).
    pub files: usize,
    /// Largest single file recorded.
    pub file_bytes: u64,
    /// Bytes read for one checkpoint (unchanged files are not read again).
    pub bytes_read: u64,
}

/// Measured once on this machine (2 cores, a debug build, with a throwaway program): this repository's 443 files take 124 ms the first
/// time and 15 ms when unchanged; `/usr/share`, cut at 20,000 files, took 8.6 s and 394 MB.
/// A checkpoint's first record in a session is read and stored whole, so these bound what an
/// input in a huge folder costs: about 2 s and 128 MiB once, a listing after.
pub const LIMITS: Limits = Limits {
    files: 10_000,
    file_bytes: 4 * 1024 * 1024,
    bytes_read: 128 * 1024 * 1024,
};

#[derive(Debug, thiserror::Error)]
pub enum CheckpointError {
    #[error("cannot {what} {path}: {source}")]
    Io {
        what: &'static str,
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("the checkpoints are damaged: {0}")]
    Damaged(String),
    #[error("{0}")]
    NotFound(String),
    #[error(
        "the checkpoints are of {recorded}, not of {now} (the session was resumed elsewhere): they are not used there"
    )]
    OtherWorkspace { recorded: String, now: String },
}

impl CheckpointError {
    pub(crate) fn io(what: &'static str, path: &Path, source: std::io::Error) -> Self {
        Self::Io {
            what,
            path: path.to_path_buf(),
            source,
        }
    }
}

/// The state recorded before one input.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Checkpoint {
    /// The input's number in the session, from 1.
    pub input: u32,
    /// The input's first line, shortened.
    pub label: String,
    /// When it was recorded, in milliseconds since the Unix epoch.
    pub created_ms: u64,
    /// Files recorded.
    pub files: usize,
    /// Whether the workspace had more files than a checkpoint lists.
    pub partial: bool,
}

/// What [`Checkpoints::restore`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Restored {
    /// The files are as they were before this input.
    pub input: u32,
    pub changes: Changes,
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct Index {
    /// The workspace the states are of (canonical): never restored into another.
    #[serde(default)]
    workspace: String,
    /// What the session's policies deny inside it, left out of every listing (kept here for
    /// `agent-host undo`, which has no session).
    #[serde(default)]
    excluded: Vec<PathBuf>,
    next_input: u32,
    entries: Vec<Entry>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
struct Entry {
    input: u32,
    label: String,
    created_ns: u64,
    state: String,
    /// The state's file count and completeness, so a listing reads only the index.
    files: usize,
    partial: bool,
}

/// A session's checkpoints of one local workspace.
pub struct Checkpoints {
    dir: PathBuf,
    workspace: PathBuf,
    /// Left out of every listing: the session's folder (should the state directory be inside
    /// the workspace) and what the session's policies deny.
    excluded: Vec<PathBuf>,
    objects: Objects,
    /// Serialises recording and restoring; holds the last state for its file hashes.
    last: Mutex<Option<State>>,
    _temporary: Option<tempfile::TempDir>,
}

impl std::fmt::Debug for Checkpoints {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Checkpoints")
            .field("dir", &self.dir)
            .field("workspace", &self.workspace)
            .finish_non_exhaustive()
    }
}

impl Checkpoints {
    /// The checkpoints kept in `session_dir/checkpoints` for `workspace`; a session that had
    /// `inputs_so_far` inputs before it had checkpoints numbers its next input after them.
    /// `excluded`: what the session's policies deny (see
    /// [`crate::Environment::checkpoint_exclusions`]); `None` keeps what was saved.
    pub fn open(
        session_dir: &Path,
        workspace: &Path,
        inputs_so_far: u32,
        excluded: Option<Vec<PathBuf>>,
    ) -> Result<Self, CheckpointError> {
        let dir = session_dir.join("checkpoints");
        let mut checkpoints = Self::new(dir, workspace, session_dir.to_path_buf(), None)?;
        let mut index = checkpoints.index()?;
        if let Some(excluded) = excluded {
            index.excluded = excluded;
        }
        checkpoints
            .excluded
            .extend(index.excluded.iter().cloned().map(canonical));
        let here = checkpoints.workspace.to_string_lossy().into_owned();
        if index.workspace.is_empty() {
            index.workspace = here;
        } else if index.workspace != here {
            return Err(CheckpointError::OtherWorkspace {
                recorded: index.workspace,
                now: here,
            });
        }
        if index.entries.is_empty() && index.next_input <= inputs_so_far {
            index.next_input = inputs_so_far + 1;
        }
        checkpoints.save(&index)?;
        Ok(checkpoints)
    }

    /// Checkpoints for a session that is not saved, in a temporary folder in `state_dir`
    /// (agent-host's own, which sandboxed commands cannot read, unlike `/tmp`), removed
    /// with them; numbered after `inputs_so_far`, as [`Checkpoints::open`].
    pub fn temporary(
        workspace: &Path,
        state_dir: &Path,
        excluded: Vec<PathBuf>,
        inputs_so_far: u32,
    ) -> Result<Self, CheckpointError> {
        let parent = state_dir.join("checkpoints-unsaved");
        crate::private_files::create_private_dir(&parent)
            .map_err(|e| CheckpointError::io("create", &parent, e))?;
        let temporary = tempfile::Builder::new()
            .prefix("session-")
            .tempdir_in(&parent)
            .map_err(|e| CheckpointError::io("create a temporary folder in", &parent, e))?;
        let dir = temporary.path().to_path_buf();
        let mut checkpoints = Self::new(dir.clone(), workspace, dir, Some(temporary))?;
        checkpoints.excluded.extend(excluded.into_iter().map(canonical));
        if inputs_so_far > 0 {
            checkpoints.save(&Index {
                next_input: inputs_so_far + 1,
                ..Index::default()
            })?;
        }
        Ok(checkpoints)
    }

    fn new(
        dir: PathBuf,
        workspace: &Path,
        private: PathBuf,
        temporary: Option<tempfile::TempDir>,
    ) -> Result<Self, CheckpointError> {
        let workspace = workspace
            .canonicalize()
            .map_err(|e| CheckpointError::io("open the workspace", workspace, e))?;
        Ok(Self {
            objects: Objects::new(&dir),
            dir,
            workspace,
            // Compared with paths under the canonical workspace.
            excluded: vec![canonical(private)],
            last: Mutex::new(None),
            _temporary: temporary,
        })
    }

    pub fn workspace(&self) -> &Path {
        &self.workspace
    }

    /// Records the workspace before the next input (`input`: its text, for the label).
    /// Blocking: reads every file that changed since the last checkpoint.
    pub fn record(&self, input: &str) -> Result<Checkpoint, CheckpointError> {
        let mut last = self.last.lock().unwrap_or_else(PoisonError::into_inner);
        let mut index = self.index()?;
        if last.is_none() {
            *last = match index.entries.last() {
                Some(entry) => Some(self.state(&entry.state)?),
                None => None,
            };
        }
        let started_ns = now_ns();
        let input_number = index.next_input.max(1);
        let state = match snapshot::record(&self.workspace, &self.excluded, &self.objects, last.as_ref()) {
            Ok(state) => state,
            Err(error) => {
                // The input runs without a checkpoint; the next one keeps its own number.
                index.next_input = input_number + 1;
                self.save(&index)?;
                return Err(error);
            }
        };
        let json = serde_json::to_vec(&state).map_err(|e| CheckpointError::Damaged(e.to_string()))?;
        let id = objects::hash(&json);
        let path = self.dir.join("states").join(format!("{id}.json"));
        if !path.is_file() {
            write_atomically(&self.dir.join("states"), &path, &json)?;
        }
        let entry = Entry {
            input: input_number,
            label: label(input),
            created_ns: started_ns,
            state: id,
            files: state.files.len(),
            partial: state.partial,
        };
        let checkpoint = describe(&entry);
        index.entries.push(entry);
        index.next_input = input_number + 1;
        self.save(&index)?;
        *last = Some(state);
        Ok(checkpoint)
    }

    /// The checkpoints, oldest first.
    pub fn list(&self) -> Result<Vec<Checkpoint>, CheckpointError> {
        let _guard = self.last.lock().unwrap_or_else(PoisonError::into_inner);
        Ok(self.index()?.entries.iter().map(describe).collect())
    }

    /// Puts the workspace's files back as they were before input `input` (`None`: the
    /// latest checkpoint). When every file was restored, the checkpoints of that input and
    /// later ones are used up (the next `restore(None)` goes one input further back); after
    /// a failure they stay, to try again.
    pub fn restore(&self, input: Option<u32>) -> Result<Restored, CheckpointError> {
        let mut last = self.last.lock().unwrap_or_else(PoisonError::into_inner);
        let mut index = self.index()?;
        let position = match input {
            None => index.entries.len().checked_sub(1),
            Some(n) => index.entries.iter().position(|e| e.input == n),
        };
        let Some(position) = position else {
            return Err(CheckpointError::NotFound(not_found(input, &index.entries)));
        };
        let entry = index.entries[position].clone();
        let state = self.state(&entry.state)?;
        // File times change: the next checkpoint reads what it cannot trust.
        *last = None;
        let changes = restore::restore(
            &self.workspace,
            &self.excluded,
            &self.objects,
            &state,
            entry.created_ns,
        )?;
        if changes.failed.is_empty() {
            index.entries.truncate(position);
            self.save(&index)?;
        }
        let restored = Restored {
            input: entry.input,
            changes,
        };
        let note = self.dir.join(NOTE);
        let earlier = std::fs::read_to_string(&note).ok();
        write_atomically(&self.dir, &note, restored_note(&restored, earlier).as_bytes())?;
        Ok(restored)
    }

    /// The files that differ now from the checkpoint of `input` (`None`: the first one, so
    /// everything the session changed so far), by path.
    pub fn changes_since(&self, input: Option<u32>) -> Result<Vec<FileDiff>, CheckpointError> {
        let _guard = self.last.lock().unwrap_or_else(PoisonError::into_inner);
        let index = self.index()?;
        let entry = match input {
            None => index.entries.first(),
            Some(n) => index.entries.iter().find(|e| e.input == n),
        };
        let Some(entry) = entry else {
            return Err(CheckpointError::NotFound(not_found(input, &index.entries)));
        };
        let state = self.state(&entry.state)?;
        compare::changes_since(&self.workspace, &self.excluded, &self.objects, &state)
    }

    /// What the model should be told about restores since the last input (taken once): the
    /// conversation still says the files were changed. Kept on disk, so a restore by
    /// `agent-host undo` reaches a session resumed later.
    pub fn take_note(&self) -> Option<String> {
        let _guard = self.last.lock().unwrap_or_else(PoisonError::into_inner);
        let path = self.dir.join(NOTE);
        let note = std::fs::read_to_string(&path).ok()?;
        if let Err(error) = std::fs::remove_file(&path) {
            // Told again with the next input rather than never.
            tracing::warn!("cannot remove {}: {error}", path.display());
        }
        Some(note)
    }

    fn index(&self) -> Result<Index, CheckpointError> {
        let path = self.dir.join("index.json");
        match std::fs::read(&path) {
            Ok(bytes) => serde_json::from_slice(&bytes)
                .map_err(|e| CheckpointError::Damaged(format!("{}: {e}", path.display()))),
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => Ok(Index::default()),
            Err(error) => Err(CheckpointError::io("read", &path, error)),
        }
    }

    fn save(&self, index: &Index) -> Result<(), CheckpointError> {
        let json = serde_json::to_vec_pretty(index).map_err(|e| CheckpointError::Damaged(e.to_string()))?;
        write_atomically(&self.dir, &self.dir.join("index.json"), &json)
    }

    fn state(&self, id: &str) -> Result<State, CheckpointError> {
        let path = self.dir.join("states").join(format!("{id}.json"));
        let bytes = std::fs::read(&path).map_err(|e| CheckpointError::io("read", &path, e))?;
        serde_json::from_slice(&bytes)
            .map_err(|e| CheckpointError::Damaged(format!("{}: {e}", path.display())))
    }
}

const NOTE: &str = "restored-note.txt";

/// The note for the model about a restore (after an `earlier` one not delivered yet).
fn restored_note(restored: &Restored, earlier: Option<String>) -> String {
    const SHOWN: usize = 20;
    let changes = &restored.changes;
    let files: Vec<&str> = changes
        .restored
        .iter()
        .chain(&changes.removed)
        .map(String::as_str)
        .collect();
    let mut listed = match files.is_empty() {
        true => "no file differed".to_string(),
        // Quoted and escaped: the names are the model's and the repository's.
        false => files
            .iter()
            .take(SHOWN)
            .map(|f| format!("{f:?}"))
            .collect::<Vec<_>>()
            .join(", "),
    };
    if files.len() > SHOWN {
        listed.push_str(&format!(" and {} more", files.len() - SHOWN));
    }
    let note = format!(
        "[The user restored the workspace's files to how they were before input {} ({listed}). \
         Changes made to them since are gone; read files again before editing them.]",
        restored.input
    );
    match earlier {
        Some(earlier) => format!("{}\n{note}", earlier.trim_end()),
        None => note,
    }
}

fn describe(entry: &Entry) -> Checkpoint {
    Checkpoint {
        input: entry.input,
        label: entry.label.clone(),
        created_ms: entry.created_ns / 1_000_000,
        files: entry.files,
        partial: entry.partial,
    }
}

fn not_found(input: Option<u32>, entries: &[Entry]) -> String {
    let available: Vec<String> = entries.iter().map(|e| e.input.to_string()).collect();
    let which = match input {
        Some(n) => format!("there is no checkpoint before input {n}"),
        None => "there is no checkpoint to go back to".to_string(),
    };
    match available.is_empty() {
        true => format!("{which} (none recorded, or all used by earlier undos)"),
        false => format!(
            "{which}; checkpoints exist before inputs {}",
            available.join(", ")
        ),
    }
}

/// An input's first non-empty line, at most 60 characters.
fn label(input: &str) -> String {
    let line = input.lines().map(str::trim).find(|l| !l.is_empty()).unwrap_or("");
    match line.char_indices().nth(60) {
        Some((cut, _)) => format!("{}...", &line[..cut]),
        None => line.to_string(),
    }
}

/// `path` with links resolved, as the listing (under the canonical workspace) sees it; as
/// given when it does not exist.
fn canonical(path: PathBuf) -> PathBuf {
    path.canonicalize().unwrap_or(path)
}

fn now_ns() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX))
        .unwrap_or(0)
}

#[cfg(test)]
mod tests;
