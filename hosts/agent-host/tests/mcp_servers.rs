//! MCP servers as the host starts them, against a real server written with the
//! Python SDK (`tests/mcp-servers/py_server.py`): a changed tool list is read again (and
//! offered to running sessions through the host tools), a
//! server that dies mid-call is restarted once and then left stopped, a slow call and a
//! server that never answers are cut off by their timeouts, and the server's standard error
//! goes to its log, as they do for a trusted project's server in the command sandbox. The
//! npm reference server `server-everything` is reached in its streamable HTTP mode.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests may panic

use agent_host::host_tools::mcp::{McpServer, McpServerSpec, start_servers};
use agent_host::host_tools::{HostTools, ToolCategory};
use agent_host::sandbox::{Sandbox, SandboxConfig};
use agent_host::session_host::ToolHost;
use agent_test_support::mcp::EverythingOverHttp;
use agent_test_support::paths::{mcp_python, mcp_server};
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

fn python_spec(extra: &str) -> McpServerSpec {
    toml::from_str(&format!(
        "command = {:?}\nargs = [{:?}]\n{extra}",
        mcp_python().display().to_string(),
        mcp_server("py_server.py").display().to_string()
    ))
    .unwrap()
}

/// The server, started in `logs` (its working directory and log folder), in `sandbox` if
/// given.
async fn start(extra: &str, logs: &Path, sandbox: Option<Arc<Sandbox>>) -> Arc<McpServer> {
    McpServer::start("py", python_spec(extra), logs, Some(logs), sandbox)
        .await
        .unwrap()
}

/// The default command sandbox of a session in `work`.
fn sandbox_of(work: &Path) -> Arc<Sandbox> {
    Arc::new(
        Sandbox::new(&SandboxConfig::default(), &[work.to_path_buf()])
            .unwrap()
            .unwrap(),
    )
}

fn names(tools: &[rmcp::model::Tool]) -> Vec<String> {
    tools.iter().map(|t| t.name.to_string()).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tool_the_server_adds_is_listed_and_callable() {
    let logs = tempfile::tempdir().unwrap();
    let server = start("", logs.path(), None).await;
    assert!(!names(&server.tools().await).contains(&"late".to_string()));
    let before = server.generation();
    assert_eq!(server.call("add_tool", "{}").await.unwrap().text, "added late");
    // The announcement (notifications/tools/list_changed), sent during the call, is noted by
    // the time the call's result arrives: the list is read again at once, no waiting.
    server.refresh_if_announced().await;
    assert!(server.generation() > before);
    assert!(names(&server.tools().await).contains(&"late".to_string()));
    assert_eq!(
        server.call("late", r#"{"word":"w"}"#).await.unwrap().text,
        "late:w"
    );
    let missing = server.call("nothing", "{}").await.unwrap_err();
    assert!(
        missing.contains("no longer offers the tool \"nothing\""),
        "{missing}"
    );
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_host_tools_of_running_sessions_follow_a_servers_list() {
    let logs = tempfile::tempdir().unwrap();
    let specs = BTreeMap::from([("py".to_string(), python_spec(""))]);
    let started = start_servers(&specs, logs.path(), Some(logs.path()), None).await;
    let reserved = ["shell".to_string()];
    let tools = HostTools::new(Vec::new(), &reserved)
        .unwrap()
        .with_sources(vec![started.tool_source()])
        .await;
    let (definitions, offered) = tools.definitions_with_version();
    let names = |definitions: &[agent_protocol::ToolDefinition]| {
        definitions.iter().map(|d| d.name.clone()).collect::<Vec<_>>()
    };
    assert!(names(&definitions).contains(&"py__echo".to_string()));
    assert_eq!(ToolHost::changes(&tools, offered).await, None, "nothing changed");
    assert_eq!(tools.call("py__add_tool", "{}").await.unwrap().text, "added late");
    let (version, changed) = ToolHost::changes(&tools, offered)
        .await
        .expect("the server's new list");
    assert!(version > offered);
    assert!(names(&changed).contains(&"py__late".to_string()), "{changed:?}");
    assert_eq!(ToolHost::category(&tools, "py__late"), Some(ToolCategory::Write));
    assert_eq!(
        tools.call("py__late", r#"{"word":"w"}"#).await.unwrap().text,
        "late:w"
    );
    assert_eq!(ToolHost::changes(&tools, version).await, None);
    started.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_dies_is_restarted_once_then_left_stopped() {
    let logs = tempfile::tempdir().unwrap();
    restarted_once_then_left_stopped(logs.path(), None).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_projects_server_in_the_sandbox_is_restarted_once_and_logs_alike() {
    let logs = tempfile::tempdir().unwrap();
    restarted_once_then_left_stopped(logs.path(), Some(sandbox_of(logs.path()))).await;
}

async fn restarted_once_then_left_stopped(logs: &Path, sandbox: Option<Arc<Sandbox>>) {
    let server = start("", logs, sandbox).await;
    let first = server.call("die", "{}").await.unwrap_err();
    assert!(
        first.contains("stopped while running die, and was started again"),
        "{first}"
    );
    assert_eq!(
        server.call("echo", r#"{"text":"again"}"#).await.unwrap().text,
        "py:again"
    );
    let second = server.call("die", "{}").await.unwrap_err();
    assert!(
        second.contains("stopped again after it was restarted once"),
        "{second}"
    );
    let after = server.call("echo", r#"{"text":"x"}"#).await.unwrap_err();
    assert!(after.contains("was not started again"), "{after}");
    // Its standard error went to its log, each start marked.
    let log = std::fs::read_to_string(logs.join("py.log")).unwrap();
    assert_eq!(log.matches("MARKER-ON-STDERR started").count(), 2, "{log}");
    assert_eq!(log.matches("dying on request").count(), 2, "{log}");
    assert_eq!(log.matches(" started: ").count(), 2, "{log}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn timeouts_cut_off_a_slow_call_and_a_server_that_never_answers() {
    let logs = tempfile::tempdir().unwrap();
    let server = start("tool_timeout_sec = 0.5", logs.path(), None).await;
    let slow = server.call("sleep", r#"{"seconds": 30}"#).await.unwrap_err();
    assert!(slow.contains("did not finish sleep within 0.5 s"), "{slow}");
    // The server is still there for the next call.
    assert_eq!(
        server.call("echo", r#"{"text":"ok"}"#).await.unwrap().text,
        "py:ok"
    );
    let bad = server.call("echo", "[1]").await.unwrap_err();
    assert!(bad.contains("must be a JSON object"), "{bad}");

    let silent: McpServerSpec =
        toml::from_str("command = \"sleep\"\nargs = [\"30\"]\nstartup_timeout_sec = 0.5").unwrap();
    let missing: McpServerSpec = toml::from_str("command = \"/nonexistent/mcp-server\"").unwrap();
    let specs = BTreeMap::from([("silent".to_string(), silent), ("missing".to_string(), missing)]);
    for sandbox in [None, Some(sandbox_of(logs.path()))] {
        let started = start_servers(&specs, logs.path(), Some(logs.path()), sandbox).await;
        assert!(started.running.is_empty());
        let failed: BTreeMap<_, _> = started.failed.into_iter().collect();
        assert!(
            failed["silent"].contains("within 0.5 s (startup_timeout_sec)"),
            "{failed:?}"
        );
        assert!(
            failed["missing"].contains("cannot run \"/nonexistent/mcp-server\""),
            "{failed:?}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_streamable_http_server_is_listed_and_called() {
    let http = EverythingOverHttp::start();
    let spec: McpServerSpec = toml::from_str(&format!(
        "url = \"http://127.0.0.1:{}/mcp\"\nhttp_headers = {{ \"X-Client\" = \"agent-host-tests\" }}",
        http.port
    ))
    .unwrap();
    let logs = tempfile::tempdir().unwrap();
    let server = McpServer::start("web", spec, logs.path(), Some(logs.path()), None)
        .await
        .unwrap();
    assert!(names(&server.tools().await).contains(&"echo".to_string()));
    assert_eq!(
        server
            .call("echo", r#"{"message":"over http"}"#)
            .await
            .unwrap()
            .text,
        "Echo: over http"
    );
    let sum = server
        .call("get-sum", r#"{"a": 20, "b": 22}"#)
        .await
        .unwrap()
        .text;
    assert!(sum.contains("is 42"), "{sum}");
    // An HTTP server has no standard error to keep: no log file.
    assert!(server.log_path().is_none());
    server.stop().await;
}
