//! The chat's session and its lifecycle: an embedding-API [`Session`], saved as it goes like
//! a `run` (unless `--no-persist`), so `agent-host resume` continues a chat. An input runs
//! on its own task while events stream; a trap is recovered by the session itself, a
//! session closed by an LLM error is reopened so the conversation goes on; `/model`,
//! `/effort` and `/reset` act on the idle session.

use super::file_changes::FileChanges;
use agent_host::Environment;
use agent_host::approval::ApprovalMode;
use agent_host::embed::{
    Error, Event, Events, Host, Outcome, ResumeOptions, Session, SessionHandle, SessionOptions,
};
use agent_host::persist::{SessionStore, StoredSession};
use agent_protocol::{ReasoningEffort, SessionConfig, SessionState};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;
use tokio::task::JoinHandle;

pub type SubmitResult = Result<Outcome, Error>;

/// How long quitting waits for an aborted input to wind down.
const ABORT_GRACE: Duration = Duration::from_secs(10);

/// What the session did next.
pub enum AgentWake {
    Event(Event),
    /// The input returned (`None`: its task panicked).
    Finished(Option<SubmitResult>),
}

/// The chat's approval mode, and the switch of the read-only wrapper around what the chat
/// runs itself (`!command`, plugins); the session has its own, which follows the same mode.
pub struct Mode {
    pub approval: ApprovalMode,
    pub read_only: Arc<AtomicBool>,
}

/// How an input ended.
pub struct Settled {
    pub outcome: Option<Outcome>,
    /// The agent's error or the component's trap, in words.
    pub error: Option<String>,
    /// Whether the error was an authentication failure (the caller adds a hint).
    pub auth_error: bool,
    /// Set when the session had to be restored into a new instance, saying how.
    pub restored: Option<String>,
}

pub struct Agent {
    host: Host,
    env: Arc<dyn Environment>,
    /// The configuration of the current session as the chat changed it (model, effort):
    /// `/reset` starts the next one with it.
    config: SessionConfig,
    /// Where sessions are saved (`None` with `--no-persist`: journaled in memory only).
    store: Option<SessionStore>,
    session: Arc<Session>,
    running: Option<JoinHandle<SubmitResult>>,
    events: Events,
    events_open: bool,
    /// Told of each new session, whose file changes the chat shows.
    changes: Arc<FileChanges>,
    mode: Mode,
}

impl Agent {
    pub async fn start(
        host: Host,
        env: Arc<dyn Environment>,
        config: SessionConfig,
        store: Option<SessionStore>,
        changes: Arc<FileChanges>,
        resume: Option<&StoredSession>,
        mode: Mode,
    ) -> Result<Self, Error> {
        let session = match resume {
            None => open(&host, &env, &config, store.as_ref()).await?,
            Some(stored) => {
                let options = ResumeOptions {
                    environment: Some(env.clone()),
                    model: Some(config.model.clone()),
                    more_turns: Some(config.limits.max_turns),
                    config: Some(config.clone()),
                    read_only: false,
                };
                host.resume_session(stored, options).await?
            }
        };
        changes.follow_session(session.id());
        Ok(Self {
            host,
            env,
            config,
            store,
            events: session.events(),
            session: Arc::new(session),
            running: None,
            events_open: true,
            changes,
            mode,
        })
    }

    pub fn approval(&self) -> ApprovalMode {
        self.mode.approval
    }

    /// Approves the session's later calls in `mode` (the conversation goes on in a fresh
    /// instance; "always" answers are forgotten).
    pub async fn set_approval(&mut self, mode: ApprovalMode) -> Result<(), Error> {
        // The chat's wrapper first: the session, leaving read-only, opens its checkpoints
        // through it, which finds no workspace while it still refuses.
        let before = self
            .mode
            .read_only
            .swap(mode == ApprovalMode::ReadOnly, Ordering::SeqCst);
        if let Err(error) = self.session.set_approval_mode(mode).await {
            self.mode.read_only.store(before, Ordering::SeqCst);
            return Err(error);
        }
        self.mode.approval = mode;
        Ok(())
    }

    /// Whether the session is saved (and can be resumed).
    pub fn is_saved(&self) -> bool {
        self.store.is_some()
    }

    pub fn config(&self) -> &SessionConfig {
        &self.config
    }

    pub fn session(&self) -> &Session {
        &self.session
    }

    /// Where the session's tools run (its sandbox), for `@file` and `!command`.
    pub fn environment(&self) -> Arc<dyn Environment> {
        self.env.clone()
    }

    /// The folder the agent works in.
    pub fn workspace(&self) -> std::path::PathBuf {
        self.env.working_directory().into()
    }

    pub fn session_id(&self) -> &str {
        self.session.id()
    }

    pub fn control(&self) -> SessionHandle {
        self.session.handle()
    }

    pub fn is_busy(&self) -> bool {
        self.running.is_some()
    }

    /// Runs `input` on its own task; false when busy.
    pub fn submit(&mut self, input: String) -> bool {
        if self.running.is_some() {
            return false;
        }
        let session = self.session.clone();
        self.running = Some(tokio::spawn(async move { session.submit(&input).await }));
        true
    }

    /// The next event, or the end of the running input; events come first so an input's
    /// last events are shown before its end. Never resolves when there is neither.
    pub async fn next(&mut self) -> AgentWake {
        let Self {
            events,
            events_open,
            running,
            ..
        } = self;
        loop {
            let running_now = running.is_some();
            tokio::select! {
                biased;
                event = events.next(), if *events_open => match event {
                    Some(event) => return AgentWake::Event(event),
                    None => *events_open = false,
                },
                joined = async {
                    match running.as_mut() {
                        Some(handle) => handle.await,
                        None => std::future::pending().await,
                    }
                }, if running_now => {
                    *running = None;
                    return AgentWake::Finished(joined.ok());
                }
                else => return std::future::pending().await,
            }
        }
    }

    /// Events already sent and not yet taken.
    pub fn drain_events(&mut self) -> Vec<Event> {
        std::iter::from_fn(|| self.events.try_next()).collect()
    }

    /// After an input: keeps the conversation usable.
    pub async fn settle(&mut self, finished: Option<SubmitResult>) -> Settled {
        let mut settled = Settled {
            outcome: None,
            error: None,
            auth_error: false,
            restored: None,
        };
        match finished {
            None => {
                settled.error = Some("the input's task failed unexpectedly".to_string());
                settled.restored = Some(self.recover("the input's task failed").await);
                return settled;
            }
            Some(Ok(outcome)) => settled.outcome = Some(outcome),
            Some(Err(Error::Trap(trap))) => {
                settled.error = Some(trap.clone());
                settled.restored = Some(self.recover(&trap).await);
                return settled;
            }
            Some(Err(error)) => {
                settled.auth_error =
                    matches!(&error, Error::Llm(text) if text.starts_with("authentication error"));
                settled.error = Some(error.to_string());
            }
        }
        if matches!(self.session.state().await, Ok(SessionState::Closed)) {
            // An LLM error closes the session; the conversation itself is intact.
            settled.restored = Some(match self.session.reopen().await {
                Ok(()) => "the conversation continues in a restored session".to_string(),
                Err(e) => format!("the session could not be restored ({e}); /reset starts a new one"),
            });
        }
        settled
    }

    /// After a trap the session could not recover from within its input (it restarts its
    /// instance itself, and once more after a second trap), or a task that failed: makes
    /// sure an instance takes the next input, else starts a new session. Says which.
    async fn recover(&mut self, cause: &str) -> String {
        const RESTARTED: &str = "the session was restarted with its history up to its last completed event";
        if self.session.state().await.is_ok() || self.session.restart(cause).await.is_ok() {
            return RESTARTED.to_string();
        }
        match self.reset().await {
            Ok(()) => format!("started a new session {}", self.session.id()),
            Err(e) => format!("could not start a new session: {e}"),
        }
    }

    pub async fn set_effort(&mut self, effort: Option<ReasoningEffort>) -> Result<(), Error> {
        self.session.set_reasoning_effort(effort).await?;
        self.config.reasoning_effort = effort;
        Ok(())
    }

    /// The session's model is fixed when its instance is created: the session moves the
    /// conversation to a new instance with the model changed, in the same saved session.
    pub async fn switch_model(&mut self, model: &str) -> Result<(), Error> {
        self.session.switch_model(model).await?;
        self.config.model = model.to_string();
        Ok(())
    }

    /// Closes the session and starts a new one (saved under its own id) with the same
    /// configuration.
    pub async fn reset(&mut self) -> Result<(), Error> {
        let mut config = self.config.clone();
        config.session_id = None;
        let session = open(&self.host, &self.env, &config, self.store.as_ref()).await?;
        // The host opens sessions in the mode the chat started in.
        if session.approval_mode().await != self.mode.approval
            && let Err(error) = session.set_approval_mode(self.mode.approval).await
        {
            let _ = session.close().await;
            return Err(error);
        }
        self.changes.follow_session(session.id());
        let _ = self.session.close().await;
        self.events = session.events();
        self.events_open = true;
        self.session = Arc::new(session);
        Ok(())
    }

    /// Ends the session: a running input is aborted (its command killed) and given a
    /// moment to return, then the session is closed with its subagents. An input that does
    /// not wind down is cancelled (dropping it releases the session for `close`), and the
    /// close is bounded too. Returns false when something is still running: an instance
    /// spinning in wasm never reaches an `.await`, so only ending the process stops it.
    pub async fn shutdown(&mut self) -> bool {
        let mut stopped = true;
        if let Some(mut handle) = self.running.take() {
            self.session.abort();
            if tokio::time::timeout(ABORT_GRACE, &mut handle).await.is_err() {
                tracing::warn!("the input did not stop within {ABORT_GRACE:?}; cancelling it");
                handle.abort();
                stopped = tokio::time::timeout(ABORT_GRACE, handle).await.is_ok();
            }
        }
        if tokio::time::timeout(ABORT_GRACE, self.session.close())
            .await
            .is_err()
        {
            tracing::warn!("the session did not close within {ABORT_GRACE:?}; leaving it");
            stopped = false;
        }
        stopped
    }
}

async fn open(
    host: &Host,
    env: &Arc<dyn Environment>,
    config: &SessionConfig,
    store: Option<&SessionStore>,
) -> Result<Session, Error> {
    host.open_session(SessionOptions {
        config: Some(config.clone()),
        environment: Some(env.clone()),
        store: store.cloned(),
        ..SessionOptions::default()
    })
    .await
}
