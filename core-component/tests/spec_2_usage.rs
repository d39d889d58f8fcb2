//! Issue 22: usage and cost added up per input and per session, reported with
//! PROCESSING_END and kept across a snapshot.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests may panic

mod common;

use agent_core::{EventKind, Session, SessionConfig};
use agent_test_support::fakes::{FakeEnv, ports};
use common::{Harness, blocks_reply_with_usage};
use serde_json::{Value, json};
use std::rc::Rc;

fn reply(text: &str, input_tokens: u64) -> agent_test_support::fakes::ScriptedResponse {
    blocks_reply_with_usage(&[json!({"type": "text", "text": text})], input_tokens)
}

fn ends(h: &Harness) -> Vec<Value> {
    h.events_of(EventKind::ProcessingEnd)
}

#[test]
fn processing_end_adds_up_the_input_and_the_session_at_the_catalogs_prices() {
    // Claude Sonnet 4.5: $3 in, $15 out per million; each reply reports 5 output tokens.
    let mut h = Harness::with(
        FakeEnv::default(),
        SessionConfig::new("anthropic", "claude-sonnet-4-5"),
        vec![reply("one", 1_000), reply("two", 2_000)],
    );
    h.session.submit("first").unwrap();
    h.session.submit("second").unwrap();
    let ends = ends(&h);
    let cost = |tokens_in: f64, tokens_out: f64| (tokens_in * 3.0 + tokens_out * 15.0) / 1e6;
    let first = &ends[0]["usage"];
    assert_eq!(first["requests"], 1);
    assert_eq!(first["prompt_tokens"], 1_000);
    assert_eq!(first["output_tokens"], 5);
    assert!((first["cost_usd"].as_f64().unwrap() - cost(1_000.0, 5.0)).abs() < 1e-12);
    assert_eq!(ends[1]["usage"]["prompt_tokens"], 2_000, "the input's own");
    let session = &ends[1]["session_usage"];
    assert_eq!(session["requests"], 2);
    assert_eq!(session["prompt_tokens"], 3_000);
    assert!((session["cost_usd"].as_f64().unwrap() - cost(3_000.0, 10.0)).abs() < 1e-12);

    // A snapshot keeps the session's totals.
    let restored = Session::restore(
        &h.session.snapshot(),
        ports(h.env.clone(), h.transport.clone(), Rc::new(Default::default())),
    )
    .unwrap();
    let saved: Value = serde_json::from_str(&restored.snapshot()).unwrap();
    assert_eq!(saved["session_usage"]["prompt_tokens"], 3_000);
}

#[test]
fn a_model_without_a_price_has_token_totals_and_no_cost() {
    let mut h = Harness::with(
        FakeEnv::default(),
        SessionConfig::new("anthropic", "my-private-model"),
        vec![reply("one", 1_000)],
    );
    h.session.submit("first").unwrap();
    let usage = &ends(&h)[0]["usage"];
    assert_eq!(usage["prompt_tokens"], 1_000);
    assert!(usage["cost_usd"].is_null(), "{usage}");
}
