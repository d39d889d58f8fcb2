//! The component glue: the WIT bindings, the ports over the imports, and the export.
//! Everything else in the crate is target-independent.

use crate::ports::{self, Ports};
use crate::session::{AgentError, Session, SessionState, StopReason};
use std::cell::{Cell, RefCell};
use std::rc::Rc;

wit_bindgen::generate!({
    path: "../wit",
    world: "agent-core",
    generate_all,
});

use agent::core::{execution_environment as ee, host_tools, llm_transport as lt, session_host as sh, types};
use exports::agent::core::agent as api;

struct Env;

fn fs_error(e: types::FsError) -> ports::FsError {
    use types::FsError as W;
    match e {
        W::NotFound(m) => ports::FsError::NotFound(m),
        W::PermissionDenied(m) => ports::FsError::PermissionDenied(m),
        W::IsDirectory(m) => ports::FsError::IsDirectory(m),
        W::NotADirectory(m) => ports::FsError::NotADirectory(m),
        W::Binary(m) => ports::FsError::Binary(m),
        W::TooLarge(m) => ports::FsError::TooLarge(m),
        W::AlreadyExists(m) => ports::FsError::AlreadyExists(m),
        W::Denied(m) => ports::FsError::Denied(m),
        W::InvalidInput(m) => ports::FsError::InvalidInput(m),
        W::Other(m) => ports::FsError::Other(m),
    }
}

fn entry_kind(kind: types::EntryKind) -> ports::EntryKind {
    match kind {
        types::EntryKind::File => ports::EntryKind::File,
        types::EntryKind::Directory => ports::EntryKind::Directory,
        types::EntryKind::Symlink => ports::EntryKind::Symlink,
        types::EntryKind::Other => ports::EntryKind::Other,
    }
}

struct Process(ee::Process);

impl ports::Process for Process {
    fn id(&self) -> u32 {
        self.0.id()
    }
    fn read_output(&mut self) -> Option<ports::OutputChunk> {
        self.0.read_output().map(|c| ports::OutputChunk {
            stream: match c.stream {
                ee::OutputStream::Stdout => ports::OutputStream::Stdout,
                ee::OutputStream::Stderr => ports::OutputStream::Stderr,
            },
            data: c.data,
        })
    }
    fn wait(&mut self) -> ports::ExecResult {
        let r = self.0.wait();
        ports::ExecResult {
            stdout: r.stdout,
            stderr: r.stderr,
            exit_code: r.exit_code,
            timed_out: r.timed_out,
            duration_ms: r.duration_ms,
        }
    }
    fn kill(&mut self) {
        self.0.kill();
    }
}

impl ports::Environment for Env {
    fn read_file(&self, path: &str, range: Option<ports::ByteRange>) -> Result<Vec<u8>, ports::FsError> {
        let range = range.map(|r| types::ByteRange {
            offset: r.offset,
            length: r.length,
        });
        ee::read_file(path, range).map_err(fs_error)
    }
    fn write_file(&self, path: &str, contents: &[u8]) -> Result<(), ports::FsError> {
        ee::write_file(path, contents).map_err(fs_error)
    }
    fn delete_file(&self, path: &str) -> Result<(), ports::FsError> {
        ee::delete_file(path).map_err(fs_error)
    }
    fn file_exists(&self, path: &str) -> bool {
        ee::file_exists(path)
    }
    fn list_directory(&self, path: &str, depth: u32) -> Result<Vec<ports::DirEntry>, ports::FsError> {
        Ok(ee::list_directory(path, depth)
            .map_err(fs_error)?
            .into_iter()
            .map(|e| ports::DirEntry {
                path: e.path,
                kind: entry_kind(e.kind),
                size: e.size,
                depth: e.depth,
            })
            .collect())
    }
    fn grep(&self, options: &ports::GrepOptions) -> Result<Vec<ports::GrepMatch>, ports::FsError> {
        let options = types::GrepOptions {
            pattern: options.pattern.clone(),
            path: options.path.clone(),
            glob_filter: options.glob_filter.clone(),
            case_insensitive: options.case_insensitive,
            fixed_strings: options.fixed_strings,
            max_results: options.max_results,
            output_mode: match options.output_mode {
                ports::GrepOutputMode::Content => types::GrepOutputMode::Content,
                ports::GrepOutputMode::FilesWithMatches => types::GrepOutputMode::FilesWithMatches,
                ports::GrepOutputMode::Count => types::GrepOutputMode::Count,
            },
        };
        Ok(ee::grep(&options)
            .map_err(fs_error)?
            .into_iter()
            .map(|m| ports::GrepMatch {
                path: m.path,
                line_number: m.line_number,
                line: m.line,
            })
            .collect())
    }
    fn glob(&self, pattern: &str, path: Option<&str>) -> Result<Vec<String>, ports::FsError> {
        ee::glob(pattern, path).map_err(fs_error)
    }
    fn stat(&self, path: &str) -> Result<ports::FileStat, ports::FsError> {
        let stat = ee::stat(path).map_err(fs_error)?;
        Ok(ports::FileStat {
            kind: entry_kind(stat.kind),
            size: stat.size,
            modified_ms: stat.modified_ms,
            readonly: stat.readonly,
        })
    }
    fn working_directory(&self) -> String {
        ee::working_directory()
    }
    fn platform(&self) -> String {
        ee::platform()
    }
    fn os_version(&self) -> String {
        ee::os_version()
    }
    fn scratch_directory(&self) -> Option<String> {
        ee::scratch_directory()
    }
    fn spawn(&self, request: ports::SpawnRequest) -> Result<Box<dyn ports::Process>, ports::SpawnError> {
        let request = ee::SpawnRequest {
            command: request.command,
            working_dir: request.working_dir,
            timeout_ms: request.timeout_ms,
            env: request.env,
        };
        match ee::spawn(&request) {
            Ok(process) => Ok(Box::new(Process(process))),
            Err(ee::SpawnError::Unsupported(m)) => Err(ports::SpawnError::Unsupported(m)),
            Err(ee::SpawnError::Denied(m)) => Err(ports::SpawnError::Denied(m)),
            Err(ee::SpawnError::InvalidWorkingDir(m)) => Err(ports::SpawnError::InvalidWorkingDir(m)),
            Err(ee::SpawnError::Failed(m)) => Err(ports::SpawnError::Failed(m)),
        }
    }
}

fn transport_error(e: lt::TransportError) -> ports::TransportError {
    use lt::TransportError as W;
    match e {
        W::UnknownEndpoint(m) => ports::TransportError::UnknownEndpoint(m),
        W::NotConfigured(m) => ports::TransportError::NotConfigured(m),
        W::Connect(m) => ports::TransportError::Connect(m),
        W::Timeout(m) => ports::TransportError::Timeout(m),
        W::Io(m) => ports::TransportError::Io(m),
        W::Cancelled => ports::TransportError::Cancelled,
    }
}

struct Response(lt::HttpResponse);

impl ports::HttpResponse for Response {
    fn status(&self) -> u16 {
        self.0.status()
    }
    fn headers(&self) -> Vec<(String, String)> {
        self.0.headers()
    }
    fn next_chunk(&mut self) -> Result<Option<Vec<u8>>, ports::TransportError> {
        self.0.next_chunk().map_err(transport_error)
    }
}

struct Transport;

impl ports::Transport for Transport {
    fn send(
        &self,
        r: &mut ports::HttpRequest,
    ) -> Result<Box<dyn ports::HttpResponse>, ports::TransportError> {
        let request = lt::HttpRequest {
            endpoint: r.endpoint.clone(),
            method: r.method.clone(),
            path: r.path.clone(),
            headers: r.headers.clone(),
            body: std::mem::take(&mut r.body),
            timeout_ms: r.timeout_ms,
        };
        let sent = lt::send(&request);
        r.body = request.body;
        match sent {
            Ok(response) => Ok(Box::new(Response(response))),
            Err(e) => Err(transport_error(e)),
        }
    }
}

struct Host;

impl ports::SessionHost for Host {
    fn emit(&self, event: crate::events::Event) {
        use crate::events::EventKind as K;
        let kind = match event.kind() {
            K::SessionStart => sh::EventKind::SessionStart,
            K::SessionEnd => sh::EventKind::SessionEnd,
            K::UserInput => sh::EventKind::UserInput,
            K::ProcessingEnd => sh::EventKind::ProcessingEnd,
            K::AssistantTextStart => sh::EventKind::AssistantTextStart,
            K::AssistantTextDelta => sh::EventKind::AssistantTextDelta,
            K::AssistantTextEnd => sh::EventKind::AssistantTextEnd,
            K::ReasoningStart => sh::EventKind::ReasoningStart,
            K::ReasoningDelta => sh::EventKind::ReasoningDelta,
            K::ReasoningEnd => sh::EventKind::ReasoningEnd,
            K::ToolCallStart => sh::EventKind::ToolCallStart,
            K::ToolCallOutputDelta => sh::EventKind::ToolCallOutputDelta,
            K::ToolCallEnd => sh::EventKind::ToolCallEnd,
            K::SteeringInjected => sh::EventKind::SteeringInjected,
            K::PlanUpdated => sh::EventKind::PlanUpdated,
            K::NetworkConnection => sh::EventKind::NetworkConnection,
            K::TurnLimit => sh::EventKind::TurnLimit,
            K::LoopDetection => sh::EventKind::LoopDetection,
            K::Compaction => sh::EventKind::Compaction,
            K::Warning => sh::EventKind::Warning,
            K::Error => sh::EventKind::Error,
        };
        sh::emit(&sh::Event {
            kind,
            data_json: event.data.to_data_json(),
            session_id: event.session_id,
            timestamp_ms: event.timestamp_ms,
        });
    }
    fn record_history(&self, session_id: &str, entry: &crate::history::HistoryEntry) {
        sh::record_history(session_id, &entry.to_json());
    }
    fn take_steering(&self, session_id: &str) -> Vec<String> {
        sh::take_steering(session_id)
    }
    fn take_follow_ups(&self, session_id: &str) -> Vec<String> {
        sh::take_follow_ups(session_id)
    }
    fn abort_requested(&self, session_id: &str) -> Option<ports::Interruption> {
        sh::abort_requested(session_id).map(|i| match i {
            sh::Interruption::CancelInput => ports::Interruption::CancelInput,
            sh::Interruption::AbortSession => ports::Interruption::AbortSession,
        })
    }
    fn sleep(&self, session_id: &str, ms: u64) -> bool {
        sh::sleep(session_id, ms)
    }
    fn log(&self, level: ports::LogLevel, message: &str) {
        log(level, message);
    }
    fn approve(&self, r: &ports::ApprovalRequest) -> ports::Approval {
        let request = sh::ApprovalRequest {
            session_id: r.session_id.clone(),
            call_id: r.call_id.clone(),
            tool_name: r.tool_name.clone(),
            arguments_json: r.arguments_json.clone(),
            summary: r.summary.clone(),
            category: match r.category {
                crate::events::ToolCategory::Read => sh::ToolCategory::Read,
                crate::events::ToolCategory::Search => sh::ToolCategory::Search,
                crate::events::ToolCategory::Write => sh::ToolCategory::Write,
                crate::events::ToolCategory::Command => sh::ToolCategory::Command,
                crate::events::ToolCategory::Agent => sh::ToolCategory::Agent,
                crate::events::ToolCategory::Host => sh::ToolCategory::Host,
            },
        };
        match sh::approve(&request) {
            sh::Approval::Allow => ports::Approval::Allow,
            sh::Approval::Deny(reason) => ports::Approval::Deny(reason),
        }
    }
    fn now_ms(&self) -> u64 {
        let now = wasi::clocks::wall_clock::now();
        now.seconds * 1000 + u64::from(now.nanoseconds / 1_000_000)
    }
    fn random_bytes(&self, len: usize) -> Vec<u8> {
        wasi::random::random::get_random_bytes(len as u64)
    }
    fn spawn_subagent(&self, request: &ports::SubagentRequest) -> Result<String, String> {
        sh::spawn_subagent(&sh::SubagentRequest {
            parent_session_id: request.parent_session_id.clone(),
            task: request.task.clone(),
            working_dir: request.working_dir.clone(),
            model: request.model.clone(),
            max_turns: request.max_turns,
            depth: request.depth,
        })
    }
    fn subagent_send(&self, agent_id: &str, message: &str) -> Result<(), String> {
        sh::subagent_send(agent_id, message)
    }
    fn subagent_wait(&self, agent_id: &str) -> Result<ports::SubagentResult, String> {
        sh::subagent_wait(agent_id).map(|r| ports::SubagentResult {
            output: r.output,
            success: r.success,
            turns_used: r.turns_used,
        })
    }
    fn subagent_close(&self, agent_id: &str) -> Result<(), String> {
        sh::subagent_close(agent_id)
    }
    fn spend(
        &self,
        session_id: &str,
        amount: agent_protocol::Spending,
        released: agent_protocol::Spending,
    ) -> agent_protocol::Spending {
        let wire = |s: agent_protocol::Spending| sh::Spending {
            tokens: s.tokens,
            cost_usd: s.cost_usd,
        };
        let total = sh::spend(session_id, wire(amount), wire(released));
        agent_protocol::Spending {
            tokens: total.tokens,
            cost_usd: total.cost_usd,
        }
    }
}

fn log(level: ports::LogLevel, message: &str) {
    let level = match level {
        ports::LogLevel::Trace => types::LogLevel::Trace,
        ports::LogLevel::Debug => types::LogLevel::Debug,
        ports::LogLevel::Info => types::LogLevel::Info,
        ports::LogLevel::Warn => types::LogLevel::Warn,
        ports::LogLevel::Error => types::LogLevel::Error,
    };
    sh::log(level, message);
}

struct HostTools;

impl ports::HostTools for HostTools {
    fn call(
        &self,
        session_id: &str,
        name: &str,
        arguments_json: &str,
    ) -> Result<ports::HostToolOutput, String> {
        host_tools::call(session_id, name, arguments_json).map(|output| ports::HostToolOutput {
            text: output.text,
            images: output
                .images
                .into_iter()
                .map(|image| ports::HostImage {
                    media_type: image.media_type,
                    data: image.data,
                })
                .collect(),
        })
    }

    fn changes(&self, session_id: &str) -> Option<Vec<crate::llm::ToolDefinition>> {
        host_tools::changes(session_id)
            .map(|definitions| definitions.into_iter().map(tool_definition).collect())
    }
}

/// A host's tool definition; parameters that are not JSON become an empty object schema
/// (the host checked them when it loaded the tool).
fn tool_definition(t: types::ToolDefinition) -> crate::llm::ToolDefinition {
    crate::llm::ToolDefinition {
        parameters: serde_json::from_str(&t.parameters_json)
            .unwrap_or_else(|_| serde_json::json!({"type": "object"})),
        name: t.name,
        description: t.description,
    }
}

/// getrandom's custom backend (selected in `.cargo/config.toml`): boon's hash maps seed
/// from getrandom, and on wasm32-unknown-unknown the only randomness is wasi:random.
///
/// # Safety
/// getrandom calls it with a writable buffer of `len` bytes.
#[unsafe(no_mangle)]
unsafe extern "Rust" fn __getrandom_v03_custom(dest: *mut u8, len: usize) -> Result<(), getrandom::Error> {
    let bytes = wasi::random::random::get_random_bytes(len as u64);
    let n = len.min(bytes.len());
    // SAFETY: `dest` is valid for `len` bytes and `n <= len`; the source is a fresh Vec.
    unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), dest, n) };
    if n < len {
        return Err(getrandom::Error::UNSUPPORTED);
    }
    Ok(())
}

fn wasm_ports() -> Ports {
    // With panic=abort a panic is a bare `unreachable` trap; send its message to the host
    // first so the failure can be diagnosed.
    static HOOK: std::sync::Once = std::sync::Once::new();
    HOOK.call_once(|| {
        std::panic::set_hook(Box::new(|info| {
            log(ports::LogLevel::Error, &format!("agent-core panicked: {info}"))
        }));
    });
    Ports {
        env: Rc::new(Env),
        transport: Rc::new(Transport),
        host: Rc::new(Host),
        host_tools: Rc::new(HostTools),
    }
}

fn config_from_wit(c: api::SessionConfig) -> crate::SessionConfig {
    use crate::llm::{ReasoningEffort, WireProtocol};
    let effort = |e: api::ReasoningEffort| match e {
        api::ReasoningEffort::Low => ReasoningEffort::Low,
        api::ReasoningEffort::Medium => ReasoningEffort::Medium,
        api::ReasoningEffort::High => ReasoningEffort::High,
    };
    crate::SessionConfig {
        provider: c.provider,
        model: c.model,
        endpoint: c.endpoint,
        protocol: match c.protocol {
            api::WireProtocol::AnthropicMessages => WireProtocol::AnthropicMessages,
            api::WireProtocol::OpenaiResponses => WireProtocol::OpenaiResponses,
            api::WireProtocol::Gemini => WireProtocol::Gemini,
            api::WireProtocol::ChatCompletions => WireProtocol::ChatCompletions,
        },
        reasoning_effort: c.reasoning_effort.map(effort),
        max_output_tokens: c.max_output_tokens,
        limits: crate::Limits {
            max_turns: c.limits.max_turns,
            max_tool_rounds_per_input: c.limits.max_tool_rounds_per_input,
            // 0 means "the provider family's default" on the WIT.
            default_command_timeout_ms: Some(c.limits.default_command_timeout_ms).filter(|ms| *ms > 0),
            max_command_timeout_ms: c.limits.max_command_timeout_ms,
            enable_loop_detection: c.limits.enable_loop_detection,
            loop_detection_window: c.limits.loop_detection_window,
            max_subagent_depth: c.limits.max_subagent_depth,
            stale_read_guard: c.limits.stale_read_guard,
            max_session_tokens: c.limits.max_session_tokens,
            max_cost_cents: c.limits.max_cost_cents,
        },
        tool_output_limits: c
            .tool_output_limits
            .into_iter()
            .map(|l| crate::config::ToolOutputLimit {
                tool: l.tool,
                max_chars: l.max_chars,
                max_lines: l.max_lines,
            })
            .collect(),
        enabled_tools: c.enabled_tools,
        disabled_tools: c.disabled_tools,
        host_tools: c.host_tools.into_iter().map(tool_definition).collect(),
        user_instructions: c.user_instructions,
        provider_options: c
            .provider_options_json
            .and_then(|s| serde_json::from_str(&s).ok()),
        output_schema: c.output_schema_json.and_then(|s| serde_json::from_str(&s).ok()),
        depth: c.depth,
        session_id: c.session_id,
        context_window_size: c.context_window_tokens,
        parallel_tool_calls: c.parallel_tool_calls,
        image_input: c.image_input,
        knowledge_cutoff: c.knowledge_cutoff,
        retry: c.retry.map(|r| agent_protocol::RetrySettings {
            max_retries: r.max_retries,
            base_delay_ms: r.base_delay_ms,
            max_delay_ms: r.max_delay_ms,
        }),
        system_reminders: c.system_reminders,
    }
}

fn agent_error(e: AgentError) -> api::AgentError {
    match e {
        AgentError::Closed => api::AgentError::Closed,
        AgentError::Busy => api::AgentError::Busy,
        AgentError::InvalidConfig(m) => api::AgentError::InvalidConfig(m),
        AgentError::Llm(m) => api::AgentError::Llm(m),
        AgentError::Internal(m) => api::AgentError::Internal(m),
    }
}

fn state_to_wit(state: SessionState) -> api::SessionState {
    match state {
        SessionState::Idle => api::SessionState::Idle,
        SessionState::Processing => api::SessionState::Processing,
        SessionState::AwaitingInput => api::SessionState::AwaitingInput,
        SessionState::Closed => api::SessionState::Closed,
    }
}

/// The exported session. The state is kept outside the `RefCell` so that `state()` answers
/// while a `submit` is suspended (possible under JSPI in a browser).
struct SessionResource {
    id: String,
    state: Cell<SessionState>,
    /// A reasoning effort set while `submit` held the session; applied at the next call.
    pending_effort: Cell<Option<Option<crate::llm::ReasoningEffort>>>,
    inner: RefCell<Session>,
}

impl SessionResource {
    fn wrap(session: Session) -> Self {
        Self {
            id: session.id().to_string(),
            state: Cell::new(session.state()),
            pending_effort: Cell::new(None),
            inner: RefCell::new(session),
        }
    }

    fn with<T>(&self, f: impl FnOnce(&mut Session) -> T) -> Result<T, AgentError> {
        let mut session = self.inner.try_borrow_mut().map_err(|_| AgentError::Busy)?;
        if let Some(effort) = self.pending_effort.take() {
            session.set_reasoning_effort(effort);
        }
        let result = f(&mut session);
        self.state.set(session.state());
        Ok(result)
    }
}

impl api::GuestSession for SessionResource {
    fn new(config: api::SessionConfig) -> Self {
        Self::wrap(Session::new(config_from_wit(config), wasm_ports()))
    }

    fn resume(request: api::ResumeRequest) -> Result<api::Session, api::AgentError> {
        let request = crate::ResumeRequest {
            snapshot: request.snapshot,
            journal: request.journal,
            model: request.model,
            more_turns: request.more_turns,
        };
        Session::resume(&request, wasm_ports())
            .map(|session| api::Session::new(Self::wrap(session)))
            .map_err(agent_error)
    }

    fn restore(snapshot: String) -> Result<api::Session, api::AgentError> {
        Session::restore(&snapshot, wasm_ports())
            .map(|s| api::Session::new(Self::wrap(s)))
            .map_err(agent_error)
    }

    fn id(&self) -> String {
        self.id.clone()
    }

    fn submit(&self, input: String) -> Result<api::SubmitOutcome, api::AgentError> {
        self.state.set(SessionState::Processing);
        let outcome = self
            .with(|s| s.submit(&input))
            .and_then(|r| r)
            .map_err(agent_error)?;
        Ok(api::SubmitOutcome {
            stop_reason: match outcome.stop_reason {
                StopReason::Completed => api::StopReason::Completed,
                StopReason::RoundLimit => api::StopReason::RoundLimit,
                StopReason::TurnLimit => api::StopReason::TurnLimit,
                StopReason::AwaitingInput => api::StopReason::AwaitingInput,
                StopReason::Cancelled => api::StopReason::Cancelled,
                StopReason::Aborted => api::StopReason::Aborted,
                StopReason::ContextLength => api::StopReason::ContextLength,
            },
            rounds: outcome.rounds,
            turns: outcome.turns,
            final_text: outcome.final_text,
        })
    }

    fn state(&self) -> api::SessionState {
        state_to_wit(self.state.get())
    }

    fn set_reasoning_effort(&self, effort: Option<api::ReasoningEffort>) {
        use crate::llm::ReasoningEffort;
        let effort = effort.map(|e| match e {
            api::ReasoningEffort::Low => ReasoningEffort::Low,
            api::ReasoningEffort::Medium => ReasoningEffort::Medium,
            api::ReasoningEffort::High => ReasoningEffort::High,
        });
        // While a submit holds the session (possible under JSPI) the change waits for the
        // next call into it.
        if self.with(|s| s.set_reasoning_effort(effort)).is_err() {
            self.pending_effort.set(Some(effort));
        }
    }

    fn history_json(&self) -> String {
        self.with(|s| s.history_json())
            .unwrap_or_else(|_| "[]".to_string())
    }

    fn snapshot(&self) -> String {
        self.with(|s| s.snapshot()).unwrap_or_default()
    }

    fn describe(&self) -> String {
        match self.with(Session::describe) {
            Ok(Ok(description)) => description.to_string(),
            Ok(Err(e)) | Err(e) => serde_json::json!({"error": e.to_string()}).to_string(),
        }
    }

    fn compact(&self) -> Result<api::CompactionReport, api::AgentError> {
        let report = self.with(Session::compact).and_then(|r| r).map_err(agent_error)?;
        Ok(api::CompactionReport {
            summarised: report.stage == crate::events::CompactionStage::Summarised,
            tokens_before: report.tokens_before,
            tokens_after: report.tokens_after,
            turns_before: report.turns_before,
            turns_after: report.turns_after,
        })
    }

    fn close(&self) {
        let _ = self.with(Session::close);
    }
}

struct Component;

impl api::Guest for Component {
    type Session = SessionResource;

    fn run_tool(provider: String, name: String, arguments_json: String) -> Result<String, String> {
        crate::run_tool(&provider, &name, &arguments_json, &wasm_ports())
    }
}

export!(Component);
