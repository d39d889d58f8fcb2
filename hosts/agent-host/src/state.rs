//! The store data of one session's instance and its implementation of every import.

use crate::bindings::{
    execution_environment as ee, host_tools, llm_transport as lt, session_host as sh, types,
};
use crate::control::{AgentEvent, SessionControl};
use crate::env::Environment;
use crate::process::ProcessHandle;
use crate::transport::{HttpTransport, ResponseHandle};
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
    pub transport: HttpTransport,
    pub control: Arc<SessionControl>,
    /// The session's events; the receiver's stream ends when this store is dropped.
    pub events: mpsc::UnboundedSender<AgentEvent>,
}

impl HostState {
    pub fn new(
        env: Arc<dyn Environment>,
        transport: HttpTransport,
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
        }
    }
}

impl types::Host for HostState {}

impl ee::Host for HostState {
    async fn read_file(
        &mut self,
        path: String,
        range: Option<types::ByteRange>,
    ) -> Result<Result<Vec<u8>, types::FsError>> {
        Ok(self
            .env
            .read_file(&path, range.map(|r| (r.offset, r.length)))
            .await)
    }

    async fn write_file(&mut self, path: String, contents: Vec<u8>) -> Result<Result<(), types::FsError>> {
        Ok(self.env.write_file(&path, &contents).await)
    }

    async fn delete_file(&mut self, path: String) -> Result<Result<(), types::FsError>> {
        Ok(self.env.delete_file(&path).await)
    }

    async fn rename_file(
        &mut self,
        source: String,
        destination: String,
    ) -> Result<Result<(), types::FsError>> {
        Ok(self.env.rename_file(&source, &destination).await)
    }

    async fn create_directory(&mut self, path: String) -> Result<Result<(), types::FsError>> {
        Ok(self.env.create_directory(&path).await)
    }

    async fn file_exists(&mut self, path: String) -> Result<bool> {
        Ok(self.env.file_exists(&path).await)
    }

    async fn stat(&mut self, path: String) -> Result<Result<types::FileStat, types::FsError>> {
        Ok(self.env.stat(&path).await)
    }

    async fn list_directory(
        &mut self,
        path: String,
        depth: u32,
    ) -> Result<Result<Vec<types::DirEntry>, types::FsError>> {
        Ok(self.env.list_directory(&path, depth).await)
    }

    async fn grep(
        &mut self,
        options: types::GrepOptions,
    ) -> Result<Result<Vec<types::GrepMatch>, types::FsError>> {
        Ok(self.env.grep(&options).await)
    }

    async fn glob(
        &mut self,
        pattern: String,
        path: Option<String>,
    ) -> Result<Result<Vec<String>, types::FsError>> {
        Ok(self.env.glob(&pattern, path.as_deref()).await)
    }

    async fn working_directory(&mut self) -> Result<String> {
        Ok(self.env.working_directory())
    }

    async fn platform(&mut self) -> Result<String> {
        Ok(self.env.platform())
    }

    async fn os_version(&mut self) -> Result<String> {
        Ok(self.env.os_version())
    }

    async fn spawn(
        &mut self,
        request: ee::SpawnRequest,
    ) -> Result<Result<Resource<ProcessHandle>, ee::SpawnError>> {
        match self.env.spawn(request).await {
            Ok(process) => Ok(Ok(self.table.push(process)?)),
            Err(error) => Ok(Err(error)),
        }
    }
}

impl ee::HostProcess for HostState {
    async fn id(&mut self, process: Resource<ProcessHandle>) -> Result<u32> {
        Ok(self.table.get(&process)?.pid())
    }

    async fn read_output(&mut self, process: Resource<ProcessHandle>) -> Result<Option<ee::OutputChunk>> {
        let control = self.control.clone();
        let process = self.table.get_mut(&process)?;
        // An interruption kills the command; its remaining output still drains.
        tokio::select! {
            chunk = process.read_output() => return Ok(chunk),
            _ = control.interrupted() => process.kill(),
        }
        Ok(process.read_output().await)
    }

    async fn wait(&mut self, process: Resource<ProcessHandle>) -> Result<ee::ExecResult> {
        let control = self.control.clone();
        let process = self.table.get_mut(&process)?;
        tokio::select! {
            result = process.wait() => return Ok(result),
            _ = control.interrupted() => process.kill(),
        }
        Ok(process.wait().await)
    }

    async fn kill(&mut self, process: Resource<ProcessHandle>) -> Result<()> {
        self.table.get(&process)?.kill();
        Ok(())
    }

    async fn drop(&mut self, process: Resource<ProcessHandle>) -> Result<()> {
        self.table.delete(process)?;
        Ok(())
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
        let data =
            serde_json::from_str(&event.data_json).unwrap_or(serde_json::Value::String(event.data_json));
        // A dropped receiver means nobody listens any more; the session goes on.
        let _ = self.events.send(AgentEvent {
            kind: event_kind_name(event.kind).to_string(),
            session_id: event.session_id,
            timestamp_ms: event.timestamp_ms,
            data,
        });
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
        tracing::debug!(tool = %request.tool_name, summary = %request.summary, "approved (auto)");
        Ok(sh::Approval::Allow)
    }

    async fn spawn_subagent(&mut self, _request: sh::SubagentRequest) -> Result<Result<String, String>> {
        Ok(Err(SUBAGENTS_UNSUPPORTED.to_string()))
    }

    async fn subagent_send(&mut self, _agent_id: String, _message: String) -> Result<Result<(), String>> {
        Ok(Err(SUBAGENTS_UNSUPPORTED.to_string()))
    }

    async fn subagent_wait(&mut self, _agent_id: String) -> Result<Result<sh::SubagentResult, String>> {
        Ok(Err(SUBAGENTS_UNSUPPORTED.to_string()))
    }

    async fn subagent_close(&mut self, _agent_id: String) -> Result<Result<(), String>> {
        Ok(Err(SUBAGENTS_UNSUPPORTED.to_string()))
    }
}

const SUBAGENTS_UNSUPPORTED: &str = "this host does not run subagents yet";

impl host_tools::Host for HostState {
    async fn call(
        &mut self,
        _session_id: String,
        name: String,
        _arguments_json: String,
    ) -> Result<Result<String, String>> {
        Ok(Err(format!(
            "no host tool named {name:?} is configured in this host"
        )))
    }
}

/// The spec's name of an event kind.
pub fn event_kind_name(kind: sh::EventKind) -> &'static str {
    use sh::EventKind as K;
    match kind {
        K::SessionStart => "SESSION_START",
        K::SessionEnd => "SESSION_END",
        K::UserInput => "USER_INPUT",
        K::ProcessingEnd => "PROCESSING_END",
        K::AssistantTextStart => "ASSISTANT_TEXT_START",
        K::AssistantTextDelta => "ASSISTANT_TEXT_DELTA",
        K::AssistantTextEnd => "ASSISTANT_TEXT_END",
        K::ReasoningStart => "REASONING_START",
        K::ReasoningDelta => "REASONING_DELTA",
        K::ReasoningEnd => "REASONING_END",
        K::ToolCallStart => "TOOL_CALL_START",
        K::ToolCallOutputDelta => "TOOL_CALL_OUTPUT_DELTA",
        K::ToolCallEnd => "TOOL_CALL_END",
        K::SteeringInjected => "STEERING_INJECTED",
        K::TurnLimit => "TURN_LIMIT",
        K::LoopDetection => "LOOP_DETECTION",
        K::Warning => "WARNING",
        K::Error => "ERROR",
    }
}
