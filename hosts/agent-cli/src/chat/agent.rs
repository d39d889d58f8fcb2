//! The chat's session and its lifecycle: a [`PersistentSession`], saved as it goes like a
//! `run` (unless `--no-persist`), so `agent-host resume` continues a chat. An input runs on
//! its own task (the session moves there and comes back), events stream meanwhile; a trap
//! is recovered by the session itself, a session closed by an LLM error is reopened so the
//! conversation goes on; `/model`, `/effort` and `/reset` act on the idle session.

use agent_host::persist::{PersistentSession, ResumeOverrides, SessionStore};
use agent_host::{AgentEvent, AgentRuntime, Environment, SessionControl};
use anyhow::Context;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

pub type SubmitResult = anyhow::Result<Result<agent_protocol::SubmitOutcome, agent_protocol::AgentError>>;

/// How long quitting waits for an aborted input to wind down.
const ABORT_GRACE: Duration = Duration::from_secs(10);

/// What the session did next.
pub enum AgentWake {
    Event(AgentEvent),
    /// The input returned (`None`: its task panicked and the session is lost).
    Finished(Option<Box<(PersistentSession, SubmitResult)>>),
}

/// How an input ended, once the session is back.
pub struct Settled {
    pub outcome: Option<agent_protocol::SubmitOutcome>,
    /// The agent's error or the component's trap, in words.
    pub error: Option<String>,
    /// Whether the error was an authentication failure (the caller adds a hint).
    pub auth_error: bool,
    /// Set when the session had to be restored into a new instance, saying how.
    pub restored: Option<String>,
}

pub struct Agent {
    runtime: AgentRuntime,
    env: Arc<dyn Environment>,
    /// The configuration of the current session as the chat changed it (model, effort):
    /// `/reset` starts the next one with it.
    config: agent_protocol::SessionConfig,
    /// Where sessions are saved (`None` with `--no-persist`: journaled in memory only).
    store: Option<SessionStore>,
    session: Option<PersistentSession>,
    /// The current session's id, also while its input runs.
    id: String,
    running: Option<JoinHandle<(PersistentSession, SubmitResult)>>,
    events: mpsc::UnboundedReceiver<AgentEvent>,
    events_open: bool,
    control: Arc<SessionControl>,
}

impl Agent {
    pub async fn start(
        runtime: AgentRuntime,
        env: Arc<dyn Environment>,
        config: agent_protocol::SessionConfig,
        store: Option<SessionStore>,
    ) -> anyhow::Result<Self> {
        let (session, events) =
            PersistentSession::start(&runtime, config.clone(), env.clone(), store.as_ref())
                .await
                .context("the component failed to start a session")?;
        Ok(Self {
            runtime,
            env,
            config,
            store,
            control: session.controller(),
            id: session.id().to_string(),
            session: Some(session),
            running: None,
            events,
            events_open: true,
        })
    }

    /// Whether the session is saved (and can be resumed).
    pub fn is_saved(&self) -> bool {
        self.store.is_some()
    }

    pub fn config(&self) -> &agent_protocol::SessionConfig {
        &self.config
    }

    pub fn session_id(&self) -> &str {
        &self.id
    }

    pub fn control(&self) -> &Arc<SessionControl> {
        &self.control
    }

    pub fn is_busy(&self) -> bool {
        self.running.is_some()
    }

    /// Runs `input` on its own task; false when busy or without a session.
    pub fn submit(&mut self, input: String) -> bool {
        if self.running.is_some() {
            return false;
        }
        let Some(mut session) = self.session.take() else {
            return false;
        };
        self.running = Some(tokio::spawn(async move {
            let result = session.submit(&input).await;
            (session, result)
        }));
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
                event = events.recv(), if *events_open => match event {
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
                    return AgentWake::Finished(joined.ok().map(Box::new));
                }
                else => return std::future::pending().await,
            }
        }
    }

    /// Events already sent and not yet taken.
    pub fn drain_events(&mut self) -> Vec<AgentEvent> {
        let mut drained = Vec::new();
        while let Ok(event) = self.events.try_recv() {
            drained.push(event);
        }
        drained
    }

    /// Takes the session back after an input and keeps the conversation usable.
    pub async fn settle(&mut self, finished: Option<Box<(PersistentSession, SubmitResult)>>) -> Settled {
        let mut settled = Settled {
            outcome: None,
            error: None,
            auth_error: false,
            restored: None,
        };
        let Some((session, result)) = finished.map(|f| *f) else {
            settled.error = Some("the input's task failed unexpectedly".to_string());
            settled.restored = Some(self.recover_lost().await);
            return settled;
        };
        self.session = Some(session);
        match result {
            Ok(Ok(outcome)) => settled.outcome = Some(outcome),
            Ok(Err(error)) => {
                settled.auth_error = matches!(&error, agent_protocol::AgentError::Llm(text) if text.starts_with("authentication error"));
                settled.error = Some(agent_host::runtime::describe_agent_error(&error));
            }
            Err(trap) => {
                settled.error = Some(format!("{trap:#}"));
                settled.restored = Some(self.recover_from_trap(&trap).await);
                return settled;
            }
        }
        let Some(session) = self.session.as_mut() else {
            return settled;
        };
        if matches!(session.state().await, Ok(agent_protocol::SessionState::Closed)) {
            // An LLM error closes the session; the conversation itself is intact.
            settled.restored = Some(match session.reopen().await {
                Ok(()) => "the conversation continues in a restored session".to_string(),
                Err(e) => format!("the session could not be restored ({e:#}); /reset starts a new one"),
            });
        }
        settled
    }

    /// After a trap the session could not recover from within its input (it restarts its
    /// instance itself, and once more after a second trap): makes sure an instance takes
    /// the next input, else starts a new session. Says which.
    async fn recover_from_trap(&mut self, trap: &anyhow::Error) -> String {
        if let Some(session) = self.session.as_mut() {
            if session.state().await.is_ok() {
                return "the session was restarted with its history up to its last completed event"
                    .to_string();
            }
            if session.restart(trap).await.is_ok() {
                return "the session was restarted with its history up to its last completed event"
                    .to_string();
            }
        }
        self.start_over().await
    }

    /// After the input's task panicked with the session: a saved session is resumed from
    /// its files, else a new one is started. Says which.
    async fn recover_lost(&mut self) -> String {
        if let Some(store) = &self.store {
            let overrides = ResumeOverrides {
                model: Some(self.config.model.clone()),
                more_turns: None,
            };
            let resumed = match store.load(&self.id) {
                Ok(stored) => {
                    PersistentSession::resume(
                        &self.runtime,
                        &stored,
                        self.env.clone(),
                        Some(self.config.clone()),
                        &overrides,
                    )
                    .await
                }
                Err(e) => Err(e.into()),
            };
            if let Ok((session, events)) = resumed {
                self.install(session, events);
                return "resumed the saved session".to_string();
            }
        }
        self.start_over().await
    }

    async fn start_over(&mut self) -> String {
        match self.reset().await {
            Ok(()) => format!("started a new session {}", self.id),
            Err(e) => format!("could not start a new session: {e:#}"),
        }
    }

    fn install(&mut self, session: PersistentSession, events: mpsc::UnboundedReceiver<AgentEvent>) {
        self.control = session.controller();
        self.id = session.id().to_string();
        self.session = Some(session);
        self.events = events;
        self.events_open = true;
    }

    pub async fn set_effort(
        &mut self,
        effort: Option<agent_protocol::ReasoningEffort>,
    ) -> anyhow::Result<()> {
        let session = self.session.as_mut().context("no session")?;
        session.set_reasoning_effort(effort).await?;
        self.config.reasoning_effort = effort;
        Ok(())
    }

    /// The session's model is fixed when its instance is created: the session moves the
    /// conversation to a new instance with the model changed, in the same saved session.
    pub async fn switch_model(&mut self, model: &str) -> anyhow::Result<()> {
        let session = self.session.as_mut().context("no session")?;
        session.switch_model(model).await?;
        self.config.model = model.to_string();
        Ok(())
    }

    /// Closes the session and starts a new one (saved under its own id) with the same
    /// configuration.
    pub async fn reset(&mut self) -> anyhow::Result<()> {
        let mut config = self.config.clone();
        config.session_id = None;
        let (session, events) =
            PersistentSession::start(&self.runtime, config, self.env.clone(), self.store.as_ref()).await?;
        if let Some(mut old) = self.session.take() {
            let _ = old.close().await;
        }
        self.install(session, events);
        Ok(())
    }

    /// Ends the session: a running input is aborted (its command killed) and given a
    /// moment to return, then the session is closed with its subagents.
    pub async fn shutdown(&mut self) {
        if let Some(handle) = self.running.take() {
            self.control.abort();
            if let Ok(Ok((session, _))) = tokio::time::timeout(ABORT_GRACE, handle).await {
                self.session = Some(session);
            }
        }
        if let Some(session) = self.session.as_mut() {
            let _ = session.close().await;
        }
    }
}
