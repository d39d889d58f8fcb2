//! The `agent-core` world's exports, typed: linking the component for sessions, and each
//! call of its `agent` interface in the host's own types.

use super::core::{AgentCore, AgentCorePre, host_tools, llm_transport, session_host};
use super::environment;
use crate::session_host::state::HostState;
use agent_protocol::{
    AgentError, CompactionReport, ReasoningEffort, ResumeRequest, SessionConfig, SessionState, SubmitOutcome,
};
use anyhow::Context;
use wasmtime::component::{Component, HasSelf, Linker, ResourceAny};
use wasmtime::{Engine, Store};
use wasmtime_wasi::clocks::{WasiClocks, WasiClocksCtxView};
use wasmtime_wasi::random::WasiRandom;

/// The core component linked against this host's imports, ready to instantiate.
#[derive(Clone)]
pub struct CorePre(AgentCorePre<HostState>);

impl CorePre {
    /// Links every import of the `agent-core` world for sessions' stores.
    pub fn link(engine: &Engine, component: &Component) -> anyhow::Result<Self> {
        let mut linker = Linker::<HostState>::new(engine);
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
        environment::add_to_linker(&mut linker)?;
        llm_transport::add_to_linker::<HostState, HasSelf<HostState>>(&mut linker, |s| s)?;
        session_host::add_to_linker::<HostState, HasSelf<HostState>>(&mut linker, |s| s)?;
        host_tools::add_to_linker::<HostState, HasSelf<HostState>>(&mut linker, |s| s)?;
        let pre = AgentCorePre::new(
            linker
                .instantiate_pre(component)
                .map_err(anyhow::Error::from)
                .context("the component does not fit this host's agent-core world")?,
        )?;
        Ok(Self(pre))
    }

    pub async fn instantiate(&self, store: &mut Store<HostState>) -> anyhow::Result<CoreInstance> {
        Ok(CoreInstance(self.0.instantiate_async(store).await?))
    }
}

/// One instance of the core component. Every call's outer error is a trap of the
/// component; the inner one, where there is one, the agent's own error.
pub struct CoreInstance(AgentCore);

/// A session resource inside an instance.
#[derive(Clone, Copy)]
pub struct CoreSession(ResourceAny);

type Trap = anyhow::Error;

impl CoreInstance {
    pub async fn new_session(
        &self,
        store: &mut Store<HostState>,
        config: &SessionConfig,
    ) -> Result<CoreSession, Trap> {
        let config = super::session_config(config);
        let session = self
            .0
            .agent_core_agent()
            .session()
            .call_constructor(store, &config)
            .await?;
        Ok(CoreSession(session))
    }

    pub async fn restore(
        &self,
        store: &mut Store<HostState>,
        snapshot: &str,
    ) -> Result<Result<CoreSession, AgentError>, Trap> {
        let restored = self
            .0
            .agent_core_agent()
            .session()
            .call_restore(store, snapshot)
            .await?;
        Ok(restored.map(CoreSession).map_err(Into::into))
    }

    pub async fn resume(
        &self,
        store: &mut Store<HostState>,
        request: &ResumeRequest,
    ) -> Result<Result<CoreSession, AgentError>, Trap> {
        let resumed = self
            .0
            .agent_core_agent()
            .session()
            .call_resume(store, &request.into())
            .await?;
        Ok(resumed.map(CoreSession).map_err(Into::into))
    }

    pub async fn run_tool(
        &self,
        store: &mut Store<HostState>,
        provider: &str,
        name: &str,
        arguments_json: &str,
    ) -> Result<Result<String, String>, Trap> {
        Ok(self
            .0
            .agent_core_agent()
            .call_run_tool(store, provider, name, arguments_json)
            .await?)
    }

    pub async fn id(&self, store: &mut Store<HostState>, session: CoreSession) -> Result<String, Trap> {
        Ok(self
            .0
            .agent_core_agent()
            .session()
            .call_id(store, session.0)
            .await?)
    }

    pub async fn submit(
        &self,
        store: &mut Store<HostState>,
        session: CoreSession,
        input: &str,
    ) -> Result<Result<SubmitOutcome, AgentError>, Trap> {
        let outcome = self
            .0
            .agent_core_agent()
            .session()
            .call_submit(store, session.0, input)
            .await?;
        Ok(outcome.map(Into::into).map_err(Into::into))
    }

    pub async fn set_reasoning_effort(
        &self,
        store: &mut Store<HostState>,
        session: CoreSession,
        effort: Option<ReasoningEffort>,
    ) -> Result<(), Trap> {
        Ok(self
            .0
            .agent_core_agent()
            .session()
            .call_set_reasoning_effort(store, session.0, effort.map(Into::into))
            .await?)
    }

    pub async fn state(
        &self,
        store: &mut Store<HostState>,
        session: CoreSession,
    ) -> Result<SessionState, Trap> {
        Ok(self
            .0
            .agent_core_agent()
            .session()
            .call_state(store, session.0)
            .await?
            .into())
    }

    pub async fn snapshot(&self, store: &mut Store<HostState>, session: CoreSession) -> Result<String, Trap> {
        Ok(self
            .0
            .agent_core_agent()
            .session()
            .call_snapshot(store, session.0)
            .await?)
    }

    pub async fn history_json(
        &self,
        store: &mut Store<HostState>,
        session: CoreSession,
    ) -> Result<String, Trap> {
        Ok(self
            .0
            .agent_core_agent()
            .session()
            .call_history_json(store, session.0)
            .await?)
    }

    pub async fn describe(&self, store: &mut Store<HostState>, session: CoreSession) -> Result<String, Trap> {
        Ok(self
            .0
            .agent_core_agent()
            .session()
            .call_describe(store, session.0)
            .await?)
    }

    pub async fn compact(
        &self,
        store: &mut Store<HostState>,
        session: CoreSession,
    ) -> Result<Result<CompactionReport, AgentError>, Trap> {
        let report = self
            .0
            .agent_core_agent()
            .session()
            .call_compact(store, session.0)
            .await?;
        Ok(report.map(Into::into).map_err(Into::into))
    }

    pub async fn close(&self, store: &mut Store<HostState>, session: CoreSession) -> Result<(), Trap> {
        Ok(self
            .0
            .agent_core_agent()
            .session()
            .call_close(store, session.0)
            .await?)
    }
}
