//! The loop over the OpenAI Responses API: failures reported inside an HTTP 200 stream are
//! classified like HTTP errors (retried, or a context warning), natively over fakes.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests may panic

mod common;

use agent_core::llm::WireProtocol;
use agent_core::{EventKind, SessionConfig, SessionState, StopReason};
use agent_test_support::fakes::{FakeEnv, ScriptedResponse};
use common::Harness;
use serde_json::{Value, json};

fn events(list: &[Value]) -> ScriptedResponse {
    let body: String = list
        .iter()
        .map(|e| format!("event: {}\ndata: {e}\n\n", e["type"].as_str().unwrap()))
        .collect();
    ScriptedResponse::sse(&body, 13)
}

fn failed(code: &str, message: &str) -> ScriptedResponse {
    events(&[
        json!({"type": "response.created", "response": {"id": "resp_1", "status": "in_progress"}}),
        json!({"type": "response.failed", "response": {"id": "resp_1", "status": "failed", "error": {"code": code, "message": message}}}),
    ])
}

fn answer(text: &str) -> ScriptedResponse {
    let item = json!({"type": "message", "id": "msg_1", "role": "assistant", "content": [{"type": "output_text", "text": text}]});
    events(&[
        json!({"type": "response.created", "response": {"id": "resp_2", "model": "gpt-test", "status": "in_progress"}}),
        json!({"type": "response.output_item.added", "output_index": 0, "item": {"type": "message", "id": "msg_1", "content": []}}),
        json!({"type": "response.output_text.delta", "item_id": "msg_1", "delta": text}),
        json!({"type": "response.output_item.done", "output_index": 0, "item": item}),
        json!({"type": "response.completed", "response": {"id": "resp_2", "status": "completed", "usage": {"input_tokens": 30, "output_tokens": 4}}}),
    ])
}

fn harness(replies: Vec<ScriptedResponse>) -> Harness {
    let mut config = SessionConfig::new("openai", "gpt-test");
    config.protocol = WireProtocol::OpenaiResponses;
    Harness::with(FakeEnv::default(), config, replies)
}

#[test]
fn a_rate_limit_inside_the_stream_is_retried_after_the_delay_in_its_message() {
    let mut h = harness(vec![
        failed(
            "rate_limit_exceeded",
            "Rate limit reached for gpt-test. Please try again in 1.5s. Visit ...",
        ),
        answer("Hello"),
    ]);
    let outcome = h.session.submit("hi").unwrap();
    assert_eq!(outcome.final_text, "Hello");
    assert_eq!(*h.host.sleeps.borrow(), [1_500]);
    assert_eq!(h.transport.requests.borrow()[0].path, "/v1/responses");
    assert_eq!(h.events_of(EventKind::AssistantTextDelta)[0]["delta"], "Hello");
}

#[test]
fn a_context_overflow_inside_the_stream_is_a_warning_and_a_quota_error_is_final() {
    let mut h = harness(vec![failed(
        "context_length_exceeded",
        "Your input exceeds the context window of this model.",
    )]);
    let outcome = h.session.submit("huge").unwrap();
    assert_eq!(outcome.stop_reason, StopReason::ContextLength);
    assert_eq!(h.session.state(), SessionState::Idle);

    let mut h = harness(vec![failed(
        "insufficient_quota",
        "You exceeded your current quota.",
    )]);
    let error = h.session.submit("x").unwrap_err();
    assert!(
        error.to_string().contains("You exceeded your current quota"),
        "{error}"
    );
    assert_eq!(
        h.transport.requests.borrow().len(),
        1,
        "a quota error is not retried"
    );
    assert_eq!(h.session.state(), SessionState::Closed);
}
