//! Section 7 of the spec in agent-host: each subagent is its own instance of the core on its
//! own task, so children really run at the same time; their events join the parent's stream
//! tagged with their id; a child cannot spawn; closing the parent stops every child.
//! Parent and children share the scripted server: children's requests are recognised by
//! their system prompt's subagent section and served from their own queue.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests may panic

mod common;

use common::{agent_host, processes_with_after_kill, stderr, stdout};
use scripted_llm::anthropic::{Shape, message, message_shaped, text, tool_use};
use scripted_llm::{Reply, Route, Script, ScriptedServer};
use serde_json::{Value, json};
use std::time::Duration;

const CHILD_MARKER: &str = "You are a subagent";

async fn serve(parent: Vec<Reply>, children: Vec<Reply>) -> ScriptedServer {
    ScriptedServer::start_routed(
        Script {
            replies: parent,
            require_api_key: None,
        },
        vec![Route {
            marker: CHILD_MARKER.to_string(),
            replies: children,
        }],
    )
    .await
    .unwrap()
}

/// Runs the parent with `--json` and returns its events.
async fn run(server: &ScriptedServer, work: &std::path::Path) -> Vec<Value> {
    let output = agent_host()
        .args([
            "run",
            "Split the work",
            "--json",
            "--cwd",
            &work.display().to_string(),
        ])
        .env("ANTHROPIC_BASE_URL", server.base_url())
        .output()
        .await
        .unwrap();
    assert!(
        output.status.success(),
        "{}\n{}",
        stdout(&output),
        stderr(&output)
    );
    stdout(&output)
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect()
}

fn tool_end<'a>(events: &'a [Value], agent: Option<&str>, tool: &str) -> Vec<&'a Value> {
    events
        .iter()
        .filter(|e| e["kind"] == "TOOL_CALL_END" && e["data"]["tool_name"] == tool)
        .filter(|e| e.get("agent_id").and_then(Value::as_str) == agent)
        .collect()
}

/// A child's command: it leaves `me.here` and waits for `other.here`, so it ends well only if
/// the other child's command runs at the same time. Its 60 s of waiting at most guard against
/// a hang only: the two commands start within a second or two of each other.
fn meeting(id: &str, me: &str, other: &str) -> Reply {
    let command = format!(
        "touch {me}.here; for i in $(seq 600); do [ -f {other}.here ] && echo child-ok && exit 0; \
         sleep 0.1; done; exit 1"
    );
    message(&[tool_use(id, "shell", json!({ "command": command }))])
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_children_run_at_the_same_time_with_tagged_events() {
    let work = tempfile::tempdir().unwrap();
    let server = serve(
        vec![
            message(&[
                tool_use("s1", "spawn_agent", json!({"task": "Meet the other child"})),
                tool_use("s2", "spawn_agent", json!({"task": "Meet the other child too"})),
            ]),
            message(&[
                tool_use("w1", "wait", json!({"agent_id": "agent-1"})),
                tool_use("w2", "wait", json!({"agent_id": "agent-2"})),
            ]),
            message(&[text("Both children are done.")]),
        ],
        vec![
            meeting("c1", "first", "second"),
            meeting("c2", "second", "first"),
            message(&[text("Met.")]),
            message(&[text("Met.")]),
        ],
    )
    .await;
    let events = run(&server, work.path()).await;
    // Both children's commands ran, each reported under its own id, and each met the other:
    // both were running at one instant.
    for agent in ["agent-1", "agent-2"] {
        let shells = tool_end(&events, Some(agent), "shell");
        assert_eq!(shells.len(), 1, "{agent}: {events:#?}");
        let output = shells[0]["data"]["output"].as_str().unwrap_or_default();
        assert!(output.contains("child-ok"), "{agent}: {}", shells[0]);
        assert!(
            events
                .iter()
                .any(|e| e["kind"] == "SESSION_START" && e["agent_id"] == agent),
            "{agent} has no tagged SESSION_START"
        );
    }
    // The children's events reach the parent's stream as they happen, not when waited for:
    // both commands' starts come before either command's end.
    let position = |kind: &str, agent: &str| {
        events
            .iter()
            .position(|e| e["kind"] == kind && e["agent_id"] == agent && e["data"]["tool_name"] == "shell")
            .unwrap_or_else(|| panic!("no {kind} of {agent}'s command: {events:#?}"))
    };
    let starts = ["agent-1", "agent-2"].map(|agent| position("TOOL_CALL_START", agent));
    let ends = ["agent-1", "agent-2"].map(|agent| position("TOOL_CALL_END", agent));
    assert!(
        starts.into_iter().max() < ends.into_iter().min(),
        "a child's command ended before the other's started (events {starts:?}, then {ends:?})"
    );
    // The parent's last request carries both results.
    let last = server
        .requests()
        .into_iter()
        .rfind(|r| !r.body.contains(CHILD_MARKER))
        .unwrap();
    let results = last.tool_results();
    let waits: Vec<Value> = results[results.len() - 2..]
        .iter()
        .map(|r| serde_json::from_str(r["content"].as_str().unwrap()).unwrap())
        .collect();
    for (result, id) in waits.iter().zip(["agent-1", "agent-2"]) {
        assert_eq!(
            result,
            &json!({"agent_id": id, "status": "completed", "success": true, "turns_used": 2, "output": "Met."})
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_child_trying_to_spawn_is_refused_with_a_clear_error() {
    let work = tempfile::tempdir().unwrap();
    let server = serve(
        vec![
            message(&[tool_use("s1", "spawn_agent", json!({"task": "Delegate further"}))]),
            message(&[tool_use("w1", "wait", json!({"agent_id": "agent-1"}))]),
            message(&[text("ok")]),
        ],
        vec![
            message(&[tool_use("c1", "spawn_agent", json!({"task": "grandchild"}))]),
            message(&[text("Did it myself.")]),
        ],
    )
    .await;
    let events = run(&server, work.path()).await;
    let refused = tool_end(&events, Some("agent-1"), "spawn_agent");
    assert_eq!(refused.len(), 1, "{events:#?}");
    let error = refused[0]["data"]["error"].as_str().unwrap();
    assert!(
        error.contains(
            "subagents cannot spawn subagents of their own (this session is at depth 1 and the limit is 1)"
        ),
        "{error}"
    );
    let child_requests: Vec<_> = server
        .requests()
        .into_iter()
        .filter(|r| r.body.contains(CHILD_MARKER))
        .collect();
    assert_eq!(child_requests.len(), 2);
    assert_eq!(child_requests[1].tool_results()[0]["is_error"], true);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn closing_the_parent_leaves_no_child_running() {
    let work = tempfile::tempdir().unwrap();
    // The child's command is found by this mark: its pid is its PID namespace's.
    let mark = format!("subagent-left-behind-{}", std::process::id());
    let server = serve(
        vec![
            message(&[tool_use(
                "s1",
                "spawn_agent",
                json!({"task": "Run a long command", "working_dir": "sub"}),
            )]),
            // Once the child's command is running, the parent finishes without waiting.
            message(&[tool_use(
                "p1",
                "shell",
                json!({"command": "for i in $(seq 100); do [ -f sub/child.pid ] && exit 0; sleep 0.1; done; exit 1"}),
            )]),
            message(&[text("Leaving the child behind.")]),
        ],
        vec![message(&[tool_use(
            "c1",
            "shell",
            json!({"command": format!("echo started > child.pid; exec sh -c 'sleep 30; : {mark}'")}),
        )])],
    )
    .await;
    std::fs::create_dir(work.path().join("sub")).unwrap();
    let started = std::time::Instant::now();
    let events = run(&server, work.path()).await;
    // Guards against a hang only (the run takes a second or two): a parent that waited for
    // its child would take the child's 30 s.
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "{:?}",
        started.elapsed()
    );
    let waited_for_child = tool_end(&events, None, "shell");
    assert_eq!(waited_for_child[0]["data"]["error"], Value::Null, "{events:#?}");
    assert_eq!(
        processes_with_after_kill(&mark).await,
        [],
        "the child's command survived"
    );
    // The child ran scoped to sub/: its pid file is there, not at the top.
    assert!(!work.path().join("child.pid").exists());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn send_input_steers_a_running_child_and_gives_a_finished_one_new_work() {
    let work = tempfile::tempdir().unwrap();
    let server = serve(
        vec![
            message(&[tool_use("s1", "spawn_agent", json!({"task": "Count to three"}))]),
            message(&[tool_use(
                "m1",
                "send_input",
                json!({"agent_id": "agent-1", "message": "Also say STEERED"}),
            )]),
            message(&[tool_use("w1", "wait", json!({"agent_id": "agent-1"}))]),
            message(&[tool_use(
                "m2",
                "send_input",
                json!({"agent_id": "agent-1", "message": "Now count to four"}),
            )]),
            message(&[tool_use("w2", "wait", json!({"agent_id": "agent-1"}))]),
            message(&[text("Done.")]),
        ],
        vec![
            message(&[tool_use("c1", "shell", json!({"command": "sleep 2"}))]),
            message(&[text("1 2 3 STEERED")]),
            message(&[text("1 2 3 4")]),
        ],
    )
    .await;
    let events = run(&server, work.path()).await;
    let waits: Vec<Value> = tool_end(&events, None, "wait")
        .iter()
        .map(|e| serde_json::from_str(e["data"]["output"].as_str().unwrap()).unwrap())
        .collect();
    assert_eq!(waits[0]["output"], "1 2 3 STEERED");
    assert_eq!(waits[1]["output"], "1 2 3 4");
    let child_requests: Vec<String> = server
        .requests()
        .into_iter()
        .filter(|r| r.body.contains(CHILD_MARKER))
        .map(|r| r.body)
        .collect();
    assert_eq!(child_requests.len(), 3);
    // The steering reached the running child's conversation; the second input is a new turn.
    assert!(child_requests[1].contains("Also say STEERED") || child_requests[0].contains("Also say STEERED"));
    assert!(child_requests[2].contains("Now count to four"));
}

/// A budget bounds the session and its subagents together. Every reply reports
/// 20,042 tokens (more than the estimate each request reserves, so the reported figures
/// decide). Alone, the parent and its child would each spend 40,084 before their third
/// request, under the 50,000 budget, and answer; together they pass it, so neither sends its
/// third request, however their requests interleave (the parent checks after its wait, once
/// the child is done; the child's third check comes after the parent's first request and
/// its own two).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_token_budget_bounds_the_parent_and_its_subagents_together() {
    let work = tempfile::tempdir().unwrap();
    let shaped = |blocks: &[scripted_llm::anthropic::Block]| {
        message_shaped(
            blocks,
            Shape {
                input_tokens: 20_000,
                ..Shape::API
            },
        )
    };
    let server = serve(
        vec![
            shaped(&[tool_use("s1", "spawn_agent", json!({"task": "Look around"}))]),
            shaped(&[tool_use("w1", "wait", json!({"agent_id": "agent-1"}))]),
            shaped(&[text("Never sent: the budget is spent.")]),
        ],
        vec![
            shaped(&[tool_use("c1", "shell", json!({"command": "true"}))]),
            shaped(&[tool_use("c2", "shell", json!({"command": "true"}))]),
            shaped(&[text("Never sent either.")]),
        ],
    )
    .await;
    let output = agent_host()
        .args([
            "run",
            "Split the work",
            "--json",
            "--max-tokens",
            "50000",
            "--cwd",
        ])
        .arg(work.path())
        .env("ANTHROPIC_BASE_URL", server.base_url())
        .output()
        .await
        .unwrap();
    assert_eq!(output.status.code(), Some(3), "{}", stderr(&output));
    let events: Vec<Value> = stdout(&output)
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    let limits = |agent: Option<&str>| -> Vec<&Value> {
        events
            .iter()
            .filter(|e| e["kind"] == "TURN_LIMIT")
            .filter(|e| e.get("agent_id").and_then(Value::as_str) == agent)
            .collect()
    };
    let parent = limits(None);
    assert_eq!(parent.len(), 1, "{events:#?}");
    assert_eq!(parent[0]["data"]["limit"], "max_session_tokens");
    assert!(parent[0]["data"]["value"].as_u64().unwrap() >= 50_000);
    let requests = server.requests();
    let (children, parents): (Vec<_>, Vec<_>) = requests.iter().partition(|r| r.body.contains(CHILD_MARKER));
    assert!(
        (1..=2).contains(&parents.len()),
        "the parent's last request was never sent: {}",
        parents.len()
    );
    assert!(
        children.len() <= 2,
        "the child's last request was never sent: {}",
        children.len()
    );
}
