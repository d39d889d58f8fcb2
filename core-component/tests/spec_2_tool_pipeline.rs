//! Section 2.5 / 3.8 of the spec: the tool pipeline of a round (registry, schema validation,
//! approval, execution, parallel calls), run natively over in-memory fakes.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests may panic

mod common;

use agent_core::llm::ToolDefinition;
use agent_core::ports::ExecResult;
use agent_core::{EventKind, SessionConfig, StopReason};
use agent_test_support::fakes::FakeEnv;
use common::{Harness, text_reply, tool_reply};
use serde_json::json;

fn shell(id: &str, command: &str) -> (String, String, serde_json::Value) {
    (id.to_string(), "shell".to_string(), json!({"command": command}))
}

fn reply(calls: &[(String, String, serde_json::Value)]) -> agent_test_support::fakes::ScriptedResponse {
    let refs: Vec<(&str, &str, serde_json::Value)> = calls
        .iter()
        .map(|(id, name, args)| (id.as_str(), name.as_str(), args.clone()))
        .collect();
    tool_reply(&refs)
}

#[test]
fn parallel_calls_spawn_every_command_before_waiting_for_any() {
    let calls = [
        shell("a", "sleep 1"),
        shell("b", "sleep 1"),
        shell("c", "sleep 1"),
    ];
    let mut h = Harness::new(vec![reply(&calls), text_reply("done")]);
    h.session.submit("three sleeps").unwrap();
    assert_eq!(
        *h.env.process_log.borrow(),
        [
            "spawn sleep 1",
            "spawn sleep 1",
            "spawn sleep 1",
            "wait sleep 1",
            "wait sleep 1",
            "wait sleep 1"
        ]
    );
    // Results come back in the calls' order, whatever order the processes end in.
    let ids: Vec<_> = h
        .tool_results(1)
        .iter()
        .map(|r| r["tool_use_id"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(ids, ["a", "b", "c"]);
}

#[test]
fn without_parallel_support_each_call_finishes_before_the_next_starts() {
    let mut config = SessionConfig::new("anthropic", "m");
    config.parallel_tool_calls = Some(false);
    let calls = [shell("a", "one"), shell("b", "two")];
    let mut h = Harness::with(
        FakeEnv::default(),
        config,
        vec![reply(&calls), text_reply("done")],
    );
    h.session.submit("go").unwrap();
    assert_eq!(
        *h.env.process_log.borrow(),
        ["spawn one", "wait one", "spawn two", "wait two"]
    );
}

#[test]
fn each_call_gets_start_deltas_and_end_events_with_its_own_output() {
    let env = FakeEnv::new(Box::new(|req| ExecResult {
        stdout: format!("out of {}\n", req.command),
        stderr: "warn\n".to_string(),
        ..ExecResult::default()
    }));
    let calls = [shell("a", "first"), shell("b", "second")];
    let mut h = Harness::with(
        env,
        SessionConfig::new("anthropic", "m"),
        vec![reply(&calls), text_reply("done")],
    );
    h.session.submit("go").unwrap();
    let deltas = h.events_of(EventKind::ToolCallOutputDelta);
    let of = |id: &str| -> Vec<(String, String)> {
        deltas
            .iter()
            .filter(|d| d["call_id"] == id)
            .map(|d| {
                (
                    d["stream"].as_str().unwrap().to_string(),
                    d["delta"].as_str().unwrap().to_string(),
                )
            })
            .collect()
    };
    assert_eq!(
        of("b"),
        [
            ("stdout".to_string(), "out of second\n".to_string()),
            ("stderr".to_string(), "warn\n".to_string())
        ]
    );
    let ends = h.events_of(EventKind::ToolCallEnd);
    assert_eq!(ends.len(), 2);
    assert!(
        ends[0]["output"]
            .as_str()
            .unwrap()
            .starts_with("out of first\nwarn\n")
    );
    assert!(ends[1]["output"].as_str().unwrap().starts_with("out of second\n"));
}

#[test]
fn invalid_arguments_are_rejected_before_approval_and_name_the_field() {
    let mut h = Harness::new(vec![
        tool_reply(&[("t1", "shell", json!({"command": "ls", "timeout_ms": "ten"}))]),
        text_reply("fixed"),
    ]);
    h.session.submit("go").unwrap();
    let result = &h.tool_results(1)[0];
    assert_eq!(result["is_error"], true);
    let text = result["content"].as_str().unwrap();
    assert!(
        text.starts_with("Invalid arguments for tool shell: argument `timeout_ms`"),
        "{text}"
    );
    assert!(
        h.host.approvals.borrow().is_empty(),
        "not asked to approve an invalid call"
    );
    assert!(h.env.spawned.borrow().is_empty());
}

#[test]
fn a_denied_call_is_not_run_and_tells_the_model_why() {
    let mut h = Harness::new(vec![
        tool_reply(&[("t1", "shell", json!({"command": "rm -rf build"}))]),
        text_reply("ok, I will not"),
    ]);
    h.host.denied_tools.borrow_mut().push("shell".to_string());
    let outcome = h.session.submit("clean up").unwrap();
    assert_eq!(outcome.stop_reason, StopReason::Completed);
    let approvals = h.host.approvals.borrow();
    assert_eq!(approvals.len(), 1);
    assert_eq!(approvals[0].summary, "run `rm -rf build`");
    assert!(h.env.spawned.borrow().is_empty(), "a denied command never starts");
    let result = &h.tool_results(1)[0];
    assert_eq!(result["is_error"], true);
    assert_eq!(
        result["content"],
        "The user denied this shell call: denied by test policy"
    );
}

#[test]
fn a_custom_tool_with_a_profile_tools_name_replaces_it() {
    let mut config = SessionConfig::new("anthropic", "m");
    config.host_tools.push(ToolDefinition {
        name: "shell".to_string(),
        description: "A sandboxed shell provided by the host.".to_string(),
        parameters: json!({"type": "object", "properties": {"command": {"type": "string"}}, "required": ["command"]}),
    });
    let mut h = Harness::with(
        FakeEnv::default(),
        config,
        vec![
            tool_reply(&[("t1", "shell", json!({"command": "ls"}))]),
            text_reply("done"),
        ],
    );
    h.session.submit("go").unwrap();
    let request = &h.transport.request_bodies()[0];
    let shells: Vec<_> = request["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|t| t["name"] == "shell")
        .collect();
    assert_eq!(shells.len(), 1, "one tool per name");
    assert_eq!(
        shells[0]["description"],
        "A sandboxed shell provided by the host."
    );
    assert!(
        h.env.spawned.borrow().is_empty(),
        "the host's tool ran, not the builtin"
    );
    assert_eq!(
        h.tool_results(1)[0]["content"],
        r#"shell called with {"command":"ls"}"#
    );
}

#[test]
fn a_host_tool_with_an_invalid_schema_fails_its_calls_with_the_reason() {
    let mut config = SessionConfig::new("anthropic", "m");
    config.host_tools.push(ToolDefinition {
        name: "deploy".to_string(),
        description: "Deploys.".to_string(),
        parameters: json!({"type": "object", "properties": {"target": {"type": 42}}}),
    });
    let mut h = Harness::with(
        FakeEnv::default(),
        config,
        vec![
            tool_reply(&[("t1", "deploy", json!({"target": "prod"}))]),
            text_reply("done"),
        ],
    );
    h.session.submit("go").unwrap();
    let result = &h.tool_results(1)[0];
    assert_eq!(result["is_error"], true);
    assert!(
        result["content"]
            .as_str()
            .unwrap()
            .contains("the parameter schema of deploy is invalid"),
        "{result}"
    );
}
