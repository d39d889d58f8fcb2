//! Replies in the OpenAI Chat Completions wire format, as OpenAI-compatible servers (vLLM,
//! llama.cpp, Ollama) stream them: `chat.completion.chunk` objects, tool calls keyed by
//! index with their arguments in pieces, a usage chunk, then `[DONE]`.

use super::Block;
use super::Reply;
use serde_json::{Value, json};

fn chunk(delta: Value, finish_reason: Option<&str>) -> String {
    let data = json!({
        "id": "chatcmpl-scripted", "object": "chat.completion.chunk", "created": 1_767_225_600,
        "model": "scripted-model",
        "choices": [{"index": 0, "delta": delta, "logprobs": null, "finish_reason": finish_reason}],
    });
    format!("data: {data}\n\n")
}

/// A streamed completion with these blocks (the same blocks as Anthropic scripts).
pub fn message(blocks: &[Block]) -> Reply {
    let mut chunks = vec![chunk(json!({"role": "assistant", "content": ""}), None)];
    let mut finish = "stop";
    let mut index = 0;
    for block in blocks {
        match block {
            Block::Text { text } => {
                for piece in super::split(text, 3) {
                    chunks.push(chunk(json!({"content": piece}), None));
                }
            }
            // llama.cpp's and vLLM's field for reasoning (no signature in this protocol).
            Block::Thinking { thinking, .. } => {
                for piece in super::split(thinking, 2) {
                    chunks.push(chunk(json!({"reasoning_content": piece}), None));
                }
            }
            Block::ToolUse { id, name, input } => {
                finish = "tool_calls";
                chunks.push(chunk(
                    json!({"tool_calls": [{"index": index, "id": id, "type": "function", "function": {"name": name, "arguments": ""}}]}),
                    None,
                ));
                for piece in super::split(&input.to_string(), 3) {
                    chunks.push(chunk(
                        json!({"tool_calls": [{"index": index, "function": {"arguments": piece}}]}),
                        None,
                    ));
                }
                index += 1;
            }
        }
    }
    chunks.push(chunk(json!({}), Some(finish)));
    let usage = json!({"id": "chatcmpl-scripted", "object": "chat.completion.chunk", "model": "scripted-model",
        "choices": [], "usage": {"prompt_tokens": 25, "completion_tokens": 42, "total_tokens": 67}});
    chunks.push(format!("data: {usage}\n\n"));
    chunks.push("data: [DONE]\n\n".to_string());
    Reply {
        status: 200,
        headers: vec![("content-type".to_string(), "text/event-stream".to_string())],
        chunks,
        delay_ms: 0,
    }
}

/// An error reply with OpenAI's envelope.
pub fn error(status: u16, error_type: &str, code: &str, message: &str) -> Reply {
    Reply {
        status,
        headers: vec![("content-type".to_string(), "application/json".to_string())],
        chunks: vec![
            json!({"error": {"message": message, "type": error_type, "param": null, "code": code}})
                .to_string(),
        ],
        delay_ms: 0,
    }
}
