//! Replies in Anthropic's Messages wire format: streamed (`text/event-stream`, the event
//! sequence the real API sends) and error envelopes.

use crate::Reply;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

/// One content block of a scripted answer; in JSON scripts
/// `{"type":"text","text":..}`, `{"type":"tool_use","id":..,"name":..,"input":{..}}` or
/// `{"type":"thinking","thinking":..,"signature":..}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Block {
    Text { text: String },
    ToolUse { id: String, name: String, input: Value },
    Thinking { thinking: String, signature: String },
}

/// Signed extended thinking, as Claude sends it before its answer.
pub fn thinking(text: &str, signature: &str) -> Block {
    Block::Thinking {
        thinking: text.to_string(),
        signature: signature.to_string(),
    }
}

pub fn text(text: &str) -> Block {
    Block::Text {
        text: text.to_string(),
    }
}

pub fn tool_use(id: &str, name: &str, input: Value) -> Block {
    Block::ToolUse {
        id: id.to_string(),
        name: name.to_string(),
        input,
    }
}

fn event(name: &str, data: Value) -> String {
    format!("event: {name}\ndata: {data}\n\n")
}

/// A streamed message with these blocks, as the real API sends it: message_start, each
/// block's start / deltas / stop (text in several deltas, tool input as partial JSON),
/// message_delta with the stop reason and usage, message_stop; one ping.
pub fn message(blocks: &[Block]) -> Reply {
    let mut chunks = vec![event(
        "message_start",
        json!({"type": "message_start", "message": {
            "id": "msg_scripted", "type": "message", "role": "assistant", "model": "scripted-model",
            "content": [], "stop_reason": null, "stop_sequence": null,
            "usage": {"input_tokens": 25, "output_tokens": 1}}}),
    )];
    chunks.push(event("ping", json!({"type": "ping"})));
    let mut stop_reason = "end_turn";
    for (index, block) in blocks.iter().enumerate() {
        match block {
            Block::Text { text } => {
                chunks.push(event("content_block_start", json!({"type": "content_block_start", "index": index, "content_block": {"type": "text", "text": ""}})));
                for piece in split(text, 3) {
                    chunks.push(event("content_block_delta", json!({"type": "content_block_delta", "index": index, "delta": {"type": "text_delta", "text": piece}})));
                }
            }
            Block::Thinking { thinking, signature } => {
                chunks.push(event("content_block_start", json!({"type": "content_block_start", "index": index, "content_block": {"type": "thinking", "thinking": ""}})));
                for piece in split(thinking, 2) {
                    chunks.push(event("content_block_delta", json!({"type": "content_block_delta", "index": index, "delta": {"type": "thinking_delta", "thinking": piece}})));
                }
                chunks.push(event("content_block_delta", json!({"type": "content_block_delta", "index": index, "delta": {"type": "signature_delta", "signature": signature}})));
            }
            Block::ToolUse { id, name, input } => {
                stop_reason = "tool_use";
                chunks.push(event("content_block_start", json!({"type": "content_block_start", "index": index, "content_block": {"type": "tool_use", "id": id, "name": name, "input": {}}})));
                for piece in std::iter::once(String::new()).chain(split(&input.to_string(), 3)) {
                    chunks.push(event("content_block_delta", json!({"type": "content_block_delta", "index": index, "delta": {"type": "input_json_delta", "partial_json": piece}})));
                }
            }
        }
        chunks.push(event(
            "content_block_stop",
            json!({"type": "content_block_stop", "index": index}),
        ));
    }
    chunks.push(event("message_delta", json!({"type": "message_delta", "delta": {"stop_reason": stop_reason, "stop_sequence": null}, "usage": {"output_tokens": 42}})));
    chunks.push(event("message_stop", json!({"type": "message_stop"})));
    Reply {
        status: 200,
        headers: vec![("content-type".to_string(), "text/event-stream".to_string())],
        chunks,
        delay_ms: 0,
    }
}

/// An error reply with Anthropic's envelope.
pub fn error(status: u16, error_type: &str, message: &str) -> Reply {
    Reply {
        status,
        headers: vec![("content-type".to_string(), "application/json".to_string())],
        chunks: vec![json!({"type": "error", "error": {"type": error_type, "message": message}}).to_string()],
        delay_ms: 0,
    }
}

/// Splits text into `n` roughly equal pieces on character boundaries.
pub(crate) fn split(text: &str, n: usize) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    let size = chars.len().div_ceil(n.max(1)).max(1);
    chars.chunks(size).map(|c| c.iter().collect()).collect()
}
