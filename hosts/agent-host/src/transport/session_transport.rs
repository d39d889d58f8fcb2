//! [`LlmTransport`]: where one session's LLM requests go.

use crate::transport::http::HttpTransport;
use crate::transport::in_process::InProcessTransport;
use crate::transport::recorder::RecordingTransport;
use crate::transport::replay::ReplayTransport;
use crate::transport::response::ResponseHandle;
use agent_protocol::ports::{HttpRequest, TransportError};

/// Where a session's LLM requests go. Cheap to clone.
#[derive(Clone)]
pub enum LlmTransport {
    /// Straight to the endpoints over HTTP.
    Http(HttpTransport),
    /// Over HTTP, with every exchange written to a recording.
    Recording(RecordingTransport),
    /// From a recording, without network.
    Replay(ReplayTransport),
    /// From a function in this process, without network.
    InProcess(InProcessTransport),
}

impl LlmTransport {
    /// Sends a request and returns once the response head arrived.
    pub async fn send(&self, request: HttpRequest) -> Result<ResponseHandle, TransportError> {
        match self {
            Self::Http(http) => http.send(request).await,
            Self::Recording(recording) => recording.send(request).await,
            Self::Replay(replay) => replay.send(request),
            Self::InProcess(in_process) => in_process.send(&request),
        }
    }

    /// The HTTP transport underneath, if requests reach the network.
    pub fn http(&self) -> Option<&HttpTransport> {
        match self {
            Self::Http(http) => Some(http),
            Self::Recording(recording) => Some(recording.http()),
            Self::Replay(_) | Self::InProcess(_) => None,
        }
    }
}

impl From<HttpTransport> for LlmTransport {
    fn from(http: HttpTransport) -> Self {
        Self::Http(http)
    }
}

impl From<RecordingTransport> for LlmTransport {
    fn from(recording: RecordingTransport) -> Self {
        Self::Recording(recording)
    }
}

impl From<InProcessTransport> for LlmTransport {
    fn from(in_process: InProcessTransport) -> Self {
        Self::InProcess(in_process)
    }
}

impl From<ReplayTransport> for LlmTransport {
    fn from(replay: ReplayTransport) -> Self {
        Self::Replay(replay)
    }
}
