//! Loads the core component once (precompiled code cached on disk by content hash), keeps
//! one `InstancePre`, and runs each session in its own store and instance.

use super::instance::AgentSession;
use super::subagents::{ChildStarter, Subagents};
use crate::approval::{ApprovalMode, ApprovalPolicy};
use crate::compile_cache::{CacheOutcome, compile_cached};
use crate::environments::environment::Environment;
use crate::host_tools::HostTools;
use crate::session_host::control::{AgentEvent, HistorySink, SessionControl};
use crate::session_host::spending::SpendingLedger;
use crate::session_host::state::HostState;
use crate::transport::LlmTransport;
use crate::wit::agent::{CoreInstance, CorePre};
use agent_protocol::{AgentError, ResumeRequest, SessionConfig};
use anyhow::Context;
use std::path::Path;
use std::sync::Arc;
use tokio::sync::mpsc;
use wasmtime::{Config, Engine, Store};

/// The loaded core component, ready to instantiate sessions. Cheap to clone (subagents
/// start their instances from a clone).
#[derive(Clone)]
pub struct AgentRuntime {
    engine: Engine,
    pre: CorePre,
    transport: LlmTransport,
    cache_outcome: CacheOutcome,
    tools: HostTools,
    approvals: Arc<ApprovalPolicy>,
    /// The tree's spending a subagent adds to; `None` (a root session): a new one.
    spending: Option<Arc<SpendingLedger>>,
}

impl AgentRuntime {
    /// Loads `component` (a `.wasm` file of world `agent-core`).
    pub fn load(
        component: &Path,
        cache_dir: Option<&Path>,
        transport: impl Into<LlmTransport>,
    ) -> anyhow::Result<Self> {
        let engine = Engine::new(&engine_config())?;
        let bytes = std::fs::read(component)
            .with_context(|| format!("cannot read the core component {}", component.display()))?;
        let (component, cache_outcome) = compile_cached(&engine, &bytes, cache_dir)
            .with_context(|| format!("{} is not a valid component", component.display()))?;
        let pre = CorePre::link(&engine, &component)?;
        Ok(Self {
            engine,
            pre,
            transport: transport.into(),
            cache_outcome,
            tools: HostTools::default(),
            approvals: Arc::new(ApprovalPolicy::default()),
            spending: None,
        })
    }

    /// Offers `tools` (plugins, configured command tools) to every session started after
    /// this; their definitions are added to each session's configuration.
    pub fn set_host_tools(&mut self, tools: HostTools) {
        self.tools = tools;
    }

    /// Read-only mode for sessions started after this: writes, commands and host tools
    /// other than `read` ones are denied (see [`ApprovalMode::ReadOnly`]). `false` keeps
    /// the mode as it is: read-only is never lifted here.
    pub fn set_read_only(&mut self, read_only: bool) {
        if read_only && self.approvals.mode() != ApprovalMode::ReadOnly {
            self.approvals = Arc::new(self.approvals.with_mode(ApprovalMode::ReadOnly));
        }
    }

    /// Sessions started after this approve calls in `mode`, with the same prompt, hooks and
    /// rule for dangerous commands (and fresh memory of "always" answers). Unlike
    /// [`AgentRuntime::set_read_only`] it may lift read-only: for the session whose user
    /// changes its mode (see [`crate::embed::Session::set_approval_mode`]).
    pub fn set_approval_mode(&mut self, mode: ApprovalMode) {
        if self.approvals.mode() != mode {
            self.approvals = Arc::new(self.approvals.with_mode(mode));
        }
    }

    pub fn approval_mode(&self) -> ApprovalMode {
        self.approvals.mode()
    }

    /// Whether sessions started after this are read-only.
    pub fn read_only(&self) -> bool {
        self.approvals.mode() == ApprovalMode::ReadOnly
    }

    /// How sessions started after this approve tool calls (mode, prompt, dangerous
    /// commands); each session gets its own memory of "always" answers.
    pub fn set_approval_policy(&mut self, policy: ApprovalPolicy) {
        self.approvals = Arc::new(policy);
    }

    /// The runtime a session's subagents start from: they share its approvals (and so
    /// its "always" answers) and its spending (budgets bound the tree's sum).
    fn for_children(&self, parent: &HostState) -> Self {
        let mut children = self.clone();
        children.approvals = parent.approvals.clone();
        children.spending = Some(parent.spending.clone());
        children
    }

    pub fn cache_outcome(&self) -> CacheOutcome {
        self.cache_outcome
    }

    /// Where the LLM requests of sessions started after this go (HTTP, recorded, replayed).
    pub fn set_transport(&mut self, transport: impl Into<LlmTransport>) {
        self.transport = transport.into();
    }

    async fn instantiate(
        &self,
        env: Arc<dyn Environment>,
    ) -> anyhow::Result<(
        Store<HostState>,
        CoreInstance,
        Arc<SessionControl>,
        mpsc::UnboundedReceiver<AgentEvent>,
    )> {
        self.instantiate_with(env, &InstanceOptions::default()).await
    }

    async fn instantiate_with(
        &self,
        env: Arc<dyn Environment>,
        options: &InstanceOptions,
    ) -> anyhow::Result<(
        Store<HostState>,
        CoreInstance,
        Arc<SessionControl>,
        mpsc::UnboundedReceiver<AgentEvent>,
    )> {
        let control = options.control.clone().unwrap_or_default();
        let (sender, events) = mpsc::unbounded_channel();
        let mut state = HostState::new(env, self.transport.clone(), control.clone(), sender);
        state.tools = Arc::new(self.tools.clone());
        state.approvals = self.approvals.for_session();
        state.history = options.history.clone();
        if let Some(spending) = options.spending.as_ref().or(self.spending.as_ref()) {
            state.spending = spending.clone();
        }
        let mut store = Store::new(&self.engine, state);
        let instance = self.pre.instantiate(&mut store).await?;
        Ok((store, instance, control, events))
    }

    /// Starts a session in a fresh instance. Events arrive on the returned receiver as
    /// they happen (SESSION_START is already in it).
    pub async fn start_session(
        &self,
        config: SessionConfig,
        env: Arc<dyn Environment>,
    ) -> anyhow::Result<(AgentSession, mpsc::UnboundedReceiver<AgentEvent>)> {
        self.start_session_with(config, env, InstanceOptions::default())
            .await
    }

    /// [`Self::start_session`] with a control handle and a history journal of the caller's.
    pub async fn start_session_with(
        &self,
        mut config: SessionConfig,
        env: Arc<dyn Environment>,
        options: InstanceOptions,
    ) -> anyhow::Result<(AgentSession, mpsc::UnboundedReceiver<AgentEvent>)> {
        let (definitions, version) = self.tools.definitions_with_version();
        // A configuration that names host tools already (a subagent's, from its parent's
        // start) may hold some that are gone: such a session is given the current list with
        // its first request; any other is told of changes after the version it was given.
        let current = config.host_tools.is_empty();
        for definition in definitions {
            if !config.host_tools.iter().any(|d| d.name == definition.name) {
                config.host_tools.push(definition);
            }
        }
        let (mut store, instance, control, events) = self.instantiate_with(env.clone(), &options).await?;
        store.data_mut().tools_version = if current { version } else { 0 };
        let session = instance.new_session(&mut store, &config).await?;
        self.add_subagents(&mut store, config, env);
        Ok((
            AgentSession::new(store, instance, session, control).await?,
            events,
        ))
    }

    fn add_subagents(&self, store: &mut Store<HostState>, config: SessionConfig, env: Arc<dyn Environment>) {
        let events_out = store.data().events.clone();
        store.data_mut().subagents = Some(Arc::new(Subagents::new(
            Arc::new(self.for_children(store.data())),
            config,
            env,
            events_out,
        )));
    }

    /// Rebuilds a session from `AgentSession::snapshot` output in a fresh instance, e.g.
    /// after the previous instance trapped or the host restarted. The inner error is the
    /// component's verdict on the snapshot.
    pub async fn restore_session(
        &self,
        snapshot: &str,
        env: Arc<dyn Environment>,
    ) -> anyhow::Result<Result<(AgentSession, mpsc::UnboundedReceiver<AgentEvent>), AgentError>> {
        let (mut store, instance, control, events) = self.instantiate(env).await?;
        let session = match instance.restore(&mut store, snapshot).await? {
            Ok(session) => session,
            Err(error) => return Ok(Err(error)),
        };
        Ok(Ok((
            AgentSession::new(store, instance, session, control).await?,
            events,
        )))
    }

    /// Reopens a saved session (its last snapshot plus the history journaled after it) in a
    /// fresh instance: after a trap, a restart of the host, or to change its model. With
    /// `options.subagent_config` (the configuration the session was started with) it can
    /// spawn subagents. The inner error is the component's verdict on what it was given.
    pub async fn resume_session(
        &self,
        request: &ResumeRequest,
        env: Arc<dyn Environment>,
        options: InstanceOptions,
    ) -> anyhow::Result<Result<(AgentSession, mpsc::UnboundedReceiver<AgentEvent>), AgentError>> {
        let (mut store, instance, control, events) = self.instantiate_with(env.clone(), &options).await?;
        let session = match instance.resume(&mut store, request).await? {
            Ok(session) => session,
            Err(error) => return Ok(Err(error)),
        };
        if let Some(config) = options.subagent_config {
            self.add_subagents(&mut store, config, env);
        }
        Ok(Ok((
            AgentSession::new(store, instance, session, control).await?,
            events,
        )))
    }

    /// Runs one tool through the component, outside any session.
    pub async fn run_tool(
        &self,
        env: Arc<dyn Environment>,
        provider: &str,
        name: &str,
        arguments_json: &str,
    ) -> anyhow::Result<Result<String, String>> {
        let (mut store, instance, _control, _events) = self.instantiate(env).await?;
        instance
            .run_tool(&mut store, provider, name, arguments_json)
            .await
    }
}

#[async_trait::async_trait]
impl ChildStarter for AgentRuntime {
    async fn start_child(
        &self,
        config: SessionConfig,
        env: Arc<dyn Environment>,
    ) -> anyhow::Result<(AgentSession, mpsc::UnboundedReceiver<AgentEvent>)> {
        self.start_session(config, env).await
    }
}

/// How a session's instance is set up besides its environment.
#[derive(Clone, Default)]
pub struct InstanceOptions {
    /// The control handle to keep (a restarted instance keeps its predecessor's, so that
    /// controllers already handed out still reach it); `None` for a new one.
    pub control: Option<Arc<SessionControl>>,
    /// Where the session's history entries go.
    pub history: Option<Arc<dyn HistorySink>>,
    /// The configuration a resumed session's subagents start from; `None`: no subagents.
    pub subagent_config: Option<SessionConfig>,
    /// The spending total to keep (a restarted instance keeps its predecessor's, so that
    /// what its subagents spent still counts); `None`: the runtime's (a new one for a root).
    pub spending: Option<Arc<SpendingLedger>>,
}

/// The engine's settings. `AGENT_HOST_PERFMAP=1` writes `/tmp/perf-PID.map`, so that
/// `perf report` names the component's functions (as `wasmtime run --profile perfmap` does);
/// the compiled code is the same either way.
fn engine_config() -> Config {
    let mut config = Config::new();
    if std::env::var_os("AGENT_HOST_PERFMAP").is_some_and(|v| !v.is_empty() && v != "0") {
        config.profiler(wasmtime::ProfilingStrategy::PerfMap);
    }
    config
}
