//! Session events (section 2.9 of the spec, plus reasoning): one enum with a typed payload
//! per kind. On the WIT boundary an event is its kind plus `data-json`, which only this
//! module writes ([`EventData::to_data_json`]) and reads ([`EventData::from_wire`]). Hosts
//! print and store events as [`Event`]'s JSON: `{kind, data, session_id, timestamp_ms,
//! agent_id?}`.

use crate::config::SessionConfig;
use crate::history::{FinishReason, ToolCall, Usage};
use crate::outcome::{ErrorKind, SessionState, StopReason};
pub use crate::ports::{OutputStream, ToolCategory};
use crate::usage::UsageTotals;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// What happened. Mirrors `session-host.event-kind`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum EventKind {
    SessionStart,
    SessionEnd,
    UserInput,
    ProcessingEnd,
    AssistantTextStart,
    AssistantTextDelta,
    AssistantTextEnd,
    ReasoningStart,
    ReasoningDelta,
    ReasoningEnd,
    ToolCallStart,
    ToolCallOutputDelta,
    ToolCallEnd,
    SteeringInjected,
    TurnLimit,
    LoopDetection,
    Compaction,
    Warning,
    Error,
    PlanUpdated,
    NetworkConnection,
}

impl EventKind {
    pub const ALL: [Self; 21] = [
        Self::SessionStart,
        Self::SessionEnd,
        Self::UserInput,
        Self::ProcessingEnd,
        Self::AssistantTextStart,
        Self::AssistantTextDelta,
        Self::AssistantTextEnd,
        Self::ReasoningStart,
        Self::ReasoningDelta,
        Self::ReasoningEnd,
        Self::ToolCallStart,
        Self::ToolCallOutputDelta,
        Self::ToolCallEnd,
        Self::SteeringInjected,
        Self::TurnLimit,
        Self::LoopDetection,
        Self::Compaction,
        Self::Warning,
        Self::Error,
        Self::PlanUpdated,
        Self::NetworkConnection,
    ];

    /// The spec's name, e.g. `TOOL_CALL_END`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::SessionStart => "SESSION_START",
            Self::SessionEnd => "SESSION_END",
            Self::UserInput => "USER_INPUT",
            Self::ProcessingEnd => "PROCESSING_END",
            Self::AssistantTextStart => "ASSISTANT_TEXT_START",
            Self::AssistantTextDelta => "ASSISTANT_TEXT_DELTA",
            Self::AssistantTextEnd => "ASSISTANT_TEXT_END",
            Self::ReasoningStart => "REASONING_START",
            Self::ReasoningDelta => "REASONING_DELTA",
            Self::ReasoningEnd => "REASONING_END",
            Self::ToolCallStart => "TOOL_CALL_START",
            Self::ToolCallOutputDelta => "TOOL_CALL_OUTPUT_DELTA",
            Self::ToolCallEnd => "TOOL_CALL_END",
            Self::SteeringInjected => "STEERING_INJECTED",
            Self::TurnLimit => "TURN_LIMIT",
            Self::LoopDetection => "LOOP_DETECTION",
            Self::Compaction => "COMPACTION",
            Self::Warning => "WARNING",
            Self::Error => "ERROR",
            Self::PlanUpdated => "PLAN_UPDATED",
            Self::NetworkConnection => "NETWORK_CONNECTION",
        }
    }

    /// The kind whose spec name is `name`.
    pub fn parse(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|kind| kind.as_str() == name)
    }
}

/// Why a session ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EndReason {
    /// The host closed it.
    Closed,
    /// An LLM error that retrying could not mend.
    Error,
    /// The host aborted it.
    Aborted,
}

/// The limit a TURN_LIMIT reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LimitName {
    MaxToolRoundsPerInput,
    MaxTurns,
    /// `value`: the session's tokens so far (saturated at `u32::MAX`).
    MaxSessionTokens,
    /// `value`: the session's cost so far, in US cents.
    MaxCostCents,
}

impl LimitName {
    /// The limit's name in the session's configuration.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::MaxToolRoundsPerInput => "max_tool_rounds_per_input",
            Self::MaxTurns => "max_turns",
            Self::MaxSessionTokens => "max_session_tokens",
            Self::MaxCostCents => "max_cost_cents",
        }
    }
}

/// Where a token count came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TokenSource {
    /// The provider's usage report.
    Provider,
    /// The history's size at about four characters a token.
    Estimate,
}

/// An image a tool showed the model: hosts learn its type and size, the pixels stay in the
/// history.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ImageInfo {
    pub media_type: String,
    pub base64_chars: u64,
}

/// How a tool call ended: its FULL untruncated output, or the error the model was given.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum ToolOutcome {
    Output {
        output: String,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        images: Vec<ImageInfo>,
    },
    Error {
        error: String,
    },
}

impl ToolOutcome {
    /// The output, or the error.
    pub fn as_result(&self) -> Result<&str, &str> {
        match self {
            Self::Output { output, .. } => Ok(output),
            Self::Error { error } => Err(error),
        }
    }
}

/// What started a compaction.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CompactionTrigger {
    /// The next request's estimate passed a threshold of the context window.
    Threshold,
    /// The provider refused a request as too long.
    ContextLength,
    /// The host asked (`/compact`, `session.compact()`).
    Requested,
}

/// One step of the model's plan.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlanStep {
    pub step: String,
    pub status: PlanStatus,
}

/// Where a plan's step stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PlanStatus {
    Pending,
    InProgress,
    Completed,
}

/// How far a compaction went.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CompactionStage {
    /// Old tool outputs were replaced by a one-line note; their calls stay.
    ToolOutputsElided,
    /// Older turns were replaced by a summary the model wrote (after eliding).
    Summarised,
}

/// What agent-host's network proxy did with one connection of a sandboxed command (with a
/// network allow-list): reported by the host when the connection ends.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NetworkConnection {
    /// The tool call whose command made it, when the host knows.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub call_id: Option<String>,
    /// The host the command asked for, as it asked (a name or an address).
    pub host: String,
    pub port: u16,
    /// The address the proxy connected to, when it did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub address: Option<String>,
    /// `CONNECT` for a tunnel (HTTPS), else the forwarded request's method.
    pub method: String,
    pub allowed: bool,
    /// Why it was refused (or could not be made), as the command was told.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Bytes from the command to the server, and back.
    pub bytes_up: u64,
    pub bytes_down: u64,
    pub duration_ms: u64,
}

/// A non-fatal issue, by kind.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Warning {
    /// The conversation no longer fits the context window; the input stopped.
    ContextLength { message: String },
    /// A transient LLM failure; the request is tried again after `delay_ms`.
    LlmRetry {
        message: String,
        attempt: u32,
        delay_ms: u64,
        error_kind: ErrorKind,
    },
    /// The conversation passed 80 % of the context window.
    ContextUsage {
        message: String,
        tokens: u64,
        context_window: u64,
        percent: u64,
        source: TokenSource,
    },
    /// The host could not save the session (given once).
    Persistence { message: String },
    /// The host restarted a failed instance from the session's journal.
    InstanceRestarted { message: String },
    /// A compaction could not write its summary; the history was only partly reduced.
    Compaction { message: String },
}

impl Warning {
    pub fn message(&self) -> &str {
        match self {
            Self::ContextLength { message }
            | Self::LlmRetry { message, .. }
            | Self::ContextUsage { message, .. }
            | Self::Persistence { message }
            | Self::InstanceRestarted { message }
            | Self::Compaction { message } => message,
        }
    }
}

/// What happened, with its payload. The JSON of the payload is the WIT's `data-json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", content = "data", rename_all = "SCREAMING_SNAKE_CASE")]
pub enum EventData {
    /// The session was created.
    SessionStart {
        config: Box<SessionConfig>,
    },
    /// The session closed (`final_state` is always `closed`).
    SessionEnd {
        final_state: SessionState,
        reason: EndReason,
    },
    /// The host submitted input.
    UserInput {
        content: String,
    },
    /// The current input is fully handled; `turns` counts the session's LLM turns.
    /// `usage` adds up this input's requests, `session_usage` the session's so far (absent
    /// when no request was made).
    ProcessingEnd {
        stop_reason: StopReason,
        rounds: u32,
        turns: u32,
        #[serde(default, skip_serializing_if = "UsageTotals::is_empty")]
        usage: UsageTotals,
        #[serde(default, skip_serializing_if = "UsageTotals::is_empty")]
        session_usage: UsageTotals,
    },
    AssistantTextStart {},
    AssistantTextDelta {
        delta: String,
    },
    /// The model finished a response (also one of tool calls only, with empty `text`).
    AssistantTextEnd {
        text: String,
        reasoning: Option<String>,
        tool_calls: Vec<ToolCall>,
        usage: Usage,
        finish_reason: FinishReason,
    },
    ReasoningStart {},
    ReasoningDelta {
        delta: String,
    },
    ReasoningEnd {},
    /// A tool call began (before lookup, validation and approval). `category` is `host`
    /// also for a tool the session does not know; `changes` lists the files the call means
    /// to change (write_file, edit_file, apply_patch), when its arguments say.
    ToolCallStart {
        call_id: String,
        tool_name: String,
        arguments: Value,
        category: ToolCategory,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        changes: Vec<String>,
    },
    /// Output of a running tool as it arrives.
    ToolCallOutputDelta {
        call_id: String,
        stream: OutputStream,
        delta: String,
    },
    /// A tool call finished.
    ToolCallEnd {
        call_id: String,
        tool_name: String,
        #[serde(flatten)]
        outcome: ToolOutcome,
    },
    /// A steering message entered the history.
    SteeringInjected {
        content: String,
    },
    /// The model's plan for the input, as it set it last (`update_plan`).
    PlanUpdated {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        explanation: Option<String>,
        plan: Vec<PlanStep>,
    },
    /// A round or turn limit stopped the input; `value` is the count reached.
    TurnLimit {
        limit: LimitName,
        value: u32,
    },
    /// The recent tool calls repeat a pattern; the model was told (a steering turn).
    LoopDetection {
        message: String,
        window: u32,
        pattern_length: u32,
    },
    /// The history was made smaller to fit the context window; sizes are estimated tokens
    /// of the whole request (system prompt and tools included).
    Compaction {
        trigger: CompactionTrigger,
        stage: CompactionStage,
        tokens_before: u64,
        tokens_after: u64,
        turns_before: u32,
        turns_after: u32,
        /// What the summary request cost (zero when no summary was written).
        summary_usage: Usage,
    },
    Warning(Warning),
    /// An LLM error that ends the session.
    Error {
        message: String,
        kind: ErrorKind,
        retryable: bool,
    },
    /// A sandboxed command's connection through the network allow-list's proxy (host only).
    NetworkConnection(NetworkConnection),
}

/// A WIT payload that does not fit its kind, or a stored line that is not an event.
#[derive(Debug, thiserror::Error)]
#[error("invalid {what}: {source}")]
pub struct WireError {
    what: &'static str,
    #[source]
    source: serde_json::Error,
}

impl WireError {
    pub(crate) fn new(what: &'static str, source: serde_json::Error) -> Self {
        Self { what, source }
    }
}

impl EventData {
    pub fn kind(&self) -> EventKind {
        match self {
            Self::SessionStart { .. } => EventKind::SessionStart,
            Self::SessionEnd { .. } => EventKind::SessionEnd,
            Self::UserInput { .. } => EventKind::UserInput,
            Self::ProcessingEnd { .. } => EventKind::ProcessingEnd,
            Self::AssistantTextStart {} => EventKind::AssistantTextStart,
            Self::AssistantTextDelta { .. } => EventKind::AssistantTextDelta,
            Self::AssistantTextEnd { .. } => EventKind::AssistantTextEnd,
            Self::ReasoningStart {} => EventKind::ReasoningStart,
            Self::ReasoningDelta { .. } => EventKind::ReasoningDelta,
            Self::ReasoningEnd {} => EventKind::ReasoningEnd,
            Self::ToolCallStart { .. } => EventKind::ToolCallStart,
            Self::ToolCallOutputDelta { .. } => EventKind::ToolCallOutputDelta,
            Self::ToolCallEnd { .. } => EventKind::ToolCallEnd,
            Self::SteeringInjected { .. } => EventKind::SteeringInjected,
            Self::TurnLimit { .. } => EventKind::TurnLimit,
            Self::LoopDetection { .. } => EventKind::LoopDetection,
            Self::Compaction { .. } => EventKind::Compaction,
            Self::Warning(_) => EventKind::Warning,
            Self::Error { .. } => EventKind::Error,
            Self::PlanUpdated { .. } => EventKind::PlanUpdated,
            Self::NetworkConnection(_) => EventKind::NetworkConnection,
        }
    }

    /// The payload as a JSON object, what the WIT carries as `data-json`.
    pub fn to_data_value(&self) -> Value {
        serde_json::from_str(&self.to_data_json()).unwrap_or_else(|_| Value::Object(Default::default()))
    }

    /// The payload's JSON, written straight from the event (no `Value` tree): the event is
    /// adjacently tagged, so its JSON is `{"kind":"KIND","data":PAYLOAD}` and the payload is
    /// cut out of it.
    pub fn to_data_json(&self) -> String {
        let Ok(mut whole) = serde_json::to_string(self) else {
            return "{}".to_string();
        };
        let head = format!(r#"{{"kind":"{}","data":"#, self.kind().as_str());
        if !(whole.starts_with(&head) && whole.ends_with('}')) || whole.len() <= head.len() + 1 {
            return "{}".to_string();
        }
        whole.truncate(whole.len() - 1);
        whole.drain(..head.len());
        whole
    }

    /// The payload of a `kind` read back from its JSON, in one pass (no `Value` tree).
    pub fn from_wire(kind: EventKind, data_json: &str) -> Result<Self, WireError> {
        // One JSON value and nothing after it, so it cannot add fields to the envelope.
        let mut exactly_one = serde_json::Deserializer::from_str(data_json);
        serde::de::IgnoredAny::deserialize(&mut exactly_one)
            .and_then(|_| exactly_one.end())
            .map_err(|e| WireError::new("event data", e))?;
        let whole = format!(r#"{{"kind":"{}","data":{data_json}}}"#, kind.as_str());
        serde_json::from_str(&whole).map_err(|e| WireError::new(kind.as_str(), e))
    }

    pub fn from_value(kind: EventKind, data: Value) -> Result<Self, WireError> {
        serde_json::from_value(serde_json::json!({"kind": kind.as_str(), "data": data}))
            .map_err(|e| WireError::new(kind.as_str(), e))
    }
}

/// One event of a session, or of one of its subagents.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Event {
    #[serde(flatten)]
    pub data: EventData,
    pub session_id: String,
    pub timestamp_ms: u64,
    /// The subagent the event comes from, set by the host that forwards a child's events;
    /// `None` for the session's own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_id: Option<String>,
}

impl Event {
    pub fn new(session_id: impl Into<String>, timestamp_ms: u64, data: EventData) -> Self {
        Self {
            data,
            session_id: session_id.into(),
            timestamp_ms,
            agent_id: None,
        }
    }

    pub fn kind(&self) -> EventKind {
        self.data.kind()
    }

    /// A line of a JSON-lines log or of `--json` output.
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }

    pub fn from_json(line: &str) -> Result<Self, WireError> {
        serde_json::from_str(line).map_err(|e| WireError::new("event", e))
    }

    /// Whether this is the session's own end (not a subagent's).
    pub fn ends_session(&self) -> bool {
        self.agent_id.is_none() && matches!(self.data, EventData::SessionEnd { .. })
    }
}
