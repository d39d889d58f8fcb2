//! Terminal control characters from the model, its calls, files and commands' output: `run`
//! and `chat` show them escaped instead of letting them drive the terminal, and a command
//! cannot rewrite the approval question asked about it.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests may panic

mod common;
mod tmux;

use common::{agent_host, stderr, stdout};
use scripted_llm::anthropic::{message, text, tool_use};
use scripted_llm::{Reply, ScriptedServer};
use serde_json::json;
use std::path::Path;
use tmux::ChatPane;

/// Writes the clipboard (OSC 52), clears the screen, and sets the window's title.
const HOSTILE: &str = "\u{1b}]52;c;cm0gLXJmIH4=\u{7}\u{1b}[2J\u{1b}]0;pwned\u{7}";
/// How [`HOSTILE`] is shown.
const HOSTILE_SHOWN: &str = r"\x1b]52;c;cm0gLXJmIH4=\x07\x1b[2J\x1b]0;pwned\x07";
/// Back to the start of the line and erase it: the question would read `echo safe`.
const SPOOF: &str = "ls\r\u{1b}[2Kecho safe";
const SPOOF_SHOWN: &str = r"ls\r\x1b[2Kecho safe";

async fn server(replies: Vec<Reply>) -> ScriptedServer {
    ScriptedServer::replying(replies).await
}

/// A reply with the hostile text, then calls whose arguments, output and file contents
/// carry escape sequences too, then a final answer with more of them.
fn hostile_replies() -> Vec<Reply> {
    vec![
        message(&[
            text(&format!("Hello{HOSTILE}\u{9b}31m red\u{202e}txt.exe")),
            tool_use(
                "t1",
                "shell",
                json!({"command": "printf 'out\\033[2J\\033]52;c;eA==\\007\\n'"}),
            ),
            tool_use("t2", "read_file", json!({"file_path": "notes.txt"})),
            tool_use(
                "t3",
                "write_file",
                json!({"file_path": "new.txt", "content": format!("line{HOSTILE}\n")}),
            ),
        ]),
        message(&[text("Done.\u{1b}[8m hidden")]),
    ]
}

fn assert_no_control_characters(printed: &str) {
    for c in ['\u{1b}', '\u{7}', '\u{9b}', '\u{202e}', '\r'] {
        assert!(!printed.contains(c), "{c:?} was printed: {printed:?}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn run_shows_escape_sequences_of_the_model_and_of_tool_output_escaped() {
    let server = server(hostile_replies()).await;
    let (work, home) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    std::fs::write(work.path().join("notes.txt"), format!("notes{HOSTILE}\n")).unwrap();
    let output = agent_host()
        .args(["run", "say hello", "--cwd"])
        .arg(work.path())
        .env("ANTHROPIC_BASE_URL", server.base_url())
        .env("HOME", home.path())
        .env("AGENT_HOST_STATE_DIR", home.path().join("state"))
        .output()
        .await
        .unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
    let printed = stdout(&output);
    assert_no_control_characters(&printed);
    assert_no_control_characters(&stderr(&output));
    for shown in [
        format!("Hello{HOSTILE_SHOWN}\\u{{9b}}31m red\\u{{202e}}txt.exe"),
        r"out\x1b[2J\x1b]52;c;eA==\x07".to_string(),
        format!("notes{HOSTILE_SHOWN}"),
        r"Done.\x1b[8m hidden".to_string(),
    ] {
        assert!(printed.contains(&shown), "{shown:?} is missing from:\n{printed}");
    }
    // The file was written as the model asked: only its display is escaped.
    assert_eq!(
        std::fs::read_to_string(work.path().join("new.txt")).unwrap(),
        format!("line{HOSTILE}\n")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn chat_shows_escape_sequences_of_the_model_of_tool_output_and_of_diffs_escaped() {
    let server = server(hostile_replies()).await;
    let (work, home) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    std::fs::write(work.path().join("notes.txt"), format!("notes{HOSTILE}\n")).unwrap();
    let mut chat = agent_host();
    chat.args(["chat", "--cwd"])
        .arg(work.path())
        .env("ANTHROPIC_BASE_URL", server.base_url())
        .env("HOME", home.path())
        .env("XDG_CONFIG_HOME", home.path().join("config"))
        .env("AGENT_HOST_STATE_DIR", home.path().join("state"));
    let output = common::with_input(chat, b"say hello\n").await;
    assert!(output.status.success(), "{}", stderr(&output));
    let printed = stdout(&output);
    assert_no_control_characters(&printed);
    for shown in [
        format!("Hello{HOSTILE_SHOWN}\\u{{9b}}31m red\\u{{202e}}txt.exe"),
        r"out\x1b[2J\x1b]52;c;eA==\x07".to_string(),
        format!("1 + line{HOSTILE_SHOWN}"),
        r"Done.\x1b[8m hidden".to_string(),
    ] {
        assert!(printed.contains(&shown), "{shown:?} is missing from:\n{printed}");
    }
}

/// The environment of an `agent-host` in tmux: the scripted server, a home of its own.
fn pane_env(server: &ScriptedServer, home: &Path) -> Vec<(&'static str, String)> {
    let path = |sub: &str| home.join(sub).display().to_string();
    vec![
        ("HOME", home.display().to_string()),
        ("XDG_CONFIG_HOME", path("config")),
        ("XDG_STATE_HOME", path("state")),
        ("XDG_DATA_HOME", path("data")),
        ("AGENT_CORE_COMPONENT", common::component().display().to_string()),
        ("AGENT_HOST_CACHE_DIR", common::cache_dir().display().to_string()),
        ("ANTHROPIC_BASE_URL", server.base_url()),
        ("ANTHROPIC_API_KEY", "test-key".to_string()),
    ]
}

fn spoofing_replies() -> Vec<Reply> {
    vec![
        message(&[tool_use("s1", "shell", json!({ "command": SPOOF }))]),
        message(&[text("Not run.")]),
    ]
}

/// The model's refusal of the call, as the model received it.
fn refusal(server: &ScriptedServer) -> String {
    let requests = server.requests();
    let result = &requests[1].tool_results()[0];
    assert_eq!(result["is_error"], true, "{result}");
    result["content"].as_str().unwrap_or_default().to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn run_asks_about_a_command_with_a_carriage_return_in_its_escaped_form() {
    if !tmux::available() {
        println!("skipped: tmux not installed");
        return;
    }
    let server = server(spoofing_replies()).await;
    let (work, home) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let work_dir = work.path().display().to_string();
    let pane = ChatPane::start_command(
        &pane_env(&server, home.path()),
        &["run", "list the files", "--cwd", &work_dir, "--approval", "ask"],
        "",
    );
    // The end of the question: whatever the command did to the line's start.
    pane.wait_for("n: no (n <reason>) >").await;
    let screen = pane.capture(false);
    assert!(
        screen.contains(&format!("shell: run `{SPOOF_SHOWN}` - ")),
        "the question does not show the command as it will run:\n{screen}"
    );
    pane.enter("n");
    assert_eq!(pane.wait_for_exit().await, 0, "{}", pane.capture(false));
    assert!(refusal(&server).contains("denied"), "{}", refusal(&server));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn chat_asks_about_a_command_with_a_carriage_return_in_its_escaped_form() {
    if !tmux::available() {
        println!("skipped: tmux not installed");
        return;
    }
    let server = server(spoofing_replies()).await;
    let (work, home) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let pane = ChatPane::start(
        work.path(),
        &pane_env(&server, home.path()),
        &["--approval", "ask"],
    );
    pane.wait_for_prompt().await;
    pane.enter("list the files");
    pane.wait_for("· n no").await;
    let screen = pane.capture(false);
    assert!(
        screen.contains(&format!("shell: run `{SPOOF_SHOWN}`")),
        "the question does not show the command as it will run:\n{screen}"
    );
    pane.enter("n");
    pane.wait_for("Not run.").await;
    let screen = pane.wait_for_prompt().await;
    assert!(
        screen.contains(&format!("? shell: run `{SPOOF_SHOWN}` → denied")),
        "{screen}"
    );
    assert!(refusal(&server).contains("denied"), "{}", refusal(&server));
}
