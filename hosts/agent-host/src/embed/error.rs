//! The embedding API's error.

use agent_protocol::AgentError;

/// What went wrong building a host, opening a session or running an input.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The core component could not be found, read or compiled.
    #[error("cannot load the agent component: {0}")]
    Component(String),
    /// The options do not make a session: unknown or unconfigured provider, missing model,
    /// unusable workspace, a tool name clash, an unreadable recording...
    #[error("{0}")]
    Options(String),
    /// The session is closed (closed, aborted, or ended by an LLM error).
    #[error("the session is closed")]
    Closed,
    /// Another `submit` of this session is still running.
    #[error("the session is busy with another input")]
    Busy,
    /// The component refused the session's configuration; the message names the field.
    #[error("invalid configuration: {0}")]
    InvalidConfig(String),
    /// An LLM request failed for good. Authentication, permission, an invalid request or
    /// a replay divergence close the session; a transient failure (network, overloaded or
    /// failing server, a stream cut mid-answer) once the retries are spent ends only the
    /// input, and a failed `compact` leaves the session usable (the old tool outputs it
    /// elided before the summary failed stay elided).
    #[error("the LLM request failed: {0}")]
    Llm(String),
    /// The session's files could not be written or read back (its store's folder, a
    /// second process holding it, a damaged journal).
    #[error("session storage: {0}")]
    Storage(String),
    /// An internal error of the component.
    #[error("internal error of the agent: {0}")]
    Internal(String),
    /// The component trapped (a bug in it, or a host failure); the session is unusable.
    #[error("the agent component trapped: {0}")]
    Trap(String),
    /// The session's checkpoints could not be listed or restored, or it has none (its
    /// environment is not a local workspace, or it is read-only).
    #[error("checkpoints: {0}")]
    Checkpoints(String),
}

impl Error {
    pub(crate) fn trap(error: anyhow::Error) -> Self {
        Self::Trap(format!("{error:#}"))
    }

    pub(crate) fn storage(error: impl Into<anyhow::Error>) -> Self {
        Self::Storage(format!("{:#}", error.into()))
    }
}

impl From<AgentError> for Error {
    fn from(error: AgentError) -> Self {
        match error {
            AgentError::Closed => Self::Closed,
            AgentError::Busy => Self::Busy,
            AgentError::InvalidConfig(m) => Self::InvalidConfig(m),
            AgentError::Llm(m) => Self::Llm(m),
            AgentError::Internal(m) => Self::Internal(m),
        }
    }
}
