//! `agent-host acp` driven by a real third-party client, the official Python ACP SDK from
//! PyPI (tests/acp-client/client.py), against the scripted LLM server on 127.0.0.1: the real
//! binary, component, sandbox and files.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests may panic

#[path = "../common/mod.rs"]
mod common;
mod editor;
mod editor_attacks;

use common::agent_host_at;
use scripted_llm::anthropic::{message, text, tool_use};
use scripted_llm::{Reply, ScriptedServer};
use serde_json::{Value, json};
use std::path::Path;

/// Runs the client in `work` with `options` (before `--`) against `agent-host acp ARGS`;
/// what it printed.
async fn client(work: &Path, llm: &ScriptedServer, options: &[&str], args: &[&str]) -> Value {
    let state = tempfile::tempdir().unwrap();
    client_with_state(state.path(), work, llm, options, args).await
}

/// [`client`] with agent-host's state (saved sessions) in `state`.
async fn client_with_state(
    state: &Path,
    work: &Path,
    llm: &ScriptedServer,
    options: &[&str],
    args: &[&str],
) -> Value {
    let (python, script) = agent_test_support::paths::acp_client();
    let template = agent_host_at(state, llm);
    let mut command = tokio::process::Command::new(python);
    for (name, value) in template.as_std().get_envs() {
        match value {
            Some(value) => command.env(name, value),
            None => command.env_remove(name),
        };
    }
    command
        .arg(script)
        .args(options)
        .arg("--cwd")
        .arg(work)
        .arg("--")
        .arg(env!("CARGO_BIN_EXE_agent-host"))
        .arg("acp")
        .args(args);
    let output = command.output().await.unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "the client failed:\n{stderr}");
    serde_json::from_slice(&output.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}\n{stderr}", String::from_utf8_lossy(&output.stdout)))
}

fn updates_of<'a>(seen: &'a Value, kind: &str) -> Vec<&'a Value> {
    seen["updates"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|u| u["sessionUpdate"] == kind)
        .collect()
}

/// The tool results the model got in its last request, as text.
fn last_results(llm: &ScriptedServer) -> String {
    common::last_tool_results(&llm.requests())
        .into_iter()
        .map(|(_, _, text)| text)
        .collect::<Vec<_>>()
        .join("\n")
}

fn calls_then(calls: Vec<scripted_llm::anthropic::Block>, answer: &str) -> Vec<Reply> {
    vec![message(&calls), message(&[text(answer)])]
}

/// A model that runs `printf made > made.txt`, then answers `answer`.
async fn a_model_that_makes_a_file(answer: &str) -> ScriptedServer {
    let call = tool_use("t1", "shell", json!({"command": "printf made > made.txt"}));
    ScriptedServer::replying(calls_then(vec![call], answer)).await
}

/// The command also prints a protocol message of its own: it reaches the editor only as the
/// call's output, never as a message (standard output is the protocol's alone).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_editor_sees_the_answer_a_command_and_an_edit_as_a_diff() {
    let work = tempfile::tempdir().unwrap();
    std::fs::write(work.path().join("hello.py"), "print('old')\n").unwrap();
    let forged = r#"{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"FORGED"}}}}"#;
    let command = format!("echo from-the-command; echo '{forged}'; echo '{forged}' >&2");
    let llm = ScriptedServer::replying(vec![
        message(&[tool_use("t1", "shell", json!({"command": command}))]),
        message(&[tool_use("t2", "read_file", json!({"file_path": "hello.py"}))]),
        message(&[tool_use(
            "t3",
            "edit_file",
            json!({"file_path": "hello.py", "old_string": "print('old')", "new_string": "print('new')"}),
        )]),
        message(&[text("Done: hello.py prints new.")]),
    ])
    .await;
    let seen = client(work.path(), &llm, &["change hello.py"], &["--approval", "auto"]).await;
    assert_eq!(seen["protocol_version"], 1);
    assert_eq!(seen["stop_reason"], "end_turn");
    assert_eq!(seen["modes"]["currentModeId"], "auto", "{seen}");
    let said: String = updates_of(&seen, "agent_message_chunk")
        .iter()
        .map(|u| u["content"]["text"].as_str().unwrap())
        .collect();
    assert_eq!(said, "Done: hello.py prints new.");
    let calls = updates_of(&seen, "tool_call");
    let kinds: Vec<&str> = calls.iter().map(|c| c["kind"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["execute", "read", "edit"], "{seen}");
    let path = work.path().join("hello.py").display().to_string();
    assert_eq!(calls[2]["locations"][0]["path"], path.as_str(), "{seen}");
    let ends: Vec<&Value> = updates_of(&seen, "tool_call_update")
        .into_iter()
        .filter(|u| u["status"] == "completed")
        .collect();
    assert_eq!(ends.len(), 3, "{seen}");
    assert!(
        ends[0]["content"][0]["content"]["text"]
            .as_str()
            .unwrap()
            .contains("from-the-command")
    );
    let diff = &ends[2]["content"][0];
    assert_eq!(diff["type"], "diff", "{seen}");
    assert_eq!(diff["path"], path.as_str());
    assert_eq!(diff["oldText"], "print('old')\n");
    assert_eq!(diff["newText"], "print('new')\n");
    assert_eq!(
        std::fs::read_to_string(work.path().join("hello.py")).unwrap(),
        "print('new')\n"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rejected_permission_reaches_the_model_and_nothing_runs() {
    let work = tempfile::tempdir().unwrap();
    let llm = a_model_that_makes_a_file("Understood.").await;
    let seen = client(
        work.path(),
        &llm,
        &["make a file", "--option", "reject_once"],
        &["--approval", "ask"],
    )
    .await;
    let asked = seen["permissions"].as_array().unwrap();
    assert_eq!(asked.len(), 1, "{seen}");
    assert_eq!(
        asked[0]["options"],
        json!(["allow_once", "allow_always", "reject_once", "reject_always"]),
        "{seen}"
    );
    // The question names the call the editor already shows, and the command it runs.
    let call = &updates_of(&seen, "tool_call")[0];
    assert_eq!(asked[0]["tool_call"]["toolCallId"], call["toolCallId"], "{seen}");
    assert_eq!(
        asked[0]["tool_call"]["rawInput"]["command"],
        "printf made > made.txt"
    );
    assert!(!work.path().join("made.txt").exists());
    assert!(last_results(&llm).contains("denied"), "{}", last_results(&llm));
    // The refused call ends failed, not running.
    let ended = updates_of(&seen, "tool_call_update");
    assert_eq!(ended.last().unwrap()["status"], "failed", "{seen}");
    assert_eq!(seen["stop_reason"], "end_turn");
}

/// A mode chosen while a turn runs is answered at once and applied when the turn ends, which
/// the client is told.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_mode_chosen_during_a_turn_is_answered_at_once_and_applied_after_it() {
    let work = tempfile::tempdir().unwrap();
    let llm = ScriptedServer::replying(calls_then(
        vec![tool_use(
            "t1",
            "shell",
            json!({"command": "sleep 1.5; echo slept"}),
        )],
        "Slept.",
    ))
    .await;
    let seen = client(
        work.path(),
        &llm,
        &["sleep", "--mode-after", "0.3", "read-only"],
        &["--approval", "auto"],
    )
    .await;
    assert_eq!(seen["stop_reason"], "end_turn", "{seen}");
    assert_eq!(seen["mode_answered_while_running"], true, "{seen}");
    // The command ran in the mode the turn started in.
    assert!(last_results(&llm).contains("slept"), "{}", last_results(&llm));
    let changed = updates_of(&seen, "current_mode_update");
    assert_eq!(changed.len(), 1, "{seen}");
    assert_eq!(changed[0]["currentModeId"], "read-only", "{seen}");
}

/// "Always reject" refuses the rest of the session's calls of that scope without asking.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reject_always_refuses_the_same_kind_of_call_later_without_asking() {
    let work = tempfile::tempdir().unwrap();
    let write = |id: &str, file: &str| tool_use(id, "write_file", json!({"file_path": file, "content": "x"}));
    let llm = ScriptedServer::replying(vec![
        message(&[write("t1", "a.txt")]),
        message(&[write("t2", "b.txt")]),
        message(&[text("Not writing.")]),
    ])
    .await;
    let seen = client(
        work.path(),
        &llm,
        &["write two files", "--option", "reject_always"],
        &["--approval", "ask"],
    )
    .await;
    assert_eq!(seen["stop_reason"], "end_turn", "{seen}");
    let asked = seen["permissions"].as_array().unwrap();
    assert_eq!(asked.len(), 1, "{seen}");
    assert_eq!(asked[0]["tool_call"]["toolCallId"], "t1", "{seen}");
    let second = last_results(&llm);
    assert!(second.contains("for the rest of the session"), "{second}");
    assert!(!work.path().join("a.txt").exists() && !work.path().join("b.txt").exists());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_mode_menu_makes_the_session_read_only() {
    let work = tempfile::tempdir().unwrap();
    let llm = a_model_that_makes_a_file("Refused, as read-only.").await;
    let seen = client(
        work.path(),
        &llm,
        &["make a file", "--mode", "read-only", "--option", "allow_once"],
        &["--approval", "auto"],
    )
    .await;
    let modes: Vec<&str> = seen["modes"]["availableModes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["id"].as_str().unwrap())
        .collect();
    assert_eq!(modes, ["ask", "auto", "read-only"]);
    assert_eq!(
        seen["permissions"],
        json!([]),
        "nothing is asked in read-only mode"
    );
    assert!(!work.path().join("made.txt").exists());
    assert!(last_results(&llm).contains("read-only"), "{}", last_results(&llm));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancel_during_a_long_command_kills_it_and_answers_cancelled() {
    let work = tempfile::tempdir().unwrap();
    let marker = format!("sleep 37.{}", std::process::id());
    let llm = ScriptedServer::replying(calls_then(
        vec![tool_use("t1", "shell", json!({"command": marker}))],
        "never reached",
    ))
    .await;
    let started = std::time::Instant::now();
    let seen = client(
        work.path(),
        &llm,
        &["wait a while", "--cancel-after", "2"],
        &["--approval", "auto"],
    )
    .await;
    assert_eq!(seen["stop_reason"], "cancelled", "{seen}");
    // A hang guard only: the command would take 37 s.
    assert!(started.elapsed() < std::time::Duration::from_secs(30));
    assert!(common::processes_with(&marker).is_empty());
}

/// A link attaches the file it names, read as the file tools read: one outside the
/// workspace is not attached (its path stays a word of the prompt).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_resource_link_attaches_the_file_it_names_inside_the_workspace_only_and_commands_are_offered() {
    let work = tempfile::tempdir().unwrap();
    std::fs::write(work.path().join("notes.txt"), "the notes' own words\n").unwrap();
    std::fs::create_dir(work.path().join(".agent")).unwrap();
    std::fs::create_dir(work.path().join(".agent/commands")).unwrap();
    std::fs::write(
        work.path().join(".agent/commands/review.md"),
        "---\ndescription: Review files\nargument-hint: FILES\n---\nReview $ARGUMENTS with care.\n",
    )
    .unwrap();
    let elsewhere = tempfile::tempdir().unwrap();
    let secret = elsewhere.path().join("secret.txt");
    std::fs::write(&secret, "a secret outside the workspace\n").unwrap();
    let llm = ScriptedServer::replying(vec![message(&[text("Read them.")])]).await;
    let seen = client(
        work.path(),
        &llm,
        &[
            "/review these",
            "--link",
            "notes.txt",
            "--link",
            secret.to_str().unwrap(),
        ],
        &["--approval", "auto"],
    )
    .await;
    assert_eq!(seen["stop_reason"], "end_turn");
    let body = &llm.requests()[0].body;
    assert!(body.contains("the notes' own words"), "{body}");
    assert!(!body.contains("a secret outside the workspace"), "{body}");
    assert!(body.contains("was not attached"), "{body}");
    // The commands menu offered the project's command, and `/review` sent its prompt.
    let menu = &updates_of(&seen, "available_commands_update")[0]["availableCommands"];
    assert_eq!(menu[0]["name"], "review", "{seen}");
    assert_eq!(menu[0]["input"]["hint"], "FILES", "{seen}");
    assert!(body.contains("Review these with care."), "{body}");
}

/// The editor goes away in the middle of a long command: the command does not outlive it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_editor_that_leaves_mid_turn_leaves_no_command_behind() {
    let work = tempfile::tempdir().unwrap();
    let marker = format!("sleep 41.{}", std::process::id());
    let llm = ScriptedServer::replying(calls_then(
        vec![tool_use("t1", "shell", json!({"command": marker}))],
        "never reached",
    ))
    .await;
    let seen = client(
        work.path(),
        &llm,
        &["wait a while", "--quit-after", "2"],
        &["--approval", "auto"],
    )
    .await;
    assert_eq!(seen["stop_reason"], Value::Null);
    let started = updates_of(&seen, "tool_call");
    assert_eq!(started.len(), 1, "the command was running: {seen}");
    // The client has ended and waited for the agent; a hang guard only bounds the check.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while !common::processes_with(&marker).is_empty() {
        assert!(
            std::time::Instant::now() < deadline,
            "{:?}",
            common::processes_with(&marker)
        );
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
}

/// Without a key the editor is told `auth_required` (so it shows the authentication method,
/// which says where keys are set), at `authenticate` and at `session/new`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_a_key_the_editor_is_told_authentication_is_required() {
    let work = tempfile::tempdir().unwrap();
    let llm = ScriptedServer::replying(vec![]).await;
    let mut options = vec!["hello", "--expect-error", "--authenticate", "environment"];
    for name in [
        "ANTHROPIC_API_KEY",
        "ANTHROPIC_BASE_URL",
        "OPENAI_API_KEY",
        "GEMINI_API_KEY",
    ] {
        options.extend(["--unset-env", name]);
    }
    let seen = client(work.path(), &llm, &options, &[]).await;
    assert_eq!(seen["error"]["code"], -32000, "{seen}");
    let why = seen["error"]["data"].as_str().unwrap();
    assert!(
        why.contains("ANTHROPIC_API_KEY") && why.contains("restart the agent"),
        "{why}"
    );
    assert_eq!(seen["authenticated"]["code"], -32000, "{seen}");
    assert_eq!(seen["auth_methods"][0]["id"], "environment", "{seen}");
    assert!(llm.requests().is_empty());
}
