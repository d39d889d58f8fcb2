//! How a session stands and how an input ended, and the classes of LLM failure.

use serde::{Deserialize, Serialize};

/// Lifecycle state (section 2.3).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SessionState {
    Idle,
    Processing,
    AwaitingInput,
    Closed,
}

/// Why the loop stopped for an input.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StopReason {
    Completed,
    RoundLimit,
    TurnLimit,
    AwaitingInput,
    Cancelled,
    Aborted,
    /// The request no longer fits the context window; the session stays usable.
    ContextLength,
}

/// What a compaction did (`session.compact()`); sizes are estimated tokens of the whole
/// request, system prompt and tools included.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct CompactionReport {
    pub stage: crate::event::CompactionStage,
    pub tokens_before: u64,
    pub tokens_after: u64,
    pub turns_before: u32,
    pub turns_after: u32,
}

/// What one `submit` achieved.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SubmitOutcome {
    pub stop_reason: StopReason,
    pub rounds: u32,
    pub turns: u32,
    pub final_text: String,
}

/// Why a call on a session failed (`agent.agent-error`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AgentError {
    #[error("the session is closed")]
    Closed,
    #[error("a submit is already in progress")]
    Busy,
    #[error("invalid configuration: {0}")]
    InvalidConfig(String),
    #[error("LLM request failed: {0}")]
    Llm(String),
    #[error("internal error: {0}")]
    Internal(String),
}

/// The class of an LLM failure.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorKind {
    Authentication,
    PermissionDenied,
    NotFound,
    InvalidRequest,
    ContextLength,
    RateLimit,
    Overloaded,
    Server,
    ContentFilter,
    Network,
    Stream,
    Configuration,
    Cancelled,
}

impl ErrorKind {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Authentication => "authentication",
            Self::PermissionDenied => "permission_denied",
            Self::NotFound => "not_found",
            Self::InvalidRequest => "invalid_request",
            Self::ContextLength => "context_length",
            Self::RateLimit => "rate_limit",
            Self::Overloaded => "overloaded",
            Self::Server => "server",
            Self::ContentFilter => "content_filter",
            Self::Network => "network",
            Self::Stream => "stream",
            Self::Configuration => "configuration",
            Self::Cancelled => "cancelled",
        }
    }

    /// Whether trying again later may succeed.
    pub fn retryable(self) -> bool {
        matches!(
            self,
            Self::RateLimit | Self::Overloaded | Self::Server | Self::Network
        )
    }

    /// The class of an HTTP error status.
    pub fn from_status(status: u16) -> Self {
        match status {
            401 => Self::Authentication,
            403 => Self::PermissionDenied,
            404 => Self::NotFound,
            408 => Self::Network,
            413 => Self::ContextLength,
            429 => Self::RateLimit,
            529 | 503 => Self::Overloaded,
            400..=499 => Self::InvalidRequest,
            _ => Self::Server,
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn error_kinds_serialise_as_their_names() {
        for kind in [
            ErrorKind::PermissionDenied,
            ErrorKind::ContextLength,
            ErrorKind::Cancelled,
        ] {
            assert_eq!(serde_json::to_value(kind).unwrap(), kind.as_str());
        }
    }
}
