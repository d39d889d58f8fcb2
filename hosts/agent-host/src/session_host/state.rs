//! The store data of one session's instance and what its imports do, in the host's own
//! types (`wit::session` adapts the generated import traits to these methods).

use crate::approval::{ApprovalPolicy, ToolCategory};
use crate::environments::environment::Environment;
use crate::hooks::Hooks;
use crate::session_host::control::{AgentEvent, HistorySink, SessionControl};
use crate::session_host::sandbox_rerun::CommandCalls;
use crate::session_host::spending::SpendingLedger;
use crate::transport::LlmTransport;
use crate::transport::response::ResponseHandle;
use agent_protocol::ports::{
    Approval, ApprovalRequest, HttpRequest, LogLevel, SubagentRequest, SubagentResult, TransportError,
};
use agent_protocol::{EventData, EventKind, ToolDefinition};
use async_trait::async_trait;
use std::sync::Arc;
use tokio::sync::mpsc;
use wasmtime::component::ResourceTable;
use wasmtime_wasi::clocks::WasiClocksCtx;
use wasmtime_wasi::random::WasiRandomCtx;

/// An image a host tool shows the model; the core checks its format and size.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolImage {
    /// The type the tool gives it (e.g. `image/png`).
    pub media_type: String,
    /// The encoded image, not base64.
    pub data: Vec<u8>,
}

/// What a host tool returns to the model: text, and images for models that read them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ToolOutput {
    pub text: String,
    pub images: Vec<ToolImage>,
}

impl From<String> for ToolOutput {
    fn from(text: String) -> Self {
        Self {
            text,
            images: Vec::new(),
        }
    }
}

/// The tools a host offers next to the profile's (plugins, command tools, native tools).
#[async_trait]
pub trait ToolHost: Send + Sync {
    /// The declared category of a host tool, for approvals; `None` for an unknown name.
    fn category(&self, name: &str) -> Option<ToolCategory>;
    /// Runs one; `Err` reaches the model as an error tool result.
    async fn call(&self, name: &str, arguments_json: &str) -> Result<ToolOutput, String>;
    /// All the tools' definitions, with their version, when the version is not `seen` (the
    /// list changed since a session was offered it); `None` otherwise.
    async fn changes(&self, _seen: u64) -> Option<(u64, Vec<ToolDefinition>)> {
        None
    }
}

/// A host without tools of its own.
pub struct NoTools;

#[async_trait]
impl ToolHost for NoTools {
    fn category(&self, _: &str) -> Option<ToolCategory> {
        None
    }
    async fn call(&self, name: &str, _: &str) -> Result<ToolOutput, String> {
        Err(format!("no host tool named {name:?} is configured in this host"))
    }
}

/// A session's children: started, steered, waited for and closed on the core's request.
#[async_trait]
pub trait SubagentHost: Send + Sync {
    async fn spawn(&self, request: SubagentRequest) -> Result<String, String>;
    fn send(&self, agent_id: &str, message: String) -> Result<(), String>;
    async fn wait(&self, agent_id: &str) -> Result<SubagentResult, String>;
    async fn close(&self, agent_id: &str) -> Result<(), String>;
    /// Closes every child (the parent closes).
    async fn close_all(&self);
}

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
    pub subagents: Option<Arc<dyn SubagentHost>>,
    /// Plugin and configured tools, called through `host-tools`.
    pub tools: Arc<dyn ToolHost>,
    /// The version of `tools` the session was last offered ([`ToolHost::changes`]).
    pub tools_version: u64,
    /// How tool calls are approved, with the session's memory of "always" answers
    /// (shared with its subagents).
    pub approvals: Arc<ApprovalPolicy>,
    /// Which command call each running process belongs to, for a rerun without the sandbox.
    pub command_calls: CommandCalls,
    /// What the session and its subagents have spent together (shared with them).
    pub spending: Arc<SpendingLedger>,
}

/// Sessions restored without their configuration and stand-alone tool runs have no
/// subagents.
const SUBAGENTS_UNAVAILABLE: &str = "subagents are not available in this session";

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
            tools: Arc::new(NoTools),
            tools_version: 0,
            subagents: None,
            approvals: Arc::new(ApprovalPolicy::default()),
            command_calls: CommandCalls::default(),
            spending: Arc::default(),
        }
    }

    /// Passes an event on to whoever listens (a dropped receiver means nobody does any
    /// more: the session goes on).
    /// Returns the event when hooks are to run on it ([`HostState::run_hooks`]).
    pub fn emit(
        &self,
        kind: EventKind,
        session_id: String,
        timestamp_ms: u64,
        data_json: &str,
    ) -> Option<EventData> {
        match EventData::from_wire(kind, data_json) {
            Ok(data) => {
                let hooked = self.approvals.hooks().is_some()
                    && matches!(
                        data,
                        EventData::ToolCallEnd { .. }
                            | EventData::SessionStart { .. }
                            | EventData::ProcessingEnd { .. }
                    );
                let for_hooks = hooked.then(|| data.clone());
                let _ = self.events.send(AgentEvent::new(session_id, timestamp_ms, data));
                for_hooks
            }
            // A core and a host built from different contracts: say so, drop the event.
            Err(error) => {
                tracing::error!("the core emitted an event this host cannot read: {error}");
                None
            }
        }
    }

    /// The user's hooks and the folder they run in, if any are configured.
    pub fn hooks(&self) -> Option<(Arc<Hooks>, String)> {
        let hooks = self.approvals.hooks()?.clone();
        Some((hooks, self.env.working_directory()))
    }

    pub fn record_history(&self, entry_json: &str) {
        if let Some(sink) = &self.history {
            sink.record(entry_json);
        }
    }

    /// Sends an LLM request; an interruption gives up at once.
    pub async fn send(&mut self, request: HttpRequest) -> Result<ResponseHandle, TransportError> {
        let control = self.control.clone();
        tokio::select! {
            response = self.transport.send(request) => response,
            _ = control.interrupted() => Err(TransportError::Cancelled),
        }
    }

    /// The next chunk of a response body; an interruption ends a read at once instead of
    /// waiting for the next token.
    pub async fn next_chunk(
        control: Arc<SessionControl>,
        response: &mut ResponseHandle,
    ) -> Result<Option<Vec<u8>>, TransportError> {
        tokio::select! {
            chunk = response.next_chunk() => chunk,
            _ = control.interrupted() => Err(TransportError::Cancelled),
        }
    }

    /// Sleeps `ms`; true when an interruption cut it short.
    pub async fn sleep(&mut self, ms: u64) -> bool {
        let control = self.control.clone();
        tokio::select! {
            _ = tokio::time::sleep(std::time::Duration::from_millis(ms)) => false,
            _ = control.interrupted() => true,
        }
    }

    pub fn log(level: LogLevel, message: &str) {
        match level {
            LogLevel::Trace => tracing::trace!(target: "agent_core", "{message}"),
            LogLevel::Debug => tracing::debug!(target: "agent_core", "{message}"),
            LogLevel::Info => tracing::info!(target: "agent_core", "{message}"),
            LogLevel::Warn => tracing::warn!(target: "agent_core", "{message}"),
            LogLevel::Error => tracing::error!(target: "agent_core", "{message}"),
        }
    }

    /// The host's decision on a tool call; a question waiting for the user ends with an
    /// interruption.
    pub async fn approve(&mut self, request: ApprovalRequest) -> Approval {
        let control = self.control.clone();
        let category = self.tools.category(&request.tool_name);
        let hooks = self.hooks();
        let approvals = self.approvals.clone();
        let decide = async {
            // The user's before_tool hooks first: a refusal is the decision, asked of nobody.
            if let Some((hooks, cwd)) = &hooks
                && let Some(reason) = hooks.before_tool(&request, cwd).await
            {
                return Approval::Deny(reason);
            }
            approvals.decide(category, &request).await
        };
        let decision = tokio::select! {
            decision = decide => decision,
            _ = control.interrupted() => Approval::Deny("the user interrupted the session".to_string()),
        };
        tracing::debug!(tool = %request.tool_name, summary = %request.summary, ?decision, "approval");
        self.command_calls.decided(&request, &decision);
        decision
    }

    pub async fn spawn_subagent(&mut self, request: SubagentRequest) -> Result<String, String> {
        match self.subagents.clone() {
            Some(subagents) => subagents.spawn(request).await,
            None => Err(SUBAGENTS_UNAVAILABLE.to_string()),
        }
    }

    pub fn subagent_send(&self, agent_id: &str, message: String) -> Result<(), String> {
        match &self.subagents {
            Some(subagents) => subagents.send(agent_id, message),
            None => Err(SUBAGENTS_UNAVAILABLE.to_string()),
        }
    }

    /// Interrupting the parent stops its wait (the child keeps its own course).
    pub async fn subagent_wait(&mut self, agent_id: &str) -> Result<SubagentResult, String> {
        let Some(subagents) = self.subagents.clone() else {
            return Err(SUBAGENTS_UNAVAILABLE.to_string());
        };
        let control = self.control.clone();
        tokio::select! {
            result = subagents.wait(agent_id) => result,
            _ = control.interrupted() => Err(format!("waiting for {agent_id} was interrupted")),
        }
    }

    pub async fn subagent_close(&mut self, agent_id: &str) -> Result<(), String> {
        match self.subagents.clone() {
            Some(subagents) => subagents.close(agent_id).await,
            None => Err(SUBAGENTS_UNAVAILABLE.to_string()),
        }
    }

    /// Runs a host tool. An interruption drops the call, which stops it (a command tool's
    /// process group is killed, a plugin's instance is discarded).
    pub async fn call_tool(&mut self, name: &str, arguments_json: &str) -> Result<ToolOutput, String> {
        let control = self.control.clone();
        tokio::select! {
            result = self.tools.call(name, arguments_json) => result,
            _ = control.interrupted() => Err(format!("{name} was interrupted")),
        }
    }

    /// The host tools when they changed since the session was last offered them (reading
    /// them again may ask a server; an interruption leaves that for the next ask).
    pub async fn tool_changes(&mut self) -> Option<Vec<ToolDefinition>> {
        let control = self.control.clone();
        let changes = tokio::select! {
            changes = self.tools.changes(self.tools_version) => changes,
            _ = control.interrupted() => None,
        };
        let (version, definitions) = changes?;
        self.tools_version = version;
        Some(definitions)
    }
}
