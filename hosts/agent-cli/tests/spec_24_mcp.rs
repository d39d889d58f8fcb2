//! MCP servers end to end through `agent-host run`: the reference servers from npm
//! (server-everything, server-filesystem) and a server written with the Python SDK, over
//! stdio, and server-everything over streamable HTTP with a bearer token from a variable, configured as `[mcp_servers.NAME]`; a scripted model calls their tools and the
//! results reach its next request. Their standard error stays out of the terminal; a server
//! that does not start is reported and the run goes on; an untrusted project's servers are
//! not started; `agent-host mcp list` shows them.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests may panic

mod common;

use agent_test_support::mcp::EverythingOverHttp;
use agent_test_support::paths::{mcp_python, mcp_server};
use common::{agent_host, stderr, stdout};
use scripted_llm::anthropic::{message, text, tool_use};
use scripted_llm::{Script, ScriptedServer};
use serde_json::{Value, json};
use std::path::Path;

/// The configuration of the three servers (and one that cannot start), for `work`.
fn servers_config(work: &Path) -> String {
    let quoted = |p: std::path::PathBuf| format!("{:?}", p.display().to_string());
    format!(
        "[mcp_servers.everything]\ncommand = \"node\"\nargs = [{everything}]\nenv_vars = [\"MCP_TEST_PASSED\"]\n\n\
         [mcp_servers.files]\ncommand = \"node\"\nargs = [{filesystem}, {work}]\n\n\
         [mcp_servers.py]\ncommand = {python}\nargs = [{py}]\n\n\
         [mcp_servers.broken]\ncommand = \"/nonexistent/mcp-server\"\n",
        everything = quoted(mcp_server("server-everything")),
        filesystem = quoted(mcp_server("server-filesystem")),
        work = quoted(work.to_path_buf()),
        python = quoted(mcp_python()),
        py = quoted(mcp_server("py_server.py")),
    )
}

fn workspace() -> tempfile::TempDir {
    let work = tempfile::tempdir().unwrap();
    std::fs::create_dir(work.path().join(".agent")).unwrap();
    std::fs::write(work.path().join("notes.txt"), "the notes' text\n").unwrap();
    std::fs::write(
        work.path().join(".agent/config.toml"),
        servers_config(work.path()),
    )
    .unwrap();
    work
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_model_calls_the_tools_of_npm_and_python_mcp_servers() {
    let work = workspace();
    common::trust_project(work.path());
    let state = tempfile::tempdir().unwrap();
    let notes = work.path().join("notes.txt").display().to_string();
    let server = ScriptedServer::start(Script {
        replies: vec![
            message(&[
                tool_use("t1", "everything__echo", json!({"message": "hi"})),
                tool_use("t2", "everything__get-sum", json!({"a": 2, "b": 3})),
                tool_use("t3", "files__read_text_file", json!({"path": notes})),
                tool_use("t4", "py__echo", json!({"text": "x"})),
                tool_use("t5", "everything__get-tiny-image", json!({})),
                tool_use("t6", "everything__get-env", json!({})),
                tool_use("t7", "files__read_text_file", json!({"path": "/etc/hostname"})),
            ]),
            message(&[text("Done.")]),
        ],
        require_api_key: None,
    })
    .await
    .unwrap();
    let output = agent_host()
        .args(["run", "Use the servers", "--approval", "auto"])
        .args(["--cwd", &work.path().display().to_string()])
        .env("ANTHROPIC_BASE_URL", server.base_url())
        .env("AGENT_HOST_STATE_DIR", state.path())
        .env("MCP_TEST_PASSED", "passed-value")
        .env("MCP_TEST_UNLISTED", "unlisted-value")
        .output()
        .await
        .unwrap();
    let (out, err) = (stdout(&output), stderr(&output));
    assert!(output.status.success(), "{out}\n{err}");
    assert!(out.contains("Done."), "{out}");
    // The server that cannot start is named; the others' standard error is not shown.
    assert!(err.contains("MCP server broken is left out"), "{err}");
    assert!(!err.contains("MARKER-ON-STDERR"), "{err}");
    let log = std::fs::read_to_string(state.path().join("mcp-logs/py.log")).unwrap();
    assert!(log.contains("MARKER-ON-STDERR"), "{log}");

    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    let offered = requests[0].json()["tools"].as_array().unwrap().clone();
    let echo = offered.iter().find(|t| t["name"] == "everything__echo").unwrap();
    assert_eq!(echo["input_schema"]["required"], json!(["message"]));
    for name in ["files__list_directory", "py__echo", "py__add_tool"] {
        assert!(offered.iter().any(|t| t["name"] == name), "{name} not offered");
    }
    assert!(
        !offered
            .iter()
            .any(|t| t["name"].as_str().unwrap().starts_with("broken__"))
    );

    let results = common::last_tool_results(&requests);
    let result = |id: &str| results.iter().find(|(i, _, _)| i == id).unwrap().clone();
    assert_eq!(result("t1"), ("t1".into(), false, "Echo: hi".into()));
    assert!(
        result("t2").2.contains("The sum of 2 and 3 is 5."),
        "{:?}",
        result("t2")
    );
    assert_eq!(result("t3").2, "the notes' text\n");
    assert_eq!(result("t4").2, "py:x");
    let image = result("t5").2;
    assert!(image.contains("Here's the image you requested:"), "{image}");
    // The server's image reaches the model as an image, decoded and checked by the core.
    let raw = requests[1].tool_results();
    let blocks = raw.iter().find(|r| r["tool_use_id"] == "t5").unwrap()["content"]
        .as_array()
        .unwrap()
        .clone();
    let picture = blocks.iter().find(|b| b["type"] == "image").unwrap();
    assert_eq!(picture["source"]["media_type"], "image/png");
    assert!(
        picture["source"]["data"]
            .as_str()
            .unwrap()
            .starts_with("iVBORw0KGgo"),
        "{picture}"
    );
    // Only the variables named in env_vars pass, with the core ones.
    let env = result("t6").2;
    assert!(env.contains("passed-value") && env.contains("PATH"), "{env}");
    assert!(!env.contains("unlisted-value"), "{env}");
    // The filesystem server's own refusal reaches the model as an error result.
    let (_, is_error, refusal) = result("t7");
    assert!(is_error, "{refusal}");
    assert!(
        refusal.contains("Access denied") || refusal.contains("outside"),
        "{refusal}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tool_a_server_adds_mid_run_is_offered_from_the_next_request() {
    let work = workspace();
    common::trust_project(work.path());
    let state = tempfile::tempdir().unwrap();
    let server = ScriptedServer::start(Script {
        replies: vec![
            message(&[tool_use("t1", "py__add_tool", json!({}))]),
            message(&[tool_use("t2", "py__late", json!({"word": "w"}))]),
            message(&[text("Done.")]),
        ],
        require_api_key: None,
    })
    .await
    .unwrap();
    let output = agent_host()
        .args(["run", "Add a tool, then use it", "--approval", "auto"])
        .args(["--cwd", &work.path().display().to_string()])
        .env("ANTHROPIC_BASE_URL", server.base_url())
        .env("AGENT_HOST_STATE_DIR", state.path())
        .output()
        .await
        .unwrap();
    let (out, err) = (stdout(&output), stderr(&output));
    assert!(output.status.success(), "{out}\n{err}");
    let requests = server.requests();
    assert_eq!(requests.len(), 3);
    let offers_late = |request: &scripted_llm::RecordedRequest| {
        request.json()["tools"]
            .as_array()
            .unwrap()
            .iter()
            .any(|t| t["name"] == "py__late")
    };
    assert!(!offers_late(&requests[0]));
    // The server announced tools/list_changed while add_tool ran: the next request offers
    // the new tool, with the server's schema, and the call reaches it.
    assert!(offers_late(&requests[1]), "the added tool is offered");
    let results = common::last_tool_results(&requests);
    assert_eq!(results[1], ("t2".into(), false, "late:w".into()));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_untrusted_projects_servers_are_not_started() {
    let work = workspace();
    let server = ScriptedServer::start(Script {
        replies: vec![message(&[text("Nothing to call.")])],
        require_api_key: None,
    })
    .await
    .unwrap();
    let output = agent_host()
        .args(["run", "Use the servers"])
        .args(["--cwd", &work.path().display().to_string()])
        .env("ANTHROPIC_BASE_URL", server.base_url())
        .output()
        .await
        .unwrap();
    let err = stderr(&output);
    assert!(output.status.success(), "{err}");
    assert!(
        err.contains("mcp_servers.py"),
        "the ignored servers are named: {err}"
    );
    assert!(!err.contains("MCP server broken"), "{err}");
    let offered = server.requests()[0].json()["tools"].clone();
    assert!(!offered.to_string().contains("everything__"), "{offered}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mcp_list_shows_each_server_its_state_and_tools() {
    let work = workspace();
    let config = work.path().join(".agent/config.toml");
    let mut text = std::fs::read_to_string(&config).unwrap();
    text.push_str("\n[mcp_servers.off]\ncommand = \"x\"\nenabled = false\n");
    text = text.replace(
        "env_vars = [\"MCP_TEST_PASSED\"]",
        "env_vars = [\"MCP_TEST_PASSED\"]\ndisabled_tools = [\"get-env\"]",
    );
    std::fs::write(&config, text).unwrap();
    common::trust_project(work.path());
    let state = tempfile::tempdir().unwrap();
    let list = |json: bool| {
        let mut command = agent_host();
        command
            .args(["mcp", "list", "--cwd", &work.path().display().to_string()])
            .env("AGENT_HOST_STATE_DIR", state.path());
        if json {
            command.arg("--json");
        }
        command.output()
    };
    let output = list(false).await.unwrap();
    let out = stdout(&output);
    assert!(output.status.success(), "{out}\n{}", stderr(&output));
    for line in [
        "everything: ready",
        "  everything__echo\n",
        "  everything__get-env (not offered: enabled_tools/disabled_tools)",
        "files: ready",
        "  files__read_text_file\n",
        "py: ready",
        "  py__echo\n",
        "off: disabled",
        "broken: failed: the MCP server broken did not start: cannot run \"/nonexistent/mcp-server\"",
    ] {
        assert!(out.contains(line), "{line:?} missing from:\n{out}");
    }
    let output = list(true).await.unwrap();
    let listed: Value = serde_json::from_str(&stdout(&output)).unwrap();
    let states: Vec<(String, String)> = listed["servers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["name"].as_str().unwrap().into(),
                s["state"].as_str().unwrap().into(),
            )
        })
        .collect();
    let expected = [
        ("broken", "failed"),
        ("everything", "ready"),
        ("files", "ready"),
        ("off", "disabled"),
        ("py", "ready"),
    ];
    assert_eq!(states, expected.map(|(n, s)| (n.to_string(), s.to_string())));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_model_calls_a_streamable_http_server() {
    let http = EverythingOverHttp::start();
    let work = tempfile::tempdir().unwrap();
    std::fs::create_dir(work.path().join(".agent")).unwrap();
    std::fs::write(
        work.path().join(".agent/config.toml"),
        format!(
            "[mcp_servers.web]\nurl = {:?}\nbearer_token_env_var = \"MCP_TEST_TOKEN\"\n\
             http_headers = {{ \"X-Client\" = \"tests\" }}\n",
            http.url()
        ),
    )
    .unwrap();
    common::trust_project(work.path());
    let server = ScriptedServer::start(Script {
        replies: vec![
            message(&[tool_use("h1", "web__echo", json!({"message": "over http"}))]),
            message(&[text("Done.")]),
        ],
        require_api_key: None,
    })
    .await
    .unwrap();
    let run = |token: Option<&str>| {
        let mut command = agent_host();
        command
            .args(["run", "Use the server", "--approval", "auto"])
            .args(["--cwd", &work.path().display().to_string()])
            .env("ANTHROPIC_BASE_URL", server.base_url());
        if let Some(token) = token {
            command.env("MCP_TEST_TOKEN", token);
        }
        command.output()
    };
    let output = run(Some("token-value-for-the-test")).await.unwrap();
    assert!(
        output.status.success(),
        "{}\n{}",
        stdout(&output),
        stderr(&output)
    );
    let results = common::last_tool_results(&server.requests());
    assert_eq!(
        results,
        [("h1".to_string(), false, "Echo: over http".to_string())]
    );
    // Without its token's variable the server is left out, with the reason.
    let output = run(None).await.unwrap();
    let err = stderr(&output);
    assert!(
        err.contains("bearer_token_env_var names the variable MCP_TEST_TOKEN, which is not set"),
        "{err}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn agent_host_serves_mcp_a_task_tool_that_returns_the_final_answer() {
    use agent_host::host_tools::mcp::{McpServer, McpServerSpec};
    let work = tempfile::tempdir().unwrap();
    let state = tempfile::tempdir().unwrap();
    let server = ScriptedServer::start(Script {
        replies: vec![
            message(&[tool_use(
                "w1",
                "write_file",
                json!({"file_path": "hello.txt", "content": "hi\n"}),
            )]),
            message(&[text("Created hello.txt.")]),
        ],
        require_api_key: None,
    })
    .await
    .unwrap();
    // The client side is agent-host's own MCP client, starting `agent-host mcp-server`.
    let env = [
        ("ANTHROPIC_BASE_URL", server.base_url()),
        ("AGENT_CORE_COMPONENT", common::component().display().to_string()),
        ("AGENT_HOST_CACHE_DIR", common::cache_dir().display().to_string()),
        (
            "AGENT_HOST_CONFIG_DIR",
            common::user_config_dir().display().to_string(),
        ),
        ("AGENT_HOST_STATE_DIR", state.path().display().to_string()),
    ];
    let env: serde_json::Map<String, Value> =
        env.into_iter().map(|(k, v)| (k.to_string(), json!(v))).collect();
    let spec: McpServerSpec = serde_json::from_value(json!({
        "command": env!("CARGO_BIN_EXE_agent-host"),
        "args": ["mcp-server", "--approval", "auto", "--cwd", work.path()],
        "env": env,
        "startup_timeout_sec": 60,
        "tool_timeout_sec": 60,
    }))
    .unwrap();
    let agent = McpServer::start("agent", spec, work.path(), Some(state.path()), None)
        .await
        .unwrap();
    let tools = agent.tools().await;
    assert_eq!(
        tools.iter().map(|t| t.name.to_string()).collect::<Vec<_>>(),
        ["agent_host"]
    );
    let answer = agent
        .call("agent_host", r#"{"prompt": "Create hello.txt"}"#)
        .await
        .unwrap()
        .text;
    assert_eq!(answer, "Created hello.txt.");
    assert_eq!(
        std::fs::read_to_string(work.path().join("hello.txt")).unwrap(),
        "hi\n"
    );
    assert!(!common::last_tool_results(&server.requests())[0].1);
    let refused = agent.call("agent_host", r#"{"prompt": ""}"#).await.unwrap_err();
    assert!(
        refused.contains("prompt (a non-empty string) is required"),
        "{refused}"
    );
    agent.stop().await;
}
