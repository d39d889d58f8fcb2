//! Sends a request over `llm-transport` with the endpoint's wire protocol and folds the
//! streamed answer into a `Response`.

use super::error::{ErrorKind, LlmError};
use super::sse::{SseDecoder, SseEvent};
use super::types::*;
use super::{anthropic, chat_completions, gemini, openai_responses};
use crate::ports::{HttpRequest, HttpResponse, Transport, TransportError};
use std::rc::Rc;

/// Largest error body read into memory.
const MAX_ERROR_BODY: usize = 64 * 1024;

/// An LLM client bound to one endpoint.
#[derive(Clone)]
pub struct LlmClient {
    transport: Rc<dyn Transport>,
    endpoint: String,
    protocol: WireProtocol,
}

impl std::fmt::Debug for LlmClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LlmClient")
            .field("endpoint", &self.endpoint)
            .field("protocol", &self.protocol)
            .finish()
    }
}

impl LlmClient {
    pub fn new(transport: Rc<dyn Transport>, endpoint: impl Into<String>, protocol: WireProtocol) -> Self {
        Self {
            transport,
            endpoint: endpoint.into(),
            protocol,
        }
    }

    /// Streams one response. `interrupted` is polled between chunks: when it returns true
    /// the response is dropped (closing the stream) and `Cancelled` returned.
    pub fn stream(
        &self,
        request: &Request,
        interrupted: &dyn Fn() -> bool,
        emit: &mut dyn FnMut(StreamEvent),
    ) -> Result<Response, LlmError> {
        let (path, headers, body) = match self.protocol {
            WireProtocol::AnthropicMessages => (
                anthropic::PATH.to_string(),
                anthropic::headers(request),
                anthropic::request_body(request),
            ),
            WireProtocol::ChatCompletions => (
                chat_completions::PATH.to_string(),
                chat_completions::headers(),
                chat_completions::request_body(request),
            ),
            WireProtocol::OpenaiResponses => (
                openai_responses::PATH.to_string(),
                openai_responses::headers(),
                openai_responses::request_body(request),
            ),
            WireProtocol::Gemini => (
                gemini::path(request.model),
                gemini::headers(),
                gemini::request_body(request),
            ),
        };
        let mut http = HttpRequest {
            endpoint: self.endpoint.clone(),
            method: "POST".to_string(),
            path,
            headers,
            body: body.map_err(|e| LlmError::new(ErrorKind::InvalidRequest, e.to_string()))?,
            timeout_ms: Some(600_000),
        };
        let sent = self.transport.send(&mut http);
        if let Some(mut cache) = request.cache.and_then(|cache| cache.try_borrow_mut().ok()) {
            cache.give_back(http.body);
        }
        let mut response = sent.map_err(transport_error)?;
        let status = response.status();
        if !(200..300).contains(&status) {
            return Err(http_error(self.protocol, status, response.as_mut()));
        }
        let is_sse = header(response.as_ref(), "content-type").is_none_or(|ct| ct.contains("event-stream"));
        if !is_sse {
            let body = read_body(response.as_mut(), usize::MAX)?;
            let value: serde_json::Value = serde_json::from_slice(&body)
                .map_err(|e| LlmError::new(ErrorKind::Stream, format!("response body is not JSON: {e}")))?;
            return match self.protocol {
                WireProtocol::ChatCompletions => chat_completions::parse_response(&value),
                WireProtocol::OpenaiResponses => openai_responses::parse_response(&value),
                WireProtocol::Gemini => gemini::parse_response(&value),
                WireProtocol::AnthropicMessages => anthropic::parse_response(&value),
            };
        }
        let mut decoder = SseDecoder::new();
        let mut fold = Fold::new(self.protocol);
        loop {
            if interrupted() {
                return Err(LlmError::new(ErrorKind::Cancelled, "the request was interrupted"));
            }
            match response.next_chunk().map_err(transport_error)? {
                Some(chunk) => {
                    for event in decoder.feed(&chunk) {
                        fold.handle(&event, emit)?;
                    }
                }
                None => {
                    // A fragment left at the end that does not parse is a cut-off event:
                    // reported below as an incomplete stream, not as malformed JSON.
                    if let Some(event) = decoder.finish()
                        && let Err(error) = fold.handle(&event, emit)
                        && error.kind != ErrorKind::Stream
                    {
                        return Err(error);
                    }
                    break;
                }
            }
        }
        if !fold.finished() {
            return Err(LlmError::new(
                ErrorKind::Stream,
                "the response stream ended before its end marker: the answer is incomplete",
            ));
        }
        Ok(fold.into_response(emit))
    }
}

/// The stream fold of each protocol.
enum Fold {
    Anthropic(anthropic::StreamFold),
    Chat(chat_completions::StreamFold),
    Responses(openai_responses::StreamFold),
    Gemini(gemini::StreamFold),
}

impl Fold {
    fn new(protocol: WireProtocol) -> Self {
        match protocol {
            WireProtocol::ChatCompletions => Self::Chat(chat_completions::StreamFold::new()),
            WireProtocol::OpenaiResponses => Self::Responses(openai_responses::StreamFold::new()),
            WireProtocol::Gemini => Self::Gemini(gemini::StreamFold::new()),
            WireProtocol::AnthropicMessages => Self::Anthropic(anthropic::StreamFold::new()),
        }
    }

    fn handle(&mut self, event: &SseEvent, emit: &mut dyn FnMut(StreamEvent)) -> Result<(), LlmError> {
        match self {
            Self::Anthropic(fold) => fold.handle(&event.data, emit),
            Self::Chat(fold) => fold.handle(&event.event, &event.data, emit),
            Self::Responses(fold) => fold.handle(&event.data, emit),
            Self::Gemini(fold) => fold.handle(&event.data, emit),
        }
    }

    fn finished(&self) -> bool {
        match self {
            Self::Anthropic(fold) => fold.finished(),
            Self::Chat(fold) => fold.finished(),
            Self::Responses(fold) => fold.finished(),
            Self::Gemini(fold) => fold.finished(),
        }
    }

    fn into_response(self, emit: &mut dyn FnMut(StreamEvent)) -> Response {
        match self {
            Self::Anthropic(fold) => fold.into_response(emit),
            Self::Chat(fold) => fold.into_response(emit),
            Self::Responses(fold) => fold.into_response(emit),
            Self::Gemini(fold) => fold.into_response(emit),
        }
    }
}

fn header(response: &dyn HttpResponse, name: &str) -> Option<String> {
    response
        .headers()
        .into_iter()
        .find(|(k, _)| k.eq_ignore_ascii_case(name))
        .map(|(_, v)| v)
}

fn read_body(response: &mut dyn HttpResponse, cap: usize) -> Result<Vec<u8>, LlmError> {
    let mut body = Vec::new();
    while let Some(chunk) = response.next_chunk().map_err(transport_error)? {
        body.extend_from_slice(&chunk);
        if body.len() >= cap {
            body.truncate(cap);
            break;
        }
    }
    Ok(body)
}

/// Retry hint from `retry-after-ms` or `retry-after` (seconds).
fn retry_after_ms(response: &dyn HttpResponse) -> Option<u64> {
    if let Some(ms) = header(response, "retry-after-ms").and_then(|v| v.trim().parse::<f64>().ok()) {
        return Some(ms.max(0.0) as u64);
    }
    header(response, "retry-after")
        .and_then(|v| v.trim().parse::<f64>().ok())
        .map(|s| (s.max(0.0) * 1000.0) as u64)
}

fn http_error(protocol: WireProtocol, status: u16, response: &mut dyn HttpResponse) -> LlmError {
    let retry = retry_after_ms(response);
    let body = match read_body(response, MAX_ERROR_BODY) {
        Ok(body) => body,
        Err(e) => {
            return LlmError {
                status: Some(status),
                retry_after_ms: retry,
                ..e
            };
        }
    };
    match serde_json::from_slice::<serde_json::Value>(&body) {
        Ok(value) => match protocol {
            WireProtocol::ChatCompletions => chat_completions::error_from_body(Some(status), &value, retry),
            WireProtocol::OpenaiResponses => openai_responses::error_from_body(Some(status), &value, retry),
            WireProtocol::Gemini => gemini::error_from_body(Some(status), &value, retry),
            WireProtocol::AnthropicMessages => anthropic::error_from_body(Some(status), &value, retry),
        },
        Err(_) => LlmError {
            kind: ErrorKind::from_status(status),
            message: String::from_utf8_lossy(&body).trim().to_string(),
            status: Some(status),
            retry_after_ms: retry,
        },
    }
}

fn transport_error(error: TransportError) -> LlmError {
    let kind = match &error {
        TransportError::UnknownEndpoint(_) | TransportError::NotConfigured(_) => ErrorKind::Configuration,
        TransportError::Cancelled => ErrorKind::Cancelled,
        TransportError::Io(_) => ErrorKind::Stream,
        TransportError::Connect(_) | TransportError::Timeout(_) => ErrorKind::Network,
    };
    LlmError::new(kind, error.to_string())
}
