//! Record and replay of LLM exchanges: [`LlmTransport`] is what a session's `llm-transport`
//! import talks to, either HTTP, HTTP teed into a recording (`--record FILE`), or a
//! recording served without network (`--provider replay --replay FILE`). The file format is
//! described in [`format`](mod@format); what replay normalises before comparing requests in
//! [`normalize`].

pub mod format;
pub mod normalize;
mod options;
pub mod recorder;
pub mod replay;

pub use options::{REPLAY_PROVIDER, RecordReplayOptions};
pub use recorder::RecordingTransport;
pub use replay::{Recording, ReplayTransport};

use crate::bindings::api::{SessionConfig, WireProtocol};
use crate::bindings::llm_transport::{HttpRequest, TransportError};
use crate::endpoints::{AuthStyle, Endpoint};
use crate::in_process_llm::InProcessTransport;
use crate::transport::{HttpTransport, ResponseHandle};
use format::RecordedSession;

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

/// The name of a wire protocol in a recording.
pub fn protocol_name(protocol: WireProtocol) -> &'static str {
    match protocol {
        WireProtocol::AnthropicMessages => "anthropic-messages",
        WireProtocol::OpenaiResponses => "openai-responses",
        WireProtocol::ChatCompletions => "chat-completions",
        WireProtocol::Gemini => "gemini",
    }
}

pub fn protocol_from_name(name: &str) -> Option<WireProtocol> {
    Some(match name {
        "anthropic-messages" => WireProtocol::AnthropicMessages,
        "openai-responses" => WireProtocol::OpenaiResponses,
        "chat-completions" => WireProtocol::ChatCompletions,
        "gemini" => WireProtocol::Gemini,
        _ => return None,
    })
}

/// What a recording's header says about a session configuration.
pub fn recorded_session(config: &SessionConfig) -> RecordedSession {
    RecordedSession {
        provider: config.provider.clone(),
        endpoint: config.endpoint.clone(),
        protocol: protocol_name(config.protocol).to_string(),
        model: config.model.clone(),
    }
}

impl Recording {
    /// The recorded session's protocol.
    pub fn protocol(&self) -> Result<WireProtocol, String> {
        protocol_from_name(&self.session().protocol).ok_or_else(|| {
            format!(
                "{}: unknown protocol {:?} in the header",
                self.path.display(),
                self.session().protocol
            )
        })
    }

    /// An endpoint of the recorded name and protocol, served by the replay (it has no URL
    /// and no key).
    pub fn endpoint(&self) -> Result<Endpoint, String> {
        Ok(Endpoint {
            name: self.session().endpoint.clone(),
            base_url: format!("replay:{}", self.path.display()),
            api_key: None,
            auth: AuthStyle::Bearer,
            key_var: String::new(),
            configured: true,
            protocol: self.protocol()?,
        })
    }

    /// Whether a session asked for with `provider` and `model` (each optional) can replay
    /// this recording; the error names what differs.
    pub fn check_choice(&self, provider: Option<&str>, model: Option<&str>) -> Result<(), String> {
        let session = self.session();
        let what = format!(
            "the recording {} was made with provider {} ({}, model {})",
            self.path.display(),
            session.endpoint,
            session.protocol,
            session.model
        );
        if let Some(provider) = provider.filter(|p| *p != REPLAY_PROVIDER)
            && provider != session.endpoint
            && provider != session.provider
        {
            return Err(format!("{what}; it cannot be replayed as provider {provider}"));
        }
        if let Some(model) = model
            && model != session.model
        {
            return Err(format!("{what}; it cannot be replayed with model {model}"));
        }
        Ok(())
    }

    /// Checks that a session configuration talks the way the recording was made.
    pub fn check_config(&self, config: &SessionConfig) -> Result<(), String> {
        let session = self.session();
        let recorded = self.protocol()?;
        if config.endpoint != session.endpoint || config.protocol != recorded || config.model != session.model
        {
            return Err(format!(
                "the recording {} was made with endpoint {} ({}, model {}); this session uses {} ({}, model {})",
                self.path.display(),
                session.endpoint,
                session.protocol,
                session.model,
                config.endpoint,
                protocol_name(config.protocol),
                config.model
            ));
        }
        Ok(())
    }
}
