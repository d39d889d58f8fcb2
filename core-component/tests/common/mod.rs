//! Helpers shared by the core's spec tests: scripted Anthropic streams and fake ports.
#![allow(dead_code)]

pub mod conformance;

use agent_core::{Session, SessionConfig};
use agent_test_support::fakes::{FakeEnv, RecordingHost, ScriptedResponse, ScriptedTransport, ports};
use agent_test_support::wire::Block;
use agent_test_support::wire::anthropic::{self, Shape};
use serde_json::{Value, json};
use std::rc::Rc;

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

/// A streamed message with the given content blocks (`text`, `tool_use`, `thinking`, as in
/// the scripted server's scripts), split in 7-byte pieces so that events straddle chunk
/// boundaries.
pub fn blocks_reply(blocks: &[Value]) -> ScriptedResponse {
    blocks_reply_with_usage(blocks, Shape::COMPACT.input_tokens)
}

/// Like `blocks_reply`, reporting `input_tokens` of prompt.
pub fn blocks_reply_with_usage(blocks: &[Value], input_tokens: u64) -> ScriptedResponse {
    let blocks: Vec<Block> = blocks
        .iter()
        .map(|b| serde_json::from_value(b.clone()).expect("a text, tool_use or thinking block"))
        .collect();
    let shape = Shape {
        input_tokens,
        ..Shape::COMPACT
    };
    ScriptedResponse::from_reply(&anthropic::message_shaped(&blocks, shape), 7)
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
