//! `make eval`'s harness (eval/run_eval.py) in its quick mode, against the scripted server
//! instead of the real model (which `make test` never downloads): the two quick tasks go
//! through agent-host with the default profile of a named Chat Completions endpoint and
//! through the reference loop, their checks run, and the table counts them. Keeps the
//! harness from rotting between real runs.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests may panic

use scripted_llm::anthropic::{text, tool_use};
use scripted_llm::chat_completions::message;
use scripted_llm::{Script, ScriptedServer};
use serde_json::{Value, json};
use std::path::Path;

const FIXED_CALC: &str = "def add(a, b):\n    return a + b\n\n\ndef mul(a, b):\n    return a * b\n";

fn tool_names(request: &Value) -> Vec<String> {
    request["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|t| t["function"]["name"].as_str().map(str::to_string))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_eval_harness_runs_its_quick_tasks_through_both_agents() -> anyhow::Result<()> {
    let hello = json!({"file_path": "hello.py", "content": "print(\"Hello, world!\")\n"});
    let server = ScriptedServer::start(Script {
        replies: vec![
            // agent-host (compact profile), create-script: write, run, answer.
            message(&[tool_use("c1", "write_file", hello)]),
            message(&[tool_use("c2", "shell", json!({"command": "python3 hello.py"}))]),
            message(&[text("Created and ran hello.py.")]),
            // agent-host, fix-add: read, edit, answer.
            message(&[tool_use("c3", "read_file", json!({"file_path": "calc.py"}))]),
            message(&[tool_use(
                "c4",
                "edit_file",
                json!({"file_path": "calc.py", "old_string": "return a - b", "new_string": "return a + b"}),
            )]),
            message(&[text("Fixed add.")]),
            // The reference loop, create-script and fix-add: one write each.
            message(&[tool_use(
                "r1",
                "write_file",
                json!({"path": "hello.py", "content": "print('Hello, world!')\n"}),
            )]),
            message(&[text("Done.")]),
            message(&[tool_use(
                "r2",
                "write_file",
                json!({"path": "calc.py", "content": FIXED_CALC}),
            )]),
            message(&[text("Done.")]),
        ],
        require_api_key: None,
    })
    .await?;
    let out = tempfile::tempdir()?;
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let output = tokio::process::Command::new("python3")
        .arg(root.join("eval/run_eval.py"))
        .args(["--quick", "--base-url", &format!("{}/v1", server.base_url())])
        .arg("--agent-host")
        .arg(env!("CARGO_BIN_EXE_agent-host"))
        .arg("--out")
        .arg(out.path().join("results"))
        .arg("--workdir")
        .arg(out.path().join("workspace"))
        .output()
        .await?;
    let shown = format!(
        "stdout:\n{}\nstderr:\n{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(output.status.success(), "{shown}");
    let results: Value =
        serde_json::from_str(&std::fs::read_to_string(out.path().join("results/results.json"))?)?;
    let summary: Vec<(String, String, bool, u64)> = results
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["agent"].as_str().unwrap().to_string(),
                r["task"].as_str().unwrap().to_string(),
                r["solved"].as_bool().unwrap(),
                r["turns"].as_u64().unwrap(),
            )
        })
        .collect();
    let expected = [
        ("default", "create-script", true, 3),
        ("default", "fix-add", true, 3),
        ("reference", "create-script", true, 2),
        ("reference", "fix-add", true, 2),
    ];
    assert_eq!(
        summary,
        expected.map(|(a, t, s, n)| (a.to_string(), t.to_string(), s, n)),
        "{shown}"
    );
    assert!(
        String::from_utf8_lossy(&output.stdout).contains("| total | **2/2** | 6 |"),
        "{shown}"
    );
    // A named Chat Completions endpoint gets the compact profile and the workspace listing;
    // the reference loop its three tools.
    let requests = server.requests();
    assert_eq!(requests.len(), 10, "{shown}");
    let first = requests[0].json();
    assert_eq!(
        tool_names(&first),
        ["read_file", "write_file", "edit_file", "shell", "glob", "grep"]
    );
    assert!(
        first["messages"].to_string().contains("<workspace_files>"),
        "{first}"
    );
    assert_eq!(
        tool_names(&requests[6].json()),
        ["read_file", "write_file", "run_shell"]
    );
    Ok(())
}
