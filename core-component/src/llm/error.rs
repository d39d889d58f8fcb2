//! LLM errors, classified so the loop knows which are retryable and which are fatal.

/// The class of an LLM failure.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
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
