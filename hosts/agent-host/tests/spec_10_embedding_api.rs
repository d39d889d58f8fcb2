//! The typed embedding API against the scripted server: build a host, open a
//! session, submit, stream typed events, steer mid-run, abort, a native Rust tool called by
//! the model, record and replay through the API; and the runnable examples.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests may panic

mod common;

use agent_host::approval::{ApprovalMode, ApprovalPolicy};
use agent_host::embed::{
    Error, Event, EventKind, Events, Host, NativeTool, ReasoningEffort, Session, SessionOptions, StopReason,
    ToolError,
};
use agent_host::protocol::SessionState;
use agent_host::{Endpoints, Environment, LocalEnvironment};
use scripted_llm::anthropic::{error, message, text, tool_use};
use scripted_llm::{Reply, ScriptedServer};
use serde_json::{Value, json};
use std::sync::{Arc, Mutex};
use std::time::Duration;

async fn server(replies: Vec<Reply>) -> ScriptedServer {
    ScriptedServer::replying(replies).await
}

fn endpoints(server: &ScriptedServer) -> Endpoints {
    let url = server.base_url();
    Endpoints::from_lookup(move |name| (name == "ANTHROPIC_BASE_URL").then(|| url.clone()))
}

async fn host(server: &ScriptedServer, tools: Vec<NativeTool>) -> Host {
    let mut builder = Host::builder()
        .component(common::component())
        .cache_dir(common::cache_dir())
        .endpoints(endpoints(server));
    for tool in tools {
        builder = builder.tool(tool);
    }
    builder.build().await.unwrap()
}

/// A session of `host` in `work`, with the default options.
async fn open(host: &Host, work: &std::path::Path) -> Session {
    host.open_session(SessionOptions::in_workspace(work))
        .await
        .unwrap()
}

/// Reads events until one of `kind` (included).
async fn until(events: &mut Events, kind: EventKind) -> Vec<Event> {
    let mut seen = Vec::new();
    while let Some(event) = events.next().await {
        let done = event.kind == kind;
        seen.push(event);
        if done {
            break;
        }
    }
    seen
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn submit_streams_typed_events_and_close_ends_the_stream() {
    let server = server(vec![message(&[text("Hello from the scripted model.")])]).await;
    let host = host(&server, Vec::new()).await;
    let work = tempfile::tempdir().unwrap();
    let session = open(&host, work.path()).await;
    let mut events = session.events();
    let outcome = session.submit("say hello").await.unwrap();
    assert_eq!(outcome.stop_reason, StopReason::Completed);
    assert_eq!(outcome.final_text, "Hello from the scripted model.");
    assert_eq!(outcome.turns, 1);

    session.close().await.unwrap();
    let mut all = Vec::new();
    while let Some(event) = events.next().await {
        all.push(event);
    }
    let kinds: Vec<EventKind> = all.iter().map(|e| e.kind).collect();
    assert_eq!(kinds.first(), Some(&EventKind::SessionStart));
    assert_eq!(
        kinds.last(),
        Some(&EventKind::SessionEnd),
        "the stream ends after SESSION_END"
    );
    assert!(kinds.contains(&EventKind::UserInput) && kinds.contains(&EventKind::ProcessingEnd));
    let streamed: String = all.iter().filter_map(Event::text_delta).collect();
    assert_eq!(streamed, outcome.final_text);
    assert!(
        all.iter().filter(|e| e.text_delta().is_some()).count() > 1,
        "text arrives in pieces"
    );
    assert!(
        all.iter()
            .all(|e| e.session_id == session.id() && !e.is_from_subagent())
    );
    assert!(
        session.events().next().await.is_none(),
        "the stream is taken once"
    );
    assert_eq!(session.submit("again").await, Err(Error::Closed));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn steering_mid_run_reaches_the_next_request() {
    let server = server(vec![
        message(&[tool_use("t1", "shell", json!({"command": "sleep 0.5; echo ran"}))]),
        message(&[text("steered answer")]),
    ])
    .await;
    let host = host(&server, Vec::new()).await;
    let work = tempfile::tempdir().unwrap();
    let session = open(&host, work.path()).await;
    let mut events = session.events();
    let handle = session.handle();
    let watcher = tokio::spawn(async move {
        let before = until(&mut events, EventKind::ToolCallStart).await;
        // The command is running inside the component right now.
        handle.steer("please also add a test");
        let after = until(&mut events, EventKind::ProcessingEnd).await;
        (before, after)
    });
    let outcome = session.submit("do the task").await.unwrap();
    assert_eq!(outcome.final_text, "steered answer");
    let (before, after) = watcher.await.unwrap();
    let call = before.last().unwrap().tool_call().unwrap();
    assert_eq!(
        (call.name, call.arguments["command"].as_str()),
        ("shell", Some("sleep 0.5; echo ran"))
    );
    let result = after.iter().find_map(Event::tool_result).unwrap();
    assert!(result.output.unwrap().starts_with("ran\n"));
    assert!(after.iter().any(|e| e.kind == EventKind::SteeringInjected));
    let second = server.requests()[1].json();
    let last = second["messages"].as_array().unwrap().last().unwrap().clone();
    assert_eq!(last["content"][1]["text"], "please also add a test");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn abort_stops_a_streaming_answer_and_closes_the_session() {
    let mut slow = message(&[text("a long answer that is cut before it ends")]);
    slow.delay_ms = 300;
    let server = server(vec![slow]).await;
    let host = host(&server, Vec::new()).await;
    let work = tempfile::tempdir().unwrap();
    let session = Arc::new(
        host.open_session(SessionOptions::in_workspace(work.path()))
            .await
            .unwrap(),
    );
    let mut events = session.events();
    let running = tokio::spawn({
        let session = session.clone();
        async move { session.submit("write a long answer").await }
    });
    let seen = until(&mut events, EventKind::AssistantTextDelta).await;
    assert!(seen.iter().any(|e| e.kind == EventKind::UserInput));
    assert_eq!(session.submit("meanwhile").await, Err(Error::Busy));
    session.abort();
    // Guards against a hang only: the abort ends the input within a second.
    let outcome = tokio::time::timeout(Duration::from_secs(20), running)
        .await
        .expect("abort ends the input")
        .unwrap()
        .unwrap();
    assert_eq!(outcome.stop_reason, StopReason::Aborted);
    let rest = until(&mut events, EventKind::SessionEnd).await;
    assert_eq!(rest.last().unwrap().kind, EventKind::SessionEnd);
    assert!(events.next().await.is_none());
    assert_eq!(session.submit("after the abort").await, Err(Error::Closed));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_native_tool_is_called_by_the_model_and_its_result_is_in_the_next_request() {
    let server = server(vec![
        message(&[
            tool_use("t1", "word_count", json!({"text": "one two three"})),
            tool_use("t2", "word_count", json!({"text": ""})),
        ]),
        message(&[text("3 words")]),
    ])
    .await;
    let received = Arc::new(Mutex::new(Vec::<Value>::new()));
    let tool = {
        let received = received.clone();
        NativeTool::new(
            "word_count",
            "Count the words of a text.",
            json!({"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}),
            move |args| {
                let received = received.clone();
                async move {
                    received.lock().unwrap().push(args.clone());
                    let text = args["text"].as_str().ok_or("text must be a string")?;
                    if text.is_empty() {
                        return Err(ToolError("the text is empty".to_string()));
                    }
                    Ok(text.split_whitespace().count().to_string())
                }
            },
        )
        .read_only()
    };
    let host = host(&server, vec![tool]).await;
    let work = tempfile::tempdir().unwrap();
    let session = open(&host, work.path()).await;
    let mut events = session.events();
    let outcome = session.submit("count the words").await.unwrap();
    assert_eq!(outcome.final_text, "3 words");
    assert_eq!(
        *received.lock().unwrap(),
        [json!({"text": "one two three"}), json!({"text": ""})]
    );

    let requests = server.requests();
    let offered = requests[0].json()["tools"].clone();
    let definition = offered
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "word_count")
        .expect("the tool is offered to the model");
    assert_eq!(definition["input_schema"]["required"], json!(["text"]));
    let results = requests[1].tool_results();
    assert_eq!(results[0]["tool_use_id"], "t1");
    assert_eq!(results[0]["content"], "3");
    assert_eq!(results[1]["is_error"], true);
    assert!(
        results[1]["content"]
            .as_str()
            .unwrap()
            .contains("the text is empty")
    );

    let seen = until(&mut events, EventKind::ProcessingEnd).await;
    let ends: Vec<_> = seen.iter().filter_map(Event::tool_result).collect();
    assert_eq!(ends[0].output, Ok("3"));
    assert!(ends[1].output.unwrap_err().contains("the text is empty"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn options_that_make_no_session_are_clear_errors() {
    let server = server(Vec::new()).await;
    let clash = NativeTool::new("shell", "Another shell.", json!({"type": "object"}), |_| async {
        Ok(String::new())
    });
    let host = host(&server, vec![clash]).await;
    let work = tempfile::tempdir().unwrap();
    let opened = host.open_session(SessionOptions::in_workspace(work.path())).await;
    let Err(Error::Options(message)) = opened else {
        panic!("a clash with the profile's shell is refused");
    };
    assert!(
        message.contains("native tool shell") && message.contains("rename it"),
        "{message}"
    );

    let host = Host::builder()
        .component(common::component())
        .cache_dir(common::cache_dir())
        .endpoints(Endpoints::from_lookup(|_| None))
        .build()
        .await
        .unwrap();
    let opened = host
        .open_session(SessionOptions {
            provider: Some("gemini".into()),
            ..SessionOptions::in_workspace(work.path())
        })
        .await;
    let Err(Error::Options(message)) = opened else {
        panic!("an unconfigured provider is refused");
    };
    assert!(message.contains("GEMINI_API_KEY"), "{message}");
    let missing = Host::builder()
        .component(work.path().join("nope.wasm"))
        .build()
        .await;
    assert!(matches!(missing, Err(Error::Component(m)) if m.contains("nope.wasm")));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_recorded_through_the_api_replays_without_network() {
    let dir = tempfile::tempdir().unwrap();
    let recording = dir.path().join("session.jsonl");
    let replies = vec![
        message(&[tool_use(
            "t1",
            "write_file",
            json!({"file_path": "notes.txt", "content": "recorded\n"}),
        )]),
        message(&[text("wrote notes.txt")]),
    ];
    let recorded_work = dir.path().join("recorded");
    std::fs::create_dir(&recorded_work).unwrap();
    {
        let server = server(replies).await;
        let host = host(&server, Vec::new()).await;
        let session = host
            .open_session(SessionOptions {
                record: Some(recording.clone()),
                ..SessionOptions::in_workspace(&recorded_work)
            })
            .await
            .unwrap();
        let outcome = session.submit("write notes").await.unwrap();
        assert_eq!(outcome.final_text, "wrote notes.txt");
    }

    // No endpoint at all: the recording supplies provider, model and answers.
    let host = Host::builder()
        .component(common::component())
        .cache_dir(common::cache_dir())
        .endpoints(Endpoints::default())
        .build()
        .await
        .unwrap();
    let replayed_work = dir.path().join("replayed");
    std::fs::create_dir(&replayed_work).unwrap();
    let session = host
        .open_session(SessionOptions {
            replay: Some(recording.clone()),
            ..SessionOptions::in_workspace(&replayed_work)
        })
        .await
        .unwrap();
    let outcome = session.submit("write notes").await.unwrap();
    assert_eq!(outcome.final_text, "wrote notes.txt");
    assert_eq!(
        std::fs::read_to_string(replayed_work.join("notes.txt")).unwrap(),
        "recorded\n"
    );

    let other = dir.path().join("other");
    std::fs::create_dir(&other).unwrap();
    let session = host
        .open_session(SessionOptions {
            replay: Some(recording.clone()),
            ..SessionOptions::in_workspace(&other)
        })
        .await
        .unwrap();
    let Err(Error::Llm(message)) = session.submit("write something else").await else {
        panic!("a diverging request fails the input");
    };
    assert!(
        message.contains("replay diverged") && message.contains("/messages/0/content/0/text"),
        "{message}"
    );

    let wrong_model = host
        .open_session(SessionOptions {
            replay: Some(recording),
            model: Some("another-model".into()),
            ..SessionOptions::in_workspace(&other)
        })
        .await;
    assert!(
        matches!(wrong_model, Err(Error::Options(m)) if m.contains("cannot be replayed with model another-model"))
    );
}

/// The built example `name`: `cargo test` builds the examples next to the test binaries
/// (`target/debug/examples/`); a run of this test file alone builds them first.
fn example_binary(name: &str) -> std::path::PathBuf {
    let profile_dir = std::env::current_exe()
        .unwrap()
        .parent()
        .unwrap()
        .parent()
        .unwrap()
        .to_path_buf();
    let binary = profile_dir.join("examples").join(name);
    if !binary.is_file() {
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_string());
        let status = std::process::Command::new(cargo)
            .args(["build", "--quiet", "-p", "agent-host", "--examples"])
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .status()
            .unwrap();
        assert!(status.success(), "building the examples failed");
    }
    binary
}

/// Each example, run with no provider variable, starts the scripted server itself, says so,
/// and completes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_examples_run_their_scripted_demo_without_a_provider() {
    for (example, expected) in [
        ("embed_basic", "== Completed after 3 turns"),
        (
            "embed_native_tool",
            "<- Ok(\"[[\\\"the\\\",4],[\\\"and\\\",2],[\\\"cat\\\",2]]\")",
        ),
    ] {
        let work = tempfile::tempdir().unwrap();
        let mut command = tokio::process::Command::new(example_binary(example));
        command
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .env("AGENT_CORE_COMPONENT", common::component())
            .env("AGENT_HOST_CACHE_DIR", common::cache_dir())
            .env("WORKDIR", work.path())
            .kill_on_drop(true);
        for (name, _) in std::env::vars() {
            if ["ANTHROPIC_", "OPENAI_", "GEMINI_"]
                .iter()
                .any(|p| name.starts_with(p))
            {
                command.env_remove(name);
            }
        }
        // Guards against a hang only: an example's demo runs in a few seconds.
        let output = tokio::time::timeout(Duration::from_secs(120), command.output())
            .await
            .expect("the example finishes")
            .unwrap();
        let stdout = common::stdout(&output);
        assert!(
            output.status.success(),
            "{example}\nstdout:\n{stdout}\nstderr:\n{}",
            common::stderr(&output)
        );
        assert!(stdout.contains("SCRIPTED DEMO"), "{example}: {stdout}");
        assert!(stdout.contains(expected), "{example}: {stdout}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_read_only_host_refuses_changes_through_an_environment_the_caller_hands_in() {
    let server = server(vec![
        message(&[
            tool_use(
                "w",
                "write_file",
                json!({"file_path": "planted.txt", "content": "x"}),
            ),
            tool_use("s", "shell", json!({"command": "touch ran.txt"})),
        ]),
        message(&[text("done")]),
    ])
    .await;
    let host = Host::builder()
        .component(common::component())
        .cache_dir(common::cache_dir())
        .endpoints(endpoints(&server))
        .approvals(ApprovalPolicy::new(ApprovalMode::ReadOnly))
        .build()
        .await
        .unwrap();
    let work = tempfile::tempdir().unwrap();
    let env: Arc<dyn Environment> = Arc::new(LocalEnvironment::new(work.path()).unwrap());
    let session = host
        .open_session(SessionOptions {
            environment: Some(env),
            ..SessionOptions::in_workspace(work.path())
        })
        .await
        .unwrap();
    let mut events = session.events();
    session.submit("change things").await.unwrap();
    let seen = until(&mut events, EventKind::ProcessingEnd).await;
    let ends: Vec<_> = seen.iter().filter_map(Event::tool_result).collect();
    assert_eq!(ends.len(), 2);
    for end in &ends {
        let refusal = end.output.expect_err("a read-only session refuses the call");
        assert!(refusal.contains("read-only"), "{}: {refusal}", end.name);
    }
    assert!(!work.path().join("planted.txt").exists());
    assert!(!work.path().join("ran.txt").exists());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn switching_model_keeps_settings_made_since_the_last_input() {
    let server = server(Vec::new()).await;
    let host = host(&server, Vec::new()).await;
    let work = tempfile::tempdir().unwrap();
    let session = open(&host, work.path()).await;
    session
        .set_reasoning_effort(Some(ReasoningEffort::High))
        .await
        .unwrap();
    session.switch_model("claude-other").await.unwrap();
    let snapshot: Value = serde_json::from_str(&session.snapshot().await.unwrap()).unwrap();
    assert_eq!(snapshot["config"]["model"], "claude-other");
    assert_eq!(snapshot["config"]["reasoning_effort"], "high", "{snapshot}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_an_llm_error_closed_is_reopened_with_its_conversation_and_settings() {
    let server = server(vec![
        error(401, "authentication_error", "invalid x-api-key"),
        message(&[text("Back.")]),
    ])
    .await;
    let host = host(&server, Vec::new()).await;
    let work = tempfile::tempdir().unwrap();
    let session = open(&host, work.path()).await;
    session
        .set_reasoning_effort(Some(ReasoningEffort::Low))
        .await
        .unwrap();
    assert!(matches!(session.submit("First").await, Err(Error::Llm(_))));
    assert_eq!(session.state().await.unwrap(), SessionState::Closed);

    session.reopen().await.unwrap();
    assert_eq!(session.state().await.unwrap(), SessionState::Idle);
    let outcome = session.submit("Second").await.unwrap();
    assert_eq!(outcome.final_text, "Back.");
    let body = server.requests()[1].json().to_string();
    assert!(body.contains("First") && body.contains("Second"), "{body}");
    let snapshot: Value = serde_json::from_str(&session.snapshot().await.unwrap()).unwrap();
    assert_eq!(snapshot["config"]["reasoning_effort"], "low");
}
