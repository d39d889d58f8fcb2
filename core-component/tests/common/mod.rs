//! Helpers shared by the core's spec tests: scripted Anthropic streams and fake ports.
#![allow(dead_code)]

pub mod conformance;

use agent_core::fakes::{FakeEnv, RecordingHost, ScriptedResponse, ScriptedTransport, ports};
use agent_core::{Session, SessionConfig};
use serde_json::{Value, json};
use std::rc::Rc;

fn event(name: &str, data: Value) -> String {
    format!("event: {name}\ndata: {data}\n\n")
}

/// An Anthropic stream answering with text only.
pub fn text_reply(text: &str) -> ScriptedResponse {
    blocks_reply(&[json!({"type": "text", "text": text})])
}

/// An Anthropic stream answering with tool calls `(id, name, input)`.
pub fn tool_reply(calls: &[(&str, &str, Value)]) -> ScriptedResponse {
    let blocks: Vec<Value> = calls
        .iter()
        .map(|(id, name, input)| json!({"type": "tool_use", "id": id, "name": name, "input": input}))
        .collect();
    blocks_reply(&blocks)
}

/// A streamed message with the given content blocks, split in 7-byte pieces so that events
/// straddle chunk boundaries.
pub fn blocks_reply(blocks: &[Value]) -> ScriptedResponse {
    blocks_reply_with_usage(blocks, 10)
}

/// Like `blocks_reply`, reporting `input_tokens` of prompt.
pub fn blocks_reply_with_usage(blocks: &[Value], input_tokens: u64) -> ScriptedResponse {
    let mut body = event(
        "message_start",
        json!({"type": "message_start", "message": {"id": "msg_1", "model": "m", "usage": {"input_tokens": input_tokens, "output_tokens": 1}}}),
    );
    let mut stop = "end_turn";
    for (i, block) in blocks.iter().enumerate() {
        match block["type"].as_str() {
            Some("tool_use") => {
                stop = "tool_use";
                body += &event(
                    "content_block_start",
                    json!({"type": "content_block_start", "index": i, "content_block": {"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}}),
                );
                body += &event(
                    "content_block_delta",
                    json!({"type": "content_block_delta", "index": i, "delta": {"type": "input_json_delta", "partial_json": block["input"].to_string()}}),
                );
            }
            Some("thinking") => {
                body += &event(
                    "content_block_start",
                    json!({"type": "content_block_start", "index": i, "content_block": {"type": "thinking", "thinking": ""}}),
                );
                body += &event(
                    "content_block_delta",
                    json!({"type": "content_block_delta", "index": i, "delta": {"type": "thinking_delta", "thinking": block["thinking"]}}),
                );
                body += &event(
                    "content_block_delta",
                    json!({"type": "content_block_delta", "index": i, "delta": {"type": "signature_delta", "signature": block["signature"]}}),
                );
            }
            _ => {
                body += &event(
                    "content_block_start",
                    json!({"type": "content_block_start", "index": i, "content_block": {"type": "text", "text": ""}}),
                );
                body += &event(
                    "content_block_delta",
                    json!({"type": "content_block_delta", "index": i, "delta": {"type": "text_delta", "text": block["text"]}}),
                );
            }
        }
        body += &event(
            "content_block_stop",
            json!({"type": "content_block_stop", "index": i}),
        );
    }
    body += &event(
        "message_delta",
        json!({"type": "message_delta", "delta": {"stop_reason": stop}, "usage": {"output_tokens": 5}}),
    );
    body += &event("message_stop", json!({"type": "message_stop"}));
    ScriptedResponse::sse(&body, 7)
}

/// A session over fakes with the given replies.
pub struct Harness {
    pub env: Rc<FakeEnv>,
    pub transport: Rc<ScriptedTransport>,
    pub host: Rc<RecordingHost>,
    pub session: Session,
}

impl Harness {
    pub fn new(replies: Vec<ScriptedResponse>) -> Self {
        Self::with(
            FakeEnv::default(),
            SessionConfig::new("anthropic", "claude-test"),
            replies,
        )
    }

    pub fn with(env: FakeEnv, config: SessionConfig, replies: Vec<ScriptedResponse>) -> Self {
        let env = Rc::new(env);
        let transport = Rc::new(ScriptedTransport::new(replies));
        let host = Rc::new(RecordingHost::default());
        let session = Session::new(config, ports(env.clone(), transport.clone(), host.clone()));
        Self {
            env,
            transport,
            host,
            session,
        }
    }

    /// The tool_result blocks of a request body.
    pub fn tool_results(&self, request: usize) -> Vec<Value> {
        let body = &self.transport.request_bodies()[request];
        body["messages"]
            .as_array()
            .into_iter()
            .flatten()
            .flat_map(|m| m["content"].as_array().cloned().unwrap_or_default())
            .filter(|b| b["type"] == "tool_result")
            .collect()
    }

    /// The data of every event of a kind.
    pub fn events_of(&self, kind: agent_core::EventKind) -> Vec<Value> {
        self.host
            .events
            .borrow()
            .iter()
            .filter(|e| e.kind() == kind)
            .map(|e| e.data.to_data_value())
            .collect()
    }
}
