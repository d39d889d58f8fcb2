//! Conversions between the generated types and the host's own (`agent-protocol`'s), in
//! both directions as each crosses the boundary. Field for field: the WIT and the protocol
//! describe the same data.

use super::core::{api, execution_environment as ee, llm_transport as lt, session_host as sh, types};
use agent_protocol::ports::{
    Approval, ApprovalRequest, DirEntry, EntryKind, ExecResult, FileStat, FsError, GrepMatch, GrepOptions,
    GrepOutputMode, HttpRequest, Interruption, LogLevel, OutputChunk, OutputStream, SpawnError, SpawnRequest,
    SubagentRequest, SubagentResult, ToolCategory, TransportError,
};
use agent_protocol::{
    AgentError, CompactionReport, CompactionStage, EventKind, ReasoningEffort, SessionConfig, SessionState,
    StopReason, SubmitOutcome, ToolDefinition, WireProtocol,
};

impl From<FsError> for types::FsError {
    fn from(e: FsError) -> Self {
        match e {
            FsError::NotFound(m) => Self::NotFound(m),
            FsError::PermissionDenied(m) => Self::PermissionDenied(m),
            FsError::IsDirectory(m) => Self::IsDirectory(m),
            FsError::NotADirectory(m) => Self::NotADirectory(m),
            FsError::Binary(m) => Self::Binary(m),
            FsError::TooLarge(m) => Self::TooLarge(m),
            FsError::AlreadyExists(m) => Self::AlreadyExists(m),
            FsError::Denied(m) => Self::Denied(m),
            FsError::InvalidInput(m) => Self::InvalidInput(m),
            FsError::Other(m) => Self::Other(m),
        }
    }
}

impl From<EntryKind> for types::EntryKind {
    fn from(kind: EntryKind) -> Self {
        match kind {
            EntryKind::File => Self::File,
            EntryKind::Directory => Self::Directory,
            EntryKind::Symlink => Self::Symlink,
            EntryKind::Other => Self::Other,
        }
    }
}

impl From<FileStat> for types::FileStat {
    fn from(s: FileStat) -> Self {
        Self {
            kind: s.kind.into(),
            size: s.size,
            modified_ms: s.modified_ms,
            readonly: s.readonly,
        }
    }
}

impl From<DirEntry> for types::DirEntry {
    fn from(e: DirEntry) -> Self {
        Self {
            path: e.path,
            kind: e.kind.into(),
            size: e.size,
            depth: e.depth,
        }
    }
}

impl From<GrepMatch> for types::GrepMatch {
    fn from(m: GrepMatch) -> Self {
        Self {
            path: m.path,
            line_number: m.line_number,
            line: m.line,
        }
    }
}

impl From<types::GrepOptions> for GrepOptions {
    fn from(o: types::GrepOptions) -> Self {
        Self {
            pattern: o.pattern,
            path: o.path,
            glob_filter: o.glob_filter,
            case_insensitive: o.case_insensitive,
            fixed_strings: o.fixed_strings,
            max_results: o.max_results,
            output_mode: match o.output_mode {
                types::GrepOutputMode::Content => GrepOutputMode::Content,
                types::GrepOutputMode::FilesWithMatches => GrepOutputMode::FilesWithMatches,
                types::GrepOutputMode::Count => GrepOutputMode::Count,
            },
        }
    }
}

impl From<ee::SpawnRequest> for SpawnRequest {
    fn from(r: ee::SpawnRequest) -> Self {
        Self {
            command: r.command,
            working_dir: r.working_dir,
            timeout_ms: r.timeout_ms,
            env: r.env,
        }
    }
}

impl From<SpawnError> for ee::SpawnError {
    fn from(e: SpawnError) -> Self {
        match e {
            SpawnError::Unsupported(m) => Self::Unsupported(m),
            SpawnError::Denied(m) => Self::Denied(m),
            SpawnError::InvalidWorkingDir(m) => Self::InvalidWorkingDir(m),
            SpawnError::Failed(m) => Self::Failed(m),
        }
    }
}

impl From<OutputChunk> for ee::OutputChunk {
    fn from(c: OutputChunk) -> Self {
        Self {
            stream: match c.stream {
                OutputStream::Stdout => ee::OutputStream::Stdout,
                OutputStream::Stderr => ee::OutputStream::Stderr,
            },
            data: c.data,
        }
    }
}

impl From<ExecResult> for ee::ExecResult {
    fn from(r: ExecResult) -> Self {
        Self {
            stdout: r.stdout,
            stderr: r.stderr,
            exit_code: r.exit_code,
            timed_out: r.timed_out,
            duration_ms: r.duration_ms,
        }
    }
}

impl From<lt::HttpRequest> for HttpRequest {
    fn from(r: lt::HttpRequest) -> Self {
        Self {
            endpoint: r.endpoint,
            method: r.method,
            path: r.path,
            headers: r.headers,
            body: r.body,
            timeout_ms: r.timeout_ms,
        }
    }
}

impl From<TransportError> for lt::TransportError {
    fn from(e: TransportError) -> Self {
        match e {
            TransportError::UnknownEndpoint(m) => Self::UnknownEndpoint(m),
            TransportError::NotConfigured(m) => Self::NotConfigured(m),
            TransportError::Connect(m) => Self::Connect(m),
            TransportError::Timeout(m) => Self::Timeout(m),
            TransportError::Io(m) => Self::Io(m),
            TransportError::Cancelled => Self::Cancelled,
        }
    }
}

impl From<sh::EventKind> for EventKind {
    fn from(kind: sh::EventKind) -> Self {
        use sh::EventKind as K;
        match kind {
            K::SessionStart => Self::SessionStart,
            K::SessionEnd => Self::SessionEnd,
            K::UserInput => Self::UserInput,
            K::ProcessingEnd => Self::ProcessingEnd,
            K::AssistantTextStart => Self::AssistantTextStart,
            K::AssistantTextDelta => Self::AssistantTextDelta,
            K::AssistantTextEnd => Self::AssistantTextEnd,
            K::ReasoningStart => Self::ReasoningStart,
            K::ReasoningDelta => Self::ReasoningDelta,
            K::ReasoningEnd => Self::ReasoningEnd,
            K::ToolCallStart => Self::ToolCallStart,
            K::ToolCallOutputDelta => Self::ToolCallOutputDelta,
            K::ToolCallEnd => Self::ToolCallEnd,
            K::SteeringInjected => Self::SteeringInjected,
            K::PlanUpdated => Self::PlanUpdated,
            K::NetworkConnection => Self::NetworkConnection,
            K::TurnLimit => Self::TurnLimit,
            K::LoopDetection => Self::LoopDetection,
            K::Compaction => Self::Compaction,
            K::Warning => Self::Warning,
            K::Error => Self::Error,
        }
    }
}

impl From<sh::ApprovalRequest> for ApprovalRequest {
    fn from(r: sh::ApprovalRequest) -> Self {
        Self {
            session_id: r.session_id,
            call_id: r.call_id,
            tool_name: r.tool_name,
            arguments_json: r.arguments_json,
            summary: r.summary,
            category: match r.category {
                sh::ToolCategory::Read => ToolCategory::Read,
                sh::ToolCategory::Search => ToolCategory::Search,
                sh::ToolCategory::Write => ToolCategory::Write,
                sh::ToolCategory::Command => ToolCategory::Command,
                sh::ToolCategory::Agent => ToolCategory::Agent,
                sh::ToolCategory::Host => ToolCategory::Host,
            },
        }
    }
}

impl From<Approval> for sh::Approval {
    fn from(a: Approval) -> Self {
        match a {
            Approval::Allow => Self::Allow,
            Approval::Deny(reason) => Self::Deny(reason),
        }
    }
}

impl From<Interruption> for sh::Interruption {
    fn from(i: Interruption) -> Self {
        match i {
            Interruption::CancelInput => Self::CancelInput,
            Interruption::AbortSession => Self::AbortSession,
        }
    }
}

impl From<types::LogLevel> for LogLevel {
    fn from(level: types::LogLevel) -> Self {
        match level {
            types::LogLevel::Trace => Self::Trace,
            types::LogLevel::Debug => Self::Debug,
            types::LogLevel::Info => Self::Info,
            types::LogLevel::Warn => Self::Warn,
            types::LogLevel::Error => Self::Error,
        }
    }
}

impl From<sh::SubagentRequest> for SubagentRequest {
    fn from(r: sh::SubagentRequest) -> Self {
        Self {
            parent_session_id: r.parent_session_id,
            task: r.task,
            working_dir: r.working_dir,
            model: r.model,
            max_turns: r.max_turns,
            depth: r.depth,
        }
    }
}

impl From<SubagentResult> for sh::SubagentResult {
    fn from(r: SubagentResult) -> Self {
        Self {
            output: r.output,
            success: r.success,
            turns_used: r.turns_used,
        }
    }
}

impl From<api::AgentError> for AgentError {
    fn from(e: api::AgentError) -> Self {
        match e {
            api::AgentError::Closed => Self::Closed,
            api::AgentError::Busy => Self::Busy,
            api::AgentError::InvalidConfig(m) => Self::InvalidConfig(m),
            api::AgentError::Llm(m) => Self::Llm(m),
            api::AgentError::Internal(m) => Self::Internal(m),
        }
    }
}

impl From<api::SessionState> for SessionState {
    fn from(s: api::SessionState) -> Self {
        match s {
            api::SessionState::Idle => Self::Idle,
            api::SessionState::Processing => Self::Processing,
            api::SessionState::AwaitingInput => Self::AwaitingInput,
            api::SessionState::Closed => Self::Closed,
        }
    }
}

impl From<api::StopReason> for StopReason {
    fn from(r: api::StopReason) -> Self {
        match r {
            api::StopReason::Completed => Self::Completed,
            api::StopReason::RoundLimit => Self::RoundLimit,
            api::StopReason::TurnLimit => Self::TurnLimit,
            api::StopReason::AwaitingInput => Self::AwaitingInput,
            api::StopReason::Cancelled => Self::Cancelled,
            api::StopReason::Aborted => Self::Aborted,
            api::StopReason::ContextLength => Self::ContextLength,
        }
    }
}

impl From<api::CompactionReport> for CompactionReport {
    fn from(r: api::CompactionReport) -> Self {
        Self {
            stage: if r.summarised {
                CompactionStage::Summarised
            } else {
                CompactionStage::ToolOutputsElided
            },
            tokens_before: r.tokens_before,
            tokens_after: r.tokens_after,
            turns_before: r.turns_before,
            turns_after: r.turns_after,
        }
    }
}

impl From<api::SubmitOutcome> for SubmitOutcome {
    fn from(o: api::SubmitOutcome) -> Self {
        Self {
            stop_reason: o.stop_reason.into(),
            rounds: o.rounds,
            turns: o.turns,
            final_text: o.final_text,
        }
    }
}

impl From<ReasoningEffort> for api::ReasoningEffort {
    fn from(effort: ReasoningEffort) -> Self {
        match effort {
            ReasoningEffort::Low => Self::Low,
            ReasoningEffort::Medium => Self::Medium,
            ReasoningEffort::High => Self::High,
        }
    }
}

impl From<WireProtocol> for api::WireProtocol {
    fn from(protocol: WireProtocol) -> Self {
        match protocol {
            WireProtocol::AnthropicMessages => Self::AnthropicMessages,
            WireProtocol::OpenaiResponses => Self::OpenaiResponses,
            WireProtocol::Gemini => Self::Gemini,
            WireProtocol::ChatCompletions => Self::ChatCompletions,
        }
    }
}

impl From<&ToolDefinition> for types::ToolDefinition {
    fn from(t: &ToolDefinition) -> Self {
        Self {
            name: t.name.clone(),
            description: t.description.clone(),
            parameters_json: t.parameters.to_string(),
        }
    }
}

/// The WIT record of a session configuration (a default command timeout left to the
/// provider family is 0 there).
pub fn session_config(c: &SessionConfig) -> api::SessionConfig {
    api::SessionConfig {
        provider: c.provider.clone(),
        model: c.model.clone(),
        endpoint: c.endpoint.clone(),
        protocol: c.protocol.into(),
        reasoning_effort: c.reasoning_effort.map(Into::into),
        max_output_tokens: c.max_output_tokens,
        limits: api::Limits {
            max_turns: c.limits.max_turns,
            max_tool_rounds_per_input: c.limits.max_tool_rounds_per_input,
            default_command_timeout_ms: c.limits.default_command_timeout_ms.unwrap_or(0),
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
            .iter()
            .map(|l| api::ToolOutputLimit {
                tool: l.tool.clone(),
                max_chars: l.max_chars,
                max_lines: l.max_lines,
            })
            .collect(),
        enabled_tools: c.enabled_tools.clone(),
        disabled_tools: c.disabled_tools.clone(),
        host_tools: c.host_tools.iter().map(Into::into).collect(),
        user_instructions: c.user_instructions.clone(),
        provider_options_json: c.provider_options.as_ref().map(|o| o.to_string()),
        output_schema_json: c.output_schema.as_ref().map(|o| o.to_string()),
        depth: c.depth,
        session_id: c.session_id.clone(),
        context_window_tokens: c.context_window_size,
        parallel_tool_calls: c.parallel_tool_calls,
        image_input: c.image_input,
        knowledge_cutoff: c.knowledge_cutoff.clone(),
        retry: c.retry.map(|r| api::RetrySettings {
            max_retries: r.max_retries,
            base_delay_ms: r.base_delay_ms,
            max_delay_ms: r.max_delay_ms,
        }),
        system_reminders: c.system_reminders,
    }
}

impl From<&agent_protocol::ResumeRequest> for api::ResumeRequest {
    fn from(r: &agent_protocol::ResumeRequest) -> Self {
        Self {
            snapshot: r.snapshot.clone(),
            journal: r.journal.clone(),
            model: r.model.clone(),
            more_turns: r.more_turns,
        }
    }
}
