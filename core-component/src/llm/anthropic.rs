//! Anthropic Messages (`POST /v1/messages`): request serialisation, the streaming event
//! fold, the non-streaming body, and error classification.

use super::error::{ErrorKind, LlmError};
use super::types::*;
use serde_json::{Map, Value, json};

pub const PATH: &str = "/v1/messages";
const API_VERSION: &str = "2023-06-01";

/// Thinking budget per reasoning effort, in tokens.
fn thinking_budget(effort: ReasoningEffort) -> u32 {
    match effort {
        ReasoningEffort::Low => 2_048,
        ReasoningEffort::Medium => 8_192,
        ReasoningEffort::High => 24_576,
    }
}

/// Headers of a request (credentials are the host's business).
pub fn headers(request: &Request) -> Vec<(String, String)> {
    let mut headers = vec![
        ("content-type".to_string(), "application/json".to_string()),
        ("anthropic-version".to_string(), API_VERSION.to_string()),
        ("accept".to_string(), "text/event-stream".to_string()),
    ];
    let betas = request
        .provider_options
        .as_ref()
        .and_then(|o| o.pointer("/anthropic/beta_headers"))
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(Value::as_str).collect::<Vec<_>>().join(","))
        .filter(|s| !s.is_empty());
    if let Some(betas) = betas {
        headers.push(("anthropic-beta".to_string(), betas));
    }
    headers
}

/// The JSON body of a streaming request.
pub fn request_body(request: &Request) -> Value {
    let mut body = Map::new();
    body.insert("model".into(), json!(request.model));
    let mut max_tokens = request.max_tokens;
    if let Some(effort) = request.reasoning_effort {
        let budget = thinking_budget(effort);
        // The API requires max_tokens > budget_tokens; leave room for the answer itself.
        max_tokens = max_tokens.max(budget + 4_096);
        body.insert(
            "thinking".into(),
            json!({"type": "enabled", "budget_tokens": budget}),
        );
    }
    body.insert("max_tokens".into(), json!(max_tokens));
    if !request.system.is_empty() {
        body.insert("system".into(), json!([{"type": "text", "text": request.system}]));
    }
    body.insert("messages".into(), Value::Array(messages(&request.messages)));
    if !request.tools.is_empty() {
        let tools: Vec<Value> = request
            .tools
            .iter()
            .map(|t| json!({"name": t.name, "description": t.description, "input_schema": t.parameters}))
            .collect();
        body.insert("tools".into(), Value::Array(tools));
        body.insert("tool_choice".into(), json!({"type": "auto"}));
    }
    body.insert("stream".into(), json!(true));
    let auto_cache = request
        .provider_options
        .as_ref()
        .and_then(|o| o.pointer("/anthropic/auto_cache"))
        .and_then(Value::as_bool)
        .unwrap_or(true);
    if auto_cache {
        place_cache_breakpoints(&mut body);
    }
    super::merge_provider_options(&mut body, request, "anthropic", &["beta_headers", "auto_cache"]);
    Value::Object(body)
}

/// Anthropic caches a prompt's prefix only up to blocks marked `cache_control` (at most
/// four per request). Marked here: the last tool (the tools come first in the prefix), the
/// system prompt, and the last block of each of the last two user messages. The newest mark
/// writes this turn's prefix; the one before it sits where the previous request ended, so
/// this request reads that prefix back even after a long tool round (the API looks back
/// only 20 blocks from a mark). The marks do not change the prefix's bytes, so a request
/// hits what the one before it wrote. `provider_options.anthropic.auto_cache = false`
/// turns this off.
fn place_cache_breakpoints(body: &mut Map<String, Value>) {
    let mark = |block: Option<&mut Value>| {
        if let Some(Value::Object(block)) = block {
            block.insert("cache_control".into(), json!({"type": "ephemeral"}));
        }
    };
    mark(
        body.get_mut("tools")
            .and_then(Value::as_array_mut)
            .and_then(|t| t.last_mut()),
    );
    mark(
        body.get_mut("system")
            .and_then(Value::as_array_mut)
            .and_then(|s| s.last_mut()),
    );
    let Some(messages) = body.get_mut("messages").and_then(Value::as_array_mut) else {
        return;
    };
    for message in messages.iter_mut().rev().filter(|m| m["role"] == "user").take(2) {
        mark(message["content"].as_array_mut().and_then(|c| c.last_mut()));
    }
}

/// Converts messages to Anthropic's, merging consecutive same-role messages (the API
/// requires alternation; tool results and steering text share one user message).
fn messages(messages: &[Message]) -> Vec<Value> {
    let mut out: Vec<(Role, Vec<Value>)> = Vec::new();
    for message in messages {
        // The API rejects empty text blocks; a response can contain one (an empty start
        // with no deltas), so it is not replayed.
        let blocks: Vec<Value> = message
            .parts
            .iter()
            .filter(|p| !matches!(p, ContentPart::Text { text, .. } if text.is_empty()))
            .map(block)
            .collect();
        if blocks.is_empty() {
            continue;
        }
        match out.last_mut() {
            Some((role, existing)) if *role == message.role => existing.extend(blocks),
            _ => out.push((message.role, blocks)),
        }
    }
    out.into_iter()
        .map(|(role, content)| json!({"role": role, "content": content}))
        .collect()
}

fn block(part: &ContentPart) -> Value {
    match part {
        ContentPart::Text { text, .. } => json!({"type": "text", "text": text}),
        ContentPart::ToolCall {
            id, name, arguments, ..
        } => {
            // Arguments that were not a JSON object (truncated output) cannot be replayed as
            // `input`; an empty object keeps the history valid, the tool result explains.
            let input = if arguments.is_object() {
                arguments.clone()
            } else {
                json!({})
            };
            json!({"type": "tool_use", "id": id, "name": name, "input": input})
        }
        ContentPart::ToolResult {
            tool_call_id,
            content,
            is_error,
            images,
        } => {
            let content = if images.is_empty() {
                json!(content)
            } else {
                let mut blocks = vec![json!({"type": "text", "text": content})];
                blocks.extend(images.iter().map(|image| {
                    json!({"type": "image", "source": {"type": "base64", "media_type": image.media_type, "data": image.data_base64}})
                }));
                Value::Array(blocks)
            };
            json!({"type": "tool_result", "tool_use_id": tool_call_id, "content": content, "is_error": is_error})
        }
        ContentPart::Thinking { text, signature, .. } => {
            json!({"type": "thinking", "thinking": text, "signature": signature.clone().unwrap_or_default()})
        }
        ContentPart::RedactedThinking { data } => json!({"type": "redacted_thinking", "data": data}),
    }
}

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
