//! Gemini (`generateContent`, `streamGenerateContent?alt=sse`): the request
//! (`request/gemini.rs`), the chunk fold (thought parts, thought signatures kept on their part, function calls without
//! ids, Vertex's streamed `partialArgs`), the non-streaming body, and the google.rpc errors.

use super::error::{ErrorKind, LlmError};
use super::types::*;
use serde_json::{Value, json};

pub use super::request::gemini::{headers, path, request_body};

/// A function call being assembled from Vertex's streamed `partialArgs`.
#[derive(Debug)]
struct OpenCall {
    name: String,
    args: Value,
    signature: Option<String>,
}

/// Folds the chunks of one streamed response (each a `GenerateContentResponse`).
#[derive(Debug, Default)]
pub struct StreamFold {
    id: Option<String>,
    model: Option<String>,
    thought: Option<(String, Option<String>)>,
    text: Option<(String, Option<String>)>,
    calls: Vec<ContentPart>,
    open: Option<OpenCall>,
    usage: Usage,
    finish_reason: Option<String>,
    blocked: Option<String>,
}

impl StreamFold {
    pub fn new() -> Self {
        Self::default()
    }

    /// Gemini sends no end marker: a finish reason (or a blocked prompt) ends the answer.
    pub fn finished(&self) -> bool {
        self.finish_reason.is_some() || self.blocked.is_some()
    }

    pub fn handle(&mut self, data: &str, emit: &mut dyn FnMut(StreamEvent)) -> Result<(), LlmError> {
        let chunk: Value = serde_json::from_str(data)
            .map_err(|e| LlmError::new(ErrorKind::Stream, format!("malformed stream chunk ({e}): {data}")))?;
        if chunk["error"].is_object() {
            return Err(error_from_body(None, &chunk, None));
        }
        if let Some(id) = chunk["responseId"].as_str() {
            self.id = Some(id.to_string());
        }
        if let Some(model) = chunk["modelVersion"].as_str() {
            self.model = Some(model.to_string());
        }
        if chunk["usageMetadata"].is_object() {
            self.usage = usage(&chunk["usageMetadata"]);
        }
        if let Some(reason) = chunk["promptFeedback"]["blockReason"].as_str() {
            self.blocked = Some(reason.to_string());
        }
        let candidate = &chunk["candidates"][0];
        for part in candidate["content"]["parts"].as_array().into_iter().flatten() {
            self.part(part, emit);
        }
        if let Some(reason) = candidate["finishReason"].as_str() {
            self.finish_reason = Some(reason.to_string());
        }
        Ok(())
    }

    fn part(&mut self, part: &Value, emit: &mut dyn FnMut(StreamEvent)) {
        let signature = part["thoughtSignature"].as_str().map(str::to_string);
        if let Some(call) = part.get("functionCall") {
            self.function_call(call, signature, emit);
            return;
        }
        let Some(text) = part["text"].as_str() else {
            return;
        };
        let thought = part["thought"] == true;
        let fresh = if thought {
            self.thought.is_none()
        } else {
            self.text.is_none()
        };
        if fresh {
            if thought {
                emit(StreamEvent::ReasoningStart);
            } else {
                if self.thought.is_some() {
                    emit(StreamEvent::ReasoningEnd);
                }
                emit(StreamEvent::TextStart);
            }
        }
        let slot = if thought {
            &mut self.thought
        } else {
            &mut self.text
        };
        let (buffer, kept) = slot.get_or_insert_with(|| (String::new(), None));
        buffer.push_str(text);
        if signature.is_some() {
            *kept = signature;
        }
        if !text.is_empty() {
            emit(if thought {
                StreamEvent::ReasoningDelta(text.to_string())
            } else {
                StreamEvent::TextDelta(text.to_string())
            });
        }
    }

    fn function_call(&mut self, call: &Value, signature: Option<String>, emit: &mut dyn FnMut(StreamEvent)) {
        if let Some(name) = call["name"].as_str() {
            self.close_call(emit);
            let open = OpenCall {
                name: name.to_string(),
                args: call.get("args").cloned().unwrap_or_else(|| json!({})),
                signature,
            };
            emit(StreamEvent::ToolCallStart {
                id: self.next_id(),
                name: open.name.clone(),
            });
            self.open = Some(open);
            if call["willContinue"] != true {
                self.close_call(emit);
            }
            return;
        }
        let Some(open) = self.open.as_mut() else {
            return;
        };
        if open.signature.is_none() {
            open.signature = signature;
        }
        match call["partialArgs"].as_array() {
            Some(partial) => {
                for arg in partial {
                    apply_partial_arg(&mut open.args, arg);
                }
            }
            // A bare `{}` ends the call; `{willContinue: true}` only keeps it alive.
            None if call["willContinue"] != true => self.close_call(emit),
            None => {}
        }
    }

    /// Gemini gives calls no id (its compatibility layer sends ""): one is made up, unique
    /// within the response, and sent back with the result.
    fn next_id(&self) -> String {
        format!("call_{}", self.calls.len())
    }

    fn close_call(&mut self, emit: &mut dyn FnMut(StreamEvent)) {
        if let Some(open) = self.open.take() {
            let id = self.next_id();
            emit(StreamEvent::ToolCallEnd { id: id.clone() });
            self.calls.push(ContentPart::ToolCall {
                id,
                name: open.name,
                arguments: open.args,
                signature: open.signature,
            });
        }
    }

    /// The response; a call whose terminator never came is flushed as it stands.
    pub fn into_response(mut self, emit: &mut dyn FnMut(StreamEvent)) -> Response {
        self.close_call(emit);
        let mut parts = Vec::new();
        if let Some((text, signature)) = self.thought.take() {
            if self.text.is_none() {
                emit(StreamEvent::ReasoningEnd);
            }
            parts.push(ContentPart::Thinking {
                text,
                signature,
                id: None,
            });
        }
        if let Some((text, signature)) = self.text.take() {
            emit(StreamEvent::TextEnd);
            parts.push(ContentPart::Text { text, signature });
        }
        parts.append(&mut self.calls);
        let message = Message {
            role: Role::Assistant,
            parts,
        };
        let finish_reason = match self.finish_reason.as_deref() {
            _ if self.blocked.is_some() => FinishReason::ContentFilter,
            _ if !message.tool_calls().is_empty() => FinishReason::ToolCalls,
            Some("STOP") => FinishReason::Stop,
            Some("MAX_TOKENS") => FinishReason::Length,
            Some("SAFETY" | "RECITATION" | "BLOCKLIST" | "PROHIBITED_CONTENT" | "SPII") => {
                FinishReason::ContentFilter
            }
            _ => FinishReason::Other,
        };
        Response {
            id: self.id,
            model: self.model,
            finish_reason,
            raw_finish_reason: self.finish_reason,
            message,
            usage: self.usage,
        }
    }
}

/// Sets (or, for a continued string, extends) the value at a `partialArgs` JSON path such
/// as `$.recipe.ingredients[3].name`.
fn apply_partial_arg(args: &mut Value, arg: &Value) {
    let Some(path) = arg["jsonPath"].as_str() else {
        return;
    };
    let Some(slot) = path_slot(args, path) else {
        return;
    };
    if let Some(piece) = arg["stringValue"].as_str() {
        match slot {
            Value::String(existing) => existing.push_str(piece),
            other => *other = json!(piece),
        }
    } else if let Some(number) = arg.get("numberValue") {
        *slot = number.clone();
    } else if let Some(boolean) = arg.get("boolValue") {
        *slot = boolean.clone();
    } else if arg.get("nullValue").is_some() {
        *slot = Value::Null;
    }
}

/// How far past an array's end a streamed argument may land.
const MAX_INDEX_GAP: usize = 1_024;

/// The value at `path`, creating objects, arrays and array slots on the way.
fn path_slot<'a>(root: &'a mut Value, path: &str) -> Option<&'a mut Value> {
    let mut rest = path.strip_prefix('$')?;
    let mut slot = root;
    while !rest.is_empty() {
        if let Some(after) = rest.strip_prefix('.') {
            let end = after.find(['.', '[']).unwrap_or(after.len());
            let key = &after[..end];
            if !slot.is_object() {
                *slot = json!({});
            }
            slot = slot
                .as_object_mut()?
                .entry(key.to_string())
                .or_insert(Value::Null);
            rest = &after[end..];
        } else if let Some(after) = rest.strip_prefix('[') {
            let end = after.find(']')?;
            let index: usize = after[..end].parse().ok()?;
            if !slot.is_array() {
                *slot = json!([]);
            }
            let array = slot.as_array_mut()?;
            // Elements arrive in order; an index far past the end is garbage, and filling
            // the gap could exhaust memory (found by fuzzing).
            if index > array.len() + MAX_INDEX_GAP {
                return None;
            }
            if array.len() <= index {
                array.resize(index + 1, Value::Null);
            }
            slot = &mut array[index];
            rest = &after[end + 1..];
        } else {
            return None;
        }
    }
    Some(slot)
}

/// A snapshot: the last chunk's counts win. Thoughts are reported apart from the answer's
/// tokens (both are billed as output).
fn usage(value: &Value) -> Usage {
    let n = |field: &str| value[field].as_u64().unwrap_or(0);
    Usage {
        input_tokens: n("promptTokenCount"),
        output_tokens: n("candidatesTokenCount"),
        cache_read_tokens: n("cachedContentTokenCount"),
        cache_write_tokens: 0,
        reasoning_tokens: n("thoughtsTokenCount"),
    }
}

/// Parses a non-streaming `generateContent` body.
pub fn parse_response(body: &Value) -> Result<Response, LlmError> {
    let mut fold = StreamFold::new();
    fold.handle(&body.to_string(), &mut |_| {})?;
    Ok(fold.into_response(&mut |_| {}))
}

/// Classifies a google.rpc error `{"error":{"code","message","status","details"}}`; the
/// retry delay may come in a `RetryInfo` detail.
pub fn error_from_body(status: Option<u16>, body: &Value, retry_after_ms: Option<u64>) -> LlmError {
    let error = &body["error"];
    let message = error["message"]
        .as_str()
        .map(str::to_string)
        .unwrap_or_else(|| body.to_string());
    let status = status.or_else(|| error["code"].as_u64().and_then(|c| u16::try_from(c).ok()));
    let lower = message.to_ascii_lowercase();
    let kind = match error["status"].as_str().unwrap_or_default() {
        // Gemini answers a bad key with 400 INVALID_ARGUMENT.
        _ if lower.contains("api key not valid") || lower.contains("api_key_invalid") => {
            ErrorKind::Authentication
        }
        _ if lower.contains("exceeds the maximum number of tokens") => ErrorKind::ContextLength,
        "UNAUTHENTICATED" => ErrorKind::Authentication,
        "PERMISSION_DENIED" => ErrorKind::PermissionDenied,
        "NOT_FOUND" => ErrorKind::NotFound,
        "RESOURCE_EXHAUSTED" => ErrorKind::RateLimit,
        "UNAVAILABLE" => ErrorKind::Overloaded,
        "INTERNAL" | "UNKNOWN" | "DEADLINE_EXCEEDED" => ErrorKind::Server,
        "INVALID_ARGUMENT" | "FAILED_PRECONDITION" => ErrorKind::InvalidRequest,
        _ => status.map(ErrorKind::from_status).unwrap_or(ErrorKind::Server),
    };
    let hinted = error["details"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|d| d["retryDelay"].as_str())
        .find_map(|delay| delay.strip_suffix('s')?.parse::<f64>().ok())
        .map(|seconds| (seconds * 1_000.0).round() as u64);
    LlmError {
        kind,
        message,
        status,
        retry_after_ms: retry_after_ms.or(hinted),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn partial_args_build_nested_objects_and_arrays_and_extend_strings() {
        let mut args = json!({});
        for arg in [
            json!({"jsonPath": "$.recipe.steps[1]", "stringValue": "Bake", "willContinue": true}),
            json!({"jsonPath": "$.recipe.steps[1]", "stringValue": " it"}),
            json!({"jsonPath": "$.recipe.ingredients[0].amount", "numberValue": 2}),
            json!({"jsonPath": "$.recipe.vegan", "boolValue": false}),
        ] {
            apply_partial_arg(&mut args, &arg);
        }
        assert_eq!(
            args,
            json!({"recipe": {"steps": [null, "Bake it"], "ingredients": [{"amount": 2}], "vegan": false}})
        );
    }

    #[test]
    fn an_absurd_array_index_is_ignored_not_allocated() {
        let mut args = json!({});
        apply_partial_arg(
            &mut args,
            &json!({"jsonPath": "$.a[18446744073709551615]", "stringValue": "x"}),
        );
        apply_partial_arg(&mut args, &json!({"jsonPath": "$.b[5000000]", "numberValue": 1}));
        assert_eq!(args, json!({"a": [], "b": []}));
    }
}
