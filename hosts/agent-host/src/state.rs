//! The store data of one session's instance and its implementation of every import.

use crate::approval::ApprovalPolicy;
use crate::bindings::{host_tools, llm_transport as lt, session_host as sh, types};
use crate::control::{AgentEvent, HistorySink, SessionControl};
use crate::env::Environment;
use crate::env_host::{EnvView, EnvironmentHost};
use crate::host_tools::HostTools;
use crate::record_replay::LlmTransport;
use crate::subagents::Subagents;
use crate::transport::ResponseHandle;
use agent_protocol::{EventData, HistoryEntry};
use std::sync::Arc;
use tokio::sync::mpsc;
use wasmtime::Result;
use wasmtime::component::{Resource, ResourceTable};
use wasmtime_wasi::clocks::WasiClocksCtx;
use wasmtime_wasi::random::WasiRandomCtx;

/// Everything the imports of one instance reach.
pub struct HostState {
    pub table: ResourceTable,
    pub clocks: WasiClocksCtx,
    pub random: WasiRandomCtx,
    pub env: Arc<dyn Environment>,
    pub transport: LlmTransport,
    pub control: Arc<SessionControl>,
    /// The session's events; the receiver's stream ends when this store is dropped.
    pub events: mpsc::UnboundedSender<AgentEvent>,
    /// Where the session's history entries go; `None` where nothing is journaled.
    pub history: Option<Arc<dyn HistorySink>>,
    /// The session's children; `None` where subagents are not available.
    pub subagents: Option<Arc<Subagents>>,
    /// Plugin and configured tools, called through `host-tools`.
    pub tools: HostTools,
    /// How tool calls are approved, with the session's memory of "always" answers
    /// (shared with its subagents).
    pub approvals: Arc<ApprovalPolicy>,
}

impl HostState {
    pub fn new(
        env: Arc<dyn Environment>,
        transport: LlmTransport,
        control: Arc<SessionControl>,
        events: mpsc::UnboundedSender<AgentEvent>,
    ) -> Self {
        Self {
            table: ResourceTable::new(),
            clocks: WasiClocksCtx::default(),
            random: WasiRandomCtx::default(),
            env,
            transport,
            control,
            events,
            history: None,
            tools: HostTools::default(),
            subagents: None,
            approvals: Arc::new(ApprovalPolicy::default()),
        }
    }
}

impl EnvironmentHost for HostState {
    fn env_view(&mut self) -> EnvView<'_> {
        EnvView {
            env: &self.env,
            table: &mut self.table,
            control: Some(self.control.clone()),
        }
    }
}

impl lt::Host for HostState {
    async fn send(
        &mut self,
        request: lt::HttpRequest,
    ) -> Result<Result<Resource<ResponseHandle>, lt::TransportError>> {
        let control = self.control.clone();
        let response = tokio::select! {
            response = self.transport.send(request) => response,
            _ = control.interrupted() => Err(lt::TransportError::Cancelled),
        };
        match response {
            Ok(response) => Ok(Ok(self.table.push(response)?)),
            Err(error) => Ok(Err(error)),
        }
    }
}

impl lt::HostHttpResponse for HostState {
    async fn status(&mut self, response: Resource<ResponseHandle>) -> Result<u16> {
        Ok(self.table.get(&response)?.status)
    }

    async fn headers(&mut self, response: Resource<ResponseHandle>) -> Result<Vec<(String, String)>> {
        Ok(self.table.get(&response)?.headers.clone())
    }

    async fn next_chunk(
        &mut self,
        response: Resource<ResponseHandle>,
    ) -> Result<Result<Option<Vec<u8>>, lt::TransportError>> {
        let control = self.control.clone();
        let response = self.table.get_mut(&response)?;
        // An interruption ends a read at once instead of waiting for the next token.
        Ok(tokio::select! {
            chunk = response.next_chunk() => chunk,
            _ = control.interrupted() => Err(lt::TransportError::Cancelled),
        })
    }

    async fn drop(&mut self, response: Resource<ResponseHandle>) -> Result<()> {
        self.table.delete(response)?;
        Ok(())
    }
}

impl sh::Host for HostState {
    async fn emit(&mut self, event: sh::Event) -> Result<()> {
        match EventData::from_wire(crate::wit::event_kind(event.kind), &event.data_json) {
            // A dropped receiver means nobody listens any more; the session goes on.
            Ok(data) => {
                let _ = self
                    .events
                    .send(AgentEvent::new(event.session_id, event.timestamp_ms, data));
            }
            // A core and a host built from different contracts: say so, drop the event.
            Err(error) => tracing::error!("the core emitted an event this host cannot read: {error}"),
        }
        Ok(())
    }

    async fn record_history(&mut self, _session_id: String, entry_json: String) -> Result<()> {
        if let Some(sink) = &self.history {
            match HistoryEntry::from_json(&entry_json) {
                Ok(entry) => sink.record(entry),
                Err(error) => tracing::error!("the core journaled an entry this host cannot read: {error}"),
            }
        }
        Ok(())
    }

    async fn take_steering(&mut self, _session_id: String) -> Result<Vec<String>> {
        Ok(self.control.take_steering())
    }

    async fn take_follow_ups(&mut self, _session_id: String) -> Result<Vec<String>> {
        Ok(self.control.take_follow_ups())
    }

    async fn abort_requested(&mut self, _session_id: String) -> Result<Option<sh::Interruption>> {
        Ok(self.control.interruption())
    }

    async fn sleep(&mut self, _session_id: String, ms: u64) -> Result<bool> {
        let control = self.control.clone();
        Ok(tokio::select! {
            _ = tokio::time::sleep(std::time::Duration::from_millis(ms)) => false,
            _ = control.interrupted() => true,
        })
    }

    async fn log(&mut self, level: types::LogLevel, message: String) -> Result<()> {
        match level {
            types::LogLevel::Trace => tracing::trace!(target: "agent_core", "{message}"),
            types::LogLevel::Debug => tracing::debug!(target: "agent_core", "{message}"),
            types::LogLevel::Info => tracing::info!(target: "agent_core", "{message}"),
            types::LogLevel::Warn => tracing::warn!(target: "agent_core", "{message}"),
            types::LogLevel::Error => tracing::error!(target: "agent_core", "{message}"),
        }
        Ok(())
    }

    async fn approve(&mut self, request: sh::ApprovalRequest) -> Result<sh::Approval> {
        // A question waiting for the user ends with an interruption.
        let control = self.control.clone();
        let decision = tokio::select! {
            decision = self.approvals.decide(&self.tools, &request) => decision,
            _ = control.interrupted() => sh::Approval::Deny("the user interrupted the session".to_string()),
        };
        tracing::debug!(tool = %request.tool_name, summary = %request.summary, ?decision, "approval");
        Ok(decision)
    }

    async fn spawn_subagent(&mut self, request: sh::SubagentRequest) -> Result<Result<String, String>> {
        match self.subagents.clone() {
            Some(subagents) => Ok(subagents.spawn(request).await),
            None => Ok(Err(SUBAGENTS_UNAVAILABLE.to_string())),
        }
    }

    async fn subagent_send(&mut self, agent_id: String, message: String) -> Result<Result<(), String>> {
        match &self.subagents {
            Some(subagents) => Ok(subagents.send(&agent_id, message)),
            None => Ok(Err(SUBAGENTS_UNAVAILABLE.to_string())),
        }
    }

    async fn subagent_wait(&mut self, agent_id: String) -> Result<Result<sh::SubagentResult, String>> {
        let Some(subagents) = self.subagents.clone() else {
            return Ok(Err(SUBAGENTS_UNAVAILABLE.to_string()));
        };
        // Interrupting the parent stops its wait (the child keeps its own course).
        let control = self.control.clone();
        tokio::select! {
            result = subagents.wait(&agent_id) => Ok(result),
            _ = control.interrupted() => Ok(Err(format!("waiting for {agent_id} was interrupted"))),
        }
    }

    async fn subagent_close(&mut self, agent_id: String) -> Result<Result<(), String>> {
        match self.subagents.clone() {
            Some(subagents) => Ok(subagents.close(&agent_id).await),
            None => Ok(Err(SUBAGENTS_UNAVAILABLE.to_string())),
        }
    }
}

/// Sessions restored without their configuration (`restore_session`; `restore_session_with`
/// can be given it) and stand-alone tool runs have no subagents.
const SUBAGENTS_UNAVAILABLE: &str = "subagents are not available in this session";

impl host_tools::Host for HostState {
    async fn call(
        &mut self,
        _session_id: String,
        name: String,
        arguments_json: String,
    ) -> Result<Result<String, String>> {
        // An interruption drops the call, which stops it (a command tool's process group is
        // killed, a plugin's instance is discarded).
        let control = self.control.clone();
        tokio::select! {
            result = self.tools.call(&name, &arguments_json) => Ok(result),
            _ = control.interrupted() => Ok(Err(format!("{name} was interrupted"))),
        }
    }
}
