//! OpenAI-compatible Chat Completions (`POST /v1/chat/completions`), as served by OpenAI,
//! vLLM, llama.cpp, Ollama, OpenRouter, Groq, DeepSeek and others: the request
//! (`request/chat_completions.rs`), the streaming chunk fold, the non-streaming body, and
//! error classification.

use super::error::{ErrorKind, LlmError};
use super::types::*;
use serde_json::{Value, json};

pub use super::request::chat_completions::{PATH, headers, request_body};

#[derive(Debug, Default)]
struct OpenCall {
    index: u64,
    id: String,
    name: String,
    arguments: String,
}

/// Folds the chunks of one streamed completion into a `Response`.
#[derive(Debug, Default)]
pub struct StreamFold {
    id: Option<String>,
    model: Option<String>,
    text: Option<String>,
    reasoning: Option<String>,
    calls: Vec<OpenCall>,
    usage: Usage,
    finish_reason: Option<String>,
    done: bool,
}

impl StreamFold {
    pub fn new() -> Self {
        Self::default()
    }

    /// Whether the stream ended properly: `[DONE]`, or a finish reason (servers that omit
    /// `[DONE]` still send one).
    pub fn finished(&self) -> bool {
        self.done || self.finish_reason.is_some()
    }

    /// Handles one SSE event (its name and data).
    pub fn handle(
        &mut self,
        event: &str,
        data: &str,
        emit: &mut dyn FnMut(StreamEvent),
    ) -> Result<(), LlmError> {
        if data.trim() == "[DONE]" {
            self.done = true;
            return Ok(());
        }
        let chunk: Value = serde_json::from_str(data)
            .map_err(|e| LlmError::new(ErrorKind::Stream, format!("malformed stream chunk ({e}): {data}")))?;
        // Groq names the event `error`; OpenRouter sends `error` inside an ordinary chunk.
        if event == "error" || chunk.get("error").is_some_and(|e| !e.is_null()) {
            return Err(error_from_body(None, &chunk, None));
        }
        if let Some(id) = chunk["id"].as_str() {
            self.id.get_or_insert_with(|| id.to_string());
        }
        if let Some(model) = chunk["model"].as_str() {
            self.model.get_or_insert_with(|| model.to_string());
        }
        if chunk["usage"].is_object() {
            self.usage = usage(&chunk["usage"]);
        }
        for choice in chunk["choices"].as_array().into_iter().flatten() {
            let delta = &choice["delta"];
            if let Some(piece) = reasoning_field(delta) {
                if self.reasoning.is_none() {
                    emit(StreamEvent::ReasoningStart);
                }
                self.reasoning.get_or_insert_with(String::new).push_str(piece);
                emit(StreamEvent::ReasoningDelta(piece.to_string()));
            }
            if let Some(piece) = delta["content"].as_str().filter(|s| !s.is_empty()) {
                if self.text.is_none() {
                    self.end_reasoning(emit);
                    emit(StreamEvent::TextStart);
                }
                self.text.get_or_insert_with(String::new).push_str(piece);
                emit(StreamEvent::TextDelta(piece.to_string()));
            }
            for call in delta["tool_calls"].as_array().into_iter().flatten() {
                self.tool_call_delta(call, emit);
            }
            if let Some(reason) = choice["finish_reason"].as_str() {
                self.finish_reason = Some(reason.to_string());
            }
        }
        Ok(())
    }

    /// Tool-call deltas are keyed by `index` (which may start at 1); `id` and `name` come
    /// once, usually first, and a trailing empty-arguments delta adds nothing.
    fn tool_call_delta(&mut self, call: &Value, emit: &mut dyn FnMut(StreamEvent)) {
        let index = call["index"].as_u64().unwrap_or(self.calls.len() as u64);
        let position = match self.calls.iter().position(|c| c.index == index) {
            Some(position) => position,
            None => {
                self.calls.push(OpenCall {
                    index,
                    ..OpenCall::default()
                });
                self.calls.len() - 1
            }
        };
        let open = &mut self.calls[position];
        let announce = open.name.is_empty();
        if let Some(id) = call["id"].as_str().filter(|s| !s.is_empty()) {
            open.id = id.to_string();
        }
        if let Some(name) = call["function"]["name"].as_str().filter(|s| !s.is_empty()) {
            open.name = name.to_string();
        }
        match &call["function"]["arguments"] {
            Value::String(piece) => open.arguments.push_str(piece),
            // Some servers (Ollama) send the arguments as an object.
            Value::Object(_) => open.arguments = call["function"]["arguments"].to_string(),
            _ => {}
        }
        if announce && !open.name.is_empty() {
            emit(StreamEvent::ToolCallStart {
                id: open.id.clone(),
                name: open.name.clone(),
            });
        }
    }

    fn end_reasoning(&mut self, emit: &mut dyn FnMut(StreamEvent)) {
        if self.reasoning.is_some() && self.text.is_none() {
            emit(StreamEvent::ReasoningEnd);
        }
    }

    /// The response, with tool calls in index order and an id made up for calls that came
    /// without one (Gemini's compatibility endpoint sends `""`).
    pub fn into_response(mut self, emit: &mut dyn FnMut(StreamEvent)) -> Response {
        if self.text.is_some() {
            emit(StreamEvent::TextEnd);
        } else {
            self.end_reasoning(emit);
        }
        let mut parts = Vec::new();
        if let Some(text) = self.reasoning.take() {
            parts.push(ContentPart::Thinking {
                text,
                signature: None,
                id: None,
            });
        }
        if let Some(text) = self.text.take() {
            parts.push(ContentPart::Text {
                text,
                signature: None,
            });
        }
        self.calls.sort_by_key(|c| c.index);
        for (n, call) in self.calls.into_iter().enumerate() {
            let id = if call.id.is_empty() {
                format!("call_{n}")
            } else {
                call.id
            };
            emit(StreamEvent::ToolCallEnd { id: id.clone() });
            parts.push(ContentPart::ToolCall {
                signature: None,
                id,
                name: call.name,
                arguments: super::parse_tool_arguments(&call.arguments),
            });
        }
        let message = Message {
            role: Role::Assistant,
            parts,
        };
        Response {
            id: self.id,
            model: self.model,
            finish_reason: finish_reason(self.finish_reason.as_deref(), &message),
            raw_finish_reason: self.finish_reason,
            message,
            usage: self.usage,
        }
    }
}

/// `reasoning_content` (DeepSeek, xAI, vLLM) or `reasoning` (Ollama, OpenRouter, Groq).
fn reasoning_field(value: &Value) -> Option<&str> {
    value["reasoning_content"]
        .as_str()
        .or_else(|| value["reasoning"].as_str())
        .filter(|s| !s.is_empty())
}

fn usage(value: &Value) -> Usage {
    let n = |v: &Value| v.as_u64().unwrap_or(0);
    Usage {
        input_tokens: n(&value["prompt_tokens"]),
        output_tokens: n(&value["completion_tokens"]),
        cache_read_tokens: n(&value["prompt_tokens_details"]["cached_tokens"]),
        cache_write_tokens: 0,
        reasoning_tokens: n(&value["completion_tokens_details"]["reasoning_tokens"]),
    }
}

fn finish_reason(reason: Option<&str>, message: &Message) -> FinishReason {
    match reason {
        Some("stop") => FinishReason::Stop,
        Some("length") => FinishReason::Length,
        Some("tool_calls" | "function_call") => FinishReason::ToolCalls,
        Some("content_filter") => FinishReason::ContentFilter,
        _ if !message.tool_calls().is_empty() => FinishReason::ToolCalls,
        _ => FinishReason::Other,
    }
}

/// Parses a non-streaming completion.
pub fn parse_response(body: &Value) -> Result<Response, LlmError> {
    if body.get("error").is_some_and(|e| !e.is_null()) {
        return Err(error_from_body(None, body, None));
    }
    let mut fold = StreamFold::new();
    fold.id = body["id"].as_str().map(str::to_string);
    fold.model = body["model"].as_str().map(str::to_string);
    if body["usage"].is_object() {
        fold.usage = usage(&body["usage"]);
    }
    let choice = &body["choices"][0];
    let message = &choice["message"];
    fold.reasoning = reasoning_field(message).map(str::to_string);
    fold.text = message["content"]
        .as_str()
        .filter(|s| !s.is_empty())
        .map(str::to_string);
    for (index, call) in message["tool_calls"].as_array().into_iter().flatten().enumerate() {
        let mut call = call.clone();
        if call["index"].is_null() {
            call["index"] = json!(index);
        }
        fold.tool_call_delta(&call, &mut |_| {});
    }
    fold.finish_reason = choice["finish_reason"].as_str().map(str::to_string);
    fold.done = true;
    Ok(fold.into_response(&mut |_| {}))
}

/// The class of an OpenAI error code (shared by Chat Completions and Responses, in HTTP
/// errors and in-stream failures alike); `None` for codes that say nothing about it.
pub(crate) fn kind_of_code(code: &str) -> Option<ErrorKind> {
    Some(match code {
        "context_length_exceeded" => ErrorKind::ContextLength,
        "rate_limit_exceeded" => ErrorKind::RateLimit,
        // Billing limits: retrying does not help.
        "insufficient_quota" | "usage_not_included" => ErrorKind::PermissionDenied,
        "invalid_api_key" => ErrorKind::Authentication,
        "invalid_prompt" => ErrorKind::InvalidRequest,
        "server_is_overloaded" | "slow_down" => ErrorKind::Overloaded,
        _ => return None,
    })
}

/// Classifies an error from its HTTP status and body: OpenAI's envelope
/// `{"error":{"message","type","code"}}` (code a string, or an integer status with vLLM and
/// OpenRouter), the flat `{"object":"error",...}` of older servers, llama.cpp's
/// `exceed_context_size_error`.
pub fn error_from_body(status: Option<u16>, body: &Value, retry_after_ms: Option<u64>) -> LlmError {
    let error = if body["error"].is_object() {
        &body["error"]
    } else {
        body
    };
    let message = error["message"]
        .as_str()
        .map(str::to_string)
        .unwrap_or_else(|| body.to_string());
    let code = match &error["code"] {
        Value::String(s) => s.clone(),
        _ => String::new(),
    };
    let kind_name = error["type"].as_str().unwrap_or_default();
    let numeric = error["code"]
        .as_u64()
        .or_else(|| error["status_code"].as_u64())
        .and_then(|n| u16::try_from(n).ok());
    let status = status.or(numeric);
    let lower = message.to_ascii_lowercase();
    let kind = if let Some(kind) = kind_of_code(&code) {
        kind
    } else if kind_name == "exceed_context_size_error"
        || lower.contains("maximum context length")
        || lower.contains("context size")
    {
        ErrorKind::ContextLength
    } else {
        match status {
            Some(status) => ErrorKind::from_status(status),
            None if kind_name == "invalid_request_error" => ErrorKind::InvalidRequest,
            None => ErrorKind::Server,
        }
    };
    LlmError {
        kind,
        message,
        status,
        retry_after_ms,
    }
}
