//! The sessions directory: one folder per session with its log, snapshot and description.

use super::log::{read_events, read_lines};
use super::summary::{HistorySummary, interrupted_input, summarize};
use super::{PersistError, now_rfc3339};
use crate::private_files::{create_private, create_private_dir};
use crate::session_host::control::AgentEvent;
use agent_protocol::EventData;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};

const EVENTS: &str = "events.jsonl";
const HISTORY: &str = "history.jsonl";
const SNAPSHOT: &str = "snapshot.json";
const META: &str = "meta.json";

/// What `agent-host sessions` shows of a session (`meta.json`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SessionMeta {
    pub id: String,
    /// RFC 3339, UTC.
    pub created: String,
    pub updated: String,
    /// The working directory the session's tools ran in.
    pub workspace: String,
    pub provider: String,
    pub model: String,
    pub endpoint: String,
    /// The first line of the session's first input.
    #[serde(default)]
    pub first_input: Option<String>,
    /// `new`, `running` (an input is under way, or the process died during one), the last
    /// input's stop reason (`completed`, `awaiting_input`, `cancelled`, `aborted`,
    /// `round_limit`, `turn_limit`, `context_length`), or `error`.
    pub status: String,
    #[serde(default)]
    pub inputs: u32,
    /// LLM turns so far.
    #[serde(default)]
    pub turns: u32,
}

impl SessionMeta {
    pub fn new(id: &str, workspace: &str) -> Self {
        let now = now_rfc3339();
        Self {
            id: id.to_string(),
            created: now.clone(),
            updated: now,
            workspace: workspace.to_string(),
            provider: String::new(),
            model: String::new(),
            endpoint: String::new(),
            first_input: None,
            status: "new".to_string(),
            inputs: 0,
            turns: 0,
        }
    }

    /// Takes in one of the session's events; true when it is a boundary worth saving.
    pub(crate) fn observe(&mut self, event: &AgentEvent) -> bool {
        if event.agent_id.is_some() {
            return false;
        }
        match &event.data {
            EventData::SessionStart { config } => {
                self.provider = config.provider.clone();
                self.model = config.model.clone();
                self.endpoint = config.endpoint.clone();
            }
            EventData::UserInput { content } => {
                self.inputs += 1;
                self.status = "running".to_string();
                if self.first_input.is_none() {
                    self.first_input = Some(content.lines().next().unwrap_or_default().to_string());
                }
            }
            EventData::ProcessingEnd {
                stop_reason, turns, ..
            } => {
                self.status = serde_json::to_value(stop_reason)
                    .ok()
                    .and_then(|v| v.as_str().map(str::to_string))
                    .unwrap_or_else(|| "completed".to_string());
                self.turns = *turns;
            }
            EventData::Error { .. } => self.status = "error".to_string(),
            EventData::SessionEnd { .. } => {}
            _ => return false,
        }
        self.updated = now_rfc3339();
        true
    }
}

/// `snapshot.json`: the core's snapshot and how many lines of each log it covers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SavedSnapshot {
    pub events: usize,
    /// Lines of `history.jsonl`.
    pub history: usize,
    pub taken: String,
    /// The core's snapshot as it produced it.
    pub session: Value,
}

/// A line of `history.jsonl`: the session's snapshot when it was created, then every
/// history entry the core journaled, in order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum JournalLine {
    Start(serde_json::Value),
    /// A `HistoryEntry` of `agent-protocol`, as the core wrote it (see `HistorySink`).
    Entry(serde_json::Value),
}

/// A session as saved, read back for `resume`.
#[derive(Debug, Clone)]
pub struct StoredSession {
    pub dir: PathBuf,
    pub meta: SessionMeta,
    pub snapshot: Option<SavedSnapshot>,
    pub events: Vec<AgentEvent>,
    pub journal: Vec<JournalLine>,
    /// Torn last lines of the logs, ignored.
    pub warnings: Vec<String>,
}

impl StoredSession {
    pub fn id(&self) -> &str {
        &self.meta.id
    }

    /// Whether a process has the session open now (its log is locked while it runs).
    pub fn in_use(&self) -> bool {
        in_use(&self.dir)
    }

    /// What the core resumes the session from: the last snapshot (`snapshot.json`, else
    /// the journal's first line) and the history entries journaled after it, as JSON.
    pub fn resume_point(&self) -> Result<(String, Vec<String>), PersistError> {
        let history = self.dir.join(HISTORY);
        if !history.exists() {
            return Err(PersistError::CorruptFile {
                path: history,
                message: "missing: the session was saved by an older agent-host and cannot be resumed; start a new one".to_string(),
            });
        }
        let (base, after) = match &self.snapshot {
            Some(saved) => (saved.session.clone(), saved.history),
            None => match self.journal.first() {
                Some(JournalLine::Start(snapshot)) => (snapshot.clone(), 1),
                _ => {
                    return Err(PersistError::CorruptFile {
                        path: self.dir.join(HISTORY),
                        message: "the journal does not start with the session's snapshot".to_string(),
                    });
                }
            },
        };
        let entries = self
            .journal
            .iter()
            .skip(after)
            .filter_map(|line| match line {
                JournalLine::Entry(entry) => Some(entry.to_string()),
                JournalLine::Start(_) => None,
            })
            .collect();
        Ok((base.to_string(), entries))
    }

    /// The input the session was working on when its process stopped, if any.
    pub fn interrupted_input(&self) -> Option<String> {
        interrupted_input(&self.events)
    }

    pub fn summary(&self) -> HistorySummary {
        summarize(&self.events)
    }
}

/// The state directory's `sessions/`.
#[derive(Debug, Clone)]
pub struct SessionStore {
    root: PathBuf,
}

impl SessionStore {
    /// Sessions under `state_dir/sessions`.
    pub fn new(state_dir: impl Into<PathBuf>) -> Self {
        Self {
            root: state_dir.into().join("sessions"),
        }
    }

    /// The store in [`super::default_state_dir`].
    pub fn open_default() -> Option<Self> {
        super::default_state_dir().map(Self::new)
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Every session, most recently updated first. Folders that are not readable sessions
    /// are skipped and named in the warnings.
    pub fn list(&self) -> Result<(Vec<SessionMeta>, Vec<String>), PersistError> {
        let mut sessions = Vec::new();
        let mut warnings = Vec::new();
        let entries = match std::fs::read_dir(&self.root) {
            Ok(entries) => entries,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok((sessions, warnings)),
            Err(e) => return Err(PersistError::io(&self.root)(e)),
        };
        for entry in entries.flatten() {
            let dir = entry.path();
            if !dir.is_dir() {
                continue;
            }
            match read_meta(&dir) {
                Ok(mut meta) => {
                    if meta.status == "running" && !in_use(&dir) {
                        meta.status = "interrupted".to_string();
                    }
                    sessions.push(meta);
                }
                Err(e) => warnings.push(e.to_string()),
            }
        }
        sessions.sort_by(|a, b| b.updated.cmp(&a.updated).then_with(|| a.id.cmp(&b.id)));
        Ok((sessions, warnings))
    }

    /// The folder of the session whose id is or starts with `prefix`.
    pub fn find(&self, prefix: &str) -> Result<PathBuf, PersistError> {
        let prefix = prefix.trim();
        if prefix.is_empty() {
            return Err(PersistError::NotFound(prefix.to_string()));
        }
        let exact = self.root.join(prefix);
        if !prefix.contains(['/', '\\']) && exact.join(META).is_file() {
            return Ok(exact);
        }
        let mut matches: Vec<String> = match std::fs::read_dir(&self.root) {
            Ok(entries) => entries
                .flatten()
                .filter_map(|e| e.file_name().into_string().ok())
                .filter(|name| name.starts_with(prefix))
                .collect(),
            Err(_) => Vec::new(),
        };
        matches.sort();
        match matches.as_slice() {
            [] => Err(PersistError::NotFound(prefix.to_string())),
            [one] => Ok(self.root.join(one)),
            many => Err(PersistError::Ambiguous {
                prefix: prefix.to_string(),
                candidates: many.join(", "),
            }),
        }
    }

    /// Reads the session `prefix` names.
    pub fn load(&self, prefix: &str) -> Result<StoredSession, PersistError> {
        let dir = self.find(prefix)?;
        let meta = read_meta(&dir)?;
        let snapshot_path = dir.join(SNAPSHOT);
        let snapshot = match std::fs::read(&snapshot_path) {
            Ok(bytes) => Some(
                serde_json::from_slice(&bytes).map_err(|e| PersistError::CorruptFile {
                    path: snapshot_path.clone(),
                    message: e.to_string(),
                })?,
            ),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(e) => return Err(PersistError::io(&snapshot_path)(e)),
        };
        let log = read_events(&dir.join(EVENTS))?;
        let history = dir.join(HISTORY);
        // Sessions of agent-host before the journal have none: they can still be shown.
        let (journal, journal_warning) = match history.exists() {
            true => {
                let read = read_lines::<JournalLine>(&history)?;
                (read.lines, read.warning)
            }
            false => (Vec::new(), None),
        };
        Ok(StoredSession {
            dir,
            meta,
            snapshot,
            events: log.events,
            journal,
            warnings: log.warning.into_iter().chain(journal_warning).collect(),
        })
    }

    /// A new session's folder, with its first `meta.json`.
    pub(crate) fn create(&self, meta: &SessionMeta) -> Result<SessionFiles, PersistError> {
        let dir = self.root.join(&meta.id);
        create_private_dir(&self.root).map_err(PersistError::io(&self.root))?;
        create_private_dir(&dir).map_err(PersistError::io(&dir))?;
        let files = SessionFiles { dir };
        files.write_meta(meta)?;
        Ok(files)
    }
}

/// Whether a process holds the session's log open for writing.
fn in_use(dir: &Path) -> bool {
    File::open(dir.join(EVENTS)).is_ok_and(|file| file.try_lock_shared().is_err())
}

fn read_meta(dir: &Path) -> Result<SessionMeta, PersistError> {
    let path = dir.join(META);
    let bytes = std::fs::read(&path).map_err(PersistError::io(&path))?;
    serde_json::from_slice(&bytes).map_err(|e| PersistError::CorruptFile {
        path,
        message: e.to_string(),
    })
}

/// The files of one session, for its writer.
#[derive(Debug, Clone)]
pub struct SessionFiles {
    pub dir: PathBuf,
}

impl SessionFiles {
    pub fn events_path(&self) -> PathBuf {
        self.dir.join(EVENTS)
    }

    pub fn history_path(&self) -> PathBuf {
        self.dir.join(HISTORY)
    }

    pub fn write_meta(&self, meta: &SessionMeta) -> Result<(), PersistError> {
        write_json_atomically(&self.dir.join(META), meta, true)
    }

    pub fn write_snapshot(&self, snapshot: &SavedSnapshot) -> Result<(), PersistError> {
        write_json_atomically(&self.dir.join(SNAPSHOT), snapshot, false)
    }
}

/// Replaces `path` so that a reader sees the old file or the new one, never a part: a
/// temporary file is written and synced, renamed over, and the rename made durable. Small
/// files people may read are pretty-printed; snapshots, which can be large, are not.
fn write_json_atomically(path: &Path, value: &impl Serialize, pretty: bool) -> Result<(), PersistError> {
    let encoded = match pretty {
        true => serde_json::to_vec_pretty(value),
        false => serde_json::to_vec(value),
    };
    let bytes = encoded.map_err(|e| PersistError::CorruptFile {
        path: path.to_path_buf(),
        message: format!("cannot encode: {e}"),
    })?;
    // As in the logs: a credential that reached the history is not written down.
    let bytes = crate::secrets::redact_known(&String::from_utf8_lossy(&bytes)).into_bytes();
    let temporary = path.with_extension("json.tmp");
    let mut file = create_private(&temporary).map_err(PersistError::io(&temporary))?;
    file.write_all(&bytes).map_err(PersistError::io(&temporary))?;
    file.sync_all().map_err(PersistError::io(&temporary))?;
    drop(file);
    std::fs::rename(&temporary, path).map_err(PersistError::io(path))?;
    if let Some(dir) = path.parent() {
        File::open(dir)
            .and_then(|d| d.sync_all())
            .map_err(PersistError::io(dir))?;
    }
    Ok(())
}
