//! The plan tool: `update_plan` replaces the model's checklist, reaches the host
//! as a PLAN_UPDATED event between the call's start and end, and answers the model with one
//! line; a malformed plan is an error result the model can correct. Offered by the hosted
//! profiles (as codex, Claude Code and gemini-cli offer theirs), not the compact one.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests may panic

mod common;

use agent_core::{EventKind, SessionConfig};
use common::{Harness, text_reply, tool_reply};
use serde_json::json;

#[test]
fn the_plan_reaches_the_host_as_an_event_and_the_model_gets_one_line() {
    let plan = json!({
        "explanation": "Parser first.",
        "plan": [
            {"step": "Read the parser", "status": "completed"},
            {"step": "Fix the escapes", "status": "in_progress"},
            {"step": "Run the tests", "status": "pending"}
        ]
    });
    let bad =
        json!({"plan": [{"step": "a", "status": "in_progress"}, {"step": "b", "status": "in_progress"}]});
    let mut h = Harness::new(vec![
        tool_reply(&[("p1", "update_plan", plan.clone()), ("p2", "update_plan", bad)]),
        text_reply("Done."),
    ]);
    h.session.submit("fix the parser").unwrap();
    let events = h.events_of(EventKind::PlanUpdated);
    assert_eq!(events, [plan], "one event, for the valid plan only");
    let results = h.tool_results(1);
    assert_eq!(
        results[0]["content"],
        "Plan updated: 1 of 3 steps done; now: Fix the escapes"
    );
    assert_eq!(results[1]["is_error"], true);
    assert!(
        results[1]["content"]
            .as_str()
            .unwrap()
            .contains("at most one step is in_progress")
    );
    // The event comes between the call's start and its end.
    let kinds: Vec<EventKind> = h.host.events.borrow().iter().map(|e| e.kind()).collect();
    let at = |kind| kinds.iter().position(|k| *k == kind).unwrap();
    assert!(at(EventKind::ToolCallStart) < at(EventKind::PlanUpdated));
    assert!(at(EventKind::PlanUpdated) < at(EventKind::ToolCallEnd));
}

#[test]
fn the_hosted_profiles_offer_it_and_the_compact_one_does_not() {
    for (provider, offered) in [
        ("anthropic", true),
        ("openai", true),
        ("gemini", true),
        ("compact", false),
    ] {
        let mut config = SessionConfig::new(provider, "m");
        config.protocol = agent_core::llm::WireProtocol::AnthropicMessages;
        let mut h = Harness::with(Default::default(), config, vec![text_reply("ok")]);
        h.session.submit("hi").unwrap();
        let body = &h.transport.request_bodies()[0];
        let names: Vec<&str> = body["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["name"].as_str().unwrap())
            .collect();
        assert_eq!(names.contains(&"update_plan"), offered, "{provider}: {names:?}");
    }
}
