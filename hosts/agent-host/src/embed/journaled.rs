//! The session behind [`super::Session`]: an [`AgentSession`] whose events and history are
//! journaled as they arrive (to its store, or in memory only), which is snapshotted after
//! every input and which survives a trap of its instance (see `persist` for the files and
//! how a session is resumed).

use super::error::Error;
use crate::approval::ApprovalMode;
use crate::checkpoints::{Checkpoint, Checkpoints, FileDiff, Restored};
use crate::environments::environment::Environment;
use crate::environments::policy::ReadOnly;
use crate::persist::host_event;
use crate::persist::journal::{Journal, JournalSink, Pump, lock};
use crate::persist::log::{EventLog, JsonLog};
use crate::persist::store::{JournalLine, SessionFiles, SessionMeta, SessionStore, StoredSession};
use crate::persist::summary::{continuation_prompt, interrupted_input};
use crate::runtime::engine::{AgentRuntime, InstanceOptions};
use crate::runtime::instance::{AgentSession, describe_agent_error};
use crate::session_host::control::{AgentEvent, SessionControl};
use agent_protocol::{
    AgentError, CompactionReport, EventData, ReasoningEffort, ResumeRequest, SessionConfig, SessionState,
    SubmitOutcome, Warning,
};
use anyhow::Context;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use tokio::sync::mpsc;

/// A session's environment behind the read-only wrapper that follows its approval mode.
#[derive(Clone)]
pub(crate) struct SessionEnvironment {
    pub env: Arc<dyn Environment>,
    read_only: Arc<AtomicBool>,
}

impl SessionEnvironment {
    pub fn new(base: Arc<dyn Environment>, read_only: bool) -> Self {
        let switch = Arc::new(AtomicBool::new(read_only));
        Self {
            env: Arc::new(ReadOnly::switchable(base, switch.clone())),
            read_only: switch,
        }
    }

    #[cfg(test)]
    pub fn set_read_only(&self, read_only: bool) {
        self.read_only.store(read_only, Ordering::SeqCst);
    }
}

/// Changes a resumed session takes on.
#[derive(Debug, Clone, Default)]
pub struct ResumeOverrides {
    /// Another model of the same provider.
    pub model: Option<String>,
    /// How many more LLM turns the session may take (`Some(0)`: no limit; `None`: as saved).
    pub more_turns: Option<u32>,
}

/// A session written to its store as it goes (or only journaled in memory, without a
/// store, which still lets it recover from a trap). The same calls as [`AgentSession`];
/// its event stream is continuous across a restarted instance.
pub(crate) struct Journaled {
    runtime: AgentRuntime,
    env: Arc<dyn Environment>,
    subagent_config: Option<SessionConfig>,
    session: AgentSession,
    journal: Arc<Mutex<Journal>>,
    pump: Pump,
    out: mpsc::UnboundedSender<AgentEvent>,
    /// The workspace recorded before each input (`None`: not a local workspace, or
    /// read-only so far).
    checkpoints: Option<Arc<Checkpoints>>,
    /// Whether the environment refuses changes now (the approval mode is read-only).
    read_only: Arc<AtomicBool>,
    /// Inputs so far (saved ones included), which numbers checkpoints opened later.
    inputs: u32,
}

impl Journaled {
    /// Starts a new session; with a store, it is saved there under its id.
    pub async fn start(
        runtime: &AgentRuntime,
        config: SessionConfig,
        session_env: SessionEnvironment,
        store: Option<&SessionStore>,
    ) -> Result<(Self, mpsc::UnboundedReceiver<AgentEvent>), Error> {
        let env = session_env.env.clone();
        let subagent_config = Some(config.clone());
        // The journal exists before the instance, which records into it from its first call.
        let journal = Arc::new(Mutex::new(Journal::new(
            None,
            SessionMeta::new("", &env.working_directory()),
            String::new(),
        )));
        let options = InstanceOptions {
            history: Some(Arc::new(JournalSink(journal.clone()))),
            ..InstanceOptions::default()
        };
        let (mut session, events) = runtime
            .start_session_with(config, env.clone(), options)
            .await
            .map_err(Error::trap)?;
        let base = session.snapshot().await.map_err(Error::trap)?;
        let session_dir = {
            let mut journal = lock(&journal);
            journal.meta = SessionMeta::new(session.id(), &env.working_directory());
            journal.base = base.clone();
            if let Some(store) = store {
                create_files(&mut journal, store, &base).map_err(Error::storage)?;
            }
            journal.files.as_ref().map(|f| f.dir.clone())
        };
        let checkpoints = checkpoints_for(runtime, env.as_ref(), session_dir.as_deref(), 0);
        Ok(Self::assemble(
            runtime,
            session_env,
            subagent_config,
            session,
            events,
            journal,
            (checkpoints, 0),
        ))
    }

    /// Continues a saved session in a fresh instance: the last snapshot plus the history
    /// journaled after it, with `overrides` applied; new events and entries go on in the same
    /// logs. `subagent_config` (the configuration a new session would get) lets it spawn
    /// subagents.
    pub async fn resume(
        runtime: &AgentRuntime,
        stored: &StoredSession,
        session_env: SessionEnvironment,
        subagent_config: Option<SessionConfig>,
        overrides: &ResumeOverrides,
    ) -> Result<(Self, mpsc::UnboundedReceiver<AgentEvent>), Error> {
        let env = session_env.env.clone();
        let files = SessionFiles {
            dir: stored.dir.clone(),
        };
        let (base, entries) = stored.resume_point().map_err(Error::storage)?;
        let (events_log, history_log) = open_logs(stored, &files).map_err(Error::storage)?;
        let mut meta = stored.meta.clone();
        meta.workspace = env.working_directory();
        if let Some(model) = &overrides.model {
            meta.model = model.clone();
        }
        let mut journal = Journal::new(Some(files), meta, String::new());
        journal.events = Some(events_log);
        journal.history = Some(history_log);
        let journal = Arc::new(Mutex::new(journal));
        let request = ResumeRequest {
            snapshot: base,
            journal: entries,
            model: overrides.model.clone(),
            more_turns: overrides.more_turns,
        };
        let options = InstanceOptions {
            control: None,
            history: Some(Arc::new(JournalSink(journal.clone()))),
            subagent_config: subagent_config.clone(),
            spending: None,
        };
        let (mut session, events) = runtime
            .resume_session(&request, env.clone(), options)
            .await
            .map_err(Error::trap)?
            .map_err(|e| {
                Error::Storage(format!(
                    "the component refused saved session {}: {}",
                    stored.id(),
                    describe_agent_error(&e)
                ))
            })?;
        let snapshot = session.snapshot().await.map_err(Error::trap)?;
        lock(&journal).checkpoint(snapshot).map_err(Error::storage)?;
        let inputs = u32::try_from(stored.summary().inputs.len()).unwrap_or(u32::MAX);
        let checkpoints = checkpoints_for(runtime, env.as_ref(), Some(&stored.dir), inputs);
        Ok(Self::assemble(
            runtime,
            session_env,
            subagent_config,
            session,
            events,
            journal,
            (checkpoints, inputs),
        ))
    }

    fn assemble(
        runtime: &AgentRuntime,
        session_env: SessionEnvironment,
        subagent_config: Option<SessionConfig>,
        session: AgentSession,
        events: mpsc::UnboundedReceiver<AgentEvent>,
        journal: Arc<Mutex<Journal>>,
        (checkpoints, inputs): (Option<Checkpoints>, u32),
    ) -> (Self, mpsc::UnboundedReceiver<AgentEvent>) {
        let (out, receiver) = mpsc::unbounded_channel();
        lock(&journal).out = Some(out.clone());
        let pump = Pump::spawn(events, journal.clone(), out.clone());
        let session = Self {
            runtime: runtime.clone(),
            env: session_env.env,
            subagent_config,
            session,
            journal,
            pump,
            out,
            checkpoints: checkpoints.map(Arc::new),
            read_only: session_env.read_only,
            inputs,
        };
        (session, receiver)
    }

    pub fn id(&self) -> &str {
        self.session.id()
    }

    /// The session's folder in the store (`None` when it is not saved).
    pub fn dir(&self) -> Option<std::path::PathBuf> {
        lock(&self.journal).files.as_ref().map(|f| f.dir.clone())
    }

    /// Steer, follow up and interrupt; the same controller stays valid across a restart.
    pub fn controller(&self) -> Arc<SessionControl> {
        self.session.controller()
    }

    /// Runs the loop on an input, like [`AgentSession::submit`], then saves a snapshot. A
    /// trap is recovered once (module documentation of `persist`); the outer error is a
    /// trap that recurred, or one the session could not be restored after.
    pub async fn submit(&mut self, input: &str) -> anyhow::Result<Result<SubmitOutcome, AgentError>> {
        self.inputs = self.inputs.saturating_add(1);
        let note = self.record_checkpoint(input).await;
        let noted;
        let input = match note {
            Some(note) => {
                noted = format!("{note}\n\n{input}");
                noted.as_str()
            }
            None => input,
        };
        // Where this input's boundaries start in the journal (no checkpoint happens meanwhile).
        let mark = lock(&self.journal).boundaries.len();
        let trap = match self.session.submit(input).await {
            Ok(result) => {
                self.checkpoint().await;
                return Ok(result);
            }
            Err(trap) => trap,
        };
        let since = self.restart(&trap).await.context(format!(
            "the component trapped ({trap:#}) and could not be restarted"
        ))?;
        let ours = &since[mark.min(since.len())..];
        let recorded = ours.iter().any(|e| matches!(e.data, EventData::UserInput { .. }));
        let retry = match interrupted_input(ours) {
            Some(interrupted) => continuation_prompt(&interrupted),
            None if !recorded => input.to_string(),
            None => return Err(trap.context("the component trapped after finishing the input")),
        };
        match self.session.submit(&retry).await {
            Ok(result) => {
                self.checkpoint().await;
                Ok(result)
            }
            Err(again) => {
                // Leave an instance that takes the next input, if the history allows.
                let _ = self.restart(&again).await;
                Err(again.context("the component trapped again after a restart"))
            }
        }
    }

    /// Replaces the instance by a fresh one resumed from the journal (last snapshot plus the
    /// history since), reporting it as a WARNING event; returns the input boundaries since
    /// that snapshot. Also usable on its own, e.g. to drop an instance whose `submit` future
    /// was cancelled.
    pub async fn restart(&mut self, cause: &anyhow::Error) -> anyhow::Result<Vec<AgentEvent>> {
        let since = lock(&self.journal).boundaries.clone();
        self.reinstantiate(None, Source::Journal)
            .await
            .context("the journal could not be resumed")?;
        let warning = host_event(
            self.session.id(),
            EventData::Warning(Warning::InstanceRestarted {
                message: format!(
                    "the component failed ({cause:#}); it was restarted with the session's history up to its last completed event"
                ),
            }),
        );
        lock(&self.journal).record(&warning);
        let _ = self.out.send(warning);
        Ok(since)
    }

    /// Continues the conversation in a fresh instance restored from the session's current
    /// snapshot, idle: a session that an LLM error closed takes inputs again. Same journal,
    /// controller and event stream; no WARNING is reported (nothing failed in the host).
    pub async fn reopen(&mut self) -> anyhow::Result<()> {
        self.reinstantiate(None, Source::Instance).await
    }

    /// Changes the model (fixed when an instance is created) by moving the conversation to a
    /// fresh instance with `model`, like [`reopen`](Self::reopen); the new model is saved
    /// with a snapshot, so a later `resume` uses it too.
    pub async fn switch_model(&mut self, model: &str) -> anyhow::Result<()> {
        self.reinstantiate(Some(model), Source::Instance).await
    }

    pub fn approval_mode(&self) -> ApprovalMode {
        self.runtime.approval_mode()
    }

    /// Approves later calls in `mode`: the conversation moves to a fresh instance with the
    /// policy in that mode (like [`switch_model`](Self::switch_model); "always" answers are
    /// forgotten), the environment refuses changes exactly while the mode is read-only, and
    /// checkpoints start once changes are possible. Nothing changes when the move fails.
    pub async fn set_approval_mode(&mut self, mode: ApprovalMode) -> anyhow::Result<()> {
        let before = self.runtime.approval_mode();
        if before == mode {
            return Ok(());
        }
        self.runtime.set_approval_mode(mode);
        self.read_only
            .store(mode == ApprovalMode::ReadOnly, Ordering::SeqCst);
        if let Err(error) = self.reinstantiate(None, Source::Instance).await {
            self.runtime.set_approval_mode(before);
            self.read_only
                .store(before == ApprovalMode::ReadOnly, Ordering::SeqCst);
            return Err(error);
        }
        if self.checkpoints.is_none() && mode != ApprovalMode::ReadOnly {
            let dir = self.dir();
            self.checkpoints =
                checkpoints_for(&self.runtime, self.env.as_ref(), dir.as_deref(), self.inputs).map(Arc::new);
        }
        Ok(())
    }

    /// Moves the conversation to a fresh instance resumed from `from`.
    async fn reinstantiate(&mut self, model: Option<&str>, source: Source) -> anyhow::Result<()> {
        self.pump.drain().await;
        let live = match source {
            Source::Instance => match self.session.snapshot().await {
                Ok(snapshot) if !snapshot.is_empty() => Some(snapshot),
                Ok(_) => None,
                Err(error) => {
                    tracing::warn!(
                        "cannot snapshot session {}, resuming its journal: {error:#}",
                        self.session.id()
                    );
                    None
                }
            },
            Source::Journal => None,
        };
        let (snapshot, journal) = match live {
            Some(snapshot) => (snapshot, Vec::new()),
            None => {
                let journal = lock(&self.journal);
                (journal.base.clone(), journal.entries.clone())
            }
        };
        let mut subagent_config = self.subagent_config.clone();
        if let (Some(model), Some(config)) = (model, subagent_config.as_mut()) {
            config.model = model.to_string();
        }
        let request = ResumeRequest {
            snapshot,
            journal,
            model: model.map(str::to_string),
            more_turns: None,
        };
        let options = InstanceOptions {
            control: Some(self.session.controller()),
            history: Some(Arc::new(JournalSink(self.journal.clone()))),
            subagent_config: subagent_config.clone(),
            spending: Some(self.session.spending_ledger()),
        };
        let (mut session, events) = self
            .runtime
            .resume_session(&request, self.env.clone(), options)
            .await?
            .map_err(|e| anyhow::anyhow!(describe_agent_error(&e)))?;
        let snapshot = session.snapshot().await?;
        // The old instance is dropped, not closed: its SESSION_END would end the journal.
        self.session = session;
        self.subagent_config = subagent_config;
        self.pump = Pump::spawn(events, self.journal.clone(), self.out.clone());
        // The swap has happened: failing to save it is a WARNING, not a failed swap.
        let mut journal = lock(&self.journal);
        if let Some(model) = model {
            journal.meta.model = model.to_string();
            let saved = journal.write_meta();
            journal.report(saved);
        }
        let saved = journal.checkpoint(snapshot);
        journal.report(saved);
        Ok(())
    }

    /// Records the workspace before an input; a failure is a WARNING (the input runs, without
    /// an undo point). Returns what the model is to be told about a restore since the last
    /// input (see [`Checkpoints::take_note`]).
    async fn record_checkpoint(&mut self, input: &str) -> Option<String> {
        let checkpoints = self.checkpoints.clone()?;
        let label = input.to_string();
        let recorded = tokio::task::spawn_blocking(move || {
            let recorded = checkpoints.record(&label);
            (recorded, checkpoints.take_note())
        })
        .await;
        let (message, note) = match recorded {
            Ok((Ok(_), note)) => return note,
            Ok((Err(error), note)) => (error.to_string(), note),
            Err(panic) => (panic.to_string(), None),
        };
        let warning = host_event(
            self.session.id(),
            EventData::Warning(Warning::Persistence {
                message: format!("no checkpoint before this input (it cannot be undone): {message}"),
            }),
        );
        lock(&self.journal).record(&warning);
        let _ = self.out.send(warning);
        note
    }

    /// The checkpoints, oldest first; `None` without checkpoints.
    pub async fn list_checkpoints(&self) -> Option<anyhow::Result<Vec<Checkpoint>>> {
        let checkpoints = self.checkpoints.clone()?;
        Some(blocking(move || checkpoints.list()).await)
    }

    /// The files changed since the checkpoint of `input` (`None`: the first). `None`
    /// without checkpoints.
    pub async fn changes_since(&self, input: Option<u32>) -> Option<anyhow::Result<Vec<FileDiff>>> {
        let checkpoints = self.checkpoints.clone()?;
        Some(blocking(move || checkpoints.changes_since(input)).await)
    }

    /// Restores the files to before `input` (`None`: the latest checkpoint); the model is
    /// told with the next input. `None` without checkpoints.
    pub async fn restore(&mut self, input: Option<u32>) -> Option<anyhow::Result<Restored>> {
        let checkpoints = self.checkpoints.clone()?;
        // A restore writes the workspace, which read-only mode promises nothing does.
        if self.read_only.load(Ordering::SeqCst) {
            return Some(Err(anyhow::anyhow!(
                "the session is in read-only mode, and putting files back would change them: \
                 change the approval mode first"
            )));
        }
        Some(blocking(move || checkpoints.restore(input)).await)
    }

    /// Saves a snapshot once every event so far is logged (the snapshot says how many lines
    /// it covers). A failure leaves the journal as the record, which is complete anyway.
    async fn checkpoint(&mut self) {
        self.pump.drain().await;
        let snapshot = match self.session.snapshot().await {
            Ok(snapshot) if !snapshot.is_empty() => snapshot,
            Ok(_) => return,
            Err(error) => {
                tracing::warn!("cannot snapshot session {}: {error:#}", self.session.id());
                return;
            }
        };
        if let Err(error) = lock(&self.journal).checkpoint(snapshot) {
            tracing::warn!(
                "cannot save the snapshot of session {}: {error}",
                self.session.id()
            );
        }
    }

    pub async fn state(&mut self) -> anyhow::Result<SessionState> {
        self.session.state().await
    }

    pub async fn snapshot(&mut self) -> anyhow::Result<String> {
        self.session.snapshot().await
    }

    pub async fn history_json(&mut self) -> anyhow::Result<String> {
        self.session.history_json().await
    }

    pub async fn describe(&mut self) -> anyhow::Result<String> {
        self.session.describe().await
    }

    /// Compacts the history and saves a snapshot, so a resume starts from the smaller one.
    pub async fn compact(&mut self) -> anyhow::Result<Result<CompactionReport, AgentError>> {
        let report = self.session.compact().await?;
        self.checkpoint().await;
        Ok(report)
    }

    /// Sets the effort and saves a snapshot, so a restart or a resume keeps it.
    pub async fn set_reasoning_effort(&mut self, effort: Option<ReasoningEffort>) -> anyhow::Result<()> {
        self.session.set_reasoning_effort(effort).await?;
        self.checkpoint().await;
        Ok(())
    }

    /// Closes the session (SESSION_END) and makes its log durable.
    pub async fn close(&mut self) -> anyhow::Result<()> {
        let closed = self.session.close().await;
        self.pump.drain().await;
        lock(&self.journal).release();
        closed
    }
}

/// Checkpoints for a session in `env`: only a local workspace has them, and a read-only
/// session changes nothing; kept in the session's folder, or a temporary one.
fn checkpoints_for(
    runtime: &AgentRuntime,
    env: &dyn Environment,
    session_dir: Option<&std::path::Path>,
    inputs_so_far: u32,
) -> Option<Checkpoints> {
    let workspace = env.local_workspace().filter(|_| !runtime.read_only())?;
    let excluded = env.checkpoint_exclusions();
    let opened = match (session_dir, crate::persist::default_state_dir()) {
        (Some(dir), _) => Checkpoints::open(dir, &workspace, inputs_so_far, Some(excluded)),
        (None, Some(state_dir)) => Checkpoints::temporary(&workspace, &state_dir, excluded, inputs_so_far),
        (None, None) => return None,
    };
    opened
        .inspect_err(|error| tracing::warn!("no checkpoints for this session: {error}"))
        .ok()
}

async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> Result<T, crate::checkpoints::CheckpointError> + Send + 'static,
) -> anyhow::Result<T> {
    Ok(tokio::task::spawn_blocking(work).await??)
}

/// A new session's folder in `store`, its logs, and the snapshot it starts from.
fn create_files(journal: &mut Journal, store: &SessionStore, base: &str) -> anyhow::Result<()> {
    let files = store.create(&journal.meta)?;
    journal.events = Some(EventLog::create(&files.events_path())?);
    let mut history = JsonLog::create(&files.history_path())?;
    history.append(&JournalLine::Start(
        serde_json::from_str(base).context("the core's snapshot is not JSON")?,
    ))?;
    journal.history = Some(history);
    journal.files = Some(files);
    Ok(())
}

/// A saved session's logs, opened for appending; taken before anything else, so a second
/// process resuming the same session stops here.
fn open_logs(
    stored: &StoredSession,
    files: &SessionFiles,
) -> anyhow::Result<(EventLog, JsonLog<JournalLine>)> {
    let (events_log, _torn) = EventLog::open(&files.events_path())?;
    let (history_log, _torn) = JsonLog::<JournalLine>::open(&files.history_path())?;
    anyhow::ensure!(
        events_log.len() == stored.events.len() && history_log.len() == stored.journal.len(),
        "session {} was written to since it was read; read it again",
        stored.id()
    );
    Ok((events_log, history_log))
}

/// Where a fresh instance takes the conversation from.
#[derive(Clone, Copy)]
enum Source {
    /// The running instance's snapshot: all of its state, settings made since the last
    /// checkpoint included (the journal as fallback).
    Instance,
    /// The last snapshot and the entries journaled since: a trapped instance cannot be
    /// asked for a snapshot.
    Journal,
}
