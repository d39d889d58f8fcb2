//! Replies in Anthropic's Messages wire format: streamed (`text/event-stream`, the event
//! sequence the real API sends) and error envelopes.

use super::{Reply, split};
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

/// How a scripted message streams, besides its blocks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shape {
    /// Prompt tokens reported in `message_start`.
    pub input_tokens: u64,
    /// Output tokens reported in `message_delta`.
    pub output_tokens: u64,
    /// Deltas each text block is cut into.
    pub text_pieces: usize,
    /// Whether a `ping` follows `message_start`, as the real API sends.
    pub ping: bool,
}

impl Shape {
    /// As the real API streams: a ping, text in three deltas.
    pub const API: Self = Self {
        input_tokens: 25,
        output_tokens: 42,
        text_pieces: 3,
        ping: true,
    };

    /// The fewest events: one delta per block, no ping (the core's tests count events).
    pub const COMPACT: Self = Self {
        input_tokens: 10,
        output_tokens: 5,
        text_pieces: 1,
        ping: false,
    };
}

/// A streamed message with these blocks, as the real API sends it: message_start, each
/// block's start / deltas / stop (text in several deltas, tool input as partial JSON),
/// message_delta with the stop reason and usage, message_stop; one ping.
pub fn message(blocks: &[Block]) -> Reply {
    message_shaped(blocks, Shape::API)
}

/// [`message`], streamed as `shape` says.
pub fn message_shaped(blocks: &[Block], shape: Shape) -> Reply {
    let mut chunks = vec![event(
        "message_start",
        json!({"type": "message_start", "message": {
            "id": "msg_scripted", "type": "message", "role": "assistant", "model": "scripted-model",
            "content": [], "stop_reason": null, "stop_sequence": null,
            "usage": {"input_tokens": shape.input_tokens, "output_tokens": 1}}}),
    )];
    if shape.ping {
        chunks.push(event("ping", json!({"type": "ping"})));
    }
    let mut stop_reason = "end_turn";
    for (index, block) in blocks.iter().enumerate() {
        match block {
            Block::Text { text } => {
                chunks.push(event("content_block_start", json!({"type": "content_block_start", "index": index, "content_block": {"type": "text", "text": ""}})));
                for piece in split(text, shape.text_pieces) {
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
    chunks.push(event("message_delta", json!({"type": "message_delta", "delta": {"stop_reason": stop_reason, "stop_sequence": null}, "usage": {"output_tokens": shape.output_tokens}})));
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
