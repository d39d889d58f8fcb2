//! The first minutes with the CLI: where the task comes from (argument, `-f`, standard
//! input), the errors a newcomer meets (a server that is not running, a base URL without a
//! scheme, a server without the Responses API, an unknown model, several endpoints), each
//! printed once with the setting to change, renamed flags, `--version`, and the layout
//! `make install` makes.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests may panic

mod common;

use common::{agent_host, stderr, stdout, with_input};
use scripted_llm::anthropic::{message, text};
use scripted_llm::{Reply, ScriptedServer, chat_completions};
use std::process::Output;

/// A 404 as a server without the route sends it (Go's and Python's servers alike).
fn not_found() -> Reply {
    Reply {
        status: 404,
        headers: vec![("content-type".into(), "text/plain".into())],
        chunks: vec!["404 page not found".into()],
        delay_ms: 0,
    }
}

/// A loopback port nothing listens on: bound, then let go.
fn closed_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.local_addr().unwrap().port()
}

/// `agent-host run` in a fresh workspace, not saved.
fn run(args: &[&str]) -> tokio::process::Command {
    let work = tempfile::tempdir().unwrap().keep();
    let mut cmd = agent_host();
    cmd.arg("run").args(args).arg("-C").arg(work).arg("--no-persist");
    cmd
}

/// The lines of stderr that are agent-host's own messages.
fn messages(output: &Output) -> Vec<String> {
    stderr(output)
        .lines()
        .filter(|l| l.starts_with("agent-host:") || l.starts_with("hint:"))
        .map(str::to_string)
        .collect()
}

/// The user's text of the first request the server received.
fn first_task(server: &ScriptedServer) -> String {
    let body = server.requests()[0].json();
    body["messages"][0]["content"][0]["text"]
        .as_str()
        .or_else(|| body["messages"][0]["content"].as_str())
        .unwrap_or_default()
        .to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_task_comes_from_an_argument_a_file_a_dash_or_a_pipe() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("task.md");
    std::fs::write(&file, "the task from a file\nwith two lines\n").unwrap();
    for (how, args, stdin, expected) in [
        (
            "argument",
            vec!["the task as an argument"],
            None,
            "the task as an argument",
        ),
        (
            "-f",
            vec!["-f", file.to_str().unwrap()],
            None,
            "the task from a file\nwith two lines\n",
        ),
        (
            "-",
            vec!["-"],
            Some("the task after a dash\n"),
            "the task after a dash\n",
        ),
        (
            "pipe",
            vec![],
            Some("the task from a pipe"),
            "the task from a pipe",
        ),
    ] {
        let server = common::scripted_server(vec![message(&[text("Done.")])]).await;
        let mut cmd = run(&args);
        cmd.env("ANTHROPIC_BASE_URL", server.base_url());
        let output = match stdin {
            Some(input) => with_input(cmd, input.as_bytes()).await,
            None => cmd.stdin(std::process::Stdio::null()).output().await.unwrap(),
        };
        assert!(output.status.success(), "{how}: {}", stderr(&output));
        assert_eq!(first_task(&server), expected, "{how}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_empty_or_missing_task_is_refused_before_any_request() {
    let server = common::scripted_server(vec![message(&[text("Done.")])]).await;
    for (how, args, stdin) in [
        ("empty argument", vec![""], None),
        ("blank argument", vec!["  \n "], None),
        ("empty pipe", vec![], Some("")),
        ("dash with nothing", vec!["-"], Some("   \n")),
    ] {
        let mut cmd = run(&args);
        cmd.env("ANTHROPIC_BASE_URL", server.base_url());
        let output = with_input(cmd, stdin.unwrap_or_default().as_bytes()).await;
        assert_eq!(output.status.code(), Some(2), "{how}: {}", stderr(&output));
        assert!(
            stderr(&output).contains("the task is empty"),
            "{how}: {}",
            stderr(&output)
        );
    }
    let missing = tempfile::tempdir().unwrap().path().join("no-such-task.md");
    let output = run(&["-f", missing.to_str().unwrap()])
        .env("ANTHROPIC_BASE_URL", server.base_url())
        .output()
        .await
        .unwrap();
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    assert!(
        stderr(&output).contains("cannot read the task from"),
        "{}",
        stderr(&output)
    );
    let both = run(&["a task", "-f", "x.md"]).output().await.unwrap();
    assert_eq!(
        both.status.code(),
        Some(2),
        "a TASK and -f together: {}",
        stderr(&both)
    );
    assert!(server.requests().is_empty(), "no request was sent");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_is_not_running_is_named_once_with_its_variable() {
    let url = format!("http://127.0.0.1:{}", closed_port());
    let output = run(&["hello"])
        .env("ANTHROPIC_BASE_URL", &url)
        .output()
        .await
        .unwrap();
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    let said = messages(&output);
    assert_eq!(said.len(), 1, "one message: {said:?}");
    assert!(
        said[0].contains(&format!("{url}/v1/messages: connection refused"))
            && said[0].contains("is the server at ANTHROPIC_BASE_URL running?"),
        "{said:?}"
    );
    assert!(
        !stderr(&output).contains("[error]"),
        "not repeated: {}",
        stderr(&output)
    );
    assert!(
        !stderr(&output).contains("tcp connect error"),
        "no error chain: {}",
        stderr(&output)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_base_url_without_a_scheme_is_refused_at_start() {
    let output = run(&["hello"])
        .env("ANTHROPIC_BASE_URL", format!("127.0.0.1:{}", closed_port()))
        .output()
        .await
        .unwrap();
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    let said = messages(&output);
    assert_eq!(said.len(), 1, "{said:?}");
    assert!(
        said[0].contains("ANTHROPIC_BASE_URL") && said[0].contains("http://127.0.0.1:8080"),
        "{said:?}"
    );
    assert!(
        !stderr(&output).contains("retrying"),
        "no request was tried: {}",
        stderr(&output)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_without_the_responses_api_gets_the_way_to_chat_completions() {
    let server = common::scripted_server(vec![not_found()]).await;
    let output = run(&["hello"])
        .env("OPENAI_BASE_URL", format!("{}/v1", server.base_url()))
        .output()
        .await
        .unwrap();
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    assert_eq!(server.requests()[0].path, "/v1/responses");
    let said = messages(&output).join("\n");
    assert!(said.contains("404"), "{said}");
    assert!(
        said.contains(&format!("{}/v1/responses", server.base_url()))
            && said.contains("OPENAI_BASE_URL")
            && said.contains("OPENAI_COMPATIBLE_ENDPOINTS=local=")
            && said.contains("--model"),
        "{said}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unknown_model_names_the_model_flag() {
    let server = common::scripted_server(vec![not_found()]).await;
    let output = run(&["hello", "-m", "claude-nonexistent"])
        .env("ANTHROPIC_BASE_URL", server.base_url())
        .output()
        .await
        .unwrap();
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    let said = messages(&output).join("\n");
    assert!(
        said.contains("\"claude-nonexistent\"")
            && said.contains("--model")
            && said.contains("ANTHROPIC_MODEL"),
        "{said}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_compatible_endpoint_is_used_without_naming_it_and_two_ask_which() {
    let server = common::scripted_server(vec![chat_completions::message(&[text("Done.")])]).await;
    let output = run(&["hello", "-m", "qwen2.5-coder"])
        .env(
            "OPENAI_COMPATIBLE_ENDPOINTS",
            format!("local={}/v1", server.base_url()),
        )
        .output()
        .await
        .unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
    assert_eq!(server.requests()[0].path, "/v1/chat/completions");
    assert!(stdout(&output).contains("Done."), "{}", stdout(&output));

    let two = run(&["hello", "-m", "qwen2.5-coder"])
        .env(
            "OPENAI_COMPATIBLE_ENDPOINTS",
            format!("local={0}/v1,other={0}/v1", server.base_url()),
        )
        .output()
        .await
        .unwrap();
    assert_eq!(two.status.code(), Some(2), "{}", stderr(&two));
    assert!(
        stderr(&two).contains("several endpoints are configured (local, other)")
            && stderr(&two).contains("--provider"),
        "{}",
        stderr(&two)
    );
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn renamed_flags_still_work_with_a_warning() {
    let server = common::scripted_server(vec![message(&[text("Done.")])]).await;
    let output = run(&["hello", "--env-policy", "core", "--max-tokens", "100000"])
        .env("ANTHROPIC_BASE_URL", server.base_url())
        .output()
        .await
        .unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
    let said = stderr(&output);
    assert!(said.contains("--env-policy is now --vars"), "{said}");
    assert!(
        said.contains("--max-tokens is now --max-session-tokens"),
        "{said}"
    );
    let help = agent_host().args(["run", "--help"]).output().await.unwrap();
    let help = stdout(&help);
    for shown in [
        "-m, --model",
        "-C, --cd",
        "-f, --task-file",
        "-a, --approval",
        "-s, --sandbox",
        "--vars <POLICY>",
    ] {
        assert!(help.contains(shown), "{shown} in run --help:\n{help}");
    }
    for hidden in ["--env-policy", "--max-tokens", "--env-allow"] {
        assert!(!help.contains(hidden), "{hidden} is not offered:\n{help}");
    }
    for heading in [
        "Model:",
        "Approvals and budgets:",
        "Where tools run:",
        "Sandbox:",
        "Record and replay:",
    ] {
        assert!(help.contains(heading), "{heading}\n{help}");
    }
}

/// `make install`'s layout: PREFIX/bin/agent-host finds PREFIX/share/agent-host/agent-core.wasm,
/// and `--version` names it with its SHA-256.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_installed_binary_finds_its_component_and_names_its_hash() {
    let prefix = tempfile::tempdir().unwrap();
    let (bin, share) = (prefix.path().join("bin"), prefix.path().join("share/agent-host"));
    std::fs::create_dir_all(&bin).unwrap();
    std::fs::create_dir_all(&share).unwrap();
    std::fs::copy(env!("CARGO_BIN_EXE_agent-host"), bin.join("agent-host")).unwrap();
    std::fs::copy(common::component(), share.join("agent-core.wasm")).unwrap();
    // The test environment of `agent_host()`, but the installed binary and no component named.
    let installed = |args: &[&str]| {
        let mut cmd = tokio::process::Command::new(bin.join("agent-host"));
        for (name, value) in agent_host().as_std().get_envs() {
            match value {
                Some(value) => cmd.env(name, value),
                None => cmd.env_remove(name),
            };
        }
        cmd.args(args)
            .env_remove("AGENT_CORE_COMPONENT")
            .kill_on_drop(true);
        cmd
    };
    let version = installed(&["--version"]).output().await.unwrap();
    assert!(version.status.success(), "{}", stderr(&version));
    let shown = stdout(&version);
    let sha = std::process::Command::new("sha256sum")
        .arg(share.join("agent-core.wasm"))
        .output()
        .unwrap();
    let sha = String::from_utf8_lossy(&sha.stdout)
        .split_whitespace()
        .next()
        .unwrap()
        .to_string();
    assert!(
        shown.starts_with(&format!("agent-host {}", env!("CARGO_PKG_VERSION"))),
        "{shown}"
    );
    assert!(
        shown.contains("share/agent-host/agent-core.wasm") && shown.contains(&sha),
        "{shown}"
    );

    let server = common::scripted_server(vec![message(&[text("Installed and running.")])]).await;
    let work = tempfile::tempdir().unwrap();
    let output = installed(&[
        "run",
        "hello",
        "--no-persist",
        "-C",
        work.path().to_str().unwrap(),
    ])
    .env("ANTHROPIC_BASE_URL", server.base_url())
    .output()
    .await
    .unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(
        stdout(&output).contains("Installed and running."),
        "{}",
        stdout(&output)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn batch_and_worker_neither_offer_nor_take_a_working_directory() {
    for command in ["batch", "worker"] {
        let help = agent_host().args([command, "--help"]).output().await.unwrap();
        let help = stdout(&help);
        assert!(
            !help.contains("--cd <DIR>") && !help.contains("--cwd"),
            "{command} --help:\n{help}"
        );
    }
    let dir = tempfile::tempdir().unwrap();
    let tasks = dir.path().join("tasks.jsonl");
    std::fs::write(&tasks, "").unwrap();
    let output = agent_host()
        .args([
            "batch",
            tasks.to_str().unwrap(),
            "-C",
            dir.path().to_str().unwrap(),
        ])
        .output()
        .await
        .unwrap();
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    assert!(
        stderr(&output).contains("--cd does not apply to tasks"),
        "{}",
        stderr(&output)
    );
}
