//! `agent-host batch` on one machine: tasks from a JSONL file run two at a time
//! against a scripted model, each in its own copy of a folder or a clone of a git repository
//! at a revision; each leaves its result, its changes as a patch and its event log; a task
//! that cannot run fails alone; a re-run skips the tasks that finished and retries the
//! failed one; the originals are never touched.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests may panic

mod common;

use common::{agent_host, stderr, stdout};
use scripted_llm::anthropic::{message, text, tool_use};
use scripted_llm::{Route, Script, ScriptedServer};
use serde_json::{Value, json};
use std::path::Path;
use std::process::Command;

fn git(dir: &Path, args: &[&str]) {
    let status = Command::new("git")
        .args(["-c", "user.name=t", "-c", "user.email=t@example.com"])
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(
        status.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&status.stderr)
    );
}

/// A folder to copy, and a repository whose first commit has `version.txt` at 1 (later 2).
fn sources(root: &Path) -> String {
    std::fs::create_dir_all(root.join("proj")).unwrap();
    std::fs::write(root.join("proj/notes.txt"), "keep me\n").unwrap();
    let repo = root.join("repo");
    std::fs::create_dir_all(&repo).unwrap();
    git(&repo, &["init", "--quiet", "-b", "main"]);
    std::fs::write(repo.join("version.txt"), "1\n").unwrap();
    git(&repo, &["add", "."]);
    git(&repo, &["commit", "--quiet", "-m", "one"]);
    git(&repo, &["tag", "v1"]);
    std::fs::write(repo.join("version.txt"), "2\n").unwrap();
    git(&repo, &["commit", "--quiet", "-am", "two"]);
    repo.display().to_string()
}

fn route(marker: &str, replies: Vec<scripted_llm::Reply>) -> Route {
    Route {
        marker: marker.to_string(),
        replies,
    }
}

async fn batch(root: &Path, server: &ScriptedServer) -> std::process::Output {
    agent_host()
        .args([
            "batch",
            "tasks.jsonl",
            "--jobs",
            "2",
            "--out",
            "out",
            "--approval",
            "auto",
        ])
        .current_dir(root)
        .env("ANTHROPIC_BASE_URL", server.base_url())
        .output()
        .await
        .unwrap()
}

fn result(root: &Path, id: &str) -> Value {
    serde_json::from_str(&std::fs::read_to_string(root.join("out").join(id).join("result.json")).unwrap())
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tasks_run_in_their_own_workspaces_and_a_rerun_skips_the_finished_ones() {
    let root = tempfile::tempdir().unwrap();
    let repo = sources(root.path());
    let tasks = [
        json!({"id": "write-hello", "instruction": "TASK-ONE: write hello.txt", "workspace": {"dir": "proj"}}),
        json!({"id": "bump", "instruction": "TASK-TWO: bump the version", "workspace": {"git": repo, "rev": "v1"},
               "limits": {"max_turns": 5}, "sandbox": "workspace-write"}),
        json!({"id": "look", "instruction": "TASK-THREE: only look", "workspace": {"dir": "proj"}}),
        json!({"id": "no-such-provider", "instruction": "TASK-FOUR", "workspace": {"dir": "proj"}, "provider": "nowhere"}),
    ];
    let lines: Vec<String> = tasks.iter().map(Value::to_string).collect();
    std::fs::write(root.path().join("tasks.jsonl"), lines.join("\n") + "\n").unwrap();
    let server = ScriptedServer::start_routed(
        Script {
            replies: Vec::new(),
            require_api_key: None,
        },
        vec![
            route(
                "TASK-ONE",
                vec![
                    message(&[tool_use(
                        "w1",
                        "write_file",
                        json!({"file_path": "hello.txt", "content": "hello\n"}),
                    )]),
                    message(&[text("Wrote hello.txt.")]),
                ],
            ),
            route(
                "TASK-TWO",
                vec![
                    message(&[tool_use("r1", "read_file", json!({"file_path": "version.txt"}))]),
                    message(&[tool_use(
                        "w2",
                        "write_file",
                        json!({"file_path": "version.txt", "content": "1.1\n"}),
                    )]),
                    message(&[text("Bumped to 1.1.")]),
                ],
            ),
            route("TASK-THREE", vec![message(&[text("Nothing to change.")])]),
        ],
    )
    .await
    .unwrap();

    let output = batch(root.path(), &server).await;
    let (out, err) = (stdout(&output), stderr(&output));
    assert_eq!(output.status.code(), Some(1), "one task failed\n{out}\n{err}");

    let hello = result(root.path(), "write-hello");
    assert_eq!(hello["state"], "completed", "{hello}");
    assert_eq!(hello["stop_reason"], "completed");
    assert_eq!(hello["final_text"], "Wrote hello.txt.");
    assert_eq!(hello["changed_files"], json!(["hello.txt"]));
    assert_eq!(hello["turns"], 2);
    let patch = std::fs::read_to_string(root.path().join("out/write-hello/changes.patch")).unwrap();
    assert!(
        patch.contains("--- /dev/null\n+++ b/hello.txt\n@@ -0,0 +1 @@\n+hello\n"),
        "{patch}"
    );
    let events = std::fs::read_to_string(root.path().join("out/write-hello/events.jsonl")).unwrap();
    assert!(
        events.lines().next().unwrap().contains("SESSION_START"),
        "{events}"
    );
    assert!(events.contains("PROCESSING_END"));

    // The clone was at v1 (version 1), whatever the default branch holds.
    let bump = result(root.path(), "bump");
    assert_eq!(bump["state"], "completed", "{bump}");
    let results = server.requests();
    let read = results
        .iter()
        .flat_map(|r| r.tool_results())
        .find(|r| r["tool_use_id"] == "r1")
        .unwrap();
    let content = read["content"].to_string();
    assert!(
        content.contains('1') && !content.contains('2'),
        "version 1 was read: {content}"
    );
    let patch = std::fs::read_to_string(root.path().join("out/bump/changes.patch")).unwrap();
    assert!(patch.contains("-1\n+1.1\n"), "{patch}");
    assert!(!patch.contains(".git/"), "{patch}");

    let look = result(root.path(), "look");
    assert_eq!(look["changed_files"], json!([]));
    assert_eq!(
        std::fs::read_to_string(root.path().join("out/look/changes.patch")).unwrap(),
        ""
    );

    let failed = result(root.path(), "no-such-provider");
    assert_eq!(failed["state"], "failed");
    assert!(failed["error"].as_str().unwrap().contains("nowhere"), "{failed}");

    // The originals are as they were; each task had its own copy.
    assert!(!root.path().join("proj/hello.txt").exists());
    assert!(!root.path().join("out/look/workspace/hello.txt").exists());
    assert_eq!(
        std::fs::read_to_string(root.path().join("repo/version.txt")).unwrap(),
        "2\n"
    );
    // The summary: a line per task and the totals.
    assert!(out.contains("TASK"), "{out}");
    assert!(
        out.contains("4 tasks: 3 completed, 0 stopped, 1 failed; cost $0.0"),
        "{out}"
    );
    // A line per task as it ends (the bar itself only on a terminal).
    assert!(
        err.contains("write-hello: completed after 2 turns, 1 file changed"),
        "{err}"
    );
    assert!(err.contains("no-such-provider: failed: "), "{err}");

    // A re-run asks the model nothing more: the finished tasks are skipped, the failed one
    // tried again (and failing again, before any request).
    let asked = server.requests().len();
    let again = batch(root.path(), &server).await;
    let (out, err) = (stdout(&again), stderr(&again));
    assert_eq!(server.requests().len(), asked, "{out}");
    assert!(out.contains("completed (earlier run)"), "{out}");
    assert!(out.contains("4 tasks: 3 completed, 0 stopped, 1 failed"), "{out}");
    assert!(
        err.contains("no-such-provider: failed: "),
        "the failed task ran again: {err}"
    );
    assert!(!err.contains("write-hello"), "{err}");
}

/// Runs `agent-host batch` over `tasks` (lines) in `root`, without a model.
async fn batch_without_model(root: &Path, tasks: &[Value], extra: &[&str]) -> std::process::Output {
    let lines: Vec<String> = tasks.iter().map(Value::to_string).collect();
    std::fs::write(root.join("tasks.jsonl"), lines.join("\n") + "\n").unwrap();
    agent_host()
        .arg("batch")
        .arg("tasks.jsonl")
        .args(extra)
        .current_dir(root)
        .output()
        .await
        .unwrap()
}

#[tokio::test]
async fn a_tasks_file_cannot_reach_beyond_its_sources_nor_clear_a_folder_it_did_not_make() {
    let root = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(root.path().join("proj")).unwrap();
    // A source outside the tasks file's folder (the user's keys, say) is refused up front.
    let outside = tempfile::tempdir().unwrap();
    let output = batch_without_model(
        root.path(),
        &[json!({"id": "keys", "instruction": "x", "workspace": {"dir": outside.path()}})],
        &[],
    )
    .await;
    assert_eq!(output.status.code(), Some(2));
    let err = stderr(&output);
    assert!(
        err.contains("task keys: ") && err.contains("where this batch's sources may be (--sources chooses)"),
        "{err}"
    );
    // So is a source holding the output folder (it would copy itself).
    let output = batch_without_model(
        root.path(),
        &[json!({"id": "all", "instruction": "x", "workspace": {"dir": "."}})],
        &[],
    )
    .await;
    assert!(
        stderr(&output).contains("holds the output folder"),
        "{}",
        stderr(&output)
    );
    // And one inside it (an earlier task's copy could be made a link to ~/.ssh first).
    std::fs::create_dir_all(root.path().join("batch-out/a/workspace/d")).unwrap();
    let output = batch_without_model(
        root.path(),
        &[json!({"id": "b", "instruction": "x", "workspace": {"dir": "batch-out/a/workspace/d"}})],
        &[],
    )
    .await;
    assert!(
        stderr(&output).contains("is inside the output folder"),
        "{}",
        stderr(&output)
    );
    // A folder in --out that a batch did not make is never cleared.
    std::fs::create_dir_all(root.path().join("out/src")).unwrap();
    std::fs::write(root.path().join("out/src/main.rs"), "fn main() {}\n").unwrap();
    let output = batch_without_model(
        root.path(),
        &[json!({"id": "src", "instruction": "x", "workspace": {"dir": "proj"}})],
        &["--out", "out"],
    )
    .await;
    assert_eq!(output.status.code(), Some(1));
    assert!(
        stderr(&output).contains("was not made by agent-host batch"),
        "{}",
        stderr(&output)
    );
    assert_eq!(
        std::fs::read_to_string(root.path().join("out/src/main.rs")).unwrap(),
        "fn main() {}\n"
    );
    assert!(!root.path().join("out/src/result.json").exists());
}

#[tokio::test]
async fn a_mistake_in_the_tasks_file_names_its_line_and_runs_nothing() {
    let root = tempfile::tempdir().unwrap();
    std::fs::write(
        root.path().join("tasks.jsonl"),
        "{\"id\": \"a\", \"instruction\": \"x\", \"workspace\": {\"dir\": \".\"}}\n{\"id\": \"a\"}\n",
    )
    .unwrap();
    let output = agent_host()
        .args(["batch", "tasks.jsonl"])
        .current_dir(root.path())
        .output()
        .await
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    let err = stderr(&output);
    assert!(err.contains("tasks.jsonl line 2: not a task"), "{err}");
    assert!(!root.path().join("batch-out").exists());
}
