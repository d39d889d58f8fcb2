//! Record and replay: `agent-host run --record FILE` against the scripted server,
//! then `--provider replay --replay FILE` offline in a fresh workspace: the same tool calls,
//! the same files, a clear failure when the agent's requests diverge, and no API key in the
//! file.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests may panic

mod common;

use common::{agent_host, stderr, stdout};
use scripted_llm::anthropic::{message, text, tool_use};
use scripted_llm::{Script, ScriptedServer};
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::path::Path;
use std::process::Output;

const TASK: &str = "Create hello.py that prints Hello, run it, then read it back.";
const KEY: &str = "sk-secret-test-key-0123456789";

/// A multi-tool run: write_file, shell, read_file, then a final answer.
fn script() -> Script {
    Script {
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
                json!({"command": "python3 hello.py > out.txt; cat out.txt"}),
            )]),
            message(&[tool_use("toolu_3", "read_file", json!({"file_path": "hello.py"}))]),
            message(&[text("Done: hello.py prints Hello.")]),
        ],
        require_api_key: Some(KEY.to_string()),
    }
}

/// Records `TASK` in `work` into `recording`; the scripted server stops afterwards.
async fn record(work: &Path, recording: &Path) -> Output {
    let server = ScriptedServer::start(script()).await.unwrap();
    let output = agent_host()
        .args(["run", TASK, "--json", "--record"])
        .arg(recording)
        .arg("--cwd")
        .arg(work)
        .env("ANTHROPIC_BASE_URL", server.base_url())
        .env("ANTHROPIC_API_KEY", KEY)
        .output()
        .await
        .unwrap();
    assert!(
        output.status.success(),
        "recording run failed\nstdout:\n{}\nstderr:\n{}",
        stdout(&output),
        stderr(&output)
    );
    assert_eq!(server.requests().len(), 4);
    output
}

/// `agent-host run --provider replay`, with no provider variable and no server; the
/// recording's commands and changes are made (`--replay-trusted`: these tests made it).
async fn replay(task: &str, work: &Path, recording: &Path, extra: &[&str]) -> Output {
    agent_host()
        .args([
            "run",
            task,
            "--json",
            "--provider",
            "replay",
            "--replay-trusted",
            "--replay",
        ])
        .arg(recording)
        .arg("--cwd")
        .arg(work)
        .args(extra)
        .output()
        .await
        .unwrap()
}

/// (tool name, arguments) of every TOOL_CALL_START in `--json` output.
fn tool_calls(output: &Output) -> Vec<(String, Value)> {
    stdout(output)
        .lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .filter(|event| event["kind"] == "TOOL_CALL_START")
        .map(|event| {
            (
                event["data"]["tool_name"].as_str().unwrap().to_string(),
                event["data"]["arguments"].clone(),
            )
        })
        .collect()
}

fn files(dir: &Path) -> BTreeMap<String, String> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|entry| {
            let path = entry.unwrap().path();
            (
                path.file_name().unwrap().to_string_lossy().into_owned(),
                std::fs::read_to_string(&path).unwrap(),
            )
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_recorded_run_replays_offline_with_identical_tool_calls_and_files() {
    let dir = tempfile::tempdir().unwrap();
    let (recorded_work, replayed_work) = (dir.path().join("recorded"), dir.path().join("replayed"));
    std::fs::create_dir_all(&recorded_work).unwrap();
    std::fs::create_dir_all(&replayed_work).unwrap();
    let recording = dir.path().join("run.jsonl");
    let recorded = record(&recorded_work, &recording).await;

    // The server is gone and no provider is configured: only the recording answers.
    let replayed = replay(TASK, &replayed_work, &recording, &[]).await;
    assert!(
        replayed.status.success(),
        "replay failed\nstdout:\n{}\nstderr:\n{}",
        stdout(&replayed),
        stderr(&replayed)
    );
    let calls = tool_calls(&recorded);
    assert_eq!(
        calls.iter().map(|(name, _)| name.as_str()).collect::<Vec<_>>(),
        ["write_file", "shell", "read_file"]
    );
    assert_eq!(tool_calls(&replayed), calls);
    assert_eq!(files(&replayed_work), files(&recorded_work));
    assert_eq!(files(&replayed_work)["out.txt"], "Hello\n");
    assert!(stdout(&replayed).contains("Done: hello.py prints Hello."));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_replay_whose_requests_diverge_fails_naming_the_first_difference() {
    let dir = tempfile::tempdir().unwrap();
    let (recorded_work, replayed_work) = (dir.path().join("recorded"), dir.path().join("replayed"));
    std::fs::create_dir_all(&recorded_work).unwrap();
    std::fs::create_dir_all(&replayed_work).unwrap();
    let recording = dir.path().join("run.jsonl");
    record(&recorded_work, &recording).await;

    let diverged = replay("Create bye.py instead.", &replayed_work, &recording, &[]).await;
    assert_eq!(diverged.status.code(), Some(1), "stderr:\n{}", stderr(&diverged));
    let message = stderr(&diverged);
    assert!(message.contains("replay diverged"), "{message}");
    assert!(message.contains("at request #1"), "{message}");
    assert!(message.contains("/messages/0/content/0/text"), "{message}");
    assert!(
        message.contains(&format!("{TASK:?}")) && message.contains("\"Create bye.py instead.\""),
        "both values are named: {message}"
    );
    assert!(tool_calls(&diverged).is_empty(), "nothing ran");
    assert!(files(&replayed_work).is_empty());

    // A later divergence: in a workspace where out.txt is a folder, the shell call's
    // result differs from the recorded one, so the request carrying it is refused.
    std::fs::create_dir(replayed_work.join("out.txt")).unwrap();
    let later = replay(TASK, &replayed_work, &recording, &[]).await;
    assert_eq!(later.status.code(), Some(1), "stderr:\n{}", stderr(&later));
    let message = stderr(&later);
    assert!(message.contains("at request #3"), "{message}");
    assert!(message.contains("/messages/4/content/0/content"), "{message}");
    assert!(message.contains("Is a directory"), "{message}");
    let names: Vec<String> = tool_calls(&later).into_iter().map(|(name, _)| name).collect();
    assert_eq!(names, ["write_file", "shell"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_recording_holds_no_api_key_and_says_what_it_replays() {
    let dir = tempfile::tempdir().unwrap();
    let work = dir.path().join("work");
    std::fs::create_dir_all(&work).unwrap();
    let recording = dir.path().join("run.jsonl");
    record(&work, &recording).await;

    let text = std::fs::read_to_string(&recording).unwrap();
    assert!(!text.contains(KEY) && !text.contains("sk-secret"), "{text}");
    assert!(!text.to_ascii_lowercase().contains("x-api-key"), "{text}");
    let lines: Vec<Value> = text.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let header = &lines[0];
    assert_eq!(header["type"], "header");
    assert_eq!(header["format"], "agent-host/llm-recording");
    assert_eq!(header["version"], 1);
    assert_eq!(header["session"]["provider"], "anthropic");
    assert_eq!(header["session"]["protocol"], "anthropic-messages");
    assert_eq!(header["session"]["model"], "claude-sonnet-4-5");
    let kinds = |kind: &str| lines.iter().filter(|l| l["type"] == kind).count();
    assert_eq!((kinds("request"), kinds("response"), kinds("end")), (4, 4, 4));
    assert!(kinds("chunk") >= 4);
    let first = lines.iter().find(|l| l["type"] == "request").unwrap();
    assert_eq!(first["path"], "/v1/messages");
    assert_eq!(first["body"]["messages"][0]["content"][0]["text"], TASK);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crashed_recording_replays_up_to_where_it_stops() {
    let dir = tempfile::tempdir().unwrap();
    let (recorded_work, replayed_work) = (dir.path().join("recorded"), dir.path().join("replayed"));
    std::fs::create_dir_all(&recorded_work).unwrap();
    std::fs::create_dir_all(&replayed_work).unwrap();
    let recording = dir.path().join("run.jsonl");
    record(&recorded_work, &recording).await;

    // What a run killed during its third request leaves: two whole exchanges, then a
    // torn line.
    let text = std::fs::read_to_string(&recording).unwrap();
    let mut kept = String::new();
    for line in text.lines() {
        let value: Value = serde_json::from_str(line).unwrap();
        if value["type"] == "request" && value["exchange"] == 3 {
            kept.push_str(&line[..line.len() / 2]);
            break;
        }
        kept.push_str(line);
        kept.push('\n');
    }
    let cut = dir.path().join("cut.jsonl");
    std::fs::write(&cut, kept).unwrap();

    let replayed = replay(TASK, &replayed_work, &cut, &[]).await;
    assert_eq!(replayed.status.code(), Some(1), "stderr:\n{}", stderr(&replayed));
    assert!(
        stderr(&replayed).contains("the recording") && stderr(&replayed).contains("holds only 2 exchanges"),
        "{}",
        stderr(&replayed)
    );
    let names: Vec<String> = tool_calls(&replayed).into_iter().map(|(name, _)| name).collect();
    assert_eq!(names, ["write_file", "shell"]);
    assert_eq!(files(&replayed_work)["out.txt"], "Hello\n");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replay_choices_that_contradict_the_recording_are_refused_before_starting() {
    let dir = tempfile::tempdir().unwrap();
    let work = dir.path().join("work");
    std::fs::create_dir_all(&work).unwrap();
    let recording = dir.path().join("run.jsonl");
    record(&work, &recording).await;

    let cases: [(&[&str], &str); 3] = [
        (&["--model", "gpt-5"], "cannot be replayed with model gpt-5"),
        (&["--provider", "openai"], "cannot be replayed as provider openai"),
        (
            &["--record", "again.jsonl"],
            "--record and --replay cannot be combined",
        ),
    ];
    for (extra, expected) in cases {
        let output = agent_host()
            .args(["run", TASK, "--replay"])
            .arg(&recording)
            .arg("--cwd")
            .arg(&work)
            .args(extra)
            .output()
            .await
            .unwrap();
        assert_eq!(output.status.code(), Some(2), "{extra:?}: {}", stderr(&output));
        assert!(
            stderr(&output).contains(expected),
            "{extra:?}: {}",
            stderr(&output)
        );
        assert!(stdout(&output).is_empty(), "nothing started: {}", stdout(&output));
    }
    let output = agent_host()
        .args(["run", TASK, "--provider", "replay", "--cwd"])
        .arg(&work)
        .output()
        .await
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(stderr(&output).contains("--replay FILE"), "{}", stderr(&output));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_gemini_run_with_a_retried_rate_limit_replays_with_the_same_retry() {
    let mut limited = scripted_llm::gemini::error(429, "RESOURCE_EXHAUSTED", "slow down");
    limited.headers.push(("retry-after".to_string(), "1".to_string()));
    let server = ScriptedServer::start(Script {
        replies: vec![
            limited,
            scripted_llm::gemini::response(
                &[tool_use(
                    "unused",
                    "write_file",
                    json!({"file_path": "g.txt", "content": "from gemini\n"}),
                )],
                Some("signature-1"),
            ),
            scripted_llm::gemini::response(&[text("Wrote g.txt.")], None),
        ],
        require_api_key: Some("g-key-0123456789".to_string()),
    })
    .await
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let (recorded_work, replayed_work) = (dir.path().join("recorded"), dir.path().join("replayed"));
    std::fs::create_dir_all(&recorded_work).unwrap();
    std::fs::create_dir_all(&replayed_work).unwrap();
    let recording = dir.path().join("gemini.jsonl");
    let recorded = agent_host()
        .args(["run", "write g.txt", "--json", "--provider", "gemini", "--record"])
        .arg(&recording)
        .arg("--cwd")
        .arg(&recorded_work)
        .env("GEMINI_BASE_URL", server.base_url())
        .env("GEMINI_API_KEY", "g-key-0123456789")
        .env("GEMINI_MODEL", "gemini-2.5-flash")
        .output()
        .await
        .unwrap();
    assert!(recorded.status.success(), "{}", stderr(&recorded));
    drop(server);
    let text = std::fs::read_to_string(&recording).unwrap();
    assert!(!text.contains("g-key-0123456789"));
    let header: Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
    assert_eq!(header["session"]["protocol"], "gemini");
    assert_eq!(header["session"]["model"], "gemini-2.5-flash");

    let replayed = replay("write g.txt", &replayed_work, &recording, &[]).await;
    assert!(replayed.status.success(), "{}", stderr(&replayed));
    assert_eq!(tool_calls(&replayed), tool_calls(&recorded));
    assert_eq!(files(&replayed_work), files(&recorded_work));
    // The recorded 429 is served again, so the agent retries exactly as it did.
    let retries = |output: &Output| stdout(output).matches("\"llm_retry\"").count();
    assert_eq!((retries(&recorded), retries(&replayed)), (1, 1));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replaying_ones_own_recording_without_trust_names_the_flag() {
    let dir = tempfile::tempdir().unwrap();
    let (recorded_work, replayed_work) = (dir.path().join("recorded"), dir.path().join("replayed"));
    std::fs::create_dir_all(&recorded_work).unwrap();
    std::fs::create_dir_all(&replayed_work).unwrap();
    let recording = dir.path().join("run.jsonl");
    record(&recorded_work, &recording).await;

    // Its write is refused, so the next request differs from the recorded one.
    let output = agent_host()
        .args(["run", TASK, "--provider", "replay", "--replay"])
        .arg(&recording)
        .arg("--cwd")
        .arg(&replayed_work)
        .output()
        .await
        .unwrap();
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    let message = stderr(&output);
    assert!(message.contains("replay diverged"), "{message}");
    assert!(
        message.contains("hint: ") && message.contains("replay it with --replay-trusted"),
        "{message}"
    );
    assert!(files(&replayed_work).is_empty(), "nothing was written");
}
