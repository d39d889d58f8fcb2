//! Section 2 of the spec: the session, its lifecycle and the agentic loop, run natively
//! over in-memory fakes of every port.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests may panic

mod common;

use agent_core::ports::{ExecResult, Interruption, TransportError};
use agent_core::{AgentError, EventKind, Session, SessionConfig, SessionState, StopReason};
use agent_test_support::fakes::{FakeEnv, ScriptedResponse};
use common::{Harness, text_reply, tool_reply};
use serde_json::json;

#[test]
fn text_only_reply_completes_naturally_and_returns_to_idle() {
    let mut h = Harness::new(vec![text_reply("Hello there")]);
    let outcome = h.session.submit("hi").unwrap();
    assert_eq!(outcome.stop_reason, StopReason::Completed);
    assert_eq!(outcome.final_text, "Hello there");
    assert_eq!((outcome.rounds, outcome.turns), (0, 1));
    assert_eq!(h.session.state(), SessionState::Idle);
    let kinds = h.host.kinds();
    assert_eq!(
        kinds,
        [
            EventKind::SessionStart,
            EventKind::UserInput,
            EventKind::AssistantTextStart,
            EventKind::AssistantTextDelta,
            EventKind::AssistantTextEnd,
            EventKind::ProcessingEnd,
        ]
    );
    assert_eq!(h.events_of(EventKind::AssistantTextEnd)[0]["text"], "Hello there");
}

#[test]
fn a_tool_round_executes_and_its_result_is_sent_with_the_next_request() {
    let mut h = Harness::new(vec![
        tool_reply(&[(
            "toolu_1",
            "write_file",
            json!({"file_path": "hello.py", "content": "print('Hello')\n"}),
        )]),
        text_reply("done"),
    ]);
    let outcome = h.session.submit("create hello.py").unwrap();
    assert_eq!(
        (outcome.stop_reason, outcome.rounds, outcome.turns),
        (StopReason::Completed, 1, 2)
    );
    assert_eq!(h.env.get("hello.py").as_deref(), Some("print('Hello')\n"));

    let results = h.tool_results(1);
    assert_eq!(results.len(), 1);
    assert_eq!(results[0]["tool_use_id"], "toolu_1");
    assert_eq!(results[0]["is_error"], false);
    // The assistant's tool_use is replayed before the result, with its parsed input.
    let second = &h.transport.request_bodies()[1];
    assert_eq!(second["messages"][1]["role"], "assistant");
    assert_eq!(
        second["messages"][1]["content"][0]["input"]["file_path"],
        "hello.py"
    );
    let end = &h.events_of(EventKind::ToolCallEnd)[0];
    assert_eq!(end["call_id"], "toolu_1");
    assert!(end["output"].as_str().unwrap().starts_with("Created hello.py"));
}

#[test]
fn multiple_sequential_inputs_share_one_history() {
    let mut h = Harness::new(vec![text_reply("first answer"), text_reply("second answer")]);
    h.session.submit("one").unwrap();
    h.session.submit("two").unwrap();
    let second = &h.transport.request_bodies()[1];
    let roles: Vec<&str> = second["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["role"].as_str().unwrap())
        .collect();
    assert_eq!(roles, ["user", "assistant", "user"]);
    assert_eq!(second["messages"][2]["content"][0]["text"], "two");
}

#[test]
fn open_models_slips_are_taken_or_answered_with_the_right_form() {
    let mut h = Harness::new(vec![
        tool_reply(&[
            // Arguments sent as a JSON string holding the object, as small models do.
            ("t1", "read_file", json!("{\"file_path\": \"notes.txt\"}")),
            // Another agent's name for a tool.
            ("t2", "run_shell", json!({"command": "ls"})),
        ]),
        text_reply("done"),
    ]);
    h.env.put("notes.txt", "first line\n");
    h.session.submit("go").unwrap();
    // The next request replays the call with the object that ran, not `{}` or the string.
    let replayed = &h.transport.request_bodies()[1]["messages"][1]["content"][0];
    assert_eq!(replayed["input"], json!({"file_path": "notes.txt"}), "{replayed}");
    let started = h.events_of(EventKind::ToolCallStart);
    assert_eq!(
        started[0]["arguments"],
        json!({"file_path": "notes.txt"}),
        "{:?}",
        started[0]
    );
    let results = h.tool_results(1);
    let text = |i: usize| results[i]["content"].as_str().unwrap().to_string();
    assert_eq!(results[0]["is_error"], false, "{}", text(0));
    assert!(text(0).contains("first line"), "{}", text(0));
    assert_eq!(results[1]["is_error"], true);
    assert!(
        text(1).starts_with(
            "Unknown tool: run_shell. Did you mean shell? Call it by that name. Available tools:"
        ),
        "{}",
        text(1)
    );
}

#[test]
fn tool_failures_become_error_results_the_model_can_recover_from() {
    let mut h = Harness::new(vec![
        tool_reply(&[
            ("t1", "no_such_tool", json!({})),
            ("t2", "read_file", json!({"file_path": "missing.txt"})),
            ("t3", "read_file", json!({"path": "wrong field"})),
        ]),
        text_reply("recovered"),
    ]);
    let outcome = h.session.submit("go").unwrap();
    assert_eq!(outcome.stop_reason, StopReason::Completed);
    let results = h.tool_results(1);
    assert!(results.iter().all(|r| r["is_error"] == true));
    let text = |i: usize| results[i]["content"].as_str().unwrap().to_string();
    assert!(text(0).starts_with("Unknown tool: no_such_tool. Available tools: read_file, write_file, shell"));
    assert!(text(1).contains("file not found: missing.txt"), "{}", text(1));
    // Schema validation names both the missing and the unexpected field.
    assert!(
        text(2).starts_with("Invalid arguments for tool read_file:")
            && text(2).contains("missing properties 'file_path'")
            && text(2).contains("'path' not allowed"),
        "{}",
        text(2)
    );
}

#[test]
fn shell_output_streams_as_deltas_and_timeouts_are_explained() {
    let env = FakeEnv::new(Box::new(|req| ExecResult {
        stdout: "partial\n".to_string(),
        timed_out: req.command == "slow",
        exit_code: if req.command == "slow" { -1 } else { 0 },
        ..ExecResult::default()
    }));
    let mut h = Harness::with(
        env,
        SessionConfig::new("anthropic", "m"),
        vec![
            tool_reply(&[("t1", "shell", json!({"command": "slow", "timeout_ms": 50}))]),
            text_reply("ok"),
        ],
    );
    h.session.submit("run it").unwrap();
    assert_eq!(h.env.spawned.borrow()[0].timeout_ms, 50);
    let deltas = h.events_of(EventKind::ToolCallOutputDelta);
    assert_eq!(deltas[0]["delta"], "partial\n");
    assert_eq!(deltas[0]["stream"], "stdout");
    let content = h.tool_results(1)[0]["content"].as_str().unwrap().to_string();
    assert!(
        content.starts_with("partial\n[ERROR: Command timed out after 50ms."),
        "{content}"
    );
}

#[test]
fn anthropic_profile_defaults_shell_timeout_to_120_s_capped_by_the_maximum() {
    let mut config = SessionConfig::new("anthropic", "m");
    config.limits.max_command_timeout_ms = 60_000;
    let mut h = Harness::with(
        FakeEnv::default(),
        config,
        vec![
            tool_reply(&[
                ("t1", "shell", json!({"command": "a"})),
                ("t2", "shell", json!({"command": "b", "timeout_ms": 999_999})),
            ]),
            text_reply("ok"),
        ],
    );
    h.session.submit("x").unwrap();
    let spawned = h.env.spawned.borrow();
    assert_eq!((spawned[0].timeout_ms, spawned[1].timeout_ms), (60_000, 60_000));
}

#[test]
fn a_configured_default_command_timeout_applies_to_every_profile_anthropic_included() {
    for provider in ["anthropic", "openai", "gemini"] {
        let mut config = SessionConfig::new(provider, "m");
        // The scripted replies speak Anthropic's protocol whatever the profile.
        config.protocol = agent_core::llm::WireProtocol::AnthropicMessages;
        config.limits.default_command_timeout_ms = Some(30_000);
        let mut h = Harness::with(
            FakeEnv::default(),
            config,
            vec![
                tool_reply(&[("t1", "shell", json!({"command": "a"}))]),
                text_reply("ok"),
            ],
        );
        h.session.submit("x").unwrap();
        assert_eq!(h.env.spawned.borrow()[0].timeout_ms, 30_000, "{provider}");
        let description = h.session.describe().unwrap();
        assert_eq!(description["default_command_timeout_ms"], 30_000, "{provider}");
        let shell = description["tools"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["name"] == "shell")
            .unwrap();
        assert!(
            shell["description"]
                .as_str()
                .unwrap()
                .contains("after 30 seconds"),
            "{provider}: {shell}"
        );
    }
}

#[test]
fn round_limit_stops_the_input_with_a_turn_limit_event() {
    let mut config = SessionConfig::new("anthropic", "m");
    config.limits.max_tool_rounds_per_input = 1;
    let mut h = Harness::with(
        FakeEnv::default(),
        config,
        vec![
            tool_reply(&[("t1", "shell", json!({"command": "a"}))]),
            tool_reply(&[("t2", "shell", json!({"command": "b"}))]),
        ],
    );
    let outcome = h.session.submit("loop").unwrap();
    assert_eq!((outcome.stop_reason, outcome.rounds), (StopReason::RoundLimit, 1));
    assert_eq!(
        h.events_of(EventKind::TurnLimit),
        [json!({"limit": "max_tool_rounds_per_input", "value": 1})]
    );
    assert_eq!(h.session.state(), SessionState::Idle);
    assert_eq!(h.transport.requests.borrow().len(), 1);
}

#[test]
fn max_turns_counts_llm_cycles_across_the_session() {
    let mut config = SessionConfig::new("anthropic", "m");
    config.limits.max_turns = 2;
    let mut h = Harness::with(
        FakeEnv::default(),
        config,
        vec![
            text_reply("one"),
            tool_reply(&[("t1", "shell", json!({"command": "a"}))]),
            text_reply("never"),
        ],
    );
    h.session.submit("first").unwrap();
    let outcome = h.session.submit("second").unwrap();
    assert_eq!((outcome.stop_reason, outcome.turns), (StopReason::TurnLimit, 2));
    assert_eq!(
        h.events_of(EventKind::TurnLimit),
        [json!({"limit": "max_turns", "value": 2})]
    );
}

#[test]
fn steering_is_injected_before_the_first_call_and_after_a_tool_round() {
    let mut h = Harness::new(vec![
        tool_reply(&[("t1", "shell", json!({"command": "a"}))]),
        text_reply("ok"),
    ]);
    h.host.steering.borrow_mut().push("use python 3".to_string());
    // Steer again while the tool runs.
    *h.host.on_event.borrow_mut() = Some(Box::new(|event, host| {
        if event.kind() == EventKind::ToolCallStart {
            host.steering.borrow_mut().push("also add tests".to_string());
        }
    }));
    h.session.submit("task").unwrap();
    let bodies = h.transport.request_bodies();
    let first_user = &bodies[0]["messages"][0]["content"];
    assert_eq!(first_user[1]["text"], "use python 3");
    // Steering after the round rides in the same user message as the tool results.
    let last = bodies[1]["messages"].as_array().unwrap().last().unwrap().clone();
    assert_eq!(last["content"][0]["type"], "tool_result");
    assert_eq!(last["content"][1]["text"], "also add tests");
    let injected: Vec<_> = h
        .events_of(EventKind::SteeringInjected)
        .iter()
        .map(|d| d["content"].clone())
        .collect();
    assert_eq!(injected, [json!("use python 3"), json!("also add tests")]);
}

#[test]
fn follow_ups_are_processed_after_the_input_completes() {
    let mut h = Harness::new(vec![text_reply("first"), text_reply("second")]);
    h.host.follow_ups.borrow_mut().push("and then this".to_string());
    let outcome = h.session.submit("do this").unwrap();
    assert_eq!(outcome.final_text, "second");
    let inputs: Vec<_> = h
        .events_of(EventKind::UserInput)
        .iter()
        .map(|d| d["content"].clone())
        .collect();
    assert_eq!(inputs, [json!("do this"), json!("and then this")]);
    assert_eq!(h.events_of(EventKind::ProcessingEnd).len(), 2);
}

#[test]
fn cancel_stops_the_input_and_leaves_the_session_usable() {
    let mut h = Harness::new(vec![
        tool_reply(&[("t1", "shell", json!({"command": "a"}))]),
        text_reply("after"),
    ]);
    *h.host.on_event.borrow_mut() = Some(Box::new(|event, host| {
        if event.kind() == EventKind::ToolCallEnd {
            *host.interruption.borrow_mut() = Some(Interruption::CancelInput);
        }
    }));
    let outcome = h.session.submit("x").unwrap();
    assert_eq!(outcome.stop_reason, StopReason::Cancelled);
    assert_eq!(h.session.state(), SessionState::Idle);
    *h.host.on_event.borrow_mut() = None;
    *h.host.interruption.borrow_mut() = None;
    assert_eq!(h.session.submit("again").unwrap().final_text, "after");
}

#[test]
fn abort_closes_the_session_with_session_end() {
    let mut h = Harness::new(vec![tool_reply(&[("t1", "shell", json!({"command": "a"}))])]);
    *h.host.on_event.borrow_mut() = Some(Box::new(|event, host| {
        if event.kind() == EventKind::ToolCallStart {
            *host.interruption.borrow_mut() = Some(Interruption::AbortSession);
        }
    }));
    let outcome = h.session.submit("x").unwrap();
    assert_eq!(outcome.stop_reason, StopReason::Aborted);
    assert_eq!(h.session.state(), SessionState::Closed);
    assert_eq!(h.host.kinds().last(), Some(&EventKind::SessionEnd));
    assert_eq!(h.session.submit("more"), Err(AgentError::Closed));
}

#[test]
fn an_authentication_error_closes_the_session_with_an_error_event() {
    let body = r#"{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}"#;
    let mut h = Harness::new(vec![ScriptedResponse::json(401, body)]);
    let error = h.session.submit("x").unwrap_err();
    assert_eq!(
        error,
        AgentError::Llm("authentication error (HTTP 401): invalid x-api-key".to_string())
    );
    assert_eq!(h.session.state(), SessionState::Closed);
    let errors = h.events_of(EventKind::Error);
    assert_eq!(errors[0]["kind"], "authentication");
    assert_eq!(errors[0]["retryable"], false);
}

#[test]
fn a_stream_that_breaks_midway_is_an_error_not_a_partial_answer() {
    let mut broken = text_reply("this answer is cut");
    broken.chunks.truncate(broken.chunks.len() / 2);
    broken.break_with = Some(TransportError::Io("connection reset".to_string()));
    let mut h = Harness::new(vec![broken]);
    let error = h.session.submit("x").unwrap_err();
    assert!(
        matches!(&error, AgentError::Llm(m) if m.contains("connection reset")),
        "{error:?}"
    );

    let mut truncated = text_reply("no message_stop");
    truncated.chunks.truncate(truncated.chunks.len() / 2);
    let mut h = Harness::new(vec![truncated]);
    let error = h.session.submit("x").unwrap_err();
    assert!(
        matches!(&error, AgentError::Llm(m) if m.contains("ended before its end marker")),
        "{error:?}"
    );
}

#[test]
fn an_invalid_configuration_names_the_field() {
    let mut h = Harness::with(FakeEnv::default(), SessionConfig::new("mistral", "m"), vec![]);
    let error = h.session.submit("x").unwrap_err();
    assert!(
        matches!(&error, AgentError::InvalidConfig(m) if m.starts_with("provider: unknown profile \"mistral\""))
    );
}

#[test]
fn snapshot_and_restore_continue_the_same_conversation() {
    let mut h = Harness::new(vec![text_reply("remembered")]);
    h.session.submit("remember 42").unwrap();
    let snapshot = h.session.snapshot();
    let transport = std::rc::Rc::new(agent_test_support::fakes::ScriptedTransport::new(vec![
        text_reply("42"),
    ]));
    let ports = agent_test_support::fakes::ports(h.env.clone(), transport.clone(), h.host.clone());
    let mut restored = Session::restore(&snapshot, ports).unwrap();
    assert_eq!(restored.id(), h.session.id());
    restored.submit("what was it?").unwrap();
    let messages = transport.request_bodies()[0]["messages"]
        .as_array()
        .unwrap()
        .len();
    assert_eq!(messages, 3);
    assert!(matches!(
        Session::restore(
            "{}",
            agent_test_support::fakes::ports(h.env.clone(), transport, h.host.clone())
        ),
        Err(AgentError::InvalidConfig(_))
    ));
}

#[test]
fn the_request_carries_system_prompt_tools_model_and_reasoning_budget() {
    let mut config = SessionConfig::new("anthropic", "claude-test");
    config.reasoning_effort = Some(agent_core::llm::ReasoningEffort::Low);
    config.user_instructions = Some("Always answer in French.".to_string());
    let mut h = Harness::with(FakeEnv::default(), config, vec![text_reply("ok")]);
    h.session.submit("x").unwrap();
    let body = &h.transport.request_bodies()[0];
    assert_eq!(body["model"], "claude-test");
    assert_eq!(
        body["thinking"],
        json!({"type": "enabled", "budget_tokens": 2048})
    );
    assert!(body["max_tokens"].as_u64().unwrap() > 2048);
    let system = body["system"][0]["text"].as_str().unwrap();
    assert!(system.contains("Working directory: /work") && system.contains("Today's date: 2026-01-01"));
    assert!(system.ends_with("Always answer in French."));
    assert_eq!(body["tools"][0]["input_schema"]["required"], json!(["file_path"]));
}

#[test]
fn empty_text_blocks_are_not_replayed_to_the_api() {
    let mut h = Harness::new(vec![
        common::blocks_reply(&[
            json!({"type": "text", "text": ""}),
            json!({"type": "tool_use", "id": "t1", "name": "shell", "input": {"command": "a"}}),
        ]),
        text_reply("ok"),
    ]);
    h.session.submit("x").unwrap();
    let assistant = &h.transport.request_bodies()[1]["messages"][1];
    assert_eq!(assistant["content"].as_array().unwrap().len(), 1);
    assert_eq!(assistant["content"][0]["type"], "tool_use");
}

#[test]
fn a_reasoning_effort_change_applies_to_the_next_call() {
    let mut config = SessionConfig::new("anthropic", "claude-test");
    config.reasoning_effort = Some(agent_core::llm::ReasoningEffort::Low);
    let mut h = Harness::with(
        FakeEnv::default(),
        config,
        vec![text_reply("a"), text_reply("b"), text_reply("c")],
    );
    h.session.submit("one").unwrap();
    h.session
        .set_reasoning_effort(Some(agent_core::llm::ReasoningEffort::High));
    h.session.submit("two").unwrap();
    h.session.set_reasoning_effort(None);
    h.session.submit("three").unwrap();
    let budgets: Vec<_> = h
        .transport
        .request_bodies()
        .iter()
        .map(|b| b["thinking"]["budget_tokens"].clone())
        .collect();
    assert_eq!(budgets, [json!(2048), json!(24576), json!(null)]);
}

#[test]
fn a_question_leaves_the_session_awaiting_input_and_the_answer_continues_it() {
    let mut h = Harness::new(vec![
        text_reply("I can do that.\n\nWhich file should I change?"),
        text_reply("Changed main.rs."),
    ]);
    let outcome = h.session.submit("fix the bug").unwrap();
    assert_eq!(outcome.stop_reason, StopReason::AwaitingInput);
    assert_eq!(h.session.state(), SessionState::AwaitingInput);
    let outcome = h.session.submit("main.rs").unwrap();
    assert_eq!(outcome.stop_reason, StopReason::Completed);
    assert_eq!(h.session.state(), SessionState::Idle);
}

#[test]
fn transient_errors_are_retried_with_the_providers_delay_and_a_warning() {
    let overloaded = || {
        ScriptedResponse::json(
            429,
            r#"{"type":"error","error":{"type":"rate_limit_error","message":"slow down"}}"#,
        )
        .with_header("retry-after", "1")
    };
    let mut h = Harness::new(vec![overloaded(), overloaded(), text_reply("finally")]);
    let outcome = h.session.submit("x").unwrap();
    assert_eq!(outcome.final_text, "finally");
    assert_eq!(h.transport.requests.borrow().len(), 3);
    assert_eq!(*h.host.sleeps.borrow(), [1_000, 1_000]);
    let retries: Vec<_> = h
        .events_of(EventKind::Warning)
        .into_iter()
        .filter(|w| w["kind"] == "llm_retry")
        .collect();
    assert_eq!(retries.len(), 2);
    assert_eq!(retries[0]["error_kind"], "rate_limit");
}

#[test]
fn the_configured_retry_settings_decide_attempts_and_waits() {
    let server_error = || {
        ScriptedResponse::json(
            503,
            r#"{"type":"error","error":{"type":"overloaded_error","message":"busy"}}"#,
        )
    };
    let mut config = SessionConfig::new("anthropic", "claude-sonnet-4-5");
    config.retry = Some(agent_core::protocol::RetrySettings {
        max_retries: 4,
        base_delay_ms: 100,
        max_delay_ms: 300,
    });
    let mut h = Harness::with(
        FakeEnv::default(),
        config,
        vec![
            server_error(),
            server_error(),
            server_error(),
            server_error(),
            text_reply("fifth time lucky"),
        ],
    );
    assert_eq!(h.session.submit("x").unwrap().final_text, "fifth time lucky");
    let sleeps = h.host.sleeps.borrow().clone();
    assert_eq!(sleeps.len(), 4, "{sleeps:?}");
    // 100, 200, then the 300 ms cap, which the jitter does not pass either.
    assert!((50..=150).contains(&sleeps[0]), "{sleeps:?}");
    assert!(sleeps.iter().all(|&ms| ms <= 300), "{sleeps:?}");

    // No retries: the first failure ends the input.
    let mut config = SessionConfig::new("anthropic", "claude-sonnet-4-5");
    config.retry = Some(agent_core::protocol::RetrySettings {
        max_retries: 0,
        base_delay_ms: 100,
        max_delay_ms: 300,
    });
    let mut h = Harness::with(
        FakeEnv::default(),
        config,
        vec![server_error(), text_reply("never")],
    );
    assert!(h.session.submit("x").is_err());
    assert_eq!(h.transport.requests.borrow().len(), 1);

    // Settings out of bounds are refused before any request, naming the field.
    let mut config = SessionConfig::new("anthropic", "claude-sonnet-4-5");
    config.retry = Some(agent_core::protocol::RetrySettings {
        max_retries: 2,
        base_delay_ms: 5_000,
        max_delay_ms: 1_000,
    });
    let mut h = Harness::with(FakeEnv::default(), config, vec![text_reply("never")]);
    let error = h.session.submit("x").unwrap_err().to_string();
    assert!(error.contains("retry.base-delay-ms"), "{error}");
    assert!(h.transport.requests.borrow().is_empty());
}

#[test]
fn retries_give_up_after_the_policy_and_the_error_is_reported() {
    let server_error = || {
        ScriptedResponse::json(
            500,
            r#"{"type":"error","error":{"type":"api_error","message":"boom"}}"#,
        )
    };
    let mut h = Harness::new(vec![
        server_error(),
        server_error(),
        server_error(),
        text_reply("never"),
    ]);
    let error = h.session.submit("x").unwrap_err();
    assert!(
        matches!(&error, AgentError::Llm(m) if m.contains("boom")),
        "{error:?}"
    );
    assert_eq!(
        h.transport.requests.borrow().len(),
        3,
        "one attempt and two retries"
    );
    let sleeps = h.host.sleeps.borrow().clone();
    assert_eq!(sleeps.len(), 2);
    // Exponential backoff with jitter: 1 s then 2 s, each within +/- 50 %.
    assert!(
        (500..=1_500).contains(&sleeps[0]) && (1_000..=3_000).contains(&sleeps[1]),
        "{sleeps:?}"
    );
    // A transient failure ends the input, not the session: a server that failed three times
    // says nothing against the next input.
    assert_eq!(h.session.state(), SessionState::Idle);
    assert!(!h.host.kinds().contains(&EventKind::SessionEnd));
    assert_eq!(h.events_of(EventKind::Error)[0]["retryable"], true);
    assert_eq!(h.session.submit("again").unwrap().final_text, "never");
}

#[test]
fn a_stream_cut_mid_answer_ends_the_input_and_the_session_goes_on() {
    let mut cut = text_reply("a long answer that never finishes");
    cut.chunks.truncate(cut.chunks.len() / 2);
    cut.break_with = Some(agent_core::protocol::ports::TransportError::Io(
        "connection reset by peer".to_string(),
    ));
    let mut h = Harness::new(vec![cut, text_reply("second try")]);
    let error = h.session.submit("x").unwrap_err();
    assert!(
        matches!(&error, AgentError::Llm(m) if m.contains("connection reset")),
        "{error:?}"
    );
    assert_eq!(
        h.transport.requests.borrow().len(),
        1,
        "text was already shown: not retried"
    );
    assert_eq!(h.session.state(), SessionState::Idle);
    assert_eq!(h.session.submit("again").unwrap().final_text, "second try");
}
