//! Usage and cost added up per input and per session, reported with PROCESSING_END and
//! kept across a snapshot.

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

fn tool_with_usage(id: &str, input_tokens: u64) -> agent_test_support::fakes::ScriptedResponse {
    blocks_reply_with_usage(
        &[json!({"type": "tool_use", "id": id, "name": "shell", "input": {"command": "true"}})],
        input_tokens,
    )
}

#[test]
fn a_token_budget_stops_the_input_before_the_request_that_would_pass_it() {
    let mut config = SessionConfig::new("anthropic", "m");
    config.limits.max_session_tokens = 1_500;
    let mut h = Harness::with(
        FakeEnv::default(),
        config,
        vec![
            tool_with_usage("t1", 1_000),
            tool_with_usage("t2", 1_000),
            reply("never", 1),
        ],
    );
    let outcome = h.session.submit("work").unwrap();
    assert_eq!(outcome.stop_reason, agent_core::StopReason::TurnLimit);
    assert_eq!(
        h.transport.requests.borrow().len(),
        2,
        "no request once 2,010 tokens were used"
    );
    let limits = h.events_of(EventKind::TurnLimit);
    assert_eq!(limits[0], json!({"limit": "max_session_tokens", "value": 2_010}));
    // The budget is the session's: the next input stops at once.
    assert_eq!(
        h.session.submit("more").unwrap().stop_reason,
        agent_core::StopReason::TurnLimit
    );
    assert_eq!(h.transport.requests.borrow().len(), 2);
}

#[test]
fn a_cost_budget_stops_at_the_catalogs_prices_and_needs_a_priced_model() {
    // Claude Sonnet 4.5: 2,000 prompt tokens at $3 per million are $0.006 a request.
    let mut config = SessionConfig::new("anthropic", "claude-sonnet-4-5");
    config.limits.max_cost_cents = 1.0;
    let mut h = Harness::with(
        FakeEnv::default(),
        config,
        vec![
            tool_with_usage("t1", 2_000),
            tool_with_usage("t2", 2_000),
            reply("never", 1),
        ],
    );
    assert_eq!(
        h.session.submit("work").unwrap().stop_reason,
        agent_core::StopReason::TurnLimit
    );
    assert_eq!(h.transport.requests.borrow().len(), 2);
    assert_eq!(
        h.events_of(EventKind::TurnLimit)[0],
        json!({"limit": "max_cost_cents", "value": 2})
    );

    // A budget under a cent ($0.004) is one: the first request's 0.6 cents pass it.
    let mut config = SessionConfig::new("anthropic", "claude-sonnet-4-5");
    config.limits.max_cost_cents = 0.4;
    let mut h = Harness::with(
        FakeEnv::default(),
        config,
        vec![tool_with_usage("t1", 2_000), reply("never", 1)],
    );
    assert_eq!(
        h.session.submit("work").unwrap().stop_reason,
        agent_core::StopReason::TurnLimit
    );
    assert_eq!(h.transport.requests.borrow().len(), 1);

    let mut unpriced = SessionConfig::new("anthropic", "my-private-model");
    unpriced.limits.max_cost_cents = 100.0;
    let mut h = Harness::with(FakeEnv::default(), unpriced, vec![reply("never", 1)]);
    let error = h.session.submit("work").unwrap_err();
    assert!(
        error.to_string().contains("no price for \"my-private-model\""),
        "{error}"
    );
    assert!(h.transport.requests.borrow().is_empty());
}

#[test]
fn what_the_subagents_spent_counts_against_the_budget_and_a_snapshot_keeps_it() {
    let mut config = SessionConfig::new("anthropic", "m");
    config.limits.max_session_tokens = 5_000;
    let mut h = Harness::with(
        FakeEnv::default(),
        config,
        vec![tool_with_usage("t1", 1_000), reply("never", 1)],
    );
    // The session's subagents have spent 4,000 tokens of the tree's budget (the host keeps
    // the tree's total, see `SessionHost::spend`).
    h.host.spending.set(agent_core::protocol::Spending {
        tokens: 4_000,
        cost_usd: 0.0,
    });
    let outcome = h.session.submit("work").unwrap();
    assert_eq!(outcome.stop_reason, agent_core::StopReason::TurnLimit);
    assert_eq!(
        h.transport.requests.borrow().len(),
        1,
        "1,005 tokens of its own, but 5,005 with its subagents'"
    );
    assert_eq!(
        h.events_of(EventKind::TurnLimit)[0],
        json!({"limit": "max_session_tokens", "value": 5_005})
    );
    assert_eq!(
        h.host.spending.get().tokens,
        5_005,
        "its request was added to the tree's"
    );

    // Restored in a host that knows nothing of it, the tree's spending goes on from the
    // snapshot: the budget is still spent.
    let fresh = Rc::new(agent_test_support::fakes::RecordingHost::default());
    let mut restored = Session::restore(
        &h.session.snapshot(),
        ports(h.env.clone(), h.transport.clone(), fresh.clone()),
    )
    .unwrap();
    assert_eq!(fresh.spending.get().tokens, 5_005);
    assert_eq!(
        restored.submit("more").unwrap().stop_reason,
        agent_core::StopReason::TurnLimit
    );
    assert_eq!(h.transport.requests.borrow().len(), 1);
}

#[test]
fn a_request_cut_short_still_counts_its_prompt_and_a_finished_one_its_reported_usage() {
    let mut cut = reply("a long answer that never finishes", 1_000);
    cut.chunks.truncate(cut.chunks.len() / 2);
    cut.break_with = Some(agent_core::protocol::ports::TransportError::Io(
        "connection reset by peer".to_string(),
    ));
    let mut h = Harness::with(
        FakeEnv::default(),
        SessionConfig::new("anthropic", "m"),
        vec![cut, reply("done", 1_000)],
    );
    // What the cut request reserved: its estimate at four characters a token, 10,000 for the
    // input and about 2,000 for the system prompt and the tools (counted from the first
    // request on).
    assert!(h.session.submit(&"x".repeat(40_000)).is_err());
    let after_cut = h.host.spending.get().tokens;
    assert!((11_500..13_000).contains(&after_cut), "{after_cut}");
    // A finished request's reservation is settled at the usage reported: 1,005 tokens.
    h.session.submit("again").unwrap();
    assert_eq!(h.host.spending.get().tokens, after_cut + 1_005);
}

#[test]
fn a_refused_request_gives_its_reservation_back() {
    let refused = agent_test_support::fakes::ScriptedResponse::json(
        401,
        r#"{"type":"error","error":{"type":"authentication_error","message":"bad key"}}"#,
    );
    let mut h = Harness::with(
        FakeEnv::default(),
        SessionConfig::new("anthropic", "m"),
        vec![refused],
    );
    assert!(h.session.submit(&"x".repeat(40_000)).is_err());
    assert_eq!(h.host.spending.get().tokens, 0, "nothing was generated");
}

#[test]
fn a_resumed_session_counts_the_trees_spending_once_with_a_fresh_or_a_kept_total() {
    let mut h = Harness::with(
        FakeEnv::default(),
        SessionConfig::new("anthropic", "m"),
        vec![reply("one", 1_000), reply("two", 2_000)],
    );
    h.session.submit("first").unwrap();
    let snapshot = h.session.snapshot();
    let journaled = h.host.journal.borrow().len();
    h.session.submit("second").unwrap();
    let journal: Vec<String> = h.host.journal.borrow()[journaled..]
        .iter()
        .map(|entry| entry.to_json())
        .collect();
    assert_eq!(h.host.spending.get().tokens, 3_010);
    let request = agent_core::ResumeRequest {
        snapshot,
        journal,
        model: None,
        more_turns: None,
    };
    // A fresh host (a new process): the snapshot's 1,005 and the replayed 2,005, once.
    let fresh = Rc::new(agent_test_support::fakes::RecordingHost::default());
    Session::resume(&request, ports(h.env.clone(), h.transport.clone(), fresh.clone())).unwrap();
    assert_eq!(fresh.spending.get().tokens, 3_010);
    // The host that kept the tree's total (an instance restarted in the same process).
    Session::resume(
        &request,
        ports(h.env.clone(), h.transport.clone(), h.host.clone()),
    )
    .unwrap();
    assert_eq!(h.host.spending.get().tokens, 3_010);
}
