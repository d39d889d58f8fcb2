//! Tool plugins end to end through `agent-host run` against the scripted Anthropic server:
//! the example plugins (Rust, Python, JavaScript) are offered to the model, called, and
//! their results reach the next request; the hostile plugin is contained while the session
//! goes on; mistakes in loading are clear errors.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests may panic

mod common;

use agent_host::LocalEnvironment;
use agent_host::compile_cache::CacheOutcome;
use agent_host::environments::Environment;
use agent_host::host_tools::plugin::{Grants, PluginHost, PluginLimits};
use common::{agent_host, plugin, stderr, stdout};
use scripted_llm::anthropic::{message, text, tool_use};
use scripted_llm::{Script, ScriptedServer};
use serde_json::{Value, json};
use std::sync::Arc;
use std::time::{Duration, Instant};

const PYTHON_FILE: &str = r#"
class Greeter:
    """Says hello."""

    def greet(self, name: str) -> str:
        return f"Hello, {name}"


async def main():
    pass
"#;

const MARKDOWN_FILE: &str =
    "# Guide\n\nSee [the docs](https://example.org).\n\n## Install\n\n```sh\nmake\n```\n\n## Use\n";

fn workspace() -> tempfile::TempDir {
    let work = tempfile::tempdir().unwrap();
    std::fs::write(
        work.path().join("Cargo.toml"),
        "[package]\nname = \"demo\"\n\n[dependencies]\nserde = { version = \"1.0.228\" }\nrand = \"0.9\"\n",
    )
    .unwrap();
    std::fs::write(work.path().join("app.py"), PYTHON_FILE).unwrap();
    std::fs::write(work.path().join("GUIDE.md"), MARKDOWN_FILE).unwrap();
    work
}

async fn run(server: &ScriptedServer, work: &std::path::Path, args: &[String]) -> std::process::Output {
    agent_host()
        .args(["run", "Look at the project"])
        .args(["--cwd", &work.display().to_string()])
        .args(args)
        .env("ANTHROPIC_BASE_URL", server.base_url())
        .output()
        .await
        .unwrap()
}

fn strings(args: &[&str]) -> Vec<String> {
    args.iter().map(|s| s.to_string()).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_rust_python_and_javascript_plugins_are_called_by_the_model() {
    let work = workspace();
    // The JavaScript plugin comes from the workspace's configuration file, the others from flags.
    std::fs::create_dir(work.path().join(".agent")).unwrap();
    std::fs::write(
        work.path().join(".agent/config.toml"),
        format!(
            "[plugins]\npaths = [{:?}]\n\n[plugins.grants]\nmarkdown-outline = [\"read\"]\n",
            plugin("markdown_outline").display().to_string()
        ),
    )
    .unwrap();
    common::trust_project(work.path());
    let server = ScriptedServer::start(Script {
        replies: vec![
            message(&[
                tool_use(
                    "t1",
                    "query_data",
                    json!({"path": "Cargo.toml", "query": "dependencies.*"}),
                ),
                tool_use("t2", "python_outline", json!({"path": "app.py"})),
                tool_use("t3", "markdown_outline", json!({"path": "GUIDE.md"})),
            ]),
            message(&[text("Looked.")]),
        ],
        require_api_key: None,
    })
    .await
    .unwrap();
    let args = strings(&[
        "--plugin",
        &plugin("data-query").display().to_string(),
        "--plugin",
        &plugin("python_outline").display().to_string(),
        "--grant",
        "data-query=read",
        "--grant",
        "python-outline=read",
    ]);
    let output = run(&server, work.path(), &args).await;
    assert!(
        output.status.success(),
        "{}\n{}",
        stdout(&output),
        stderr(&output)
    );
    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    // Offered with their own schemas.
    let offered: Vec<Value> = requests[0].json()["tools"].as_array().unwrap().clone();
    let query = offered.iter().find(|t| t["name"] == "query_data").unwrap();
    assert_eq!(query["input_schema"]["required"], json!(["path", "query"]));
    for name in ["python_outline", "markdown_outline"] {
        assert!(offered.iter().any(|t| t["name"] == name), "{name} not offered");
    }
    let results = common::last_tool_results(&requests);
    assert_eq!(results.len(), 3, "{results:?}");
    let (_, error, data) = &results[0];
    assert!(!error, "{data}");
    assert_eq!(
        serde_json::from_str::<Value>(data).unwrap(),
        json!([{"version": "1.0.228"}, "0.9"])
    );
    let (_, error, outline) = &results[1];
    assert!(!error, "{outline}");
    for expected in [
        "class Greeter",
        "def greet(self, name: str) -> str",
        "async def main()",
        "Says hello.",
    ] {
        assert!(
            outline.contains(expected),
            "{expected:?} missing from:\n{outline}"
        );
    }
    let (_, error, headings) = &results[2];
    assert!(!error, "{headings}");
    for expected in ["# Guide", "## Install", "## Use"] {
        assert!(
            headings.contains(expected),
            "{expected:?} missing from:\n{headings}"
        );
    }
    assert!(!headings.contains("# make"), "{headings}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hostile_plugin_is_contained_and_the_session_goes_on() {
    let work = workspace();
    let calls = ["spin", "hog", "crash", "flood", "sneak"];
    let mut replies: Vec<_> = calls
        .iter()
        .enumerate()
        .map(|(i, tool)| message(&[tool_use(&format!("h{i}"), tool, json!({}))]))
        .collect();
    replies.push(message(&[tool_use("h9", "echo", json!({"text": "still here"}))]));
    replies.push(message(&[text("Done.")]));
    let server = ScriptedServer::start(Script {
        replies,
        require_api_key: None,
    })
    .await
    .unwrap();
    let args = strings(&[
        "--plugin",
        &plugin("hostile").display().to_string(),
        "--grant",
        "hostile=read",
        "--plugin-cpu-ms",
        "1000",
        "--plugin-memory-mib",
        "64",
    ]);
    let started = Instant::now();
    let output = run(&server, work.path(), &args).await;
    assert!(
        output.status.success(),
        "{}\n{}",
        stdout(&output),
        stderr(&output)
    );
    // Guards against a hang only: the five hostile calls (the endless loop stopped after 1 s
    // of CPU), start-up and compilation take a few seconds. What stopped each call is in its
    // result, below.
    assert!(
        started.elapsed() < Duration::from_secs(60),
        "{:?}",
        started.elapsed()
    );
    let results = common::last_tool_results(&server.requests());
    let text_of = |id: &str| results.iter().find(|r| r.0 == id).unwrap().clone();
    let (_, error, spin) = text_of("h0");
    assert!(error && spin.contains("CPU limit of 1000 ms"), "{spin}");
    let (_, error, hog) = text_of("h1");
    assert!(error && hog.contains("memory limit of 64 MiB"), "{hog}");
    let (_, error, crash) = text_of("h2");
    assert!(error && crash.contains("crashed"), "{crash}");
    let (_, _, flood) = text_of("h3");
    assert!(flood.len() < 2 << 20, "{}", flood.len());
    let (_, _, sneak) = text_of("h4");
    assert!(
        sneak.contains("not granted `write`") && sneak.contains("not granted `run`"),
        "{sneak}"
    );
    assert_eq!(text_of("h9"), ("h9".to_string(), false, "still here".to_string()));
    assert!(!work.path().join("sneaked.txt").exists());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn loading_mistakes_are_clear_errors() {
    let work = workspace();
    let server = ScriptedServer::start(Script::default()).await.unwrap();
    let data_query = plugin("data-query").display().to_string();
    let cases: Vec<(Vec<String>, &str)> = vec![
        (
            vec![
                "--plugin".into(),
                data_query.clone(),
                "--plugin".into(),
                data_query.clone(),
            ],
            "two plugins are named data-query",
        ),
        (
            vec![
                "--plugin".into(),
                data_query.clone(),
                "--grant".into(),
                "data-qurey=read".into(),
            ],
            "a grant names the plugin data-qurey, which is not loaded (loaded: data-query)",
        ),
        (
            vec![
                "--plugin".into(),
                data_query.clone(),
                "--grant".into(),
                "data-query=fly".into(),
            ],
            "unknown capability \"fly\"",
        ),
        (
            vec![
                "--plugin".into(),
                work.path().join("app.py").display().to_string(),
            ],
            "is not a valid WebAssembly component",
        ),
    ];
    for (args, expected) in cases {
        let output = run(&server, work.path(), &args).await;
        assert_eq!(output.status.code(), Some(2), "{args:?}: {}", stderr(&output));
        assert!(
            stderr(&output).contains(expected),
            "{args:?}: {}",
            stderr(&output)
        );
    }
    // A configured tool may not take a name the profile already has.
    std::fs::create_dir(work.path().join(".agent")).unwrap();
    std::fs::write(
        work.path().join(".agent/config.toml"),
        "[[tools]]\nname = \"read_file\"\ndescription = \"x\"\ncategory = \"read\"\ncmd = \"cat\"\nargs = []\n",
    )
    .unwrap();
    common::trust_project(work.path());
    let output = run(&server, work.path(), &[]).await;
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    assert!(
        stderr(&output).contains("defines the tool \"read_file\", which the profile already has"),
        "{}",
        stderr(&output)
    );
    assert!(server.requests().is_empty());
}

#[tokio::test]
async fn inspect_shows_tools_schemas_and_requested_capabilities() {
    let output = agent_host()
        .args(["plugin", "inspect", &plugin("data-query").display().to_string()])
        .output()
        .await
        .unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
    let shown = stdout(&output);
    assert!(shown.starts_with("Plugin data-query ("), "{shown}");
    assert!(
        shown.contains("Asks for: read\n  Grant with: --grant data-query=read"),
        "{shown}"
    );
    assert!(shown.contains("\n  query_data\n"), "{shown}");
    assert!(shown.contains("\"required\": ["), "{shown}");
    let output = agent_host()
        .args([
            "plugin",
            "inspect",
            "--json",
            &plugin("python_outline").display().to_string(),
        ])
        .output()
        .await
        .unwrap();
    let description: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(description["name"], "python-outline");
    assert_eq!(description["capabilities"], json!(["read"]));
    assert_eq!(description["tools"][0]["parameters"]["type"], "object");
}

#[tokio::test]
async fn compiled_plugins_are_cached_by_content_hash() {
    let cache = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    let env: Arc<dyn Environment> = Arc::new(LocalEnvironment::new(work.path()).unwrap());
    let host = PluginHost::new(Some(cache.path()), PluginLimits::default()).unwrap();
    let file = plugin("data-query");
    let (_, first) = host
        .load_with_outcome(&file, &Grants::new(), env.clone())
        .await
        .unwrap();
    let (_, second) = host.load_with_outcome(&file, &Grants::new(), env).await.unwrap();
    assert_eq!((first, second), (CacheOutcome::Compiled, CacheOutcome::Hit));
}
