//! The writing side of a persistent session: the journal (event log, history journal,
//! description, last snapshot and the history since) and the pump that feeds it from an
//! instance's event channel.

use super::PersistError;
use super::log::{EventLog, JsonLog};
use super::store::{JournalLine, SavedSnapshot, SessionFiles, SessionMeta};
use super::{host_event, now_rfc3339};
use crate::session_host::control::{AgentEvent, HistorySink};
use agent_protocol::{EventData, Warning};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use tokio::sync::{mpsc, oneshot};

/// What the session has written, and what a restart resumes from.
pub(crate) struct Journal {
    pub files: Option<SessionFiles>,
    pub events: Option<EventLog>,
    pub history: Option<JsonLog<JournalLine>>,
    pub meta: SessionMeta,
    /// The last snapshot, and the history entries journaled since.
    pub base: String,
    pub entries: Vec<String>,
    /// The session's own input boundaries since the last snapshot (USER_INPUT,
    /// PROCESSING_END, ERROR): after a trap they tell whether the input was under way.
    pub boundaries: Vec<AgentEvent>,
    /// Whether writing failed (reported once; the session goes on).
    pub failed: bool,
    /// Where to report that, when it happens outside the event pump.
    pub out: Option<mpsc::UnboundedSender<AgentEvent>>,
}

impl Journal {
    pub fn new(files: Option<SessionFiles>, meta: SessionMeta, base: String) -> Self {
        Self {
            files,
            events: None,
            history: None,
            meta,
            base,
            entries: Vec::new(),
            boundaries: Vec::new(),
            failed: false,
            out: None,
        }
    }

    /// Logs an event; returns a warning to show if saving just started failing.
    pub fn record(&mut self, event: &AgentEvent) -> Option<AgentEvent> {
        let own = event.agent_id.is_none();
        let boundary = matches!(
            event.data,
            EventData::UserInput { .. } | EventData::ProcessingEnd { .. } | EventData::SessionEnd { .. }
        );
        if own && (boundary || matches!(event.data, EventData::Error { .. })) {
            self.boundaries.push(event.clone());
        }
        let mut result = self.events.as_mut().map_or(Ok(()), |log| log.append(event));
        if self.meta.observe(event) {
            result = result.and_then(|()| self.write_meta());
            if boundary {
                result = result.and_then(|()| self.sync_files());
            }
        }
        self.failure(&event.session_id, result)
    }

    /// Journals a history entry as the core wrote it. One that is not JSON (a core bug)
    /// cannot be kept; the warning says that the saved session ends before it.
    pub fn record_entry(&mut self, entry_json: &str) {
        let result = match serde_json::from_str::<serde_json::Value>(entry_json) {
            Ok(entry) => {
                self.entries.push(entry_json.to_string());
                self.history
                    .as_mut()
                    .map_or(Ok(()), |log| log.append(&JournalLine::Entry(entry)))
            }
            Err(error) => Err(PersistError::CorruptFile {
                path: self
                    .files
                    .as_ref()
                    .map(SessionFiles::history_path)
                    .unwrap_or_default(),
                message: format!("the core journaled a history entry that is not JSON ({error})"),
            }),
        };
        self.report(result);
    }

    /// Reports a failure to save outside the event pump (once, as a WARNING event).
    pub fn report(&mut self, result: Result<(), PersistError>) {
        let session = self.meta.id.clone();
        if let Some(warning) = self.failure(&session, result)
            && let Some(out) = &self.out
        {
            let _ = out.send(warning);
        }
    }

    fn failure(&mut self, session_id: &str, result: Result<(), PersistError>) -> Option<AgentEvent> {
        match result {
            Err(error) if !self.failed => {
                self.failed = true;
                tracing::warn!("{error}");
                Some(host_event(
                    session_id,
                    EventData::Warning(Warning::Persistence {
                        message: format!("the session is no longer saved: {error}"),
                    }),
                ))
            }
            _ => None,
        }
    }

    pub fn write_meta(&self) -> Result<(), PersistError> {
        self.files
            .as_ref()
            .map_or(Ok(()), |files| files.write_meta(&self.meta))
    }

    fn sync_files(&self) -> Result<(), PersistError> {
        self.events.as_ref().map_or(Ok(()), EventLog::sync)?;
        self.history.as_ref().map_or(Ok(()), JsonLog::sync)
    }

    /// `snapshot` covers every event and history entry journaled so far. It becomes what a
    /// restart resumes from even when saving it fails (the files stay consistent without it:
    /// the previous snapshot and the journal after it).
    pub fn checkpoint(&mut self, snapshot: String) -> Result<(), PersistError> {
        let saved = self.save_snapshot(&snapshot);
        self.base = snapshot;
        self.entries.clear();
        self.boundaries.clear();
        saved
    }

    fn save_snapshot(&self, snapshot: &str) -> Result<(), PersistError> {
        let (Some(files), Some(events), Some(history)) = (&self.files, &self.events, &self.history) else {
            return Ok(());
        };
        files.write_snapshot(&SavedSnapshot {
            events: events.len(),
            history: history.len(),
            taken: now_rfc3339(),
            session: serde_json::from_str(snapshot).map_err(|e| PersistError::CorruptFile {
                path: files.dir.clone(),
                message: format!("the core's snapshot is not JSON: {e}"),
            })?,
        })
    }

    pub fn sync(&self) {
        if let Err(error) = self.sync_files() {
            tracing::warn!("{error}");
        }
    }

    /// Makes the logs durable and lets go of them (and of their locks), so a closed session
    /// can be resumed while its handle still exists.
    pub fn release(&mut self) {
        self.sync();
        self.events = None;
        self.history = None;
    }
}

/// A session's history entries, into its journal as the core records them.
pub(crate) struct JournalSink(pub Arc<Mutex<Journal>>);

impl HistorySink for JournalSink {
    fn record(&self, entry_json: &str) {
        lock(&self.0).record_entry(entry_json);
    }
}

/// Moves events from an instance's channel to the journal, then to the application.
pub(crate) struct Pump {
    barrier: mpsc::UnboundedSender<oneshot::Sender<()>>,
}

impl Pump {
    pub fn spawn(
        mut events: mpsc::UnboundedReceiver<AgentEvent>,
        journal: Arc<Mutex<Journal>>,
        out: mpsc::UnboundedSender<AgentEvent>,
    ) -> Self {
        let (barrier, mut requests) = mpsc::unbounded_channel::<oneshot::Sender<()>>();
        let deliver = move |event: AgentEvent| {
            let warning = lock(&journal).record(&event);
            let _ = out.send(event);
            if let Some(warning) = warning {
                let _ = out.send(warning);
            }
        };
        tokio::spawn(async move {
            loop {
                tokio::select! {
                    event = events.recv() => match event {
                        Some(event) => deliver(event),
                        None => break,
                    },
                    request = requests.recv() => match request {
                        Some(done) => {
                            while let Ok(event) = events.try_recv() {
                                deliver(event);
                            }
                            let _ = done.send(());
                        }
                        None => {
                            while let Some(event) = events.recv().await {
                                deliver(event);
                            }
                            break;
                        }
                    },
                }
            }
        });
        Self { barrier }
    }

    /// Returns once every event already emitted is journaled.
    pub async fn drain(&self) {
        let (done, wait) = oneshot::channel();
        if self.barrier.send(done).is_ok() {
            let _ = wait.await;
        }
    }
}

pub(crate) fn lock(journal: &Mutex<Journal>) -> MutexGuard<'_, Journal> {
    journal.lock().unwrap_or_else(PoisonError::into_inner)
}
