//! The native embedding API: events as an async stream, steering, cancel and abort reaching
//! a running component through `session-host`.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests may panic

mod common;

use agent_host::config::session_config;
use agent_host::protocol::{EventData, EventKind};
use agent_host::protocol::{SessionState, StopReason};
use agent_host::{AgentEvent, AgentRuntime, AgentSession, Endpoints, HttpTransport, LocalEnvironment};
use scripted_llm::anthropic::{Shape, message, message_shaped, text, tool_use};
use scripted_llm::{Script, ScriptedServer};
use serde_json::json;
use std::sync::Arc;
use tokio::sync::mpsc::UnboundedReceiver;

/// A scripted server, and a session of the real component talking to it in a temp dir.
struct Started {
    server: ScriptedServer,
    session: AgentSession,
    events: UnboundedReceiver<AgentEvent>,
    _work: tempfile::TempDir,
}

async fn start(replies: Vec<scripted_llm::Reply>) -> Started {
    let script = Script {
        replies,
        require_api_key: None,
    };
    let server = ScriptedServer::start(script).await.unwrap();
    let url = server.base_url();
    let endpoints = Endpoints::from_lookup(move |name| (name == "ANTHROPIC_BASE_URL").then(|| url.clone()));
    let transport = HttpTransport::new(endpoints).unwrap();
    let runtime = AgentRuntime::load(&common::component(), Some(&common::cache_dir()), transport).unwrap();
    let work = tempfile::tempdir().unwrap();
    let env = Arc::new(LocalEnvironment::new(work.path()).unwrap());
    let config = session_config("anthropic", "m");
    let (session, events) = runtime.start_session(config, env).await.unwrap();
    Started {
        server,
        session,
        events,
        _work: work,
    }
}

/// Collects events until one of `kind` arrives.
async fn until(events: &mut UnboundedReceiver<AgentEvent>, kind: &str) -> Vec<AgentEvent> {
    let mut seen = Vec::new();
    while let Some(event) = events.recv().await {
        let done = event.kind().as_str() == kind;
        seen.push(event);
        if done {
            break;
        }
    }
    seen
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn steering_reaches_the_running_loop_and_events_stream_as_they_happen() {
    let Started {
        server,
        mut session,
        mut events,
        _work,
    } = start(vec![
        message(&[tool_use("t1", "shell", json!({"command": "sleep 0.3; echo ran"}))]),
        message(&[text("steered answer")]),
    ])
    .await;
    let control = session.controller();
    let watcher = tokio::spawn(async move {
        let before = until(&mut events, "TOOL_CALL_START").await;
        // The tool is running inside the component right now: steer it.
        control.steer("please also add a test");
        let after = until(&mut events, "PROCESSING_END").await;
        (before, after)
    });
    let outcome = session.submit("do the task").await.unwrap().unwrap();
    assert_eq!(outcome.stop_reason, StopReason::Completed);
    let (before, after) = watcher.await.unwrap();
    assert_eq!(before[0].kind(), EventKind::SessionStart);
    assert!(after.iter().any(
        |e| matches!(&e.data, EventData::SteeringInjected { content } if content == "please also add a test")
    ));
    let second = server.requests()[1].json();
    let last = second["messages"].as_array().unwrap().last().unwrap().clone();
    assert_eq!(last["content"][1]["text"], "please also add a test");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancel_interrupts_a_streaming_answer_and_the_session_stays_usable() {
    // 50 pieces 200 ms apart: after the first, ten seconds of answer are left to cut.
    let answer = "slow ".repeat(50);
    let mut slow = message_shaped(
        &[text(&answer)],
        Shape {
            text_pieces: 50,
            ..Shape::API
        },
    );
    slow.delay_ms = 200;
    let Started {
        server: _server,
        mut session,
        mut events,
        _work,
    } = start(vec![slow, message(&[text("second answer")])]).await;
    let control = session.controller();
    let watcher = tokio::spawn(async move {
        let mut seen = until(&mut events, "ASSISTANT_TEXT_DELTA").await;
        control.cancel();
        seen.extend(until(&mut events, "PROCESSING_END").await);
        seen
    });
    let outcome = session.submit("first").await.unwrap().unwrap();
    assert_eq!(outcome.stop_reason, StopReason::Cancelled);
    // The stream was cut, not waited out: only part of the answer arrived.
    let streamed: String = watcher
        .await
        .unwrap()
        .iter()
        .filter_map(|e| match &e.data {
            EventData::AssistantTextDelta { delta } => Some(delta.as_str()),
            _ => None,
        })
        .collect();
    assert!(
        !streamed.is_empty() && streamed.len() < answer.len(),
        "{} of {} characters streamed",
        streamed.len(),
        answer.len()
    );
    assert_eq!(session.state().await.unwrap(), SessionState::Idle);
    let outcome = session.submit("again").await.unwrap().unwrap();
    assert_eq!(outcome.final_text, "second answer");
}
