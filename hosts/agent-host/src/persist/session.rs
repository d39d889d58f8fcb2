//! [`PersistentSession`]: an [`AgentSession`] whose events are logged as they arrive, which
//! is snapshotted after every input and which survives a trap of its instance.

use super::host_event;
use super::journal::{Journal, Pump, lock};
use super::log::EventLog;
use super::rebuild::{interrupted_input, rebuild_snapshot};
use super::store::{SessionFiles, SessionMeta, SessionStore, StoredSession};
use crate::bindings::api;
use crate::control::{AgentEvent, SessionControl};
use crate::env::Environment;
use crate::runtime::{AgentRuntime, AgentSession, describe_agent_error};
use anyhow::Context;
use serde_json::{Value, json};
use std::sync::{Arc, Mutex};
use tokio::sync::mpsc;

/// Changes a resumed session takes on.
#[derive(Debug, Clone, Default)]
pub struct ResumeOverrides {
    /// Another model of the same provider.
    pub model: Option<String>,
    /// How many more LLM turns the session may take (`Some(0)`: no limit; `None`: as saved).
    pub more_turns: Option<u32>,
}

impl ResumeOverrides {
    fn apply(&self, snapshot: &mut Value) {
        if let Some(model) = &self.model {
            snapshot["config"]["model"] = json!(model);
        }
        if let Some(more) = self.more_turns {
            let taken = snapshot["total_turns"].as_u64().unwrap_or_default();
            let limit = if more == 0 { 0 } else { taken + u64::from(more) };
            snapshot["config"]["limits"]["max_turns"] = json!(limit);
        }
    }
}

/// A session written to its store as it goes (or only journaled in memory, without a
/// store, which still lets it recover from a trap). The same calls as [`AgentSession`];
/// its event stream is continuous across a restarted instance.
pub struct PersistentSession {
    runtime: AgentRuntime,
    env: Arc<dyn Environment>,
    subagent_config: Option<api::SessionConfig>,
    session: AgentSession,
    journal: Arc<Mutex<Journal>>,
    pump: Pump,
    out: mpsc::UnboundedSender<AgentEvent>,
}

impl PersistentSession {
    /// Starts a new session; with a store, it is saved there under its id.
    pub async fn start(
        runtime: &AgentRuntime,
        config: api::SessionConfig,
        env: Arc<dyn Environment>,
        store: Option<&SessionStore>,
    ) -> anyhow::Result<(Self, mpsc::UnboundedReceiver<AgentEvent>)> {
        let subagent_config = Some(config.clone());
        let (session, events) = runtime.start_session(config, env.clone()).await?;
        let meta = SessionMeta::new(session.id(), &env.working_directory());
        let (files, log) = match store {
            Some(store) => {
                let files = store.create(&meta)?;
                let log = EventLog::create(&files.events_path())?;
                (Some(files), Some(log))
            }
            None => (None, None),
        };
        let journal = Journal {
            files,
            log,
            meta,
            base: None,
            since: Vec::new(),
            failed: false,
        };
        Ok(Self::assemble(
            runtime,
            env,
            subagent_config,
            session,
            events,
            journal,
        ))
    }

    /// Continues a saved session in a fresh instance: the last snapshot plus everything
    /// logged after it, with `overrides` applied; new events go on in the same log.
    /// `subagent_config` (the configuration a new session would get) lets it spawn
    /// subagents.
    pub async fn resume(
        runtime: &AgentRuntime,
        stored: &StoredSession,
        env: Arc<dyn Environment>,
        subagent_config: Option<api::SessionConfig>,
        overrides: &ResumeOverrides,
    ) -> anyhow::Result<(Self, mpsc::UnboundedReceiver<AgentEvent>)> {
        let files = SessionFiles {
            dir: stored.dir.clone(),
        };
        // Taken first: a second process resuming the same session stops here.
        let (log, _torn) = EventLog::open(&files.events_path())?;
        anyhow::ensure!(
            log.len() == stored.events.len(),
            "session {} was written to since it was read; read it again",
            stored.id()
        );
        let mut snapshot: Value = serde_json::from_str(&stored.rebuild()?)?;
        overrides.apply(&mut snapshot);
        let (session, events) = runtime
            .restore_session_with(
                &snapshot.to_string(),
                env.clone(),
                Arc::new(SessionControl::new()),
                subagent_config.clone(),
            )
            .await?
            .map_err(|e| {
                anyhow::anyhow!(
                    "the component refused the saved session: {}",
                    describe_agent_error(&e)
                )
            })?;
        let mut meta = stored.meta.clone();
        meta.workspace = env.working_directory();
        if let Some(model) = &overrides.model {
            meta.model = model.clone();
        }
        let mut journal = Journal {
            files: Some(files),
            log: Some(log),
            meta,
            base: None,
            since: Vec::new(),
            failed: false,
        };
        journal.checkpoint(snapshot)?;
        Ok(Self::assemble(
            runtime,
            env,
            subagent_config,
            session,
            events,
            journal,
        ))
    }

    fn assemble(
        runtime: &AgentRuntime,
        env: Arc<dyn Environment>,
        subagent_config: Option<api::SessionConfig>,
        session: AgentSession,
        events: mpsc::UnboundedReceiver<AgentEvent>,
        journal: Journal,
    ) -> (Self, mpsc::UnboundedReceiver<AgentEvent>) {
        let (out, receiver) = mpsc::unbounded_channel();
        let journal = Arc::new(Mutex::new(journal));
        let pump = Pump::spawn(events, journal.clone(), out.clone());
        let session = Self {
            runtime: runtime.clone(),
            env,
            subagent_config,
            session,
            journal,
            pump,
            out,
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
    pub async fn submit(
        &mut self,
        input: &str,
    ) -> anyhow::Result<Result<api::SubmitOutcome, api::AgentError>> {
        // Where this input's events start in the journal (no checkpoint happens meanwhile).
        let mark = lock(&self.journal).since.len();
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
        let retry = match interrupted_input(ours) {
            Some(interrupted) => continuation_prompt(&interrupted),
            None if !ours.iter().any(|e| e.kind == "USER_INPUT") => input.to_string(),
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

    /// Replaces the instance by a fresh one restored from the journal (last snapshot plus
    /// the events since), reporting it as a WARNING event; returns the events the restored
    /// history was rebuilt from. Also usable on its own, e.g. to drop an instance whose
    /// `submit` future was cancelled.
    pub async fn restart(&mut self, cause: &anyhow::Error) -> anyhow::Result<Vec<AgentEvent>> {
        self.pump.drain().await;
        let (snapshot, since) = {
            let journal = lock(&self.journal);
            (
                rebuild_snapshot(journal.base.as_ref(), &journal.since)?,
                journal.since.clone(),
            )
        };
        let (session, events) = self
            .runtime
            .restore_session_with(
                &snapshot,
                self.env.clone(),
                self.session.controller(),
                self.subagent_config.clone(),
            )
            .await?
            .map_err(|e| {
                anyhow::anyhow!(
                    "the component refused the rebuilt history: {}",
                    describe_agent_error(&e)
                )
            })?;
        self.session = session;
        self.pump = Pump::spawn(events, self.journal.clone(), self.out.clone());
        let warning = host_event(
            self.session.id(),
            "WARNING",
            json!({
                "kind": "instance_restarted",
                "message": format!(
                    "the component failed ({cause:#}); it was restarted with the session's history up to its last completed event"
                ),
            }),
        );
        let mut journal = lock(&self.journal);
        journal.record(&warning);
        let _ = self.out.send(warning);
        journal.checkpoint(serde_json::from_str(&snapshot)?)?;
        Ok(since)
    }

    /// Continues the conversation in a fresh instance restored from the session's current
    /// snapshot, idle: a session that an LLM error closed takes inputs again. Same journal,
    /// controller and event stream; no WARNING is reported (nothing failed in the host).
    pub async fn reopen(&mut self) -> anyhow::Result<()> {
        self.reinstantiate(None).await
    }

    /// Changes the model (fixed when an instance is created) by moving the conversation to a
    /// fresh instance with `model`, like [`reopen`](Self::reopen); the new model is saved
    /// with a snapshot, so a later `resume` uses it too.
    pub async fn switch_model(&mut self, model: &str) -> anyhow::Result<()> {
        self.reinstantiate(Some(model)).await
    }

    async fn reinstantiate(&mut self, model: Option<&str>) -> anyhow::Result<()> {
        self.pump.drain().await;
        let mut snapshot: Value = serde_json::from_str(&self.session.snapshot().await?)
            .context("the component's snapshot is not JSON")?;
        snapshot["state"] = json!("idle");
        let mut subagent_config = self.subagent_config.clone();
        if let Some(model) = model {
            snapshot["config"]["model"] = json!(model);
            if let Some(config) = subagent_config.as_mut() {
                config.model = model.to_string();
            }
        }
        let (session, events) = self
            .runtime
            .restore_session_with(
                &snapshot.to_string(),
                self.env.clone(),
                self.session.controller(),
                subagent_config.clone(),
            )
            .await?
            .map_err(|e| anyhow::anyhow!(describe_agent_error(&e)))?;
        // The old instance is dropped, not closed: its SESSION_END would end the journal.
        self.session = session;
        self.subagent_config = subagent_config;
        self.pump = Pump::spawn(events, self.journal.clone(), self.out.clone());
        let mut journal = lock(&self.journal);
        if let Some(model) = model {
            journal.meta.model = model.to_string();
            journal.write_meta()?;
        }
        journal.checkpoint(snapshot)?;
        Ok(())
    }

    /// Saves a snapshot once every event so far is logged (the snapshot says how many it
    /// covers). A failure leaves the log as the record, which is complete anyway.
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
        let mut journal = lock(&self.journal);
        let saved = serde_json::from_str(&snapshot)
            .map_err(|e| e.to_string())
            .and_then(|snapshot| journal.checkpoint(snapshot).map_err(|e| e.to_string()));
        if let Err(error) = saved {
            tracing::warn!(
                "cannot save the snapshot of session {}: {error}",
                self.session.id()
            );
        }
    }

    pub async fn state(&mut self) -> anyhow::Result<api::SessionState> {
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

    pub async fn set_reasoning_effort(&mut self, effort: Option<api::ReasoningEffort>) -> anyhow::Result<()> {
        self.session.set_reasoning_effort(effort).await
    }

    /// Closes the session (SESSION_END) and makes its log durable.
    pub async fn close(&mut self) -> anyhow::Result<()> {
        let closed = self.session.close().await;
        self.pump.drain().await;
        lock(&self.journal).sync();
        closed
    }
}

/// What to submit to continue an input that a crash or a trap cut short: the input is in
/// the history already, with whatever was done for it.
pub fn continuation_prompt(input: &str) -> String {
    format!(
        "The previous run stopped before finishing the request below; the conversation above holds \
         everything that was done for it. Continue from there.\n\n{input}"
    )
}
