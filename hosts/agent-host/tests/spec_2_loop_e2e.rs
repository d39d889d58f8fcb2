//! The scenarios of sections 2 and 5 of the spec end to end: the built component under
//! agent-host, real processes in a temp dir, and the scripted LLM server on 127.0.0.1.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests may panic

mod common;

use agent_host::config::session_config;
use agent_host::protocol::{EndReason, EventData};
use agent_host::protocol::{ReasoningEffort, SessionState, StopReason};
use agent_host::{AgentEvent, AgentRuntime, AgentSession, LocalEnvironment};
use scripted_llm::anthropic::{message, text, tool_use};
use scripted_llm::{Reply, ScriptedServer};
use serde_json::json;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::mpsc::UnboundedReceiver;

struct Started {
    server: ScriptedServer,
    runtime: AgentRuntime,
    session: AgentSession,
    events: UnboundedReceiver<AgentEvent>,
    work: tempfile::TempDir,
}

async fn start(replies: Vec<Reply>) -> Started {
    start_with(replies, |_| {}).await
}

async fn start_with(
    replies: Vec<Reply>,
    configure: impl FnOnce(&mut agent_host::protocol::SessionConfig),
) -> Started {
    let server = common::serve(replies).await;
    let runtime = common::runtime_at("ANTHROPIC_BASE_URL", server.base_url());
    let work = tempfile::tempdir().unwrap();
    let env = Arc::new(LocalEnvironment::new(work.path()).unwrap());
    let mut config = session_config("anthropic", "m");
    configure(&mut config);
    let (session, events) = runtime.start_session(config, env).await.unwrap();
    Started {
        server,
        runtime,
        session,
        events,
        work,
    }
}

/// Every event received so far.
fn drain(events: &mut UnboundedReceiver<AgentEvent>) -> Vec<AgentEvent> {
    std::iter::from_fn(|| events.try_recv().ok()).collect()
}

fn of_kind<'a>(events: &'a [AgentEvent], kind: &str) -> Vec<&'a AgentEvent> {
    events.iter().filter(|e| e.kind().as_str() == kind).collect()
}

/// Live (not zombie) processes whose command line contains `marker`.
fn live_processes_with(marker: &str) -> Vec<u32> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let cmdline = std::fs::read(entry.path().join("cmdline")).unwrap_or_default();
        if !String::from_utf8_lossy(&cmdline).contains(marker) {
            continue;
        }
        let stat = std::fs::read_to_string(entry.path().join("stat")).unwrap_or_default();
        let state = stat
            .rsplit(')')
            .next()
            .unwrap_or_default()
            .trim_start()
            .chars()
            .next();
        if !matches!(state, Some('Z') | Some('X') | None) {
            found.push(pid);
        }
    }
    found
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn abort_during_a_long_command_leaves_no_process_of_the_session_alive() {
    // A unique duration marks this test's processes; the command also backgrounds a child
    // that would outlive a kill of the shell alone.
    let marker = "30.4242";
    let command = format!("sleep {marker} & sleep {marker}; wait");
    let Started {
        server: _server,
        runtime: _runtime,
        mut session,
        mut events,
        work: _work,
    } = start(vec![message(&[tool_use(
        "t1",
        "shell",
        json!({"command": command}),
    )])])
    .await;
    let control = session.controller();
    let watcher = tokio::spawn(async move {
        let mut seen = Vec::new();
        while let Some(event) = events.recv().await {
            let kind = event.kind().as_str();
            seen.push(event);
            if kind == "TOOL_CALL_START" {
                // The abort comes once both sleeps and the shell running them are there (they
                // start after this event). The deadline guards against a hang only: they
                // start within milliseconds.
                let deadline = Instant::now() + Duration::from_secs(20);
                while live_processes_with(marker).len() < 3 {
                    assert!(Instant::now() < deadline, "the command's processes never started");
                    tokio::time::sleep(Duration::from_millis(20)).await;
                }
                control.abort();
            }
            if kind == "SESSION_END" {
                break;
            }
        }
        seen
    });
    let started = Instant::now();
    let outcome = session.submit("run it").await.unwrap().unwrap();
    assert_eq!(outcome.stop_reason, StopReason::Aborted);
    // Guards against a hang only (the abort ends the input within a second or so); waiting
    // the command out would take 30 s.
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(session.state().await.unwrap(), SessionState::Closed);
    let seen = watcher.await.unwrap();
    let end = of_kind(&seen, "TOOL_CALL_END");
    assert_eq!(end.len(), 1, "the killed command still reports its end");
    assert!(matches!(
        seen.last().unwrap().data,
        EventData::SessionEnd {
            reason: EndReason::Aborted,
            ..
        }
    ));
    // SIGTERM reached the whole process group, background child included. A signal takes
    // effect a moment after it is sent; the deadline guards against a hang only.
    let deadline = Instant::now() + Duration::from_secs(5);
    while !live_processes_with(marker).is_empty() && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(live_processes_with(marker), Vec::<u32>::new());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_10_mb_single_line_is_truncated_for_the_model_and_complete_in_the_event() {
    let command = "head -c 10000000 /dev/zero | tr '\\0' x";
    let Started {
        server,
        runtime: _runtime,
        mut session,
        mut events,
        work: _work,
    } = start(vec![
        message(&[tool_use("t1", "shell", json!({"command": command}))]),
        message(&[text("that was long")]),
    ])
    .await;
    let outcome = session.submit("print a lot").await.unwrap().unwrap();
    assert_eq!(outcome.stop_reason, StopReason::Completed);
    let seen = drain(&mut events);

    let end = of_kind(&seen, "TOOL_CALL_END");
    let EventData::ToolCallEnd { outcome, .. } = &end[0].data else {
        panic!("{:?}", end[0]);
    };
    let full = outcome.as_result().unwrap();
    assert_eq!(
        full.find(|c| c != 'x'),
        Some(10_000_000),
        "all of it, then the exit line"
    );
    let streamed: usize = of_kind(&seen, "TOOL_CALL_OUTPUT_DELTA")
        .iter()
        .map(|e| match &e.data {
            EventData::ToolCallOutputDelta { delta, .. } => delta.len(),
            other => panic!("{other:?}"),
        })
        .sum();
    assert_eq!(streamed, 10_000_000, "the output streamed as it was produced");

    let sent = &server.requests()[1].tool_results()[0];
    let content = sent["content"].as_str().unwrap();
    assert!(
        content.len() < 31_000,
        "{} bytes sent to the model",
        content.len()
    );
    // 30,000 characters kept of 10,000,000 x, a newline and the exit line.
    let removed = full.chars().count() - 30_000;
    assert!(content.contains(&format!(
        "[WARNING: Tool output was truncated. {removed} characters were removed from the middle."
    )));
    let tail = &content[content.len() - 80..];
    assert!(
        tail.contains("Exit code: 0 (duration"),
        "the tail survives: {tail}"
    );
}

/// A command that leaves `name.here` in the working directory and waits until each of `names`
/// has: it ends well only if all of them run at one instant. Its 60 s of waiting at most
/// guard against a hang only: the commands start within milliseconds of each other.
fn meeting_command(name: &str, names: &[&str]) -> String {
    let all: Vec<String> = names.iter().map(|n| format!("[ -f {n}.here ]")).collect();
    format!(
        "touch {name}.here; for i in $(seq 600); do {} && echo met && exit 0; sleep 0.1; done; exit 1",
        all.join(" && ")
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn parallel_shell_calls_run_at_the_same_time() {
    let names = ["a", "b", "c"];
    let calls: Vec<_> = names
        .iter()
        .map(|n| tool_use(n, "shell", json!({"command": meeting_command(n, &names)})))
        .collect();
    let Started {
        server,
        runtime: _runtime,
        mut session,
        events: _events,
        work: _work,
    } = start(vec![message(&calls), message(&[text("all met")])]).await;
    let outcome = session.submit("meet three times").await.unwrap().unwrap();
    assert_eq!(outcome.stop_reason, StopReason::Completed);
    let results = server.requests()[1].tool_results();
    let ids: Vec<_> = results
        .iter()
        .map(|r| r["tool_use_id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, names);
    // Each command met the two others: all three were running at one instant.
    for result in &results {
        let content = result["content"].as_str().unwrap_or_default();
        assert!(content.starts_with("met\nExit code: 0"), "{result}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn repeating_calls_trigger_loop_detection_and_the_model_is_told() {
    let mut replies: Vec<Reply> = (0..10)
        .map(|i| {
            message(&[tool_use(
                &format!("t{i}"),
                "shell",
                json!({"command": "echo same"}),
            )])
        })
        .collect();
    replies.push(message(&[text("I will try something else")]));
    let Started {
        server,
        runtime: _runtime,
        mut session,
        mut events,
        work: _work,
    } = start(replies).await;
    let outcome = session.submit("keep going").await.unwrap().unwrap();
    assert_eq!(outcome.stop_reason, StopReason::Completed);
    let seen = drain(&mut events);
    let detections = of_kind(&seen, "LOOP_DETECTION");
    assert_eq!(detections.len(), 1);
    let EventData::LoopDetection { message: warning, .. } = &detections[0].data else {
        panic!("{:?}", detections[0]);
    };
    assert!(warning.starts_with("Loop detected"));
    let last_request = server.requests()[10].json();
    let last_message = last_request["messages"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .clone();
    assert_eq!(
        last_message["content"].as_array().unwrap().last().unwrap()["text"],
        warning.as_str()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn invalid_arguments_come_back_as_an_error_naming_the_field() {
    let Started {
        server,
        runtime: _runtime,
        mut session,
        events: _events,
        work: _work,
    } = start(vec![
        message(&[tool_use("t1", "write_file", json!({"file_path": "a.txt"}))]),
        message(&[text("fixed")]),
    ])
    .await;
    session.submit("write").await.unwrap().unwrap();
    let result = &server.requests()[1].tool_results()[0];
    assert_eq!(result["is_error"], true);
    assert_eq!(
        result["content"],
        "Invalid arguments for tool write_file: arguments: missing properties 'content'"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reasoning_effort_changes_between_inputs_and_snapshots_restore_in_a_new_instance() {
    let Started {
        server,
        runtime,
        mut session,
        events: _events,
        work,
    } = start_with(
        vec![
            message(&[text("one")]),
            message(&[text("two")]),
            message(&[text("three")]),
        ],
        |config| config.reasoning_effort = Some(ReasoningEffort::Low),
    )
    .await;
    session.submit("first").await.unwrap().unwrap();
    session
        .set_reasoning_effort(Some(ReasoningEffort::High))
        .await
        .unwrap();
    session.submit("second").await.unwrap().unwrap();

    // The host keeps the snapshot, drops the instance, and continues in a new one.
    let snapshot = session.snapshot().await.unwrap();
    let id = session.id().to_string();
    drop(session);
    let env = Arc::new(LocalEnvironment::new(work.path()).unwrap());
    let (mut restored, _events) = runtime.restore_session(&snapshot, env).await.unwrap().unwrap();
    assert_eq!(restored.id(), id);
    restored.submit("third").await.unwrap().unwrap();

    let requests = server.requests();
    let budgets: Vec<_> = requests
        .iter()
        .map(|r| r.json()["thinking"]["budget_tokens"].clone())
        .collect();
    assert_eq!(budgets, [json!(2048), json!(24576), json!(24576)]);
    let third = requests[2].json();
    assert_eq!(
        third["messages"].as_array().unwrap().len(),
        5,
        "the restored session kept its history"
    );

    let env = Arc::new(LocalEnvironment::new(work.path()).unwrap());
    let bad = runtime.restore_session("{\"version\": 99}", env).await.unwrap();
    assert!(bad.is_err());
}
