//! Persistence: every run is saved as it goes; a run killed with SIGKILL resumes
//! with its full history; a torn last line is ignored; `sessions` lists; a trapped instance
//! is restarted from the journal. The real binary and component, real files, real HTTP to
//! the scripted server on 127.0.0.1.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests may panic

mod common;

use agent_host::LocalEnvironment;
use agent_host::config::session_config;
use agent_host::embed::{Host, ResumeOptions, Session, SessionOptions, StopReason};
use agent_host::persist::{SessionStore, read_events};
use agent_host::protocol as api;
use agent_host::protocol::{EventData, EventKind, Warning};
use agent_host::runtime::InstanceOptions;
use common::{agent_host, agent_host_at, stderr, stdout};
use scripted_llm::anthropic::{message, text, thinking, tool_use};
use scripted_llm::{RecordedRequest, Reply, ScriptedServer};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

async fn server(replies: Vec<Reply>) -> ScriptedServer {
    ScriptedServer::replying(replies).await
}

/// A request's conversation as one line per content block: `role:type:id-or-text`.
fn conversation(request: &RecordedRequest) -> Vec<String> {
    let body = request.json();
    let mut lines = Vec::new();
    for message in body["messages"].as_array().unwrap() {
        let role = message["role"].as_str().unwrap();
        let blocks = match &message["content"] {
            Value::String(text) => vec![json!({"type": "text", "text": text})],
            Value::Array(blocks) => blocks.clone(),
            other => panic!("unexpected content {other}"),
        };
        for block in blocks {
            let kind = block["type"].as_str().unwrap();
            let detail = match kind {
                "text" => block["text"].as_str().unwrap().to_string(),
                "tool_use" => block["id"].as_str().unwrap().to_string(),
                "tool_result" => block["tool_use_id"].as_str().unwrap().to_string(),
                other => other.to_string(),
            };
            lines.push(format!("{role}:{kind}:{detail}"));
        }
    }
    lines
}

fn tool_result_text(request: &RecordedRequest, id: &str) -> String {
    let result = request
        .tool_results()
        .into_iter()
        .find(|r| r["tool_use_id"] == id)
        .unwrap_or_else(|| panic!("no result for {id}"));
    match &result["content"] {
        Value::String(text) => text.clone(),
        other => other.to_string(),
    }
}

/// The one session folder under `state`.
fn session_dir(state: &Path) -> Option<PathBuf> {
    std::fs::read_dir(state.join("sessions"))
        .ok()?
        .flatten()
        .map(|e| e.path())
        .find(|p| p.join("events.jsonl").is_file())
}

const TASK: &str = "Write alpha into a.txt, then show it";

/// The first two replies call tools; the third never comes in time.
/// Runs `task` to its end against `replies`; returns the session's folder and id.
async fn run_to_the_end(state: &Path, work: &Path, task: &str, replies: Vec<Reply>) -> (PathBuf, String) {
    let llm = server(replies).await;
    let output = agent_host_at(state, &llm)
        .args(["run", task, "--cwd"])
        .arg(work)
        .output()
        .await
        .unwrap();
    assert!(output.status.success(), "stderr:\n{}", stderr(&output));
    let dir = session_dir(state).unwrap();
    let id = dir.file_name().unwrap().to_string_lossy().into_owned();
    (dir, id)
}

/// Resumes session `id` with the input "once more", which the model answers "Again.".
async fn resume_once_more(state: &Path, id: &str) -> (ScriptedServer, std::process::Output) {
    let llm = server(vec![message(&[text("Again.")])]).await;
    let output = agent_host_at(state, &llm)
        .args(["resume", id, "once more"])
        .output()
        .await
        .unwrap();
    (llm, output)
}

fn two_rounds_then_stall() -> Vec<Reply> {
    let mut stalled = message(&[text("All done.")]);
    stalled.delay_ms = 120_000;
    vec![
        message(&[tool_use(
            "toolu_1",
            "write_file",
            json!({"file_path": "a.txt", "content": "alpha\n"}),
        )]),
        message(&[tool_use("toolu_2", "shell", json!({"command": "cat a.txt"}))]),
        stalled,
    ]
}

/// Runs TASK until the log holds the second call's TOOL_CALL_END, then SIGKILLs the
/// process. Returns the session's folder.
async fn run_and_kill_after_second_tool(state: &Path, work: &Path) -> PathBuf {
    run_and_kill_after_second_tool_with(state, work, two_rounds_then_stall()).await
}

async fn run_and_kill_after_second_tool_with(state: &Path, work: &Path, replies: Vec<Reply>) -> PathBuf {
    run_and_stop_after_second_tool(state, work, replies, None).await
}

/// Runs `TASK` until its second tool call ended, then kills it with SIGKILL, or with
/// `signal` (SIGINT: Ctrl-C) and waits for it to exit by itself.
async fn run_and_stop_after_second_tool(
    state: &Path,
    work: &Path,
    replies: Vec<Reply>,
    signal: Option<nix::sys::signal::Signal>,
) -> PathBuf {
    let first = server(replies).await;
    let mut child = agent_host_at(state, &first)
        .args(["run", TASK, "--cwd"])
        .arg(work)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let started = Instant::now();
    let dir = loop {
        if let Some(dir) = session_dir(state) {
            let log = std::fs::read_to_string(dir.join("events.jsonl")).unwrap_or_default();
            if log
                .lines()
                .any(|l| l.contains("\"TOOL_CALL_END\"") && l.contains("toolu_2"))
            {
                break dir;
            }
        }
        // Guards against a hang only: the two rounds take a second or two.
        assert!(
            started.elapsed() < Duration::from_secs(120),
            "the run never logged the second tool call's end"
        );
        assert!(child.try_wait().unwrap().is_none(), "the run ended early");
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    match signal {
        None => child.start_kill().unwrap(), // SIGKILL
        Some(signal) => {
            let pid = nix::unistd::Pid::from_raw(child.id().unwrap() as i32);
            nix::sys::signal::kill(pid, signal).unwrap();
        }
    }
    let status = child.wait().await.unwrap();
    assert!(!status.success());
    dir
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_killed_mid_input_resumes_with_its_full_history() {
    let state = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    let dir = run_and_kill_after_second_tool(state.path(), work.path()).await;
    let id = dir.file_name().unwrap().to_string_lossy().into_owned();
    let meta: Value = serde_json::from_slice(&std::fs::read(dir.join("meta.json")).unwrap()).unwrap();
    assert_eq!(meta["status"], "running");
    // No process holds the log any more: the listing calls it interrupted.
    let output = agent_host()
        .env("AGENT_HOST_STATE_DIR", state.path())
        .args(["sessions", "--all", "--json"])
        .output()
        .await
        .unwrap();
    let listed: Value = serde_json::from_str(&stdout(&output)).unwrap();
    assert_eq!(listed[0]["status"], "interrupted");

    let second = server(vec![message(&[text("Resumed and finished.")])]).await;
    let output = agent_host_at(state.path(), &second)
        .args(["resume", &id[..8], "next task"])
        .output()
        .await
        .unwrap();
    assert!(
        output.status.success(),
        "stdout:\n{}\nstderr:\n{}",
        stdout(&output),
        stderr(&output)
    );
    assert!(stdout(&output).contains("Resumed and finished."));
    assert!(stderr(&output).contains(&format!("resumed session {id}")));

    let requests = second.requests();
    assert_eq!(requests.len(), 1);
    assert_eq!(
        conversation(&requests[0]),
        [
            format!("user:text:{TASK}"),
            "assistant:tool_use:toolu_1".to_string(),
            "user:tool_result:toolu_1".to_string(),
            "assistant:tool_use:toolu_2".to_string(),
            "user:tool_result:toolu_2".to_string(),
            "user:text:next task".to_string(),
        ]
    );
    assert!(tool_result_text(&requests[0], "toolu_2").starts_with("alpha\nExit code: 0"));

    // The resumed run went on in the same log, after the events of the killed one.
    let log = read_events(&dir.join("events.jsonl")).unwrap();
    assert!(log.warning.is_none());
    let inputs: Vec<&str> = log
        .events
        .iter()
        .filter_map(|e| match &e.data {
            EventData::UserInput { content } => Some(content.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(inputs, [TASK, "next task"]);
    let meta: Value = serde_json::from_slice(&std::fs::read(dir.join("meta.json")).unwrap()).unwrap();
    assert_eq!(meta["status"], "completed");
    assert_eq!(meta["turns"], 3);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_killed_mid_input_resumes_with_its_reasoning_and_signatures() {
    let state = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    let mut stalled = message(&[text("All done.")]);
    stalled.delay_ms = 120_000;
    let replies = vec![
        message(&[
            thinking("Write the file first.", "sig-write"),
            tool_use(
                "toolu_1",
                "write_file",
                json!({"file_path": "a.txt", "content": "alpha\n"}),
            ),
        ]),
        message(&[
            thinking("Now show it.", "sig-show"),
            tool_use("toolu_2", "shell", json!({"command": "cat a.txt"})),
        ]),
        stalled,
    ];
    let dir = run_and_kill_after_second_tool_with(state.path(), work.path(), replies).await;
    let id = dir.file_name().unwrap().to_string_lossy().into_owned();

    let second = server(vec![message(&[text("Resumed.")])]).await;
    let output = agent_host_at(state.path(), &second)
        .args(["resume", &id, "next task"])
        .output()
        .await
        .unwrap();
    assert!(output.status.success(), "stderr:\n{}", stderr(&output));
    let body = second.requests()[0].json();
    // Each assistant turn goes back exactly as the model produced it: the signed reasoning
    // first, then its tool call (Anthropic refuses a tool call whose thinking lost its
    // signature when thinking is on).
    let assistant: Vec<&Value> = body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "assistant")
        .collect();
    assert_eq!(assistant.len(), 2, "{body}");
    for (message, (thought, signature)) in assistant.iter().zip([
        ("Write the file first.", "sig-write"),
        ("Now show it.", "sig-show"),
    ]) {
        assert_eq!(
            message["content"][0],
            json!({"type": "thinking", "thinking": thought, "signature": signature}),
            "{message}"
        );
        assert_eq!(message["content"][1]["type"], "tool_use");
    }
    assert!(tool_result_text(&second.requests()[0], "toolu_2").starts_with("alpha\nExit code: 0"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resume_without_a_task_continues_the_interrupted_input() {
    let state = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    let dir = run_and_kill_after_second_tool(state.path(), work.path()).await;
    let id = dir.file_name().unwrap().to_string_lossy().into_owned();

    let second = server(vec![message(&[text("Finished what was left.")])]).await;
    let output = agent_host_at(state.path(), &second)
        .args(["resume", &id, "--json"])
        .stdin(std::process::Stdio::null())
        .output()
        .await
        .unwrap();
    assert!(output.status.success(), "stderr:\n{}", stderr(&output));
    assert!(stderr(&output).contains("continuing the interrupted input"));
    // --json: every line of stdout is an event.
    for line in stdout(&output).lines() {
        serde_json::from_str::<Value>(line).unwrap();
    }
    let request = &second.requests()[0];
    let lines = conversation(request);
    assert_eq!(lines.len(), 6, "{lines:#?}");
    assert!(lines[5].starts_with("user:text:The previous run stopped before finishing"));
    assert!(lines[5].ends_with(TASK));

    // Nothing is in flight any more: without a task and without a terminal, resume says what
    // to do instead of guessing.
    let third = server(Vec::new()).await;
    let output = agent_host_at(state.path(), &third)
        .args(["resume", &id])
        .stdin(std::process::Stdio::null())
        .output()
        .await
        .unwrap();
    assert_eq!(output.status.code(), Some(2), "stderr:\n{}", stderr(&output));
    assert!(stderr(&output).contains("finished its last input"));
    assert!(third.requests().is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_input_stopped_with_ctrl_c_is_continued_by_resume() {
    let state = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    let sigint = Some(nix::sys::signal::Signal::SIGINT);
    let dir =
        run_and_stop_after_second_tool(state.path(), work.path(), two_rounds_then_stall(), sigint).await;
    let id = dir.file_name().unwrap().to_string_lossy().into_owned();
    let log = std::fs::read_to_string(dir.join("events.jsonl")).unwrap();
    assert!(
        log.contains("\"PROCESSING_END\""),
        "Ctrl-C ends the input in order: {log}"
    );

    let second = server(vec![message(&[text("Finished what was left.")])]).await;
    let output = agent_host_at(state.path(), &second)
        .args(["resume", &id])
        .stdin(std::process::Stdio::null())
        .output()
        .await
        .unwrap();
    assert!(output.status.success(), "stderr:\n{}", stderr(&output));
    assert!(
        stderr(&output).contains("continuing the interrupted input"),
        "{}",
        stderr(&output)
    );
    let lines = conversation(&second.requests()[0]);
    assert!(lines.last().unwrap().ends_with(TASK), "{lines:#?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_torn_last_line_is_ignored_and_everything_before_it_is_kept() {
    let state = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    let replies = vec![
        message(&[tool_use("toolu_1", "shell", json!({"command": "echo kept"}))]),
        message(&[text("Echoed.")]),
    ];
    let (dir, id) = run_to_the_end(state.path(), work.path(), "Echo something", replies).await;
    // A crash in the middle of writing an event.
    let events = dir.join("events.jsonl");
    let mut log = std::fs::read(&events).unwrap();
    log.extend_from_slice(br#"{"kind":"ASSISTANT_TEXT_DELTA","session_id":"#);
    std::fs::write(&events, log).unwrap();
    // And the snapshot lost too: the history comes from the log alone.
    std::fs::remove_file(dir.join("snapshot.json")).unwrap();

    let (second, output) = resume_once_more(state.path(), &id).await;
    assert!(output.status.success(), "stderr:\n{}", stderr(&output));
    assert!(stderr(&output).contains("torn last line"), "{}", stderr(&output));
    assert_eq!(
        conversation(&second.requests()[0]),
        [
            "user:text:Echo something",
            "assistant:tool_use:toolu_1",
            "user:tool_result:toolu_1",
            "assistant:text:Echoed.",
            "user:text:once more",
        ]
    );
    assert!(tool_result_text(&second.requests()[0], "toolu_1").starts_with("kept\nExit code: 0"));
    // The torn bytes were cut off before the resumed run appended: the log reads clean.
    let log = read_events(&events).unwrap();
    assert!(log.warning.is_none());
    assert_eq!(log.events.last().unwrap().kind(), EventKind::SessionEnd);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_saved_without_a_journal_is_refused_with_a_reason() {
    let state = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    let replies = vec![message(&[text("Hi.")])];
    let (dir, id) = run_to_the_end(state.path(), work.path(), "Say hi", replies).await;
    // What an agent-host from before the journal left behind.
    std::fs::remove_file(dir.join("history.jsonl")).unwrap();

    let (second, output) = resume_once_more(state.path(), &id).await;
    assert!(!output.status.success());
    assert!(
        stderr(&output).contains("older agent-host"),
        "{}",
        stderr(&output)
    );
    assert!(second.requests().is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sessions_lists_runs_newest_first_per_workspace_and_as_json() {
    let state = tempfile::tempdir().unwrap();
    let (one, two) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    for (work, task) in [(&one, "First task\nwith a second line"), (&two, "Second task")] {
        let llm = server(vec![message(&[text("ok")])]).await;
        let output = agent_host_at(state.path(), &llm)
            .args(["run", task, "--cwd"])
            .arg(work.path())
            .output()
            .await
            .unwrap();
        assert!(output.status.success(), "stderr:\n{}", stderr(&output));
        assert!(stderr(&output).contains("(resume with: agent-host resume "));
    }
    let none = server(Vec::new()).await;
    let output = agent_host_at(state.path(), &none)
        .args(["sessions", "--all", "--json"])
        .output()
        .await
        .unwrap();
    assert!(output.status.success(), "stderr:\n{}", stderr(&output));
    let sessions: Vec<Value> = serde_json::from_str(&stdout(&output)).unwrap();
    assert_eq!(sessions.len(), 2);
    assert_eq!(sessions[0]["first_input"], "Second task");
    assert_eq!(sessions[1]["first_input"], "First task");
    for session in &sessions {
        assert_eq!(session["status"], "completed");
        assert_eq!(session["turns"], 1);
        assert_eq!(session["provider"], "anthropic");
        assert_eq!(session["endpoint"], "anthropic");
        assert!(session["id"].as_str().unwrap().len() >= 32);
    }
    let canonical = |p: &Path| std::fs::canonicalize(p).unwrap().to_string_lossy().into_owned();
    assert_eq!(sessions[0]["workspace"], canonical(two.path()));

    let output = agent_host_at(state.path(), &none)
        .args(["sessions", "--cwd"])
        .arg(one.path())
        .output()
        .await
        .unwrap();
    let listed = stdout(&output);
    assert!(
        listed.contains("First task") && !listed.contains("Second task"),
        "{listed}"
    );
    let first_id = sessions[1]["id"].as_str().unwrap();
    assert!(listed.contains(&first_id[..8]));
    assert!(stderr(&output).contains("--all lists them"));

    // An unknown id is a usage error naming it.
    let output = agent_host_at(state.path(), &none)
        .args(["resume", "zzzz", "task"])
        .output()
        .await
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(stderr(&output).contains("\"zzzz\""));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_persist_saves_nothing() {
    let state = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    let llm = server(vec![message(&[text("ok")])]).await;
    let output = agent_host_at(state.path(), &llm)
        .args(["run", "Say ok", "--no-persist", "--cwd"])
        .arg(work.path())
        .output()
        .await
        .unwrap();
    assert!(output.status.success(), "stderr:\n{}", stderr(&output));
    assert!(!state.path().join("sessions").exists());
    assert!(!stderr(&output).contains("resume with"));
}

/// A session in `env`, saved in `store` when there is one.
fn options(env: Arc<LocalEnvironment>, store: Option<&SessionStore>) -> SessionOptions {
    SessionOptions {
        config: Some(session_config("anthropic", "m")),
        environment: Some(env),
        store: store.cloned(),
        ..SessionOptions::default()
    }
}

/// A host at an LLM and a session it saves in a store of its own, over a workspace of its
/// own (the folders live as long as this).
struct Saved {
    host: Host,
    _state: tempfile::TempDir,
    work: tempfile::TempDir,
    store: SessionStore,
    env: Arc<LocalEnvironment>,
    session: Session,
}

async fn saved_session(llm: &ScriptedServer) -> Saved {
    let host = common::host_at(llm).await;
    let state = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    let store = SessionStore::new(state.path());
    let env = Arc::new(LocalEnvironment::new(work.path()).unwrap());
    let session = host
        .open_session(options(env.clone(), Some(&store)))
        .await
        .unwrap();
    Saved {
        host,
        _state: state,
        work,
        store,
        env,
        session,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_history_resumed_from_the_journal_equals_the_cores_own() {
    let llm = server(vec![
        message(&[
            thinking("Count first, then read.", "sig-count"),
            text("Two at once."),
            tool_use("t1", "shell", json!({"command": "seq 1 3000"})),
            tool_use("t2", "read_file", json!({"file_path": "missing.txt"})),
        ]),
        message(&[text("Done.")]),
    ])
    .await;
    let Saved {
        host,
        _state,
        work: _work,
        store,
        env,
        session,
    } = saved_session(&llm).await;
    session.submit("Count and read").await.unwrap();
    let history: Value = serde_json::from_str(&session.history_json().await.unwrap()).unwrap();
    session.close().await.unwrap();
    // The long output was truncated as the core truncates it, and the reasoning is signed.
    assert!(history.to_string().contains("lines omitted"));
    assert_eq!(history[1]["message"]["parts"][0]["signature"], "sig-count");

    let mut stored = store.load(&session.id()[..8]).unwrap();
    // From the journal alone (its first line, the session as created, and every entry).
    stored.snapshot = None;
    let (base, journal) = stored.resume_point().unwrap();
    let request = api::ResumeRequest {
        snapshot: base,
        journal,
        model: None,
        more_turns: None,
    };
    let (mut resumed, _) = host
        .runtime()
        .resume_session(&request, env.clone(), InstanceOptions::default())
        .await
        .unwrap()
        .unwrap();
    let rebuilt: Value = serde_json::from_str(&resumed.history_json().await.unwrap()).unwrap();
    assert_eq!(rebuilt, history);
    // And the saved snapshot plus the (empty) rest of the journal gives the same.
    let stored = store.load(&session.id()[..8]).unwrap();
    let (base, journal) = stored.resume_point().unwrap();
    assert!(journal.is_empty(), "{journal:?}");
    let from_snapshot: Value = serde_json::from_str(&base).unwrap();
    assert_eq!(from_snapshot["history"], history);
    assert_eq!(from_snapshot["total_turns"], 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_instance_is_restarted_from_the_journal_and_the_input_goes_on() {
    let mut stalled = message(&[text("never seen")]);
    stalled.delay_ms = 120_000;
    let llm = server(vec![
        message(&[tool_use("t1", "shell", json!({"command": "echo one"}))]),
        stalled,
        message(&[text("Picked up.")]),
    ])
    .await;
    let host = common::host_at(&llm).await;
    let work = tempfile::tempdir().unwrap();
    let env = Arc::new(LocalEnvironment::new(work.path()).unwrap());
    // No store: the journal in memory is enough to restart.
    let session = host.open_session(options(env, None)).await.unwrap();
    let mut events = session.events();
    let controller = session.handle();
    {
        // The submit is dropped while its instance waits for the stalled reply: the instance
        // is left inside a call and cannot be entered again.
        let submit = session.submit("First");
        tokio::pin!(submit);
        loop {
            tokio::select! {
                _ = &mut submit => panic!("the stalled reply cannot complete"),
                event = events.next() => {
                    if event.unwrap().kind == EventKind::ToolCallEnd {
                        break;
                    }
                }
            }
        }
        // The deadline guards against a hang only: the request follows within milliseconds.
        let started = Instant::now();
        while llm.requests().len() < 2 {
            assert!(started.elapsed() < Duration::from_secs(30));
            tokio::select! {
                _ = &mut submit => panic!("the stalled reply cannot complete"),
                _ = tokio::time::sleep(Duration::from_millis(20)) => {}
            }
        }
    }
    let outcome = session.submit("Second").await.unwrap();
    assert_eq!(outcome.final_text, "Picked up.");
    let mut seen = Vec::new();
    while let Some(event) = events.try_next() {
        seen.push(event);
    }
    let warning = seen
        .iter()
        .find_map(|e| match &e.data {
            EventData::Warning(warning) => Some(warning),
            _ => None,
        })
        .expect("the restart is reported");
    let Warning::InstanceRestarted { message } = warning else {
        panic!("{warning:?}");
    };
    // A real trap of wasmtime's: the abandoned call left the instance unenterable.
    assert!(message.contains("wasm trap"), "{message}");
    let requests = llm.requests();
    assert_eq!(requests.len(), 3);
    let lines = conversation(&requests[2]);
    assert_eq!(
        lines[..3],
        ["user:text:First", "assistant:tool_use:t1", "user:tool_result:t1"]
    );
    assert_eq!(lines.last().unwrap(), "user:text:Second");
    // The controller handed out before the restart still reaches the session.
    controller.abort();
    assert_eq!(
        session.submit("Third").await.unwrap().stop_reason,
        StopReason::Aborted
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_resumed_read_only_refuses_changes() {
    let llm = server(vec![
        message(&[text("Noted.")]),
        message(&[
            tool_use(
                "w",
                "write_file",
                json!({"file_path": "planted.txt", "content": "x"}),
            ),
            tool_use("s", "shell", json!({"command": "touch ran.txt"})),
        ]),
        message(&[text("Refused, as expected.")]),
    ])
    .await;
    let Saved {
        host,
        _state,
        work,
        store,
        env,
        session,
    } = saved_session(&llm).await;
    session.submit("Remember this").await.unwrap();
    let id = session.id().to_string();
    session.close().await.unwrap();

    let stored = store.load(&id).unwrap();
    let resume = ResumeOptions {
        environment: Some(env),
        read_only: true,
        ..ResumeOptions::default()
    };
    let resumed = host.resume_session(&stored, resume).await.unwrap();
    resumed.submit("Now change things").await.unwrap();
    let results = llm.requests()[2].tool_results();
    assert_eq!(results.len(), 2);
    for result in &results {
        assert_eq!(result["is_error"], true, "{result}");
        assert!(
            result["content"].as_str().unwrap().contains("read-only"),
            "{result}"
        );
    }
    assert!(!work.path().join("planted.txt").exists());
    assert!(!work.path().join("ran.txt").exists());
}

/// Embedders move sessions into tasks, as with `AgentSession`.
#[allow(dead_code)]
fn sessions_and_their_submits_can_move_to_other_tasks(session: &Session) {
    fn send<T: Send>(_: T) {}
    send(session.submit("x"));
}
