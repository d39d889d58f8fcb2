//! Anthropic Messages (`POST /v1/messages`): the request (`request/anthropic.rs`), the
//! streaming event fold, the non-streaming body, and error classification.

use super::error::{ErrorKind, LlmError};
use super::types::*;
use serde_json::{Value, json};

pub use super::request::anthropic::{PATH, headers, request_body};

#[derive(Debug)]
enum OpenBlock {
    Text(String),
    Thinking {
        text: String,
        signature: Option<String>,
    },
    Redacted(String),
    ToolUse {
        id: String,
        name: String,
        json: String,
    },
    /// Server-side tool blocks and unknown types: not ours to execute.
    Ignored,
}

/// Folds the events of one streamed response into a `Response`.
#[derive(Debug, Default)]
pub struct StreamFold {
    id: Option<String>,
    model: Option<String>,
    blocks: Vec<(u64, OpenBlock)>,
    parts: Vec<ContentPart>,
    usage: Usage,
    stop_reason: Option<String>,
    finished: bool,
}

impl StreamFold {
    pub fn new() -> Self {
        Self::default()
    }

    /// Whether `message_stop` arrived.
    pub fn finished(&self) -> bool {
        self.finished
    }

    /// Handles one SSE event; `emit` receives what should be shown as it happens.
    pub fn handle(&mut self, data: &str, emit: &mut dyn FnMut(StreamEvent)) -> Result<(), LlmError> {
        let event: Value = serde_json::from_str(data)
            .map_err(|e| LlmError::new(ErrorKind::Stream, format!("malformed stream event ({e}): {data}")))?;
        match event["type"].as_str().unwrap_or_default() {
            "message_start" => {
                let message = &event["message"];
                self.id = message["id"].as_str().map(str::to_string);
                self.model = message["model"].as_str().map(str::to_string);
                apply_usage(&mut self.usage, &message["usage"]);
            }
            "content_block_start" => {
                let index = event["index"].as_u64().unwrap_or(0);
                let block = &event["content_block"];
                let open = match block["type"].as_str().unwrap_or_default() {
                    "text" => {
                        emit(StreamEvent::TextStart);
                        let text = block["text"].as_str().unwrap_or_default().to_string();
                        if !text.is_empty() {
                            emit(StreamEvent::TextDelta(text.clone()));
                        }
                        OpenBlock::Text(text)
                    }
                    "thinking" => {
                        emit(StreamEvent::ReasoningStart);
                        OpenBlock::Thinking {
                            text: block["thinking"].as_str().unwrap_or_default().to_string(),
                            signature: block["signature"]
                                .as_str()
                                .filter(|s| !s.is_empty())
                                .map(str::to_string),
                        }
                    }
                    "redacted_thinking" => {
                        OpenBlock::Redacted(block["data"].as_str().unwrap_or_default().to_string())
                    }
                    "tool_use" => {
                        let id = block["id"].as_str().unwrap_or_default().to_string();
                        let name = block["name"].as_str().unwrap_or_default().to_string();
                        emit(StreamEvent::ToolCallStart {
                            id: id.clone(),
                            name: name.clone(),
                        });
                        OpenBlock::ToolUse {
                            id,
                            name,
                            json: String::new(),
                        }
                    }
                    _ => OpenBlock::Ignored,
                };
                self.blocks.push((index, open));
            }
            "content_block_delta" => {
                let index = event["index"].as_u64().unwrap_or(0);
                let delta = &event["delta"];
                let Some((_, open)) = self.blocks.iter_mut().find(|(i, _)| *i == index) else {
                    return Err(LlmError::new(
                        ErrorKind::Stream,
                        format!("delta for unknown content block {index}"),
                    ));
                };
                match (open, delta["type"].as_str().unwrap_or_default()) {
                    (OpenBlock::Text(text), "text_delta") => {
                        let piece = delta["text"].as_str().unwrap_or_default();
                        text.push_str(piece);
                        emit(StreamEvent::TextDelta(piece.to_string()));
                    }
                    (OpenBlock::Thinking { text, .. }, "thinking_delta") => {
                        let piece = delta["thinking"].as_str().unwrap_or_default();
                        text.push_str(piece);
                        if !piece.is_empty() {
                            emit(StreamEvent::ReasoningDelta(piece.to_string()));
                        }
                    }
                    (OpenBlock::Thinking { signature, .. }, "signature_delta") => {
                        let piece = delta["signature"].as_str().unwrap_or_default();
                        signature.get_or_insert_with(String::new).push_str(piece);
                    }
                    (OpenBlock::ToolUse { json, .. }, "input_json_delta") => {
                        json.push_str(delta["partial_json"].as_str().unwrap_or_default());
                    }
                    _ => {}
                }
            }
            "content_block_stop" => {
                let index = event["index"].as_u64().unwrap_or(0);
                if let Some(pos) = self.blocks.iter().position(|(i, _)| *i == index) {
                    let (_, open) = self.blocks.remove(pos);
                    self.close(open, emit);
                }
            }
            "message_delta" => {
                if let Some(reason) = event["delta"]["stop_reason"].as_str() {
                    self.stop_reason = Some(reason.to_string());
                }
                apply_usage(&mut self.usage, &event["usage"]);
            }
            "message_stop" => self.finished = true,
            "error" => return Err(error_from_body(None, &event, None)),
            _ => {}
        }
        Ok(())
    }

    fn close(&mut self, open: OpenBlock, emit: &mut dyn FnMut(StreamEvent)) {
        match open {
            OpenBlock::Text(text) => {
                emit(StreamEvent::TextEnd);
                self.parts.push(ContentPart::Text {
                    text,
                    signature: None,
                });
            }
            OpenBlock::Thinking { text, signature } => {
                emit(StreamEvent::ReasoningEnd);
                self.parts.push(ContentPart::Thinking {
                    text,
                    signature,
                    id: None,
                });
            }
            OpenBlock::Redacted(data) => self.parts.push(ContentPart::RedactedThinking { data }),
            OpenBlock::ToolUse { id, name, json } => {
                emit(StreamEvent::ToolCallEnd { id: id.clone() });
                self.parts.push(ContentPart::ToolCall {
                    signature: None,
                    id,
                    name,
                    arguments: super::parse_tool_arguments(&json),
                });
            }
            OpenBlock::Ignored => {}
        }
    }

    /// Closes blocks the stream left open (e.g. a tool input cut by max_tokens) and
    /// returns the response.
    pub fn into_response(mut self, emit: &mut dyn FnMut(StreamEvent)) -> Response {
        for (_, open) in std::mem::take(&mut self.blocks) {
            self.close(open, emit);
        }
        let message = Message {
            role: Role::Assistant,
            parts: self.parts,
        };
        let mut usage = self.usage;
        usage.reasoning_tokens = estimated_reasoning_tokens(&message);
        Response {
            id: self.id,
            model: self.model,
            finish_reason: finish_reason(self.stop_reason.as_deref(), &message),
            raw_finish_reason: self.stop_reason,
            message,
            usage,
        }
    }
}

/// Anthropic reports no reasoning count: the thinking text at four characters a token
/// (redacted thinking is not counted; its size says nothing of the tokens behind it).
fn estimated_reasoning_tokens(message: &Message) -> u64 {
    let chars: usize = message
        .parts
        .iter()
        .map(|part| match part {
            ContentPart::Thinking { text, .. } => text.chars().count(),
            _ => 0,
        })
        .sum();
    chars.div_ceil(4) as u64
}

/// Usage fields present in an event replace earlier values: each is a snapshot.
fn apply_usage(usage: &mut Usage, value: &Value) {
    let set = |field: &str, slot: &mut u64| {
        if let Some(n) = value[field].as_u64() {
            *slot = n;
        }
    };
    set("input_tokens", &mut usage.input_tokens);
    set("output_tokens", &mut usage.output_tokens);
    set("cache_read_input_tokens", &mut usage.cache_read_tokens);
    set("cache_creation_input_tokens", &mut usage.cache_write_tokens);
}

fn finish_reason(stop_reason: Option<&str>, message: &Message) -> FinishReason {
    match stop_reason {
        Some("end_turn" | "stop_sequence" | "pause_turn") => FinishReason::Stop,
        Some("max_tokens" | "model_context_window_exceeded") => FinishReason::Length,
        Some("tool_use") => FinishReason::ToolCalls,
        Some("refusal") => FinishReason::ContentFilter,
        _ if !message.tool_calls().is_empty() => FinishReason::ToolCalls,
        _ => FinishReason::Other,
    }
}

/// Parses a non-streaming response body.
pub fn parse_response(body: &Value) -> Result<Response, LlmError> {
    if body["type"] == "error" {
        return Err(error_from_body(None, body, None));
    }
    let mut fold = StreamFold::new();
    fold.id = body["id"].as_str().map(str::to_string);
    fold.model = body["model"].as_str().map(str::to_string);
    apply_usage(&mut fold.usage, &body["usage"]);
    fold.stop_reason = body["stop_reason"].as_str().map(str::to_string);
    for block in body["content"].as_array().into_iter().flatten() {
        let part = match block["type"].as_str().unwrap_or_default() {
            "text" => ContentPart::Text {
                signature: None,
                text: block["text"].as_str().unwrap_or_default().to_string(),
            },
            "thinking" => ContentPart::Thinking {
                text: block["thinking"].as_str().unwrap_or_default().to_string(),
                signature: block["signature"].as_str().map(str::to_string),
                id: None,
            },
            "redacted_thinking" => ContentPart::RedactedThinking {
                data: block["data"].as_str().unwrap_or_default().to_string(),
            },
            "tool_use" => ContentPart::ToolCall {
                signature: None,
                id: block["id"].as_str().unwrap_or_default().to_string(),
                name: block["name"].as_str().unwrap_or_default().to_string(),
                arguments: block.get("input").cloned().unwrap_or_else(|| json!({})),
            },
            _ => continue,
        };
        fold.parts.push(part);
    }
    fold.finished = true;
    Ok(fold.into_response(&mut |_| {}))
}

/// Classifies an error from its HTTP status and Anthropic's error envelope
/// `{"type":"error","error":{"type":..,"message":..}}`.
pub fn error_from_body(status: Option<u16>, body: &Value, retry_after_ms: Option<u64>) -> LlmError {
    let error_type = body["error"]["type"].as_str().unwrap_or_default();
    let message = body["error"]["message"]
        .as_str()
        .map(str::to_string)
        .unwrap_or_else(|| body.to_string());
    let kind = match error_type {
        "authentication_error" => ErrorKind::Authentication,
        "permission_error" => ErrorKind::PermissionDenied,
        "not_found_error" => ErrorKind::NotFound,
        "rate_limit_error" => ErrorKind::RateLimit,
        "overloaded_error" => ErrorKind::Overloaded,
        "api_error" => ErrorKind::Server,
        "request_too_large" => ErrorKind::ContextLength,
        "invalid_request_error" if message.contains("prompt is too long") => ErrorKind::ContextLength,
        "invalid_request_error" => ErrorKind::InvalidRequest,
        _ => status.map(ErrorKind::from_status).unwrap_or(ErrorKind::Server),
    };
    LlmError {
        kind,
        message,
        status,
        retry_after_ms,
    }
}
