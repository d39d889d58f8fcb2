//! LLM errors, classified so the loop knows which are retryable and which are fatal.

pub use agent_protocol::ErrorKind;

/// An LLM request that failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{} error{}: {message}", kind.as_str(), status.map(|s| format!(" (HTTP {s})")).unwrap_or_default())]
pub struct LlmError {
    pub kind: ErrorKind,
    pub message: String,
    pub status: Option<u16>,
    /// Provider's hint of when to retry, in milliseconds.
    pub retry_after_ms: Option<u64>,
}

impl LlmError {
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        Self {
            kind,
            message: message.into(),
            status: None,
            retry_after_ms: None,
        }
    }
}
