//! Declarative command tools end to end through the library: a workspace's
//! `.agent/config.toml` declares them, the real core component offers them to a scripted
//! model, the model calls them, real programs run, and what they printed reaches the next
//! request. In read-only mode only `read` tools run; `write` and `admin` ones are denied.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests may panic

mod common;

use agent_host::config::AgentConfig;
use agent_host::config::session_config;
use agent_host::environments::EnvOptions;
use agent_host::host_tools::HostTools;
use agent_host::protocol::StopReason;
use agent_host::{AgentRuntime, Endpoints, HttpTransport};
use scripted_llm::anthropic::{message, text, tool_use};
use scripted_llm::{Reply, Script, ScriptedServer};
use serde_json::json;

const CONFIG: &str = r#"
[[tools]]
name = "pair"
description = "Print two words, separated by a bar"
category = "read"
cmd = "printf"
args = ["%s|%s\n", "{{first}}", "{{second}}"]
[tools.parameters.first]
type = "string"
maxLength = 40
[tools.parameters.second]
type = "string"

[[tools]]
name = "fails"
description = "Always fails"
category = "read"
cmd = "sh"
args = ["-c", "echo broken >&2; exit 4"]

[[tools]]
name = "make_file"
description = "Create an empty file in the workspace"
category = "write"
cmd = "touch"
args = ["{{name}}"]
[tools.parameters.name]
type = "string"
pattern = "^[a-z.]+$"

[[tools]]
name = "deploy"
description = "Deploy the application"
category = "admin"
cmd = "touch"
args = ["deployed"]
"#;

/// A workspace with the configuration, a scripted server and a runtime offering the
/// configured tools, optionally in read-only mode.
async fn start(replies: Vec<Reply>, read_only: bool) -> (tempfile::TempDir, ScriptedServer, AgentRuntime) {
    let work = tempfile::tempdir().unwrap();
    std::fs::create_dir(work.path().join(".agent")).unwrap();
    std::fs::write(work.path().join(".agent/config.toml"), CONFIG).unwrap();
    let server = ScriptedServer::start(Script {
        replies,
        require_api_key: None,
    })
    .await
    .unwrap();
    let url = server.base_url();
    let endpoints = Endpoints::from_lookup(move |name| (name == "ANTHROPIC_BASE_URL").then(|| url.clone()));
    let mut runtime = AgentRuntime::load(
        &common::component(),
        Some(&common::cache_dir()),
        HttpTransport::new(endpoints).unwrap(),
    )
    .unwrap();
    let (_, config) = AgentConfig::discover(work.path()).unwrap().unwrap();
    let tools = config.command_tools(&options(&work, read_only)).unwrap();
    runtime.set_host_tools(HostTools::new(tools, &[]).unwrap());
    runtime.set_read_only(read_only);
    (work, server, runtime)
}

fn options(work: &tempfile::TempDir, read_only: bool) -> EnvOptions {
    EnvOptions {
        cwd: Some(work.path().to_path_buf()),
        read_only,
        ..EnvOptions::default()
    }
}

/// Runs one input to completion in a session of the workspace.
async fn run(runtime: &AgentRuntime, work: &tempfile::TempDir, read_only: bool) {
    let env = options(work, read_only).build().await.unwrap();
    let (mut session, _events) = runtime
        .start_session(session_config("anthropic", "m"), env)
        .await
        .unwrap();
    let outcome = session.submit("use the tools").await.unwrap().unwrap();
    assert_eq!(outcome.stop_reason, StopReason::Completed);
    assert_eq!(outcome.final_text, "done");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_configured_tool_runs_and_its_output_reaches_the_model() {
    let (work, server, runtime) = start(
        vec![
            message(&[
                tool_use(
                    "t1",
                    "pair",
                    json!({"first": "a b; rm -rf / #", "second": "$(touch pwned)"}),
                ),
                tool_use("t2", "fails", json!({})),
                tool_use("t3", "pair", json!({"first": "x".repeat(41), "second": "y"})),
            ]),
            message(&[text("done")]),
        ],
        false,
    )
    .await;
    run(&runtime, &work, false).await;
    let requests = server.requests();
    // The tools are offered with the schema built from the parameters.
    let offered = requests[0].json()["tools"].clone();
    let pair = offered
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "pair")
        .unwrap();
    assert_eq!(pair["input_schema"]["required"], json!(["first", "second"]));
    assert_eq!(pair["input_schema"]["additionalProperties"], json!(false));
    let results = requests[1].tool_results();
    assert_eq!(results.len(), 3);
    assert_eq!(results[0]["tool_use_id"], "t1");
    assert_eq!(results[0]["is_error"], false);
    assert_eq!(results[0]["content"], "a b; rm -rf / #|$(touch pwned)\n");
    assert!(!work.path().join("pwned").exists());
    assert_eq!(results[1]["is_error"], true);
    let failed = results[1]["content"].as_str().unwrap();
    assert!(failed.contains("broken\nexit code 4"), "{failed}");
    assert_eq!(results[2]["is_error"], true);
    let refused = results[2]["content"].as_str().unwrap();
    assert!(
        refused.contains("argument `first`") && refused.contains("40"),
        "{refused}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn read_only_mode_runs_read_tools_and_denies_write_and_admin_ones() {
    let replies = || {
        vec![
            message(&[
                tool_use("t1", "make_file", json!({"name": "created.txt"})),
                tool_use("t2", "pair", json!({"first": "still", "second": "reads"})),
                tool_use("t3", "deploy", json!({})),
            ]),
            message(&[text("done")]),
        ]
    };
    let (work, server, runtime) = start(replies(), true).await;
    run(&runtime, &work, true).await;
    let results = server.requests()[1].tool_results();
    assert_eq!(results[1]["is_error"], false);
    assert_eq!(results[1]["content"], "still|reads\n");
    for (result, category) in [(&results[0], "write"), (&results[2], "admin")] {
        assert_eq!(result["is_error"], true);
        let denied = result["content"].as_str().unwrap();
        assert!(
            denied.contains(&format!("`{category}` tool")) && denied.contains("read-only mode"),
            "{denied}"
        );
    }
    assert!(!work.path().join("created.txt").exists());
    assert!(!work.path().join("deployed").exists());
    // The same calls outside read-only mode all run.
    let (work, server, runtime) = start(replies(), false).await;
    run(&runtime, &work, false).await;
    let results = server.requests()[1].tool_results();
    assert!(results.iter().all(|r| r["is_error"] == false), "{results:?}");
    assert!(work.path().join("created.txt").exists() && work.path().join("deployed").exists());
}
