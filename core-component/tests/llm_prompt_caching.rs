//! Prompt caching (unified LLM spec 2.10): where the Anthropic adapter puts its
//! `cache_control` breakpoints on turns 1 and 2, that the prefix a request shares with the
//! one before it is byte for byte the same, and OpenAI's `prompt_cache_key` per session.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests may panic

mod common;

use agent_core::SessionConfig;
use agent_core::llm::WireProtocol;
use agent_test_support::fakes::{FakeEnv, ScriptedResponse};
use agent_test_support::wire::{openai_responses, text, tool_use};
use common::{Harness, text_reply, tool_reply};
use serde_json::{Value, json};

/// The JSON paths of every `cache_control` mark in a body, and the body without them.
fn marks(value: &Value, path: String, found: &mut Vec<String>) -> Value {
    match value {
        Value::Object(map) => {
            let mut bare = serde_json::Map::new();
            for (key, v) in map {
                if key == "cache_control" {
                    assert_eq!(*v, json!({"type": "ephemeral"}));
                    found.push(path.clone());
                } else {
                    bare.insert(key.clone(), marks(v, format!("{path}/{key}"), found));
                }
            }
            Value::Object(bare)
        }
        Value::Array(items) => Value::Array(
            items
                .iter()
                .enumerate()
                .map(|(i, v)| marks(v, format!("{path}/{i}"), found))
                .collect(),
        ),
        other => other.clone(),
    }
}

fn unmarked(body: &Value) -> (Vec<String>, Value) {
    let mut found = Vec::new();
    let bare = marks(body, String::new(), &mut found);
    found.sort();
    (found, bare)
}

fn two_turns(config: SessionConfig) -> Vec<Value> {
    let env = FakeEnv::default();
    env.put("notes.txt", "some notes\n");
    let mut h = Harness::with(
        env,
        config,
        vec![
            tool_reply(&[("t1", "read_file", json!({"file_path": "notes.txt"}))]),
            text_reply("read"),
        ],
    );
    h.session.submit("read notes.txt").unwrap();
    h.transport.request_bodies()
}

#[test]
fn anthropic_breakpoints_sit_on_tools_system_and_the_moving_end_and_the_prefix_is_stable() {
    let bodies = two_turns(SessionConfig::new("anthropic", "claude-test"));
    let (first_marks, first) = unmarked(&bodies[0]);
    let tools = bodies[0]["tools"].as_array().unwrap().len();
    // Turn 1: one user message so far.
    assert_eq!(
        first_marks,
        [
            "/messages/0/content/0".to_string(),
            "/system/0".to_string(),
            format!("/tools/{}", tools - 1),
        ]
    );
    // Turn 2: the input (where turn 1 ended) and the tool result (the new end): four marks,
    // the API's limit.
    let (second_marks, second) = unmarked(&bodies[1]);
    assert_eq!(
        second_marks,
        [
            "/messages/0/content/0".to_string(),
            "/messages/2/content/0".to_string(),
            "/system/0".to_string(),
            format!("/tools/{}", tools - 1),
        ]
    );
    assert_eq!(bodies[1]["messages"][2]["content"][0]["type"], "tool_result");
    // The cached prefix: tools, system and turn 1's messages, byte for byte.
    for key in ["tools", "system"] {
        assert_eq!(
            first[key].to_string(),
            second[key].to_string(),
            "{key} changed between turns"
        );
    }
    let old = first["messages"].as_array().unwrap();
    let new = second["messages"].as_array().unwrap();
    assert_eq!(
        Value::Array(old.clone()).to_string(),
        Value::Array(new[..old.len()].to_vec()).to_string(),
        "turn 2 does not begin with turn 1's messages"
    );
}

#[test]
fn anthropic_auto_cache_false_leaves_the_request_unmarked() {
    let mut config = SessionConfig::new("anthropic", "claude-test");
    config.provider_options = Some(json!({"anthropic": {"auto_cache": false}}));
    let bodies = two_turns(config);
    for body in &bodies {
        assert!(unmarked(body).0.is_empty(), "{body}");
        assert!(
            body.get("auto_cache").is_none(),
            "the option is ours, not the API's"
        );
    }
}

#[test]
fn openai_responses_requests_carry_the_sessions_prompt_cache_key() {
    let reply = |blocks: &[agent_test_support::wire::Block]| {
        ScriptedResponse::from_reply(&openai_responses::response(blocks, None), 11)
    };
    let mut config = SessionConfig::new("openai", "gpt-test");
    config.protocol = WireProtocol::OpenaiResponses;
    let env = FakeEnv::default();
    env.put("notes.txt", "some notes\n");
    let mut h = Harness::with(
        env,
        config,
        vec![
            reply(&[tool_use("t1", "read_file", json!({"file_path": "notes.txt"}))]),
            reply(&[text("read")]),
        ],
    );
    h.session.submit("read notes.txt").unwrap();
    let bodies = h.transport.request_bodies();
    assert_eq!(bodies.len(), 2);
    for body in &bodies {
        assert_eq!(body["prompt_cache_key"], h.session.id());
    }
}
