//! The recording file: JSON lines, written as the exchanges happen.
//!
//! ```text
//! {"type":"header","format":"agent-host/llm-recording","version":1,"agent_host_version":"0.1.0",
//!  "created_unix_ms":1767225600000,"workspace":"/home/me/project",
//!  "session":{"provider":"anthropic","endpoint":"anthropic","protocol":"anthropic-messages","model":"claude-sonnet-4-5"}}
//! {"type":"request","exchange":1,"t_ms":0,"endpoint":"anthropic","method":"POST","path":"/v1/messages",
//!  "headers":[["anthropic-version","2023-06-01"]],"body":{...}}
//! {"type":"response","exchange":1,"t_ms":210,"status":200,"headers":[["content-type","text/event-stream"]]}
//! {"type":"chunk","exchange":1,"t_ms":212,"text":"event: message_start\ndata: {...}\n\n"}
//! {"type":"end","exchange":1,"t_ms":980}
//! {"type":"error","exchange":2,"t_ms":1200,"stage":"send","error":{"kind":"connect","message":"..."}}
//! ```
//!
//! - `exchange` numbers requests from 1 in the order they were sent; the lines of concurrent
//!   exchanges (subagents) may interleave.
//! - `t_ms`: milliseconds since the recording started (informational; replay does not wait).
//! - A request body that is JSON is stored as `body` (a JSON value), other UTF-8 as
//!   `body_text`, anything else as `body_base64`; a chunk is `text` when it is UTF-8 on its
//!   own, else `base64` (a chunk may end inside a multi-byte character).
//! - `error` is a failed send (`stage: "send"`) or a failed body read (`stage: "read"`),
//!   `kind` one of the transport errors: unknown-endpoint, not-configured, connect, timeout,
//!   io, cancelled.
//! - Credentials never enter the file: the host adds them after the core's request, the
//!   recorder replaces the configured keys and anything shaped like a key by `<redacted>`,
//!   and headers named like credentials keep only their name.
//! - Each line is flushed as it is written: a run that crashed leaves a usable prefix, and
//!   a torn last line is ignored when reading.
//! - Keep the file outside the workspace: a recording growing inside it is something the
//!   agent can list or read, and the replay's workspace would not have it.

use agent_protocol::ports::TransportError;
use base64::Engine as _;
use serde::{Deserialize, Serialize};

/// The `format` value of a recording's header.
pub const FORMAT: &str = "agent-host/llm-recording";
/// The version this host writes and reads.
pub const VERSION: u32 = 1;

/// One line of a recording.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Line {
    Header(Header),
    Request(RequestLine),
    Response(ResponseLine),
    Chunk(ChunkLine),
    End(EndLine),
    Error(ErrorLine),
}

/// The first line: what the recording is and which session made it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Header {
    pub format: String,
    pub version: u32,
    #[serde(default)]
    pub agent_host_version: String,
    #[serde(default)]
    pub created_unix_ms: u64,
    /// The recorded session's working directory (replay normalises it in requests).
    #[serde(default)]
    pub workspace: Option<String>,
    pub session: RecordedSession,
}

/// The session configuration a replay starts from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RecordedSession {
    /// The tool profile (`anthropic`, `openai`, `gemini`, `compact`).
    pub provider: String,
    /// The endpoint name the core sent its requests to.
    pub endpoint: String,
    /// `anthropic-messages`, `openai-responses`, `chat-completions` or `gemini`.
    pub protocol: String,
    pub model: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RequestLine {
    pub exchange: u64,
    pub t_ms: u64,
    pub endpoint: String,
    pub method: String,
    pub path: String,
    pub headers: Vec<(String, String)>,
    #[serde(flatten)]
    pub body: Body,
}

/// A request body, readable where it can be.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum Body {
    #[serde(rename = "body")]
    Json(serde_json::Value),
    #[serde(rename = "body_text")]
    Text(String),
    #[serde(rename = "body_base64")]
    Base64(String),
}

impl Body {
    pub fn from_bytes(bytes: &[u8]) -> Self {
        if let Ok(value) = serde_json::from_slice(bytes) {
            return Self::Json(value);
        }
        match std::str::from_utf8(bytes) {
            Ok(text) => Self::Text(text.to_string()),
            Err(_) => Self::Base64(base64::engine::general_purpose::STANDARD.encode(bytes)),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ResponseLine {
    pub exchange: u64,
    pub t_ms: u64,
    pub status: u16,
    pub headers: Vec<(String, String)>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChunkLine {
    pub exchange: u64,
    pub t_ms: u64,
    #[serde(flatten)]
    pub data: ChunkData,
}

/// Body bytes exactly as they arrived.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum ChunkData {
    #[serde(rename = "text")]
    Text(String),
    #[serde(rename = "base64")]
    Base64(String),
}

impl ChunkData {
    pub fn from_bytes(bytes: &[u8]) -> Self {
        match std::str::from_utf8(bytes) {
            Ok(text) => Self::Text(text.to_string()),
            Err(_) => Self::Base64(base64::engine::general_purpose::STANDARD.encode(bytes)),
        }
    }

    pub fn to_bytes(&self) -> Result<Vec<u8>, String> {
        match self {
            Self::Text(text) => Ok(text.as_bytes().to_vec()),
            Self::Base64(data) => base64::engine::general_purpose::STANDARD
                .decode(data)
                .map_err(|e| format!("a chunk's base64 is invalid: {e}")),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EndLine {
    pub exchange: u64,
    pub t_ms: u64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ErrorLine {
    pub exchange: u64,
    pub t_ms: u64,
    pub stage: Stage,
    pub error: RecordedError,
}

/// Where an exchange failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Stage {
    Send,
    Read,
}

/// A transport error in the file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RecordedError {
    pub kind: String,
    #[serde(default)]
    pub message: String,
}

impl RecordedError {
    pub fn from_transport(error: &TransportError) -> Self {
        let (kind, message) = match error {
            TransportError::UnknownEndpoint(m) => ("unknown-endpoint", m.as_str()),
            TransportError::NotConfigured(m) => ("not-configured", m.as_str()),
            TransportError::Connect(m) => ("connect", m.as_str()),
            TransportError::Timeout(m) => ("timeout", m.as_str()),
            TransportError::Io(m) => ("io", m.as_str()),
            TransportError::Cancelled => ("cancelled", ""),
        };
        Self {
            kind: kind.to_string(),
            message: message.to_string(),
        }
    }

    pub fn to_transport(&self) -> TransportError {
        let message = self.message.clone();
        match self.kind.as_str() {
            "unknown-endpoint" => TransportError::UnknownEndpoint(message),
            "not-configured" => TransportError::NotConfigured(message),
            "connect" => TransportError::Connect(message),
            "timeout" => TransportError::Timeout(message),
            "cancelled" => TransportError::Cancelled,
            _ => TransportError::Io(message),
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn lines_round_trip_with_their_type_tag() {
        let lines = [
            Line::Request(RequestLine {
                exchange: 1,
                t_ms: 0,
                endpoint: "anthropic".into(),
                method: "POST".into(),
                path: "/v1/messages".into(),
                headers: vec![("content-type".into(), "application/json".into())],
                body: Body::from_bytes(br#"{"model":"m"}"#),
            }),
            Line::Chunk(ChunkLine {
                exchange: 1,
                t_ms: 3,
                data: ChunkData::from_bytes(&[0xe2, 0x82]),
            }),
        ];
        for line in lines {
            let text = serde_json::to_string(&line).unwrap();
            assert_eq!(serde_json::from_str::<Line>(&text).unwrap(), line, "{text}");
        }
        let text = serde_json::to_string(&Line::Chunk(ChunkLine {
            exchange: 2,
            t_ms: 1,
            data: ChunkData::from_bytes(b"data: x\n\n"),
        }))
        .unwrap();
        assert_eq!(
            text,
            r#"{"type":"chunk","exchange":2,"t_ms":1,"text":"data: x\n\n"}"#
        );
    }

    #[test]
    fn every_transport_error_survives_the_file() {
        for error in [
            TransportError::UnknownEndpoint("a".into()),
            TransportError::NotConfigured("b".into()),
            TransportError::Connect("c".into()),
            TransportError::Timeout("d".into()),
            TransportError::Io("e".into()),
            TransportError::Cancelled,
        ] {
            let back = RecordedError::from_transport(&error).to_transport();
            assert_eq!(format!("{back:?}"), format!("{error:?}"));
        }
    }
}
