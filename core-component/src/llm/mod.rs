//! The LLM client: provider-neutral request and response types, the SSE decoder, and one
//! adapter per wire protocol. Hosts only move bytes; all protocol logic lives here.

pub mod anthropic;
mod body;
pub mod chat_completions;
pub mod client;
pub mod error;
pub mod gemini;
pub mod openai_responses;
mod request;
pub mod retry;
pub mod sse;
pub mod types;
pub mod wire_cache;

pub use client::LlmClient;

/// Tool-call arguments as streamed (concatenated JSON text): `{}` when empty, the raw text
/// as a string value when it does not parse, so validation can tell the model what went wrong.
pub(crate) fn parse_tool_arguments(json: &str) -> serde_json::Value {
    if json.trim().is_empty() {
        return serde_json::json!({});
    }
    serde_json::from_str(json).unwrap_or_else(|_| serde_json::Value::String(json.to_string()))
}

/// Headers of a JSON request answered with an event stream (the OpenAI APIs; credentials are
/// the host's business).
pub(crate) fn json_stream_headers() -> Vec<(String, String)> {
    vec![
        ("content-type".to_string(), "application/json".to_string()),
        ("accept".to_string(), "text/event-stream".to_string()),
    ]
}

pub use error::{ErrorKind, LlmError};
pub use retry::RetryPolicy;
pub use types::*;
pub use wire_cache::WireCache;
