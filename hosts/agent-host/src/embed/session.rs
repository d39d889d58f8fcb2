//! An open session: submit inputs, read events, steer and interrupt.

use super::error::Error;
use super::events::Events;
use super::journaled::Journaled;
use crate::checkpoints::{Checkpoint, FileDiff, Restored};
use crate::environments::environment::Environment;
use crate::persist::store::SessionStore;
use crate::session_host::control::{AgentEvent, SessionControl};
use agent_protocol::{SessionConfig, SessionState, SubmitOutcome};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use tokio::sync::mpsc::UnboundedReceiver;

const NO_CHECKPOINTS: &str =
    "this session has none: only a local workspace that the session may change has checkpoints";

/// How deeply a reasoning model thinks, and why an input stopped: the protocol's own types.
pub use agent_protocol::{CompactionReport, CompactionStage, ReasoningEffort, StopReason};

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
#[derive(Clone)]
pub struct SessionOptions {
    /// `anthropic`, `openai`, `gemini` or a named OpenAI-compatible endpoint (default: the
    /// first configured of anthropic, openai, gemini). Ignored by a replay, whose recording
    /// names it (a different one is an error).
    pub provider: Option<String>,
    /// The tool profile (default: the endpoint protocol's, `compact` for Chat Completions).
    pub profile: Option<agent_protocol::Profile>,
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
    /// A whole session configuration, as an application resolved it (the command line
    /// builds one from its layered settings); `provider`, `model`, `max_turns`,
    /// `max_tool_rounds`, `reasoning_effort` and `instructions` are then not used.
    pub config: Option<SessionConfig>,
    /// Where the agent's tools run (default: the local machine in `workspace`): an SSH
    /// host, policy wrappers, an application's own; wrapped read-only when `read_only`.
    pub environment: Option<Arc<dyn Environment>>,
    /// Save the session there as it goes, for [`super::Host::resume_session`] (default: not
    /// saved; a trap of the instance is recovered from the journal in memory either way).
    pub store: Option<SessionStore>,
}

impl std::fmt::Debug for SessionOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SessionOptions")
            .field("provider", &self.provider)
            .field("model", &self.model)
            .field("workspace", &self.workspace)
            .field("read_only", &self.read_only)
            .field("config", &self.config.as_ref().map(|c| (&c.endpoint, &c.model)))
            .field("store", &self.store.as_ref().map(SessionStore::root))
            .finish_non_exhaustive()
    }
}

impl Default for SessionOptions {
    fn default() -> Self {
        Self {
            provider: None,
            profile: None,
            model: None,
            workspace: PathBuf::from("."),
            max_turns: 0,
            max_tool_rounds: 0,
            reasoning_effort: None,
            instructions: None,
            read_only: false,
            record: None,
            replay: None,
            config: None,
            environment: None,
            store: None,
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

    /// Forgets a cancel that came after its input had ended (a client's late cancel), so
    /// it cannot stop the next input at its start; an abort stays.
    pub fn clear_cancel(&self) {
        self.control.clear_cancel();
    }

    /// The steering messages the model has not seen yet, taken back (e.g. typed while its
    /// final answer streamed: the application may send them as the next input instead).
    pub fn take_steering(&self) -> Vec<String> {
        self.control.take_steering()
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
///
/// Its history is journaled as it grows (to its store when it has one), so a trap of the
/// component is recovered from: the instance is replaced by one resumed from the journal
/// (a `WARNING` event of kind `instance_restarted` says so) and the input goes on.
pub struct Session {
    inner: tokio::sync::Mutex<Journaled>,
    handle: SessionHandle,
    events: Mutex<Option<UnboundedReceiver<AgentEvent>>>,
    id: String,
    dir: Option<PathBuf>,
}

impl Session {
    pub(crate) fn new(session: Journaled, events: UnboundedReceiver<AgentEvent>) -> Self {
        Self {
            id: session.id().to_string(),
            dir: session.dir(),
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

    /// The folder the session is saved in (`None` when it has no store).
    pub fn dir(&self) -> Option<&Path> {
        self.dir.as_deref()
    }

    /// The session's events from its start (`SESSION_START` first), continuous across a
    /// restarted instance. The first call takes the stream; later calls get one that has
    /// already ended.
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
    /// stream meanwhile. [`Error::Busy`] if another `submit` of this session runs;
    /// [`Error::Trap`] only when the component trapped again after a restart.
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

    /// The lifecycle state (`Closed` after an LLM error, an abort or `close`).
    pub async fn state(&self) -> Result<SessionState, Error> {
        self.inner.lock().await.state().await.map_err(Error::trap)
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

    /// Everything needed to restore the session elsewhere, as the core's snapshot JSON.
    pub async fn snapshot(&self) -> Result<String, Error> {
        self.inner.lock().await.snapshot().await.map_err(Error::trap)
    }

    /// The profile as the session uses it (capabilities, tools, system prompt), as JSON.
    pub async fn describe(&self) -> Result<serde_json::Value, Error> {
        let text = self.inner.lock().await.describe().await.map_err(Error::trap)?;
        serde_json::from_str(&text)
            .map_err(|e| Error::Internal(format!("the component described its profile in bad JSON: {e}")))
    }

    /// Makes the history smaller now: old tool outputs are elided and the older turns
    /// replaced by a summary the model writes; the recent turns stay. A COMPACTION event
    /// reports it. Compaction also runs by itself before a request that would fill the
    /// context window; this is for a host that wants room now (chat's `/compact`). A
    /// failed summary leaves the session usable ([`Error::Llm`] names why).
    pub async fn compact(&self) -> Result<CompactionReport, Error> {
        let mut session = self.inner.try_lock().map_err(|_| Error::Busy)?;
        match session.compact().await {
            Err(trap) => Err(Error::trap(trap)),
            Ok(Err(error)) => Err(error.into()),
            Ok(Ok(report)) => Ok(report),
        }
    }

    /// Continues the conversation of a session an LLM error closed, in a fresh instance;
    /// same events, handle and store.
    pub async fn reopen(&self) -> Result<(), Error> {
        self.inner.lock().await.reopen().await.map_err(Error::trap)
    }

    /// Goes on with another model (fixed when an instance is created: the conversation
    /// moves to a fresh one); saved, so a later resume uses it too.
    pub async fn switch_model(&self, model: &str) -> Result<(), Error> {
        self.inner
            .lock()
            .await
            .switch_model(model)
            .await
            .map_err(Error::trap)
    }

    /// How the session's tool calls are approved now.
    pub async fn approval_mode(&self) -> crate::approval::ApprovalMode {
        self.inner.lock().await.approval_mode()
    }

    /// Approves later tool calls in `mode` (the user changed it, as with the chat's
    /// `/approval`): read-only refuses changes and commands from the next call on, and
    /// leaving it lifts that (checkpoints start then). The conversation moves to a fresh
    /// instance, as for [`Session::switch_model`], which forgets "always" answers. Not
    /// saved: a resumed session takes the mode its host is given.
    pub async fn set_approval_mode(&self, mode: crate::approval::ApprovalMode) -> Result<(), Error> {
        self.inner
            .lock()
            .await
            .set_approval_mode(mode)
            .await
            .map_err(Error::trap)
    }

    /// Replaces the instance by a fresh one resumed from the journal, e.g. after
    /// [`Error::Trap`]; reported as a `WARNING` event naming `cause`.
    pub async fn restart(&self, cause: &str) -> Result<(), Error> {
        let mut session = self.inner.lock().await;
        session
            .restart(&anyhow::anyhow!(cause.to_string()))
            .await
            .map(drop)
            .map_err(Error::trap)
    }

    /// The checkpoints recorded before each input, oldest first (see
    /// [`crate::checkpoints`]).
    pub async fn checkpoints(&self) -> Result<Vec<Checkpoint>, Error> {
        let session = self.inner.lock().await;
        match session.list_checkpoints().await {
            Some(listed) => listed.map_err(|e| Error::Checkpoints(format!("{e:#}"))),
            None => Err(Error::Checkpoints(NO_CHECKPOINTS.to_string())),
        }
    }

    /// The files that differ now from the checkpoint recorded before input `input` (`None`:
    /// the first input, so everything the session changed so far), with their contents
    /// then and now.
    pub async fn changes_since(&self, input: Option<u32>) -> Result<Vec<FileDiff>, Error> {
        let session = self.inner.lock().await;
        match session.changes_since(input).await {
            Some(changes) => changes.map_err(|e| Error::Checkpoints(format!("{e:#}"))),
            None => Err(Error::Checkpoints(NO_CHECKPOINTS.to_string())),
        }
    }

    /// Puts the workspace's files back as they were before input `input` (numbered from
    /// 1, as [`Session::checkpoints`] lists them), saying which files changed; the model is
    /// told with the next input. [`Error::Busy`] while an input runs.
    pub async fn restore(&self, input: u32) -> Result<Restored, Error> {
        self.restore_to(Some(input)).await
    }

    /// [`Session::restore`] to the latest checkpoint: undoes the last input's changes (and
    /// any made since); again, it goes one input further back.
    pub async fn undo(&self) -> Result<Restored, Error> {
        self.restore_to(None).await
    }

    async fn restore_to(&self, input: Option<u32>) -> Result<Restored, Error> {
        let mut session = self.inner.try_lock().map_err(|_| Error::Busy)?;
        match session.restore(input).await {
            Some(restored) => restored.map_err(|e| Error::Checkpoints(format!("{e:#}"))),
            None => Err(Error::Checkpoints(NO_CHECKPOINTS.to_string())),
        }
    }

    /// Closes the session (`SESSION_END`, which ends [`Session::events`]) and its subagents,
    /// and makes its files durable. Waits for a running `submit`: [`Session::abort`] first
    /// to stop it.
    pub async fn close(&self) -> Result<(), Error> {
        self.inner.lock().await.close().await.map_err(Error::trap)
    }
}
