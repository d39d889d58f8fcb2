//! Sessions written as they go, so that a crash at any point loses nothing that was
//! written, and `resume` (or a trap) continues from there.
//!
//! # Layout
//!
//! Under the state directory ([`default_state_dir`]), each session has
//! `sessions/<session-id>/` with:
//!
//! - `history.jsonl`: the journal of what the model saw. Its first line is the session's
//!   snapshot when it was created; then every history entry the core hands the host
//!   (`session-host.record-history`) as it appends it: each input, each response exactly as
//!   the model produced it (reasoning with its signatures, Gemini's thought signatures,
//!   response ids), each tool result as its call ends (images included), each steering
//!   message. Appended and flushed to the OS per entry (a SIGKILL loses nothing), fsynced at
//!   input boundaries.
//! - `events.jsonl`: every [`AgentEvent`] of the session (subagents' included), one JSON
//!   object per line, appended as each event arrives and fsynced at input boundaries
//!   (`USER_INPUT`, `PROCESSING_END`, `SESSION_END`): what `sessions` and `resume` show, and
//!   how an interrupted input is found.
//! - `snapshot.json`: the core's own snapshot (`session.snapshot()`) and how many lines of
//!   each log it covers, replaced atomically (temporary file, fsync, rename) after every
//!   input.
//! - `meta.json`: what `agent-host sessions` lists (workspace, provider, model, first input,
//!   status, turns), replaced atomically at input boundaries.
//!
//! Both logs are locked while a process writes them; a torn last line (a crash mid-write)
//! is ignored with a warning on read, and cut off before the next append.
//!
//! # Resuming
//!
//! The core can only be snapshotted between inputs (`submit` holds the session), so a crash
//! in the middle of a long input would lose every tool round of it if snapshots were all.
//! The host never rebuilds the history itself: it hands the core the last snapshot and the
//! journal entries after it (`session.resume`), and the core appends them, skips those the
//! snapshot already holds, and closes a tool round the crash cut short (finished calls keep
//! their results; each unfinished one is marked interrupted, so the model neither loses nor
//! repeats work blindly). Without `snapshot.json` the journal's first line is the base.
//!
//! # Traps
//!
//! A session's `submit` ([`crate::embed::Session::submit`]) recovers from a trap of the component once per input: it
//! resumes the session in a fresh instance from the journal in memory (which keeps the
//! session's controller), reports a `WARNING` event (`kind: "instance_restarted"`), and
//! submits again: the input itself if the trap came before the core recorded it,
//! otherwise a message asking the model to continue it (the input is already in the
//! history). A second trap in the same input is returned as the error, after the session
//! was resumed once more so that it can take the next input.

pub(crate) mod journal;
pub mod log;
mod state_dir;
pub mod store;
pub mod summary;

pub use log::{EventLog, JsonLog, LogContents, read_events, read_lines};
pub(crate) use state_dir::state_dir_location;
pub use state_dir::{STATE_DIR_VAR, default_state_dir};
pub use store::{JournalLine, SavedSnapshot, SessionMeta, SessionStore, StoredSession};
pub use summary::{HistorySummary, continuation_prompt, interrupted_input, summarize};

use crate::session_host::control::AgentEvent;
use std::path::PathBuf;

/// Why a persisted session could not be written or read.
#[derive(Debug, thiserror::Error)]
pub enum PersistError {
    #[error("{path}: {source}")]
    Io { path: PathBuf, source: std::io::Error },
    #[error("{path}, line {line}: unreadable ({message})")]
    CorruptLog {
        path: PathBuf,
        line: usize,
        message: String,
    },
    #[error("{path}: {message}")]
    CorruptFile { path: PathBuf, message: String },
    #[error("no saved session has an id starting with {0:?} (agent-host sessions --all lists them)")]
    NotFound(String),
    #[error("{prefix:?} names several sessions ({candidates}); give more of the id")]
    Ambiguous { prefix: String, candidates: String },
    #[error("session {0} is in use by another agent-host process")]
    InUse(String),
}

impl PersistError {
    fn io(path: impl Into<PathBuf>) -> impl FnOnce(std::io::Error) -> Self {
        let path = path.into();
        move |source| Self::Io { path, source }
    }
}

/// An event the host itself reports into a session's stream (the core did not emit it).
pub(crate) fn host_event(session_id: &str, data: agent_protocol::EventData) -> AgentEvent {
    AgentEvent::new(session_id, now_ms(), data)
}

fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or_default()
}

/// The current time as RFC 3339 in UTC with milliseconds, which sorts as text.
fn now_rfc3339() -> String {
    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}
