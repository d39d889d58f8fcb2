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

fn compact() -> SessionConfig {
    let mut config = SessionConfig::new("compact", "qwen2.5-coder-1.5b-instruct");
    config.endpoint = "local".to_string();
    config.protocol = WireProtocol::ChatCompletions;
    config
}

/// The message of a Chat Completions request's `messages` at `i`, as text.
fn content(body: &Value, i: usize) -> String {
    body["messages"][i]["content"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

#[test]
fn a_call_the_server_left_in_the_text_runs_and_failures_get_reminders() {
    let env = FakeEnv::default();
    env.put("calc.py", "def add(a, b):\n    return a - b\n");
    let mut h = Harness::with(
        env,
        compact(),
        vec![
            reply(
                "",
                "I will read it.\n```json\n{\"name\": \"read_file\", \"arguments\": {\"file_path\": \"src/calc.py\"}}\n```",
                &[],
            ),
            reply("", "Done.", &[]),
            reply("", "The file does not exist; nothing to do.", &[]),
        ],
    );
    let outcome = h.session.submit("fix calc.py").unwrap();
    assert_eq!(outcome.stop_reason, StopReason::Completed);
    assert_eq!(outcome.final_text, "The file does not exist; nothing to do.");
    let bodies = h.transport.request_bodies();
    assert_eq!(bodies.len(), 3);
    // The first request lists the workspace's files before the input.
    assert!(
        content(&bodies[0], 1).contains("<workspace_files>"),
        "{}",
        bodies[0]
    );
    assert!(content(&bodies[0], 1).contains("\ncalc.py\n"), "{}", bodies[0]);
    // The input names calc.py: its contents come along, as a read would show them.
    assert!(
        content(&bodies[0], 1).contains("<file path=\"calc.py\">\ndef add(a, b):\n    return a - b\n</file>"),
        "{}",
        bodies[0]
    );
    assert_eq!(content(&bodies[0], 2), "fix calc.py");
    // The fenced block became a call: replayed as one, with the prose kept as the text.
    let assistant = &bodies[1]["messages"][3];
    assert_eq!(assistant["content"], "I will read it.", "{assistant}");
    assert_eq!(assistant["tool_calls"][0]["function"]["name"], "read_file");
    let result = content(&bodies[1], 4);
    assert!(
        result.contains("not found")
            && result
                .contains("<system-reminder>The call failed, so the task is not done yet. Check the path"),
        "{result}"
    );
    // "Done." right after the failed call is sent back once to be verified; the next answer
    // ends the input.
    assert!(
        content(&bodies[2], 6).contains(
            "The task is not done: your last tool call failed (Tool error (read_file): file not found: src/calc.py). The task was: fix calc.py\nCall a tool now"
        ),
        "{}",
        bodies[2]
    );
}

#[test]
fn reminders_can_be_turned_off_and_text_calls_are_read_on_chat_completions_only() {
    let mut config = compact();
    config.system_reminders = Some(false);
    let fenced = "```json\n{\"name\": \"read_file\", \"arguments\": {\"file_path\": \"missing.py\"}}\n```";
    let mut h = Harness::with(
        FakeEnv::default(),
        config,
        vec![reply("", fenced, &[]), reply("", "Done.", &[])],
    );
    assert_eq!(h.session.submit("go").unwrap().final_text, "Done.");
    let bodies = h.transport.request_bodies();
    assert_eq!(bodies.len(), 2);
    let result = content(&bodies[1], 4);
    assert!(
        result.contains("not found") && !result.contains("system-reminder"),
        "{result}"
    );

    // Over Anthropic's protocol the same text is an answer, not a call.
    let mut h = Harness::with(
        FakeEnv::default(),
        SessionConfig::new("compact", "m"),
        vec![common::text_reply(fenced)],
    );
    let outcome = h.session.submit("go").unwrap();
    assert_eq!(outcome.final_text, fenced);
    assert_eq!(h.transport.request_bodies().len(), 1);
}

#[test]
fn a_refused_call_gets_no_reminder_and_the_answer_after_it_stands() {
    let mut h = Harness::with(
        FakeEnv::default(),
        compact(),
        vec![
            reply("", "", &[("c1", "shell", json!({"command": "rm -rf build"}))]),
            reply("", "Understood, I will not delete it.", &[]),
        ],
    );
    h.host.denied_tools.borrow_mut().push("shell".to_string());
    let outcome = h.session.submit("clean up").unwrap();
    assert_eq!(outcome.stop_reason, StopReason::Completed);
    assert_eq!(outcome.final_text, "Understood, I will not delete it.");
    let bodies = h.transport.request_bodies();
    assert_eq!(bodies.len(), 2, "no nudge after a refusal");
    assert_eq!(
        content(&bodies[1], 4),
        "The user denied this shell call: denied by test policy"
    );
}

#[test]
fn no_nudge_when_the_turn_limit_leaves_no_request() {
    let mut config = compact();
    config.limits.max_turns = 2;
    let mut h = Harness::with(
        FakeEnv::default(),
        config,
        vec![
            reply("", "", &[("c1", "read_file", json!({"file_path": "missing.py"}))]),
            reply("", "Done.", &[]),
        ],
    );
    let outcome = h.session.submit("go").unwrap();
    // The input completes with the model's answer, not at the limit on a reminder's account.
    assert_eq!(outcome.stop_reason, StopReason::Completed);
    assert_eq!(outcome.final_text, "Done.");
    assert_eq!(h.transport.request_bodies().len(), 2);
}
