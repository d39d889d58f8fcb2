//! Section 7 of the spec in the core: the subagent tools of every profile, the requests they
//! make of the host, the depth limit, and a child's prompt. Concurrency of real children is
//! the host's part (host/spec_7_subagents).

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests may panic

mod common;

use agent_core::SessionConfig;
use agent_core::ports::SubagentRequest;
use agent_test_support::fakes::FakeEnv;
use common::{Harness, text_reply, tool_reply};
use serde_json::{Value, json};

fn result_text(result: &Value) -> String {
    match &result["content"] {
        Value::String(s) => s.clone(),
        Value::Array(blocks) => blocks.iter().filter_map(|b| b["text"].as_str()).collect(),
        other => other.to_string(),
    }
}

#[test]
fn every_profile_has_the_four_subagent_tools() {
    for provider in ["anthropic", "openai", "gemini"] {
        let config = SessionConfig::new(provider, "m");
        let profile = agent_core::profile::Profile::for_config(&config);
        let names: Vec<String> = profile.tools().into_iter().map(|t| t.name.clone()).collect();
        for tool in ["spawn_agent", "send_input", "wait", "close_agent"] {
            assert!(
                names.contains(&tool.to_string()),
                "{provider} lacks {tool}: {names:?}"
            );
        }
    }
}

#[test]
fn spawn_send_wait_and_close_go_to_the_host_and_results_come_back() {
    let mut h = Harness::new(vec![
        tool_reply(&[(
            "s1",
            "spawn_agent",
            json!({"task": "count the tests", "working_dir": "crates/a", "model": "small", "max_turns": 5}),
        )]),
        tool_reply(&[
            (
                "m1",
                "send_input",
                json!({"agent_id": "agent-1", "message": "only unit tests"}),
            ),
            ("w1", "wait", json!({"agent_id": "agent-1"})),
            ("c1", "close_agent", json!({"agent_id": "agent-1"})),
        ]),
        text_reply("done"),
    ]);
    h.session.submit("delegate").unwrap();
    let id = h.session.id().to_string();
    assert_eq!(
        *h.host.subagents.borrow(),
        [SubagentRequest {
            parent_session_id: id,
            task: "count the tests".into(),
            working_dir: Some("crates/a".into()),
            model: Some("small".into()),
            max_turns: 5,
            depth: 1,
        }]
    );
    let spawned = result_text(&h.tool_results(1)[0]);
    assert!(
        spawned.contains("Spawned subagent agent-1 (status: running"),
        "{spawned}"
    );
    // The third request carries the whole history: the last three results are the round's.
    let all = h.tool_results(2);
    let results = &all[all.len() - 3..];
    assert_eq!(result_text(&results[0]), "Sent to subagent agent-1.");
    let waited: Value = serde_json::from_str(&result_text(&results[1])).unwrap();
    assert_eq!(
        waited,
        json!({"agent_id": "agent-1", "status": "completed", "success": true, "turns_used": 1,
               "output": "done: count the tests"})
    );
    assert_eq!(result_text(&results[2]), "Closed subagent agent-1.");
    assert_eq!(
        *h.host.subagent_messages.borrow(),
        [("agent-1".to_string(), "only unit tests".to_string())]
    );
    assert_eq!(*h.host.closed_subagents.borrow(), ["agent-1"]);
}

#[test]
fn a_subagent_cannot_spawn_one_of_its_own() {
    let mut config = SessionConfig::new("anthropic", "m");
    config.depth = 1;
    let mut h = Harness::with(
        FakeEnv::default(),
        config,
        vec![
            tool_reply(&[("s1", "spawn_agent", json!({"task": "recurse"}))]),
            text_reply("fine, myself"),
        ],
    );
    h.session.submit("go").unwrap();
    let result = &h.tool_results(1)[0];
    assert_eq!(result["is_error"], true);
    let text = result_text(result);
    assert!(
        text.contains(
            "subagents cannot spawn subagents of their own (this session is at depth 1 and the limit is 1)"
        ),
        "{text}"
    );
    assert!(h.host.subagents.borrow().is_empty());
}

#[test]
fn an_unknown_agent_id_is_an_error_the_model_reads() {
    let mut h = Harness::new(vec![
        tool_reply(&[("w1", "wait", json!({"agent_id": "agent-9"}))]),
        text_reply("ok"),
    ]);
    h.session.submit("go").unwrap();
    let result = &h.tool_results(1)[0];
    assert_eq!(result["is_error"], true);
    assert!(result_text(result).contains("no subagent agent-9"));
}

#[test]
fn a_childs_prompt_tells_it_its_scope_and_what_to_report() {
    let prompt = |depth: u32| {
        let mut config = SessionConfig::new("anthropic", "m");
        config.depth = depth;
        let mut h = Harness::with(FakeEnv::default(), config, vec![text_reply("hi")]);
        h.session.submit("go").unwrap();
        let body = &h.transport.request_bodies()[0];
        body["system"][0]["text"].as_str().unwrap().to_string()
    };
    let child = prompt(1);
    assert!(child.contains("<subagent>\nYou are a subagent"), "{child}");
    assert!(child.contains("Your scope is your working directory"), "{child}");
    assert!(!prompt(0).contains("<subagent>"));
}
