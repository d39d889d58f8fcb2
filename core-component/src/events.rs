//! Session events (section 2.9 of the spec). Payloads are JSON objects so that every host,
//! native or JavaScript, can forward them unchanged.

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
    Warning,
    Error,
}

impl EventKind {
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
            Self::Warning => "WARNING",
            Self::Error => "ERROR",
        }
    }
}

/// One event of a session.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Event {
    pub kind: EventKind,
    pub session_id: String,
    pub timestamp_ms: u64,
    pub data: Value,
}
