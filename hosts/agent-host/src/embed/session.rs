//! An open session: submit inputs, read events, steer and interrupt.

use super::error::Error;
use super::events::Events;
use crate::runtime::instance::AgentSession;
use crate::session_host::control::{AgentEvent, SessionControl};
use agent_protocol::SubmitOutcome;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use tokio::sync::mpsc::UnboundedReceiver;

/// How deeply a reasoning model thinks, and why an input stopped: the protocol's own types.
pub use agent_protocol::{ReasoningEffort, StopReason};

/// What a session runs with. Every field has a default; set what matters:
///
/// ```
/// use agent_host::embed::SessionOptions;
///
/// let options = SessionOptions {
///     provider: Some("anthropic".into()),
///     workspace: "/tmp/project".into(),
///     max_turns: 20,
///     ..SessionOptions::default()
/// };
/// # let _ = options;
/// ```
#[derive(Debug, Clone)]
pub struct SessionOptions {
    /// `anthropic`, `openai`, `gemini` or a named OpenAI-compatible endpoint (default: the
    /// first configured of anthropic, openai, gemini). Ignored by a replay, whose recording
    /// names it (a different one is an error).
    pub provider: Option<String>,
    /// The model (default: the profile's default; a named OpenAI-compatible endpoint needs
    /// one).
    pub model: Option<String>,
    /// The folder the agent works in (default: the current directory).
    pub workspace: PathBuf,
    /// Stop after this many LLM turns across the session (0 = unlimited).
    pub max_turns: u32,
    /// Stop an input after this many tool rounds (0 = unlimited).
    pub max_tool_rounds: u32,
    pub reasoning_effort: Option<ReasoningEffort>,
    /// Appended to the system prompt, with the highest precedence.
    pub instructions: Option<String>,
    /// Refuse file changes, commands, and host tools that are not `read` ones.
    pub read_only: bool,
    /// Write the session's LLM exchanges to this file (see [`crate::transport::format`]).
    pub record: Option<PathBuf>,
    /// Serve the LLM exchanges from this recording instead of the network; provider, model
    /// and protocol come from it.
    pub replay: Option<PathBuf>,
}

impl Default for SessionOptions {
    fn default() -> Self {
        Self {
            provider: None,
            model: None,
            workspace: PathBuf::from("."),
            max_turns: 0,
            max_tool_rounds: 0,
            reasoning_effort: None,
            instructions: None,
            read_only: false,
            record: None,
            replay: None,
        }
    }
}

impl SessionOptions {
    /// Defaults, working in `workspace`.
    pub fn in_workspace(workspace: impl Into<PathBuf>) -> Self {
        Self {
            workspace: workspace.into(),
            ..Self::default()
        }
    }
}

/// How an input ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outcome {
    pub stop_reason: StopReason,
    /// The model's final text.
    pub final_text: String,
    /// Tool rounds run for this input.
    pub rounds: u32,
    /// LLM turns used by the session so far.
    pub turns: u32,
}

impl From<SubmitOutcome> for Outcome {
    fn from(outcome: SubmitOutcome) -> Self {
        Self {
            stop_reason: outcome.stop_reason,
            final_text: outcome.final_text,
            rounds: outcome.rounds,
            turns: outcome.turns,
        }
    }
}

/// Steers and interrupts a session from anywhere (another task, a signal handler) while
/// [`Session::submit`] runs. Cheap to clone.
#[derive(Debug, Clone)]
pub struct SessionHandle {
    control: Arc<SessionControl>,
}

impl SessionHandle {
    /// Adds a message to the running input, seen by the model after the current tool round.
    pub fn steer(&self, message: impl Into<String>) {
        self.control.steer(message);
    }

    /// Queues an input to run after the current one, in the same `submit`.
    pub fn follow_up(&self, message: impl Into<String>) {
        self.control.follow_up(message);
    }

    /// Stops the current input (a streaming answer or running command is cut); the
    /// session stays usable.
    pub fn cancel(&self) {
        self.control.cancel();
    }

    /// Ends the session: the current input stops and the session closes.
    pub fn abort(&self) {
        self.control.abort();
    }
}

/// A conversation with the agent in its own component instance. `submit` takes `&self`,
/// so steering and interrupting work from the same owner or through a [`SessionHandle`]:
///
/// ```no_run
/// use agent_host::embed::{EventKind, Session, StopReason};
///
/// # async fn demo(session: Session) -> Result<(), agent_host::embed::Error> {
/// let mut events = session.events();
/// let handle = session.handle();
/// tokio::spawn(async move {
///     while let Some(event) = events.next().await {
///         // Redirect the agent when it runs its first tool; stop it on a warning.
///         if event.kind == EventKind::ToolCallStart {
///             handle.steer("Use Python 3.12 features only.");
///         } else if event.kind == EventKind::Warning {
///             handle.abort();
///         }
///     }
/// });
/// let outcome = session.submit("Port utils.py to dataclasses").await?;
/// if outcome.stop_reason == StopReason::Aborted {
///     eprintln!("stopped after {} turns", outcome.turns);
/// }
/// # Ok(())
/// # }
/// ```
pub struct Session {
    inner: tokio::sync::Mutex<AgentSession>,
    handle: SessionHandle,
    events: Mutex<Option<UnboundedReceiver<AgentEvent>>>,
    id: String,
}

impl Session {
    pub(crate) fn new(session: AgentSession, events: UnboundedReceiver<AgentEvent>) -> Self {
        Self {
            id: session.id().to_string(),
            handle: SessionHandle {
                control: session.controller(),
            },
            inner: tokio::sync::Mutex::new(session),
            events: Mutex::new(Some(events)),
        }
    }

    pub fn id(&self) -> &str {
        &self.id
    }

    /// The session's events from its start (`SESSION_START` first). The first call takes
    /// the stream; later calls get one that has already ended.
    pub fn events(&self) -> Events {
        let receiver = self
            .events
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .take();
        Events::new(receiver)
    }

    pub fn handle(&self) -> SessionHandle {
        self.handle.clone()
    }

    /// Runs the agent on `input` until it answers, hits a limit or is interrupted. Events
    /// stream meanwhile. [`Error::Busy`] if another `submit` of this session runs.
    pub async fn submit(&self, input: &str) -> Result<Outcome, Error> {
        let mut session = self.inner.try_lock().map_err(|_| Error::Busy)?;
        match session.submit(input).await {
            Err(trap) => Err(Error::trap(trap)),
            Ok(Err(error)) => Err(error.into()),
            Ok(Ok(outcome)) => Ok(outcome.into()),
        }
    }

    /// See [`SessionHandle::steer`].
    pub fn steer(&self, message: impl Into<String>) {
        self.handle.steer(message);
    }

    /// See [`SessionHandle::follow_up`].
    pub fn follow_up(&self, message: impl Into<String>) {
        self.handle.follow_up(message);
    }

    /// See [`SessionHandle::cancel`].
    pub fn cancel(&self) {
        self.handle.cancel();
    }

    /// See [`SessionHandle::abort`].
    pub fn abort(&self) {
        self.handle.abort();
    }

    /// Changes the reasoning effort from the next input on.
    pub async fn set_reasoning_effort(&self, effort: Option<ReasoningEffort>) -> Result<(), Error> {
        let mut session = self.inner.lock().await;
        session.set_reasoning_effort(effort).await.map_err(Error::trap)
    }

    /// The conversation so far, as the core's history JSON.
    pub async fn history_json(&self) -> Result<String, Error> {
        self.inner.lock().await.history_json().await.map_err(Error::trap)
    }

    /// Closes the session (`SESSION_END`, which ends [`Session::events`]) and its subagents.
    /// Waits for a running `submit`: [`Session::abort`] first to stop it.
    pub async fn close(&self) -> Result<(), Error> {
        self.inner.lock().await.close().await.map_err(Error::trap)
    }
}
