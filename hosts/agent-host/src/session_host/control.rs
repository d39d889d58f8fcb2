//! The application's side of a running session: steering, follow-ups and interruptions in.
//! Shared between the session's store and any number of controllers. Events go out on a
//! channel owned by the store alone, so the stream ends when the session is dropped, however
//! many controllers are still around.

use agent_protocol::ports::Interruption;
use std::sync::Mutex;
use tokio::sync::watch;

/// One event of a session (or, with `agent_id`, of one of its subagents): the typed event
/// of `agent-protocol`, which is also the line format of `--json` output and event logs.
pub use agent_protocol::Event as AgentEvent;

/// Receives each history entry a session journals (`session-host.record-history`), as it
/// happens; a persistent session writes them to its journal. Entries stay the core's JSON:
/// the host only hands them back to a core on resume, so a host built against an older
/// contract still journals every entry rather than dropping the ones it cannot read.
pub trait HistorySink: Send + Sync {
    fn record(&self, entry_json: &str);
}

/// Queues and flags of one session.
#[derive(Debug)]
pub struct SessionControl {
    steering: Mutex<Vec<String>>,
    follow_ups: Mutex<Vec<String>>,
    interruption: watch::Sender<Option<Interruption>>,
}

impl SessionControl {
    pub fn new() -> Self {
        Self {
            steering: Mutex::new(Vec::new()),
            follow_ups: Mutex::new(Vec::new()),
            interruption: watch::Sender::new(None),
        }
    }

    /// Queues a message injected after the current tool round.
    pub fn steer(&self, message: impl Into<String>) {
        lock(&self.steering).push(message.into());
    }

    /// Queues an input processed after the current one completes.
    pub fn follow_up(&self, message: impl Into<String>) {
        lock(&self.follow_ups).push(message.into());
    }

    /// Stops the current input; the session stays usable.
    pub fn cancel(&self) {
        self.interruption.send_if_modified(|current| {
            let changed = current.is_none();
            current.get_or_insert(Interruption::CancelInput);
            changed
        });
    }

    /// Shuts the session down gracefully.
    pub fn abort(&self) {
        self.interruption.send_replace(Some(Interruption::AbortSession));
    }

    /// Clears a cancel once the input it stopped has returned (an abort stays).
    pub fn clear_cancel(&self) {
        self.interruption
            .send_if_modified(|current| current.take_if(|i| *i == Interruption::CancelInput).is_some());
    }

    pub fn interruption(&self) -> Option<Interruption> {
        *self.interruption.borrow()
    }

    /// Resolves when an interruption is requested.
    pub async fn interrupted(&self) {
        let mut rx = self.interruption.subscribe();
        let _ = rx.wait_for(Option::is_some).await;
    }

    pub fn take_steering(&self) -> Vec<String> {
        std::mem::take(&mut *lock(&self.steering))
    }

    pub fn take_follow_ups(&self) -> Vec<String> {
        std::mem::take(&mut *lock(&self.follow_ups))
    }
}

impl Default for SessionControl {
    fn default() -> Self {
        Self::new()
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}
