//! Sessions written as they go, so that a crash at any point loses nothing that was
//! written, and `resume` (or a trap) continues from there.
//!
//! # Layout
//!
//! Under the state directory ([`default_state_dir`]), each session has
//! `sessions/<session-id>/` with:
//!
//! - `events.jsonl`: every [`AgentEvent`] of the session (subagents' included), one JSON
//!   object per line, appended and flushed to the OS as each event arrives (so a SIGKILL
//!   loses nothing), fsynced at input boundaries (`USER_INPUT`, `PROCESSING_END`,
//!   `SESSION_END`). A torn last line (a crash mid-write) is ignored with a warning on read,
//!   and cut off before the next append. The file is locked while a process writes it.
//! - `snapshot.json`: the core's own snapshot (`session.snapshot()`, restored with
//!   `session.restore`) and the number of log lines it covers, replaced atomically (temporary
//!   file, fsync, rename) after every input.
//! - `meta.json`: what `agent-host sessions` lists (workspace, provider, model, first input,
//!   status, turns), replaced atomically at input boundaries.
//!
//! # Why the log, and not only snapshots, is the source of truth
//!
//! The core can only be snapshotted between inputs: `submit` holds the session (the
//! component answers `snapshot` with nothing while it runs, and the host cannot call into
//! an instance that is inside a call anyway). A crash in the middle of a long input would
//! otherwise lose every tool round of it. So the history is rebuilt ([`rebuild`]) from the
//! last snapshot plus the events logged after it: each history entry the core makes is
//! announced by an event (`USER_INPUT`, `ASSISTANT_TEXT_END` with the tool calls,
//! `TOOL_CALL_END` with the full output, `STEERING_INJECTED`, `LOOP_DETECTION`), and tool
//! outputs are truncated with the core's own code and the session's limits, exactly as the
//! core truncates them for its history. Before the first input completes there is no
//! snapshot: `SESSION_START` carries the configuration, and the history starts empty.
//!
//! What events do not carry, and rebuilt entries therefore lack: reasoning and its
//! signatures (unsigned reasoning cannot be sent back, so it is left out), Gemini's thought
//! signatures, response ids, and images returned by tools. The entries of completed inputs
//! come from snapshots and keep all of it. A round the crash cut short keeps the results
//! of its finished calls; each unfinished call gets an error result saying it was
//! interrupted, so the model neither loses nor repeats work blindly.
//!
//! # Traps
//!
//! [`PersistentSession::submit`] recovers from a trap of the component once per input: it
//! rebuilds the snapshot as above, restores it in a fresh instance that keeps the
//! session's controller, reports a `WARNING` event (`kind: "instance_restarted"`), and
//! submits again: the input itself if the trap came before the core recorded it,
//! otherwise a message asking the model to continue it (the input is already in the
//! history). A second trap in the same input is returned as the error, after the session
//! was restored once more so that it can take the next input.

mod journal;
mod log;
mod rebuild;
mod session;
mod store;

pub use log::{EventLog, LogContents, read_events};
pub use rebuild::{HistorySummary, interrupted_input, rebuild_snapshot, summarize};
pub use session::{PersistentSession, ResumeOverrides, continuation_prompt};
pub use store::{SavedSnapshot, SessionMeta, SessionStore, StoredSession};

use crate::control::AgentEvent;
use std::path::PathBuf;

/// Why a persisted session could not be written or read.
#[derive(Debug, thiserror::Error)]
pub enum PersistError {
    #[error("{path}: {source}")]
    Io { path: PathBuf, source: std::io::Error },
    #[error("{path}, line {line}: not an event ({message})")]
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
    #[error("cannot rebuild the session's history: {0}")]
    Rebuild(String),
}

impl PersistError {
    fn io(path: impl Into<PathBuf>) -> impl FnOnce(std::io::Error) -> Self {
        let path = path.into();
        move |source| Self::Io { path, source }
    }
}

/// Where sessions are kept: `$AGENT_HOST_STATE_DIR`, else the platform's state directory
/// (`$XDG_STATE_HOME`, `~/.local/state`) + `agent-host`, else `~/.local/state/agent-host`.
pub fn default_state_dir() -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os("AGENT_HOST_STATE_DIR").filter(|d| !d.is_empty()) {
        return Some(PathBuf::from(dir));
    }
    dirs::state_dir()
        .or_else(|| dirs::home_dir().map(|home| home.join(".local/state")))
        .map(|dir| dir.join("agent-host"))
}

/// An event the host itself reports into a session's stream (the core did not emit it).
pub(crate) fn host_event(session_id: &str, kind: &str, data: serde_json::Value) -> AgentEvent {
    AgentEvent {
        kind: kind.to_string(),
        session_id: session_id.to_string(),
        timestamp_ms: now_ms(),
        data,
        agent_id: None,
    }
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
