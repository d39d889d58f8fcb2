//! The writing side of a persistent session: the journal (log, description, last snapshot
//! and the events since) and the pump that feeds it from an instance's event channel.

use super::PersistError;
use super::log::EventLog;
use super::store::{SavedSnapshot, SessionFiles, SessionMeta};
use super::{host_event, now_rfc3339};
use crate::control::AgentEvent;
use serde_json::{Value, json};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use tokio::sync::{mpsc, oneshot};

/// What the session has written, and what a restart rebuilds from.
pub(super) struct Journal {
    pub files: Option<SessionFiles>,
    pub log: Option<EventLog>,
    pub meta: SessionMeta,
    /// The last snapshot, and the session's own history-making events since.
    pub base: Option<Value>,
    pub since: Vec<AgentEvent>,
    /// Whether writing failed (reported once; the session goes on).
    pub failed: bool,
}

/// The events the history is rebuilt from, and the input boundaries.
const JOURNALED: [&str; 9] = [
    "SESSION_START",
    "USER_INPUT",
    "ASSISTANT_TEXT_END",
    "TOOL_CALL_END",
    "STEERING_INJECTED",
    "LOOP_DETECTION",
    "PROCESSING_END",
    "ERROR",
    "SESSION_END",
];

impl Journal {
    /// Logs an event; returns a warning to show if saving just started failing.
    pub fn record(&mut self, event: &AgentEvent) -> Option<AgentEvent> {
        let own = event.agent_id.is_none();
        if own && JOURNALED.contains(&event.kind.as_str()) {
            self.since.push(event.clone());
        }
        let mut result = self.log.as_mut().map_or(Ok(()), |log| log.append(event));
        if self.meta.observe(event) {
            result = result.and_then(|()| self.write_meta());
            if matches!(
                event.kind.as_str(),
                "USER_INPUT" | "PROCESSING_END" | "SESSION_END"
            ) {
                result = result.and_then(|()| self.log.as_ref().map_or(Ok(()), EventLog::sync));
            }
        }
        match result {
            Err(error) if !self.failed => {
                self.failed = true;
                tracing::warn!("{error}");
                Some(host_event(
                    &event.session_id,
                    "WARNING",
                    json!({"kind": "persistence", "message": format!("the session is no longer saved: {error}")}),
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

    /// `snapshot` covers every event logged so far.
    pub fn checkpoint(&mut self, snapshot: Value) -> Result<(), PersistError> {
        if let (Some(files), Some(log)) = (&self.files, &self.log) {
            files.write_snapshot(&SavedSnapshot {
                events: log.len(),
                taken: now_rfc3339(),
                session: snapshot.clone(),
            })?;
        }
        self.base = Some(snapshot);
        self.since.clear();
        Ok(())
    }

    pub fn sync(&self) {
        if let Some(Err(error)) = self.log.as_ref().map(EventLog::sync) {
            tracing::warn!("{error}");
        }
    }
}

/// Moves events from an instance's channel to the journal, then to the application.
pub(super) struct Pump {
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

pub(super) fn lock(journal: &Mutex<Journal>) -> MutexGuard<'_, Journal> {
    journal.lock().unwrap_or_else(PoisonError::into_inner)
}
