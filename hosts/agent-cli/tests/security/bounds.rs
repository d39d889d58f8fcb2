//! Limits that hold (THREAT-MODEL.md, row 7). A subagent stays within its parent's turn
//! limit; a command's background jobs end with it; one command's output and one LLM response
//! are capped in memory, events and the session log.

use crate::common::{processes_with, stderr, stdout};
use crate::{UserDirs, llm, succeeded};
use scripted_llm::anthropic::{message, text, tool_use};
use scripted_llm::{Reply, Route, Script, ScriptedServer};
use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

const CHILD_MARKER: &str = "You are a subagent";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_subagent_asking_for_unlimited_turns_gets_no_more_than_its_parent() {
    let mut children: Vec<Reply> = (0..6)
        .map(|i| {
            message(&[tool_use(
                &format!("c{i}"),
                "shell",
                json!({"command": "echo again"}),
            )])
        })
        .collect();
    children.push(message(&[text("Child done.")]));
    let llm = ScriptedServer::start_routed(
        Script {
            replies: vec![
                message(&[
                    tool_use("p1", "spawn_agent", json!({"task": "loop", "max_turns": 0})),
                    tool_use("p2", "wait", json!({"agent_id": "agent-1"})),
                ]),
                message(&[text("Parent done.")]),
            ],
            require_api_key: None,
        },
        vec![Route {
            marker: CHILD_MARKER.to_string(),
            replies: children,
        }],
    )
    .await
    .unwrap();
    let work = tempfile::tempdir().unwrap();
    let output = UserDirs::new()
        .run(
            "split",
            &["--no-persist", "--max-turns", "2"],
            work.path(),
            &llm.base_url(),
        )
        .await;
    succeeded(&output);
    let child_requests = llm
        .requests()
        .iter()
        .filter(|r| r.body.contains(CHILD_MARKER))
        .count();
    assert_eq!(child_requests, 2, "the child ran past its parent's --max-turns 2");
}

/// A session whose model runs `command` with the shell tool, then stops; its workspace.
async fn run_one_command(command: &str) -> tempfile::TempDir {
    let llm = llm(vec![
        message(&[tool_use("t1", "shell", json!({ "command": command }))]),
        message(&[text("Started.")]),
    ])
    .await;
    let work = tempfile::tempdir().unwrap();
    let output = UserDirs::new()
        .run("start", &["--no-persist"], work.path(), &llm.base_url())
        .await;
    succeeded(&output);
    work
}

/// A marker no other process on the machine has in its command line.
fn marker(what: &str) -> String {
    format!("agent-host-test-{what}-{}-{}", std::process::id(), rand_suffix())
}

fn rand_suffix() -> u128 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_background_job_ends_with_its_command() {
    let mark = marker("background");
    run_one_command(&format!("sh -c 'sleep 300; : {mark}' &")).await;
    assert_eq!(processes_with(&mark), [], "the background job outlived its call");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_process_that_leaves_its_group_ends_with_its_command() {
    let mark = marker("setsid");
    run_one_command(&format!("setsid sh -c 'sleep 300; : {mark}' > /dev/null 2>&1 &")).await;
    assert_eq!(
        processes_with(&mark),
        [],
        "the process in its own session outlived its call"
    );
}

/// A process that leaves its group and clears its environment (so no tag of its call is
/// left to find it), twice forked, is gone with its call all the same: the call's PID
/// namespace ends with its first process.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_process_that_leaves_its_group_and_clears_its_environment_ends_with_its_command() {
    let mark = marker("env-i");
    run_one_command(&format!(
        "( setsid env -i /bin/sh -c 'sleep 300; : {mark}' > /dev/null 2>&1 & ) &"
    ))
    .await;
    assert_eq!(
        processes_with(&mark),
        [],
        "the process that cleared its environment outlived its call"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_command_printing_300_mb_leaves_a_small_session_log() {
    let llm = llm(vec![
        message(&[tool_use(
            "t1",
            "shell",
            json!({"command": "head -c 300000000 /dev/zero | tr '\\0' x", "timeout_ms": 120000}),
        )]),
        message(&[text("Printed.")]),
    ])
    .await;
    let dirs = UserDirs::new();
    let work = tempfile::tempdir().unwrap();
    let output = dirs.run("print", &["--json"], work.path(), &llm.base_url()).await;
    assert!(output.status.success(), "{}", stderr(&output));
    // At most 16 MiB streamed and the same 16 MiB in the result (135 MB before, with a cap
    // of 32 MiB).
    let saved = dirs.state_text().len();
    assert!(saved < 40 << 20, "the session's files hold {saved} bytes");
    assert!(
        stdout(&output).len() < 40 << 20,
        "{} bytes of events",
        stdout(&output).len()
    );
    assert!(
        stdout(&output).contains("AGENT_HOST_MAX_COMMAND_OUTPUT"),
        "the cap is not reported"
    );
}

/// A server that answers every request with an Anthropic stream that never ends.
async fn endless_stream_server() -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move {
        while let Ok((mut socket, _)) = listener.accept().await {
            tokio::spawn(async move {
                let mut request = vec![0u8; 64 * 1024];
                let _ = socket.read(&mut request).await;
                let head = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nconnection: close\r\n\r\n\
                    event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"m\",\"type\":\"message\",\
                    \"role\":\"assistant\",\"model\":\"m\",\"content\":[],\"stop_reason\":null,\
                    \"usage\":{\"input_tokens\":1,\"output_tokens\":1}}}\n\n\
                    event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\
                    \"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n";
                if socket.write_all(head.as_bytes()).await.is_err() {
                    return;
                }
                let delta = format!(
                    "event: content_block_delta\ndata: {{\"type\":\"content_block_delta\",\"index\":0,\
                     \"delta\":{{\"type\":\"text_delta\",\"text\":\"{}\"}}}}\n\n",
                    "a".repeat(4000)
                );
                while socket.write_all(delta.as_bytes()).await.is_ok() {}
            });
        }
    });
    url
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_endless_response_is_cut_off_at_the_cap() {
    let url = endless_stream_server().await;
    let dirs = UserDirs::new();
    let work = tempfile::tempdir().unwrap();
    let output = dirs
        .agent_host()
        .args(["run", "talk", "--cwd"])
        .arg(work.path())
        .env("ANTHROPIC_BASE_URL", &url)
        .env("AGENT_HOST_MAX_RESPONSE_BYTES", "1M")
        .output()
        .await
        .unwrap();
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    assert!(stderr(&output).contains("cut off"), "{}", stderr(&output));
    let saved = dirs.state_text().len();
    assert!(saved < 16 << 20, "the session's files hold {saved} bytes");
}
