//! Loads the core component once (precompiled code cached on disk by content hash), keeps
//! one `InstancePre`, and runs each session in its own store and instance.

use crate::bindings::{
    AgentCore, AgentCorePre, api, execution_environment, host_tools, llm_transport, session_host, types,
};
use crate::control::{AgentEvent, SessionControl};
use crate::env::Environment;
use crate::state::HostState;
use crate::transport::HttpTransport;
use anyhow::Context;
use sha2::{Digest, Sha256};
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use tokio::sync::mpsc;
use wasmtime::component::{Component, HasSelf, Linker, ResourceAny};
use wasmtime::{Config, Engine, Store};
use wasmtime_wasi::clocks::{WasiClocks, WasiClocksCtxView};
use wasmtime_wasi::random::WasiRandom;

/// Where compiled components are cached unless told otherwise.
pub fn default_cache_dir() -> Option<PathBuf> {
    std::env::var_os("AGENT_HOST_CACHE_DIR")
        .map(PathBuf::from)
        .or_else(|| dirs::cache_dir().map(|d| d.join("agent-host").join("components")))
}

/// How the component was obtained, for diagnostics and benchmarks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CacheOutcome {
    /// Compiled now (and stored, if a cache directory was given).
    Compiled,
    /// Loaded precompiled code from the cache.
    Hit,
}

/// The loaded core component, ready to instantiate sessions.
pub struct AgentRuntime {
    engine: Engine,
    pre: AgentCorePre<HostState>,
    transport: HttpTransport,
    cache_outcome: CacheOutcome,
}

impl AgentRuntime {
    /// Loads `component` (a `.wasm` file of world `agent-core`).
    pub fn load(
        component: &Path,
        cache_dir: Option<&Path>,
        transport: HttpTransport,
    ) -> anyhow::Result<Self> {
        let engine = Engine::new(&Config::new())?;
        let (component, cache_outcome) = load_component(&engine, component, cache_dir)?;
        let mut linker = Linker::<HostState>::new(&engine);
        wasmtime_wasi::p2::bindings::clocks::wall_clock::add_to_linker::<HostState, WasiClocks>(
            &mut linker,
            |s| WasiClocksCtxView {
                ctx: &mut s.clocks,
                table: &mut s.table,
            },
        )?;
        wasmtime_wasi::p2::bindings::random::random::add_to_linker::<HostState, WasiRandom>(
            &mut linker,
            |s| &mut s.random,
        )?;
        types::add_to_linker::<HostState, HasSelf<HostState>>(&mut linker, |s| s)?;
        execution_environment::add_to_linker::<HostState, HasSelf<HostState>>(&mut linker, |s| s)?;
        llm_transport::add_to_linker::<HostState, HasSelf<HostState>>(&mut linker, |s| s)?;
        session_host::add_to_linker::<HostState, HasSelf<HostState>>(&mut linker, |s| s)?;
        host_tools::add_to_linker::<HostState, HasSelf<HostState>>(&mut linker, |s| s)?;
        let pre = AgentCorePre::new(
            linker
                .instantiate_pre(&component)
                .map_err(anyhow::Error::from)
                .context("the component does not fit this host's agent-core world")?,
        )?;
        Ok(Self {
            engine,
            pre,
            transport,
            cache_outcome,
        })
    }

    pub fn engine(&self) -> &Engine {
        &self.engine
    }

    pub fn cache_outcome(&self) -> CacheOutcome {
        self.cache_outcome
    }

    pub fn transport(&self) -> &HttpTransport {
        &self.transport
    }

    async fn instantiate(
        &self,
        env: Arc<dyn Environment>,
    ) -> anyhow::Result<(
        Store<HostState>,
        AgentCore,
        Arc<SessionControl>,
        mpsc::UnboundedReceiver<AgentEvent>,
    )> {
        let control = Arc::new(SessionControl::new());
        let (sender, events) = mpsc::unbounded_channel();
        let state = HostState::new(env, self.transport.clone(), control.clone(), sender);
        let mut store = Store::new(&self.engine, state);
        let bindings = self.pre.instantiate_async(&mut store).await?;
        Ok((store, bindings, control, events))
    }

    /// Starts a session in a fresh instance. Events arrive on the returned receiver as
    /// they happen (SESSION_START is already in it).
    pub async fn start_session(
        &self,
        config: api::SessionConfig,
        env: Arc<dyn Environment>,
    ) -> anyhow::Result<(AgentSession, mpsc::UnboundedReceiver<AgentEvent>)> {
        let (mut store, bindings, control, events) = self.instantiate(env).await?;
        let session = bindings
            .agent_core_agent()
            .session()
            .call_constructor(&mut store, &config)
            .await?;
        Ok((
            AgentSession::new(store, bindings, session, control).await?,
            events,
        ))
    }

    /// Rebuilds a session from `AgentSession::snapshot` output in a fresh instance, e.g.
    /// after the previous instance trapped or the host restarted. The inner error is the
    /// component's verdict on the snapshot.
    pub async fn restore_session(
        &self,
        snapshot: &str,
        env: Arc<dyn Environment>,
    ) -> anyhow::Result<Result<(AgentSession, mpsc::UnboundedReceiver<AgentEvent>), api::AgentError>> {
        let (mut store, bindings, control, events) = self.instantiate(env).await?;
        let session = match bindings
            .agent_core_agent()
            .session()
            .call_restore(&mut store, snapshot)
            .await?
        {
            Ok(session) => session,
            Err(error) => return Ok(Err(error)),
        };
        Ok(Ok((
            AgentSession::new(store, bindings, session, control).await?,
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
        let (mut store, bindings, _control, _events) = self.instantiate(env).await?;
        bindings
            .agent_core_agent()
            .call_run_tool(&mut store, provider, name, arguments_json)
            .await
            .map_err(anyhow::Error::from)
    }
}

/// One session in its own instance. `submit` borrows it mutably for the whole input;
/// steer, follow up and interrupt through `controller()` meanwhile.
pub struct AgentSession {
    store: Store<HostState>,
    bindings: AgentCore,
    session: ResourceAny,
    control: Arc<SessionControl>,
    id: String,
}

impl AgentSession {
    async fn new(
        mut store: Store<HostState>,
        bindings: AgentCore,
        session: ResourceAny,
        control: Arc<SessionControl>,
    ) -> anyhow::Result<Self> {
        let id = bindings
            .agent_core_agent()
            .session()
            .call_id(&mut store, session)
            .await?;
        Ok(Self {
            store,
            bindings,
            session,
            control,
            id,
        })
    }

    pub fn id(&self) -> &str {
        &self.id
    }

    /// The handle through which the application steers, follows up and interrupts.
    pub fn controller(&self) -> Arc<SessionControl> {
        self.control.clone()
    }

    /// Runs the agentic loop on an input. The outer error is a trap of the component; the
    /// inner one is the agent's own error.
    pub async fn submit(
        &mut self,
        input: &str,
    ) -> anyhow::Result<Result<api::SubmitOutcome, api::AgentError>> {
        let result = self
            .bindings
            .agent_core_agent()
            .session()
            .call_submit(&mut self.store, self.session, input)
            .await
            .map_err(anyhow::Error::from);
        self.control.clear_cancel();
        result
    }

    /// Changes the reasoning effort; the next LLM call uses it.
    pub async fn set_reasoning_effort(&mut self, effort: Option<api::ReasoningEffort>) -> anyhow::Result<()> {
        self.bindings
            .agent_core_agent()
            .session()
            .call_set_reasoning_effort(&mut self.store, self.session, effort)
            .await
            .map_err(anyhow::Error::from)
    }

    pub async fn state(&mut self) -> anyhow::Result<api::SessionState> {
        self.bindings
            .agent_core_agent()
            .session()
            .call_state(&mut self.store, self.session)
            .await
            .map_err(anyhow::Error::from)
    }

    pub async fn snapshot(&mut self) -> anyhow::Result<String> {
        self.bindings
            .agent_core_agent()
            .session()
            .call_snapshot(&mut self.store, self.session)
            .await
            .map_err(anyhow::Error::from)
    }

    pub async fn history_json(&mut self) -> anyhow::Result<String> {
        self.bindings
            .agent_core_agent()
            .session()
            .call_history_json(&mut self.store, self.session)
            .await
            .map_err(anyhow::Error::from)
    }

    /// The profile as the session uses it (capabilities, tools, system prompt), as JSON.
    pub async fn describe(&mut self) -> anyhow::Result<String> {
        self.bindings
            .agent_core_agent()
            .session()
            .call_describe(&mut self.store, self.session)
            .await
            .map_err(anyhow::Error::from)
    }

    /// Closes the session (SESSION_END is emitted).
    pub async fn close(&mut self) -> anyhow::Result<()> {
        self.bindings
            .agent_core_agent()
            .session()
            .call_close(&mut self.store, self.session)
            .await
            .map_err(anyhow::Error::from)
    }
}

/// Compiles `path`, or loads its precompiled code from `cache_dir`, keyed by the SHA-256 of
/// the component and of the engine's compatibility fingerprint.
fn load_component(
    engine: &Engine,
    path: &Path,
    cache_dir: Option<&Path>,
) -> anyhow::Result<(Component, CacheOutcome)> {
    let bytes =
        std::fs::read(path).with_context(|| format!("cannot read the core component {}", path.display()))?;
    let mut fingerprint = std::collections::hash_map::DefaultHasher::new();
    engine.precompile_compatibility_hash().hash(&mut fingerprint);
    let mut digest = Sha256::new();
    digest.update(&bytes);
    digest.update(fingerprint.finish().to_le_bytes());
    let key: String = digest.finalize().iter().map(|b| format!("{b:02x}")).collect();
    let cached = cache_dir.map(|dir| dir.join(format!("{key}.cwasm")));
    if let Some(file) = cached.as_ref().filter(|f| f.is_file()) {
        // SAFETY: the file was written by `precompile_component` of an engine with the same
        // compatibility hash (it is part of the file name) and is only ever replaced whole.
        match unsafe { Component::deserialize_file(engine, file) } {
            Ok(component) => return Ok((component, CacheOutcome::Hit)),
            Err(error) => {
                tracing::warn!(file = %file.display(), %error, "ignoring unusable cached component")
            }
        }
    }
    let compiled = engine
        .precompile_component(&bytes)
        .map_err(anyhow::Error::from)
        .with_context(|| format!("{} is not a valid component", path.display()))?;
    if let (Some(file), Some(dir)) = (cached.as_ref(), cache_dir) {
        let tmp = dir.join(format!("{key}.{}.tmp", std::process::id()));
        let stored = std::fs::create_dir_all(dir)
            .and_then(|()| std::fs::write(&tmp, &compiled))
            .and_then(|()| std::fs::rename(&tmp, file));
        if let Err(error) = stored {
            tracing::warn!(dir = %dir.display(), %error, "could not cache the compiled component");
            let _ = std::fs::remove_file(&tmp);
        }
    }
    // SAFETY: `compiled` was produced just above by this very engine.
    let component = unsafe { Component::deserialize(engine, &compiled) }?;
    Ok((component, CacheOutcome::Compiled))
}
