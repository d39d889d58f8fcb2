//! OpenAI Responses (`POST /v1/responses`), the API codex speaks: the request
//! (`request/openai_responses.rs`; stateless: `store: false`, reasoning replayed from its
//! encrypted content), the streaming event fold, the non-streaming body, and error
//! classification, including failures that arrive inside an HTTP 200 stream.

use super::chat_completions;
use super::error::{ErrorKind, LlmError};
use super::types::*;
use serde_json::{Value, json};

pub use super::request::openai_responses::{PATH, headers, request_body};

/// Folds the events of one streamed response. Deltas are shown as they come; each item is
/// taken whole from its `response.output_item.done`, the authoritative copy.
#[derive(Debug, Default)]
pub struct StreamFold {
    id: Option<String>,
    model: Option<String>,
    parts: Vec<ContentPart>,
    usage: Usage,
    status: Option<String>,
    incomplete_reason: Option<String>,
    text_open: bool,
    reasoning_open: bool,
    finished: bool,
}

impl StreamFold {
    pub fn new() -> Self {
        Self::default()
    }

    /// Whether a terminal event (`response.completed` or `response.incomplete`) arrived.
    pub fn finished(&self) -> bool {
        self.finished
    }

    /// Handles one SSE event's data (the type is inside it).
    pub fn handle(&mut self, data: &str, emit: &mut dyn FnMut(StreamEvent)) -> Result<(), LlmError> {
        let event: Value = serde_json::from_str(data)
            .map_err(|e| LlmError::new(ErrorKind::Stream, format!("malformed stream event ({e}): {data}")))?;
        match event["type"].as_str().unwrap_or_default() {
            "response.created" | "response.in_progress" => self.header(&event["response"]),
            "response.output_item.added" => {
                let item = &event["item"];
                match item["type"].as_str().unwrap_or_default() {
                    "function_call" => emit(StreamEvent::ToolCallStart {
                        id: item["call_id"].as_str().unwrap_or_default().to_string(),
                        name: item["name"].as_str().unwrap_or_default().to_string(),
                    }),
                    "reasoning" => {
                        self.reasoning_open = true;
                        emit(StreamEvent::ReasoningStart);
                    }
                    "message" => {
                        self.text_open = true;
                        emit(StreamEvent::TextStart);
                    }
                    _ => {}
                }
            }
            "response.output_text.delta" => {
                emit(StreamEvent::TextDelta(
                    event["delta"].as_str().unwrap_or_default().to_string(),
                ));
            }
            "response.reasoning_summary_text.delta" | "response.reasoning_text.delta" => {
                emit(StreamEvent::ReasoningDelta(
                    event["delta"].as_str().unwrap_or_default().to_string(),
                ));
            }
            "response.output_item.done" => self.item_done(&event["item"], emit),
            "response.completed" | "response.incomplete" => {
                let response = &event["response"];
                self.header(response);
                self.status = response["status"].as_str().map(str::to_string);
                self.incomplete_reason = response["incomplete_details"]["reason"]
                    .as_str()
                    .map(str::to_string);
                if response["usage"].is_object() {
                    self.usage = usage(&response["usage"]);
                }
                // A server that sends no item events still lists the output here.
                if self.parts.is_empty() {
                    for item in response["output"].as_array().into_iter().flatten() {
                        self.item_done(item, &mut |_| {});
                    }
                }
                self.finished = true;
            }
            "response.failed" => {
                let error = &event["response"]["error"];
                return Err(classify(error["code"].as_str(), error["message"].as_str()));
            }
            "error" => {
                let error = if event["error"].is_object() {
                    &event["error"]
                } else {
                    &event
                };
                let code = error["code"].as_str().or_else(|| error["type"].as_str());
                return Err(classify(code, error["message"].as_str()));
            }
            _ => {}
        }
        Ok(())
    }

    fn header(&mut self, response: &Value) {
        if let Some(id) = response["id"].as_str() {
            self.id = Some(id.to_string());
        }
        if let Some(model) = response["model"].as_str() {
            self.model = Some(model.to_string());
        }
    }

    fn item_done(&mut self, item: &Value, emit: &mut dyn FnMut(StreamEvent)) {
        match item["type"].as_str().unwrap_or_default() {
            "message" => {
                let text: String = item["content"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(|c| c["text"].as_str())
                    .collect();
                if std::mem::take(&mut self.text_open) {
                    emit(StreamEvent::TextEnd);
                }
                self.parts.push(ContentPart::Text {
                    text,
                    signature: None,
                });
            }
            "reasoning" => {
                // Summaries (OpenAI) or raw reasoning text (other servers), as shown.
                let summary = item["summary"].as_array().into_iter().flatten();
                let content = item["content"].as_array().into_iter().flatten();
                let text = summary
                    .chain(content)
                    .filter_map(|s| s["text"].as_str())
                    .collect::<Vec<_>>()
                    .join("\n\n");
                if std::mem::take(&mut self.reasoning_open) {
                    emit(StreamEvent::ReasoningEnd);
                }
                self.parts.push(ContentPart::Thinking {
                    text,
                    signature: item["encrypted_content"].as_str().map(str::to_string),
                    id: item["id"].as_str().map(str::to_string),
                });
            }
            "function_call" => {
                let id = item["call_id"].as_str().unwrap_or_default().to_string();
                emit(StreamEvent::ToolCallEnd { id: id.clone() });
                let arguments = super::parse_tool_arguments(item["arguments"].as_str().unwrap_or_default());
                self.parts.push(ContentPart::ToolCall {
                    signature: None,
                    id,
                    name: item["name"].as_str().unwrap_or_default().to_string(),
                    arguments,
                });
            }
            // Built-in server tools (web search, ...) are not ours to run or replay.
            _ => {}
        }
    }

    pub fn into_response(self, _emit: &mut dyn FnMut(StreamEvent)) -> Response {
        let message = Message {
            role: Role::Assistant,
            parts: self.parts,
        };
        let finish_reason = match (self.incomplete_reason.as_deref(), self.status.as_deref()) {
            (Some("max_output_tokens"), _) => FinishReason::Length,
            (Some("content_filter"), _) => FinishReason::ContentFilter,
            _ if !message.tool_calls().is_empty() => FinishReason::ToolCalls,
            (_, Some("completed")) => FinishReason::Stop,
            _ => FinishReason::Other,
        };
        Response {
            id: self.id,
            model: self.model,
            finish_reason,
            raw_finish_reason: self.incomplete_reason.or(self.status),
            message,
            usage: self.usage,
        }
    }
}

fn usage(value: &Value) -> Usage {
    let n = |v: &Value| v.as_u64().unwrap_or(0);
    Usage {
        input_tokens: n(&value["input_tokens"]),
        output_tokens: n(&value["output_tokens"]),
        cache_read_tokens: n(&value["input_tokens_details"]["cached_tokens"]),
        cache_write_tokens: 0,
        reasoning_tokens: n(&value["output_tokens_details"]["reasoning_tokens"]),
    }
}

/// Parses a non-streaming response.
pub fn parse_response(body: &Value) -> Result<Response, LlmError> {
    if body["error"].is_object() {
        return Err(error_from_body(None, body, None));
    }
    let mut fold = StreamFold::new();
    let completed = json!({"type": "response.completed", "response": body});
    fold.handle(&completed.to_string(), &mut |_| {})?;
    Ok(fold.into_response(&mut |_| {}))
}

/// An HTTP error: OpenAI's envelope, shared with Chat Completions, with the retry delay
/// also looked for in the message ("Please try again in 11.054s").
pub fn error_from_body(status: Option<u16>, body: &Value, retry_after_ms: Option<u64>) -> LlmError {
    let mut error = chat_completions::error_from_body(status, body, retry_after_ms);
    if error.retry_after_ms.is_none() {
        error.retry_after_ms = retry_hint(&error.message);
    }
    error
}

/// Classifies a failure reported inside the stream by its code.
fn classify(code: Option<&str>, message: Option<&str>) -> LlmError {
    let message = message.unwrap_or("the response failed").to_string();
    let code = code.unwrap_or_default();
    let kind = chat_completions::kind_of_code(code).unwrap_or(match code {
        // An `error` event without a code falls back to its type.
        "invalid_request_error" => ErrorKind::InvalidRequest,
        _ => ErrorKind::Server,
    });
    LlmError {
        kind,
        retry_after_ms: retry_hint(&message),
        message,
        status: None,
    }
}

/// "try again in 11.054s" / "in 28ms" / "in 2 seconds" -> milliseconds.
fn retry_hint(message: &str) -> Option<u64> {
    let lower = message.to_ascii_lowercase();
    let rest = &lower[lower.find("try again in")? + "try again in".len()..];
    let rest = rest.trim_start();
    let number_len = rest
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(rest.len());
    let value: f64 = rest[..number_len].parse().ok()?;
    let unit = rest[number_len..].trim_start();
    let ms = if unit.starts_with("ms") {
        value
    } else if unit.starts_with('s') {
        value * 1_000.0
    } else {
        return None;
    };
    Some(ms.round() as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retry_hints_are_read_from_the_message() {
        assert_eq!(retry_hint("Please try again in 11.054s. Visit ..."), Some(11_054));
        assert_eq!(retry_hint("Please try again in 28ms."), Some(28));
        assert_eq!(retry_hint("try again in 2 seconds"), Some(2_000));
        assert_eq!(retry_hint("try again later"), None);
    }
}
