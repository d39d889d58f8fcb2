//! Provider-neutral request, response and message types (after the unified LLM spec).

use serde::{Deserialize, Serialize};
use serde_json::Value;

pub use agent_protocol::{
    ContentPart, FinishReason, ImageData, Message, ReasoningEffort, Role, ToolCall, ToolDefinition, Usage,
    WireProtocol,
};

/// One request to a model.
#[derive(Debug, Clone, PartialEq)]
pub struct Request {
    pub model: String,
    pub system: String,
    pub messages: Vec<Message>,
    pub tools: Vec<ToolDefinition>,
    pub max_tokens: u32,
    pub reasoning_effort: Option<ReasoningEffort>,
    /// Provider-specific options merged into the request body.
    pub provider_options: Option<Value>,
    /// Names the requests that share a prefix (the session's id), for a provider that routes
    /// requests to its prompt cache by it (OpenAI's `prompt_cache_key`).
    pub cache_key: Option<String>,
}

/// A complete response.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Response {
    pub id: Option<String>,
    pub model: Option<String>,
    pub message: Message,
    pub finish_reason: FinishReason,
    /// The provider's own stop reason string.
    pub raw_finish_reason: Option<String>,
    pub usage: Usage,
}

/// What a streaming response reports as it arrives.
#[derive(Debug, Clone, PartialEq)]
pub enum StreamEvent {
    TextStart,
    TextDelta(String),
    TextEnd,
    ReasoningStart,
    ReasoningDelta(String),
    ReasoningEnd,
    ToolCallStart { id: String, name: String },
    ToolCallEnd { id: String },
}
