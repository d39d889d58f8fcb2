//! Anthropic Messages (`POST /v1/messages`): request serialisation, the streaming event
//! fold, the non-streaming body, and error classification.

use super::body::{self, Arguments, BodyWriter};
use super::error::{ErrorKind, LlmError};
use super::types::*;
use serde::Serialize;
use serde::ser::{SerializeMap, Serializer};
use serde_json::{Value, json};

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
    let betas = body::provider_options(request, "anthropic")
        .and_then(|o| o.get("beta_headers"))
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(Value::as_str).collect::<Vec<_>>().join(","))
        .filter(|s| !s.is_empty());
    if let Some(betas) = betas {
        headers.push(("anthropic-beta".to_string(), betas));
    }
    headers
}

/// The JSON body of a streaming request.
///
/// Anthropic caches a prompt's prefix only up to blocks marked `cache_control` (at most four
/// per request). Marked: the last tool (the tools come first in the prefix), the system
/// prompt, and the last block of each of the last two user messages. The newest mark writes
/// this turn's prefix; the one before it sits where the previous request ended, so this
/// request reads that prefix back even after a long tool round (the API looks back only 20
/// blocks from a mark). The marks do not change the prefix's bytes, so a request hits what
/// the one before it wrote. `provider_options.anthropic.auto_cache = false` turns this off.
pub fn request_body(request: &Request) -> body::Result<Vec<u8>> {
    let cache = body::provider_options(request, "anthropic")
        .and_then(|o| o.get("auto_cache"))
        .and_then(Value::as_bool)
        .unwrap_or(true);
    let mut body = BodyWriter::new(
        request,
        WireProtocol::AnthropicMessages,
        "anthropic",
        &["beta_headers", "auto_cache"],
    );
    body.field("model", request.model)?;
    let mut max_tokens = request.max_tokens;
    if let Some(effort) = request.reasoning_effort {
        let budget = thinking_budget(effort);
        // The API requires max_tokens > budget_tokens; leave room for the answer itself.
        max_tokens = max_tokens.max(budget + 4_096);
        body.field("thinking", &json!({"type": "enabled", "budget_tokens": budget}))?;
    }
    body.field("max_tokens", &max_tokens)?;
    if !request.system.is_empty() {
        let system = [TextBlock {
            kind: "text",
            text: request.system,
        }];
        body.prompt_field(request, "system", |out| marked_if(cache, out, &system))?;
    }
    body.raw_field("messages", |out| write_messages(out, request, cache))?;
    if !request.tools.is_empty() {
        let tools: Vec<Tool> = request.tools.iter().map(|tool| Tool(tool)).collect();
        body.prompt_field(request, "tools", |out| marked_if(cache, out, &tools))?;
        body.field("tool_choice", &json!({"type": "auto"}))?;
    }
    body.field("stream", &true)?;
    body.finish()
}

/// Writes a list of objects, its last one with the cache mark when `cache`.
fn marked_if<T: Serialize>(cache: bool, out: &mut Vec<u8>, list: &[T]) -> body::Result<()> {
    let mut bytes = serde_json::to_vec(list)?;
    if cache && bytes.ends_with(b"}]") {
        bytes.pop();
        write_marked(out, &bytes);
        out.push(b']');
    } else {
        out.extend_from_slice(&bytes);
    }
    Ok(())
}

/// Writes JSON ending with an object, with the cache mark added to that object.
fn write_marked(out: &mut Vec<u8>, json: &[u8]) {
    match json.split_last() {
        Some((b'}', head)) => {
            out.extend_from_slice(head);
            out.extend_from_slice(br#","cache_control":{"type":"ephemeral"}}"#);
        }
        _ => out.extend_from_slice(json),
    }
}

/// The messages, consecutive same-role ones merged (the API requires alternation; tool
/// results and steering text share one user message), from each message's blocks.
fn write_messages(out: &mut Vec<u8>, request: &Request, cache: bool) -> body::Result<()> {
    let blocks_of = |index: usize, out: &mut Vec<u8>| blocks(&request.messages[index], out);
    body::message_fragments(request, WireProtocol::AnthropicMessages, blocks_of, |fragments| {
        // Each merged message: its role and the range of fragments it takes (non-empty ones).
        let mut merged: Vec<(Role, std::ops::Range<usize>)> = Vec::new();
        for (i, (message, fragment)) in request.messages.iter().zip(fragments).enumerate() {
            if fragment.is_empty() {
                continue;
            }
            match merged.last_mut() {
                Some((role, range)) if *role == message.role => range.end = i + 1,
                _ => merged.push((message.role, i..i + 1)),
            }
        }
        let mut users = merged
            .iter()
            .enumerate()
            .rev()
            .filter(|(_, (role, _))| *role == Role::User);
        let marked: [Option<usize>; 2] = match cache {
            true => [users.next().map(|u| u.0), users.next().map(|u| u.0)],
            false => [None, None],
        };
        out.push(b'[');
        for (i, (role, range)) in merged.iter().enumerate() {
            if i > 0 {
                out.push(b',');
            }
            out.extend_from_slice(br#"{"role":"#);
            serde_json::to_writer(&mut *out, role)?;
            out.extend_from_slice(br#","content":["#);
            // A range ends at a non-empty fragment: the message's last block is in it.
            let mut first = true;
            for k in range.clone().filter(|&k| !fragments[k].is_empty()) {
                if !first {
                    out.push(b',');
                }
                first = false;
                if k + 1 == range.end && marked.contains(&Some(i)) {
                    write_marked(out, fragments[k]);
                } else {
                    out.extend_from_slice(fragments[k]);
                }
            }
            out.extend_from_slice(b"]}");
        }
        out.push(b']');
        Ok(())
    })
}

/// A message's content blocks, comma-separated. The API rejects empty text blocks; a
/// response can contain one (an empty start with no deltas), so it is not replayed.
fn blocks(message: &MessageView, out: &mut Vec<u8>) -> body::Result<()> {
    for part in message.parts() {
        if !matches!(&part, PartView::Text { text, .. } if text.is_empty()) {
            body::push_value(out, &Block(&part))?;
        }
    }
    Ok(())
}

#[derive(Serialize)]
struct TextBlock<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    text: &'a str,
}

struct Tool<'a>(&'a ToolDefinition);

impl Serialize for Tool<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(3))?;
        map.serialize_entry("name", &self.0.name)?;
        map.serialize_entry("description", &self.0.description)?;
        map.serialize_entry("input_schema", &self.0.parameters)?;
        map.end()
    }
}

struct Block<'v, 'a>(&'v PartView<'a>);

impl Serialize for Block<'_, '_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(None)?;
        match self.0 {
            PartView::Text { text, .. } => {
                map.serialize_entry("type", "text")?;
                map.serialize_entry("text", text)?;
            }
            PartView::ToolCall {
                id, name, arguments, ..
            } => {
                map.serialize_entry("type", "tool_use")?;
                map.serialize_entry("id", id)?;
                map.serialize_entry("name", name)?;
                map.serialize_entry("input", &Arguments::of(arguments))?;
            }
            PartView::ToolResult {
                tool_call_id,
                content,
                is_error,
                images,
            } => {
                map.serialize_entry("type", "tool_result")?;
                map.serialize_entry("tool_use_id", tool_call_id)?;
                if images.is_empty() {
                    map.serialize_entry("content", content)?;
                } else {
                    map.serialize_entry(
                        "content",
                        &ResultWithImages {
                            text: content,
                            images,
                        },
                    )?;
                }
                map.serialize_entry("is_error", is_error)?;
            }
            PartView::Thinking { text, signature, .. } => {
                map.serialize_entry("type", "thinking")?;
                map.serialize_entry("thinking", text)?;
                map.serialize_entry("signature", signature.unwrap_or_default())?;
            }
            PartView::RedactedThinking { data } => {
                map.serialize_entry("type", "redacted_thinking")?;
                map.serialize_entry("data", data)?;
            }
        }
        map.end()
    }
}

/// A tool result's text followed by its images, as content blocks.
struct ResultWithImages<'a> {
    text: &'a str,
    images: &'a [ImageData],
}

impl Serialize for ResultWithImages<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeSeq;
        let mut seq = serializer.serialize_seq(Some(1 + self.images.len()))?;
        seq.serialize_element(&TextBlock {
            kind: "text",
            text: self.text,
        })?;
        for image in self.images {
            seq.serialize_element(&ImageBlock {
                kind: "image",
                source: ImageSource {
                    kind: "base64",
                    media_type: &image.media_type,
                    data: &image.data_base64,
                },
            })?;
        }
        seq.end()
    }
}

#[derive(Serialize)]
struct ImageBlock<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    source: ImageSource<'a>,
}

#[derive(Serialize)]
struct ImageSource<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    media_type: &'a str,
    data: &'a str,
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
