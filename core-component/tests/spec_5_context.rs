//! Section 5.5 of the spec and appendix B: context-window awareness and the context-length
//! error, run natively over in-memory fakes.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests may panic

mod common;

use agent_core::{EventKind, SessionConfig, SessionState, StopReason};
use agent_test_support::fakes::{FakeEnv, ScriptedResponse};
use common::{Harness, blocks_reply_with_usage, text_reply};
use serde_json::json;

fn text_with_usage(text: &str, input_tokens: u64) -> ScriptedResponse {
    blocks_reply_with_usage(&[json!({"type": "text", "text": text})], input_tokens)
}

fn warnings(h: &Harness, kind: &str) -> Vec<serde_json::Value> {
    h.events_of(EventKind::Warning)
        .into_iter()
        .filter(|w| w["kind"] == kind)
        .collect()
}

#[test]
fn crossing_80_percent_of_the_window_warns_once_using_provider_tokens() {
    let mut h = Harness::new(vec![
        text_with_usage("small", 100_000),
        text_with_usage("big", 170_000),
        text_with_usage("bigger", 180_000),
    ]);
    h.session.submit("one").unwrap();
    assert!(warnings(&h, "context_usage").is_empty(), "50 % is fine");
    h.session.submit("two").unwrap();
    h.session.submit("three").unwrap();
    let found = warnings(&h, "context_usage");
    assert_eq!(found.len(), 1, "not repeated every round: {found:?}");
    // 170,000 prompt + 5 output tokens of a 200,000 window.
    assert_eq!(found[0]["message"], "Context usage at ~85% of context window");
    assert_eq!(found[0]["source"], "provider");
    assert_eq!(found[0]["context_window"], 200_000);
}

#[test]
fn without_provider_usage_the_estimate_is_characters_over_four() {
    let mut config = SessionConfig::new("anthropic", "m");
    config.context_window_size = Some(1_000);
    // Usage 0 means the provider reported nothing: the history is 3,400+ characters.
    let mut h = Harness::with(
        FakeEnv::default(),
        config,
        vec![text_with_usage(&"x".repeat(3_400), 0)],
    );
    h.session.submit("hello").unwrap();
    let found = warnings(&h, "context_usage");
    assert_eq!(found.len(), 1);
    assert_eq!(found[0]["source"], "estimate");
    assert_eq!(found[0]["tokens"], 851);
}

#[test]
fn a_context_length_error_warns_and_leaves_the_session_usable() {
    let overflow = ScriptedResponse::json(
        400,
        r#"{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 210000 tokens > 200000 maximum"}}"#,
    );
    let mut h = Harness::new(vec![overflow, text_reply("fits now")]);
    let outcome = h.session.submit("huge").unwrap();
    assert_eq!(outcome.stop_reason, StopReason::ContextLength);
    assert_eq!(h.session.state(), SessionState::Idle);
    let found = warnings(&h, "context_length");
    assert_eq!(found.len(), 1);
    assert!(
        found[0]["message"]
            .as_str()
            .unwrap()
            .contains("prompt is too long")
    );
    assert!(h.events_of(EventKind::Error).is_empty());
    assert_eq!(h.transport.requests.borrow().len(), 1, "not retried");

    let next = h.session.submit("smaller").unwrap();
    assert_eq!(next.stop_reason, StopReason::Completed);
}
