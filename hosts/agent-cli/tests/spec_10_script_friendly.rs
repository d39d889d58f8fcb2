//! Output for scripts: `run` writes no escape codes into a pipe and says what its exit
//! codes mean; `chat` without a terminal reads its inputs line by line and prints plain text.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests may panic

mod common;

use common::{agent_host, stderr, stdout};
use scripted_llm::ScriptedServer;
use scripted_llm::anthropic::{message, text, tool_use};
use serde_json::json;

/// `agent-host` with the scripted server as its Anthropic endpoint and a home of its own.
fn agent_host_for(server: &ScriptedServer, home: &std::path::Path) -> tokio::process::Command {
    let mut cmd = agent_host();
    cmd.env("ANTHROPIC_BASE_URL", server.base_url())
        .env("HOME", home)
        .env("XDG_CONFIG_HOME", home.join("config"))
        .env("AGENT_HOST_STATE_DIR", home.join("state"))
        // A terminal that could show colours: only a pipe is on the other end.
        .env("TERM", "xterm-256color")
        .env_remove("NO_COLOR");
    cmd
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn run_into_a_pipe_prints_no_escape_codes() {
    let server = common::scripted_server(vec![
        message(&[
            text("Writing."),
            tool_use(
                "t1",
                "write_file",
                json!({"file_path": "a.txt", "content": "a\n"}),
            ),
        ]),
        message(&[text("Done.")]),
    ])
    .await;
    let (work, home) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let output = agent_host_for(&server, home.path())
        .args(["run", "write a.txt", "--cwd"])
        .arg(work.path())
        .output()
        .await
        .unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
    let printed = stdout(&output);
    assert!(
        printed.contains("> write_file a.txt") && printed.contains("Done."),
        "{printed}"
    );
    assert!(
        !printed.contains('\u{1b}') && !stderr(&output).contains('\u{1b}'),
        "{printed:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn run_stopped_by_a_limit_exits_with_3() {
    let server = common::scripted_server(vec![message(&[tool_use(
        "t1",
        "shell",
        json!({"command": "echo again"}),
    )])])
    .await;
    let (work, home) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let output = agent_host_for(&server, home.path())
        .args(["run", "loop", "--max-turns", "1", "--cwd"])
        .arg(work.path())
        .output()
        .await
        .unwrap();
    assert_eq!(output.status.code(), Some(3), "{}", stderr(&output));
    assert!(
        stderr(&output).contains("stopped by a limit"),
        "{}",
        stderr(&output)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn run_help_documents_the_exit_codes() {
    let output = agent_host().args(["run", "--help"]).output().await.unwrap();
    let help = stdout(&output);
    for expected in [
        "Exit codes:",
        "  0 ",
        "  1 ",
        "  2 ",
        "  3 ",
        "  130 ",
        "never coloured",
    ] {
        assert!(help.contains(expected), "{expected:?} is missing from:\n{help}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn chat_without_a_terminal_takes_each_line_as_the_next_input() {
    let server = common::scripted_server(vec![
        message(&[tool_use(
            "t1",
            "write_file",
            json!({"file_path": "a.txt", "content": "a\n"}),
        )]),
        message(&[text("First done.")]),
        message(&[text("Second done.")]),
    ])
    .await;
    let (work, home) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let mut chat = agent_host_for(&server, home.path());
    chat.args(["chat", "--cwd"]).arg(work.path());
    // Both lines at once: the second waits for the first input to finish.
    let output = common::with_input(chat, b"write a.txt\nand then?\n").await;
    assert!(output.status.success(), "{}", stderr(&output));
    let printed = stdout(&output);
    assert!(!printed.contains('\u{1b}'), "{printed:?}");
    let first = printed.find("First done.").expect(&printed);
    let second = printed.find("Second done.").expect(&printed);
    assert!(
        first < second && printed.contains("● write_file a.txt"),
        "{printed}"
    );
    assert!(printed.contains("a.txt: new file, 1 line"), "{printed}");
    let requests = server.requests();
    assert_eq!(requests.len(), 3);
    let last = requests[2].json();
    let texts: Vec<&str> = last["messages"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|m| m["content"].as_array().unwrap().iter())
        .filter_map(|b| b["text"].as_str())
        .collect();
    assert_eq!(texts, vec!["write a.txt", "First done.", "and then?"]);
}
