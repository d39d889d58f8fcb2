//! `agent-host run` and `agent-host tool` end to end: the real binary, the real component,
//! real tools and processes, and real HTTP to the scripted server on 127.0.0.1.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests may panic

mod common;

use common::{agent_host, stderr, stdout};
use scripted_llm::anthropic::{message, text, tool_use};
use scripted_llm::{Script, ScriptedServer};
use serde_json::{Value, json};

fn tool_results(request: &Value) -> Vec<Value> {
    request["messages"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|m| m["role"] == "user")
        .flat_map(|m| m["content"].as_array().cloned().unwrap_or_default())
        .filter(|block| block["type"] == "tool_result")
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn create_a_file_task_writes_the_file_and_sends_tool_results_back() -> anyhow::Result<()> {
    let server = ScriptedServer::start(Script {
        replies: vec![
            message(&[
                text("I'll create it."),
                tool_use(
                    "toolu_1",
                    "write_file",
                    json!({"file_path": "hello.py", "content": "print(\"Hello\")\n"}),
                ),
            ]),
            message(&[tool_use(
                "toolu_2",
                "shell",
                json!({"command": "python3 hello.py"}),
            )]),
            message(&[text("Created hello.py; it prints Hello.")]),
        ],
        require_api_key: Some("test-key".to_string()),
    })
    .await?;
    let work = tempfile::tempdir()?;
    std::fs::write(work.path().join("CLAUDE.md"), "Claude notes.")?;
    std::fs::write(work.path().join("GEMINI.md"), "Gemini notes.")?;
    let output = agent_host()
        .args(["run", "Create hello.py that prints Hello", "--cwd"])
        .arg(work.path())
        .env("ANTHROPIC_BASE_URL", server.base_url())
        .env("ANTHROPIC_API_KEY", "test-key")
        .output()
        .await?;
    assert!(
        output.status.success(),
        "stdout:\n{}\nstderr:\n{}",
        stdout(&output),
        stderr(&output)
    );
    assert_eq!(
        std::fs::read_to_string(work.path().join("hello.py"))?,
        "print(\"Hello\")\n"
    );
    // The input's usage ends the run, on stderr (stdout is the answer).
    assert!(
        stderr(&output).contains("[usage] 3 requests · "),
        "{}",
        stderr(&output)
    );
    assert!(!stdout(&output).contains("[usage]"));

    let requests = server.requests();
    assert_eq!(requests.len(), 3);
    assert!(
        requests
            .iter()
            .all(|r| r.path == "/v1/messages" && r.header("x-api-key") == Some("test-key"))
    );
    assert_eq!(requests[0].header("anthropic-version"), Some("2023-06-01"));
    let first = requests[0].json();
    assert_eq!(first["stream"], true);
    assert_eq!(
        first["messages"][0]["content"][0]["text"],
        "Create hello.py that prints Hello"
    );
    let tool_names: Vec<&str> = first["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(tool_names, common::profile_tools("anthropic"));
    let system = first["system"][0]["text"].as_str().unwrap();
    assert!(system.contains("<environment>") && system.contains("Claude notes."));
    assert!(!system.contains("Gemini notes."));

    // The second request carries the write_file result, the third the shell output.
    let second = tool_results(&requests[1].json());
    assert_eq!(second.len(), 1);
    assert_eq!(second[0]["tool_use_id"], "toolu_1");
    assert_eq!(second[0]["is_error"], false);
    assert!(
        second[0]["content"]
            .as_str()
            .unwrap()
            .contains("Created hello.py")
    );
    let third = tool_results(&requests[2].json());
    assert_eq!(third.last().unwrap()["tool_use_id"], "toolu_2");
    let shell_output = third.last().unwrap()["content"].as_str().unwrap();
    assert!(
        shell_output.starts_with("Hello\n") && shell_output.contains("Exit code: 0"),
        "{shell_output}"
    );

    let printed = stdout(&output);
    assert!(
        printed.contains("> write_file hello.py") && printed.contains("Created hello.py; it prints Hello."),
        "{printed}"
    );
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn json_mode_prints_one_event_object_per_line_in_order() -> anyhow::Result<()> {
    let server = ScriptedServer::start(Script {
        replies: vec![
            message(&[tool_use("toolu_1", "shell", json!({"command": "echo streamed"}))]),
            message(&[text("done")]),
        ],
        require_api_key: None,
    })
    .await?;
    let work = tempfile::tempdir()?;
    let output = agent_host()
        .args(["run", "say it", "--json", "--cwd"])
        .arg(work.path())
        .env("ANTHROPIC_BASE_URL", server.base_url())
        .output()
        .await?;
    assert!(output.status.success(), "{}", stderr(&output));
    let events: Vec<Value> = stdout(&output)
        .lines()
        .map(serde_json::from_str)
        .collect::<Result<_, _>>()?;
    let kinds: Vec<&str> = events.iter().map(|e| e["kind"].as_str().unwrap()).collect();
    let position = |k: &str| {
        kinds
            .iter()
            .position(|x| *x == k)
            .unwrap_or_else(|| panic!("no {k} in {kinds:?}"))
    };
    assert_eq!(kinds.first(), Some(&"SESSION_START"));
    // The events end with the session; a RESULT line for scripts follows them.
    assert_eq!(kinds[kinds.len() - 2..], ["SESSION_END", "RESULT"]);
    assert!(position("USER_INPUT") < position("TOOL_CALL_START"));
    assert!(position("TOOL_CALL_START") < position("TOOL_CALL_OUTPUT_DELTA"));
    assert!(position("TOOL_CALL_OUTPUT_DELTA") < position("TOOL_CALL_END"));
    assert!(position("TOOL_CALL_END") < position("ASSISTANT_TEXT_DELTA"));
    assert!(position("ASSISTANT_TEXT_DELTA") < position("PROCESSING_END"));
    let end = &events[position("TOOL_CALL_END")];
    assert_eq!(end["data"]["call_id"], "toolu_1");
    assert!(end["data"]["output"].as_str().unwrap().starts_with("streamed\n"));
    let session_ids: std::collections::HashSet<&str> =
        events.iter().map(|e| e["session_id"].as_str().unwrap()).collect();
    assert_eq!(session_ids.len(), 1);
    Ok(())
}

#[tokio::test]
async fn without_a_provider_it_explains_how_to_configure_one() -> anyhow::Result<()> {
    let output = agent_host().args(["run", "anything"]).output().await?;
    assert_eq!(output.status.code(), Some(2));
    assert!(
        stderr(&output).contains("ANTHROPIC_API_KEY"),
        "{}",
        stderr(&output)
    );
    Ok(())
}

#[tokio::test]
async fn an_unreachable_endpoint_fails_with_a_connection_error() -> anyhow::Result<()> {
    // Bind then drop a listener: nothing listens on that port any more.
    let port = std::net::TcpListener::bind("127.0.0.1:0")?.local_addr()?.port();
    let work = tempfile::tempdir()?;
    let output = agent_host()
        .args(["run", "anything", "--cwd"])
        .arg(work.path())
        .env("ANTHROPIC_BASE_URL", format!("http://127.0.0.1:{port}"))
        .output()
        .await?;
    assert_eq!(output.status.code(), Some(1));
    let err = stderr(&output);
    assert!(
        err.contains("network error") && err.contains(&format!("127.0.0.1:{port}")),
        "{err}"
    );
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http_401_is_reported_as_an_authentication_error() -> anyhow::Result<()> {
    let server = ScriptedServer::start(Script {
        replies: vec![message(&[text("never sent")])],
        require_api_key: Some("right-key".to_string()),
    })
    .await?;
    let work = tempfile::tempdir()?;
    let output = agent_host()
        .args(["run", "anything", "--cwd"])
        .arg(work.path())
        .env("ANTHROPIC_BASE_URL", server.base_url())
        .env("ANTHROPIC_API_KEY", "wrong-key")
        .output()
        .await?;
    assert_eq!(output.status.code(), Some(1));
    let err = stderr(&output);
    assert!(
        err.contains("authentication error (HTTP 401): invalid x-api-key"),
        "{err}"
    );
    assert_eq!(server.remaining(), 1, "a 401 must not be retried");
    Ok(())
}

#[tokio::test]
async fn tool_subcommand_runs_one_tool_through_the_component() -> anyhow::Result<()> {
    let work = tempfile::tempdir()?;
    let write = agent_host()
        .args([
            "tool",
            "write_file",
            "--args",
            r#"{"file_path":"a/b.txt","content":"one\ntwo\n"}"#,
            "--cwd",
        ])
        .arg(work.path())
        .output()
        .await?;
    assert!(write.status.success(), "{}", stderr(&write));
    assert_eq!(
        std::fs::read_to_string(work.path().join("a/b.txt"))?,
        "one\ntwo\n"
    );
    let read = agent_host()
        .args([
            "tool",
            "read_file",
            "--args",
            r#"{"file_path":"a/b.txt","offset":2}"#,
            "--cwd",
        ])
        .arg(work.path())
        .output()
        .await?;
    assert_eq!(stdout(&read), "  2 | two\n");
    let bad = agent_host()
        .args(["tool", "read_file", "--args", r#"{"path":"x"}"#, "--cwd"])
        .arg(work.path())
        .output()
        .await?;
    assert_eq!(bad.status.code(), Some(1));
    assert!(
        stderr(&bad).contains("invalid arguments for read_file: arguments: missing properties 'file_path'"),
        "{}",
        stderr(&bad)
    );
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ctrl_c_aborts_gracefully_and_kills_the_running_command() -> anyhow::Result<()> {
    use tokio::io::{AsyncBufReadExt, BufReader};
    // The command is found by this mark in its command line: its own pid is its PID
    // namespace's.
    let mark = format!("ctrl-c-test-{}", std::process::id());
    let server = ScriptedServer::start(Script {
        replies: vec![message(&[tool_use(
            "t1",
            "shell",
            json!({"command": format!("sh -c 'sleep 30; : {mark}'")}),
        )])],
        require_api_key: None,
    })
    .await?;
    let work = tempfile::tempdir()?;
    let mut child = agent_host()
        .args(["run", "wait a while", "--json", "--cwd"])
        .arg(work.path())
        .env("ANTHROPIC_BASE_URL", server.base_url())
        .stdout(std::process::Stdio::piped())
        .spawn()?;
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    while let Some(line) = lines.next_line().await? {
        if line.contains("TOOL_CALL_START") {
            break;
        }
    }
    // The command is started after TOOL_CALL_START: the interrupt comes once it runs. The
    // deadline guards against a hang only (it starts within milliseconds).
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while common::processes_with(&mark).is_empty() {
        assert!(std::time::Instant::now() < deadline, "the command never started");
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    let started = std::time::Instant::now();
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(child.id().unwrap() as i32),
        nix::sys::signal::Signal::SIGINT,
    )?;
    let mut rest = Vec::new();
    while let Some(line) = lines.next_line().await? {
        rest.push(line);
    }
    let status = child.wait().await?;
    assert_eq!(status.code(), Some(130));
    // Guards against a hang only (the abort takes well under a second); waiting the command
    // out would take 30 s.
    assert!(
        started.elapsed() < std::time::Duration::from_secs(10),
        "{:?}",
        started.elapsed()
    );
    assert!(rest[rest.len() - 2].contains("SESSION_END"), "{rest:?}");
    assert!(
        rest.last().unwrap().contains(r#""state":"interrupted""#),
        "{rest:?}"
    );
    assert_eq!(common::processes_with(&mark), [], "the command survived");
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn apply_patch_from_the_cli_changes_files_and_a_failed_patch_changes_none() -> anyhow::Result<()> {
    let work = tempfile::tempdir()?;
    std::fs::write(work.path().join("app.py"), "def main():\n    print('hi')\n")?;
    std::fs::write(work.path().join("old.txt"), "bye\n")?;
    let good = "*** Begin Patch\n*** Update File: app.py\n@@ def main():\n-    print('hi')\n+    print('hello')\n\
                *** Delete File: old.txt\n*** Add File: docs/notes.md\n+# Notes\n*** End Patch\n";
    let output = agent_host()
        .args(["tool", "apply_patch", "--args"])
        .arg(serde_json::json!({"patch": good}).to_string())
        .arg("--cwd")
        .arg(work.path())
        .output()
        .await?;
    assert!(output.status.success(), "{}", stderr(&output));
    assert_eq!(
        stdout(&output),
        "Success. Updated the following files:\nM app.py\nD old.txt\nA docs/notes.md\n"
    );
    assert_eq!(
        std::fs::read_to_string(work.path().join("app.py"))?,
        "def main():\n    print('hello')\n"
    );
    assert!(!work.path().join("old.txt").exists());
    assert_eq!(
        std::fs::read_to_string(work.path().join("docs/notes.md"))?,
        "# Notes\n"
    );

    // The second hunk cannot apply: nothing may change, not even the first hunk's file.
    let before = std::fs::read(work.path().join("app.py"))?;
    let bad = "*** Begin Patch\n*** Add File: created.txt\n+x\n*** Update File: app.py\n-no such line\n+y\n*** End Patch\n";
    let output = agent_host()
        .args(["tool", "apply_patch", "--args"])
        .arg(serde_json::json!({"patch": bad}).to_string())
        .arg("--cwd")
        .arg(work.path())
        .output()
        .await?;
    assert_eq!(output.status.code(), Some(1));
    assert!(
        stderr(&output).contains("failed to find the expected lines in app.py:\nno such line"),
        "{}",
        stderr(&output)
    );
    assert_eq!(std::fs::read(work.path().join("app.py"))?, before);
    assert!(!work.path().join("created.txt").exists());
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn search_tools_work_from_the_cli_through_the_component() -> anyhow::Result<()> {
    let work = tempfile::tempdir()?;
    std::fs::create_dir_all(work.path().join("src/nested"))?;
    std::fs::write(work.path().join("src/main.rs"), "fn main() {\n    helper();\n}\n")?;
    std::fs::write(work.path().join("src/nested/lib.rs"), "pub fn helper() {}\n")?;
    std::fs::write(work.path().join("README.md"), "# demo\n")?;
    let run = |name: &'static str, args: serde_json::Value| {
        let mut command = agent_host();
        command
            .args(["tool", name, "--args", &args.to_string(), "--cwd"])
            .arg(work.path());
        async move { command.output().await }
    };
    let grep = run(
        "grep",
        serde_json::json!({"pattern": "fn \\w+\\(", "glob": "*.rs"}),
    )
    .await?;
    assert!(grep.status.success(), "{}", stderr(&grep));
    assert_eq!(
        stdout(&grep),
        "src/main.rs:1:fn main() {\nsrc/nested/lib.rs:1:pub fn helper() {}\n"
    );
    let glob = run("glob", serde_json::json!({"pattern": "**/*.rs"})).await?;
    let mut found: Vec<String> = stdout(&glob).lines().map(str::to_string).collect();
    found.sort();
    assert_eq!(found, ["src/main.rs", "src/nested/lib.rs"]);
    let list = run("list_dir", serde_json::json!({"depth": 2})).await?;
    assert!(list.status.success(), "{}", stderr(&list));
    assert_eq!(
        stdout(&list),
        "README.md (7 bytes)\nsrc/\n  main.rs (28 bytes)\n  nested/\n"
    );
    Ok(())
}

/// `--max-tokens` stops a run cleanly (exit 3, the limit named) before the
/// request that would pass the budget; `--max-cost` refuses a model without a price.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn budgets_stop_a_run_and_a_cost_budget_needs_a_priced_model() -> anyhow::Result<()> {
    let server = ScriptedServer::start(Script {
        replies: vec![
            message(&[tool_use("t1", "shell", json!({"command": "true"}))]),
            message(&[tool_use("t2", "shell", json!({"command": "true"}))]),
        ],
        require_api_key: None,
    })
    .await?;
    let work = tempfile::tempdir()?;
    let output = agent_host()
        .args(["run", "work", "--max-tokens", "1", "--cwd"])
        .arg(work.path())
        .env("ANTHROPIC_BASE_URL", server.base_url())
        .env("ANTHROPIC_API_KEY", "k")
        .output()
        .await?;
    assert_eq!(output.status.code(), Some(3), "{}", stderr(&output));
    assert!(
        stderr(&output).contains("stopped by a limit"),
        "{}",
        stderr(&output)
    );
    assert_eq!(
        server.requests().len(),
        1,
        "no request after the budget was spent"
    );

    let unpriced = agent_host()
        .args([
            "run",
            "work",
            "--model",
            "my-private-model",
            "--max-cost",
            "2.50",
            "--cwd",
        ])
        .arg(work.path())
        .env("ANTHROPIC_BASE_URL", server.base_url())
        .env("ANTHROPIC_API_KEY", "k")
        .output()
        .await?;
    assert_ne!(unpriced.status.code(), Some(0));
    assert!(
        stderr(&unpriced).contains("no price for \"my-private-model\""),
        "{}",
        stderr(&unpriced)
    );
    assert_eq!(server.requests().len(), 1);
    Ok(())
}

/// An endpoint's retry settings (`[endpoints.NAME]`, here the built-in anthropic)
/// decide how often a failing server is asked again; `config show` reports them, and
/// settings out of bounds are refused naming the key.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_endpoints_retry_settings_decide_how_often_a_failing_server_is_asked() -> anyhow::Result<()> {
    let busy = || scripted_llm::Reply {
        status: 503,
        headers: Vec::new(),
        chunks: vec![
            json!({"type": "error", "error": {"type": "overloaded_error", "message": "busy"}}).to_string(),
        ],
        delay_ms: 0,
    };
    let server = ScriptedServer::start(Script {
        replies: vec![
            busy(),
            busy(),
            busy(),
            message(&[text("Third retry worked.")]),
            busy(),
        ],
        require_api_key: None,
    })
    .await?;
    let work = tempfile::tempdir()?;
    let config = work.path().join("retry.toml");
    let run = |config: &std::path::Path| {
        let mut cmd = agent_host();
        cmd.args(["run", "work", "--config"])
            .arg(config)
            .arg("--cwd")
            .arg(work.path())
            .env("ANTHROPIC_BASE_URL", server.base_url())
            .env("ANTHROPIC_API_KEY", "k");
        cmd
    };
    std::fs::write(
        &config,
        "[endpoints.anthropic]\nmax_retries = 3\nretry_base_delay_ms = 10\nretry_max_delay_ms = 40\n",
    )?;
    let output = run(&config).output().await?;
    assert!(output.status.success(), "{}", stderr(&output));
    let out = stdout(&output);
    assert!(out.trim_end().ends_with("Third retry worked."), "{out}");
    assert_eq!(out.matches("retrying in").count(), 3, "{out}");
    assert_eq!(server.requests().len(), 4, "one attempt and three retries");

    let shown = agent_host()
        .args(["config", "show", "--config"])
        .arg(&config)
        .output()
        .await?;
    let shown = stdout(&shown);
    assert!(shown.contains("endpoints.anthropic.max_retries = 3"), "{shown}");
    assert!(
        shown.contains("endpoints.anthropic.retry_max_delay_ms = 40"),
        "{shown}"
    );

    // No retries: the first failure ends the run.
    std::fs::write(&config, "[endpoints.anthropic]\nmax_retries = 0\n")?;
    let output = run(&config).output().await?;
    assert!(!output.status.success());
    assert!(stderr(&output).contains("busy"), "{}", stderr(&output));
    assert_eq!(server.requests().len(), 5);

    std::fs::write(
        &config,
        "[endpoints.anthropic]\nretry_base_delay_ms = 5000\nretry_max_delay_ms = 100\n",
    )?;
    let output = run(&config).output().await?;
    assert!(!output.status.success());
    assert!(
        stderr(&output).contains("endpoints.anthropic.retry_base_delay_ms: 5000 is more than"),
        "{}",
        stderr(&output)
    );
    assert_eq!(server.requests().len(), 5, "nothing sent");
    Ok(())
}
