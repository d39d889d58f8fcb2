//! The loop over an OpenAI-compatible Chat Completions endpoint (unified LLM spec, section
//! on adapters): what the requests look like and how streamed answers are read, natively
//! over in-memory fakes.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests may panic

mod common;

use agent_core::llm::{ReasoningEffort, WireProtocol};
use agent_core::{EventKind, SessionConfig, StopReason};
use agent_test_support::fakes::{FakeEnv, ScriptedResponse};
use common::Harness;
use serde_json::{Value, json};

fn chunk(delta: Value, finish: Option<&str>) -> String {
    let data = json!({"id": "chatcmpl-1", "model": "local-model", "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]});
    format!("data: {data}\n\n")
}

/// A streamed completion: optional reasoning, text in two deltas, tool calls with their
/// arguments split in two, then usage and `[DONE]`.
fn reply(reasoning: &str, text: &str, calls: &[(&str, &str, Value)]) -> ScriptedResponse {
    let mut body = String::new();
    if !reasoning.is_empty() {
        body += &chunk(json!({"role": "assistant", "reasoning_content": reasoning}), None);
    }
    if !text.is_empty() {
        let (a, b) = text.split_at(text.len() / 2);
        body += &chunk(json!({"content": a}), None);
        body += &chunk(json!({"content": b}), None);
    }
    for (i, (id, name, args)) in calls.iter().enumerate() {
        let args = args.to_string();
        let (a, b) = args.split_at(args.len() / 2);
        body += &chunk(
            json!({"tool_calls": [{"index": i, "id": id, "type": "function", "function": {"name": name, "arguments": a}}]}),
            None,
        );
        body += &chunk(
            json!({"tool_calls": [{"index": i, "function": {"arguments": b}}]}),
            None,
        );
    }
    let finish = if calls.is_empty() { "stop" } else { "tool_calls" };
    body += &chunk(json!({}), Some(finish));
    body += &format!(
        "data: {}\n\ndata: [DONE]\n\n",
        json!({"id": "chatcmpl-1", "choices": [], "usage": {"prompt_tokens": 120, "completion_tokens": 9}})
    );
    ScriptedResponse::sse(&body, 11)
}

fn config() -> SessionConfig {
    let mut config = SessionConfig::new("openai", "local-model");
    config.endpoint = "ollama".to_string();
    config.protocol = WireProtocol::ChatCompletions;
    config
}

#[test]
fn a_tool_round_over_chat_completions_sends_tool_messages_back() {
    let mut config = config();
    config.reasoning_effort = Some(ReasoningEffort::Medium);
    let mut h = Harness::with(
        FakeEnv::default(),
        config,
        vec![
            reply(
                "I should create it.",
                "Creating.",
                &[(
                    "call_1",
                    "write_file",
                    json!({"file_path": "hello.py", "content": "print('Hello')\n"}),
                )],
            ),
            reply("", "Done.", &[]),
        ],
    );
    let outcome = h.session.submit("create hello.py").unwrap();
    assert_eq!(outcome.stop_reason, StopReason::Completed);
    assert_eq!(outcome.final_text, "Done.");
    assert_eq!(h.env.get("hello.py").as_deref(), Some("print('Hello')\n"));

    let requests = h.transport.requests.borrow().clone();
    assert_eq!(requests[0].endpoint, "ollama");
    assert_eq!(requests[0].path, "/v1/chat/completions");
    let first = &h.transport.request_bodies()[0];
    assert_eq!(first["messages"][0]["role"], "system");
    assert_eq!(
        first["messages"][1],
        json!({"role": "user", "content": "create hello.py"})
    );
    assert_eq!(first["tools"][0]["type"], "function");
    assert_eq!(first["reasoning_effort"], "medium");
    assert_eq!(first["stream_options"], json!({"include_usage": true}));

    let second = &h.transport.request_bodies()[1];
    let messages = second["messages"].as_array().unwrap();
    let assistant = &messages[2];
    assert_eq!(assistant["role"], "assistant");
    assert_eq!(assistant["content"], "Creating.");
    let call = &assistant["tool_calls"][0];
    assert_eq!(call["id"], "call_1");
    let arguments: Value = serde_json::from_str(call["function"]["arguments"].as_str().unwrap()).unwrap();
    assert_eq!(arguments["file_path"], "hello.py");
    assert_eq!(messages[3]["role"], "tool");
    assert_eq!(messages[3]["tool_call_id"], "call_1");
    assert!(
        messages[3]["content"]
            .as_str()
            .unwrap()
            .starts_with("Created hello.py")
    );
    assert!(
        !second.to_string().contains("I should create it."),
        "reasoning is not replayed"
    );

    let ends = h.events_of(EventKind::AssistantTextEnd);
    assert_eq!(ends[0]["reasoning"], "I should create it.");
    assert_eq!(ends[0]["usage"]["input_tokens"], 120);
    let kinds = h.host.kinds();
    let reasoning_start = kinds
        .iter()
        .position(|k| *k == EventKind::ReasoningStart)
        .unwrap();
    let reasoning_end = kinds.iter().position(|k| *k == EventKind::ReasoningEnd).unwrap();
    let text_start = kinds
        .iter()
        .position(|k| *k == EventKind::AssistantTextStart)
        .unwrap();
    assert!(reasoning_start < reasoning_end && reasoning_end < text_start);
}

#[test]
fn errors_use_the_openai_envelope_and_an_unfinished_stream_is_an_error() {
    let unauthorized = ScriptedResponse::json(
        401,
        r#"{"error":{"message":"Incorrect API key provided: sk-...","type":"invalid_request_error","code":"invalid_api_key"}}"#,
    );
    let mut h = Harness::with(FakeEnv::default(), config(), vec![unauthorized]);
    let error = h.session.submit("x").unwrap_err();
    assert!(
        error
            .to_string()
            .contains("authentication error (HTTP 401): Incorrect API key"),
        "{error}"
    );

    let cut = ScriptedResponse::sse(&chunk(json!({"content": "half an ans"}), None), 7);
    let mut h = Harness::with(FakeEnv::default(), config(), vec![cut]);
    let error = h.session.submit("x").unwrap_err();
    assert!(
        error.to_string().contains("ended before its end marker"),
        "{error}"
    );
}
