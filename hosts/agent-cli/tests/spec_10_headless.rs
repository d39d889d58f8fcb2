//! Headless runs for scripts and CI: `--json` ends with a RESULT line, `-o FILE` holds the
//! final message, and `run --continue` / `run --resume ID` keep a session going.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests may panic

mod common;

use common::{agent_host, stderr, stdout};
use scripted_llm::anthropic::{message, text};
use scripted_llm::{Reply, ScriptedServer};
use serde_json::Value;
use std::path::Path;

fn run_in(work: &Path, server: &ScriptedServer, args: &[&str]) -> tokio::process::Command {
    let mut cmd = agent_host();
    cmd.arg("run")
        .args(args)
        .arg("-C")
        .arg(work)
        .env("ANTHROPIC_BASE_URL", server.base_url())
        .stdin(std::process::Stdio::null());
    cmd
}

fn last_line(output: &std::process::Output) -> Value {
    serde_json::from_str(stdout(output).lines().last().unwrap()).unwrap()
}

/// Every user text of a request, in order.
fn user_texts(request: &scripted_llm::RecordedRequest) -> Vec<String> {
    request.json()["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "user")
        .flat_map(|m| match &m["content"] {
            Value::String(text) => vec![text.clone()],
            Value::Array(blocks) => blocks
                .iter()
                .filter_map(|b| b["text"].as_str().map(str::to_string))
                .collect(),
            _ => Vec::new(),
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn json_ends_with_a_result_line_and_the_final_message_goes_to_a_file() {
    let server = common::scripted_server(vec![message(&[text("The answer is 42.")])]).await;
    let work = tempfile::tempdir().unwrap();
    let answer = work.path().join("answer.txt");
    let output = run_in(
        work.path(),
        &server,
        &["What is it?", "--json", "-o", answer.to_str().unwrap()],
    )
    .output()
    .await
    .unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
    let result = last_line(&output);
    assert_eq!(result["kind"], "RESULT", "{result}");
    let data = &result["data"];
    assert_eq!(data["state"], "completed");
    assert_eq!(data["stop_reason"], "completed");
    assert_eq!(data["final_text"], "The answer is 42.");
    assert_eq!(data["usage"]["requests"], 1, "{data}");
    assert!(data["duration_ms"].as_u64().is_some(), "{data}");
    // The same session as every event's.
    let first: Value = serde_json::from_str(stdout(&output).lines().next().unwrap()).unwrap();
    assert_eq!(result["session_id"], first["session_id"]);
    assert_eq!(std::fs::read_to_string(&answer).unwrap(), "The answer is 42.");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_run_says_so_in_its_result_line_and_empties_the_message_file() {
    let refusal = Reply {
        status: 401,
        headers: vec![("content-type".into(), "application/json".into())],
        chunks: vec![
            r#"{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}"#
                .into(),
        ],
        delay_ms: 0,
    };
    let server = common::scripted_server(vec![refusal]).await;
    let work = tempfile::tempdir().unwrap();
    let answer = work.path().join("answer.txt");
    std::fs::write(&answer, "an earlier run's answer").unwrap();
    let output = run_in(
        work.path(),
        &server,
        &["hello", "--json", "-o", answer.to_str().unwrap()],
    )
    .output()
    .await
    .unwrap();
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    let result = last_line(&output);
    assert_eq!(result["data"]["state"], "failed", "{result}");
    assert!(
        result["data"]["error"]
            .as_str()
            .unwrap()
            .contains("authentication"),
        "{result}"
    );
    assert_eq!(std::fs::read_to_string(&answer).unwrap(), "");
    assert!(
        stderr(&output).contains("hint: the anthropic endpoint"),
        "{}",
        stderr(&output)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn continue_and_resume_keep_the_session_going_from_a_script() {
    let server = common::scripted_server(vec![
        message(&[text("First answer.")]),
        message(&[text("Second answer.")]),
        message(&[text("Third answer.")]),
    ])
    .await;
    let work = tempfile::tempdir().unwrap();
    let first = run_in(work.path(), &server, &["first task", "--json"])
        .output()
        .await
        .unwrap();
    assert!(first.status.success(), "{}", stderr(&first));
    let id = last_line(&first)["session_id"].as_str().unwrap().to_string();

    let second = run_in(work.path(), &server, &["second task", "--continue", "--json"])
        .output()
        .await
        .unwrap();
    assert!(second.status.success(), "{}", stderr(&second));
    assert_eq!(last_line(&second)["session_id"], id.as_str());
    assert_eq!(user_texts(&server.requests()[1]), ["first task", "second task"]);

    let third = run_in(work.path(), &server, &["third task", "--resume", &id[..8]])
        .output()
        .await
        .unwrap();
    assert!(third.status.success(), "{}", stderr(&third));
    assert_eq!(
        user_texts(&server.requests()[2]),
        ["first task", "second task", "third task"]
    );

    let elsewhere = tempfile::tempdir().unwrap();
    let none = run_in(elsewhere.path(), &server, &["more", "--continue"])
        .output()
        .await
        .unwrap();
    assert_eq!(none.status.code(), Some(2), "{}", stderr(&none));
    assert!(stderr(&none).contains("no saved session of"), "{}", stderr(&none));
    let provider = run_in(work.path(), &server, &["more", "-c", "--provider", "openai"])
        .output()
        .await
        .unwrap();
    assert_eq!(provider.status.code(), Some(2), "{}", stderr(&provider));
    // A saved session keeps its own budgets: a new one given when continuing is refused.
    let budget = run_in(work.path(), &server, &["more", "-c", "--max-cost", "1"])
        .output()
        .await
        .unwrap();
    assert_eq!(budget.status.code(), Some(2), "{}", stderr(&budget));
    assert!(
        stderr(&budget).contains("the session keeps its own"),
        "{}",
        stderr(&budget)
    );
    assert_eq!(server.requests().len(), 3);
}

/// `run` in `work`, allowing `ok.test:PORT` (and its address), whose model makes one shell
/// call fetching `ok.test` and the unlisted `nope.test` from 127.0.0.1:`port`.
async fn fetch_with_allow_list(work: &Path, port: u16, json: bool) -> std::process::Output {
    use scripted_llm::anthropic::tool_use;
    let command = format!("curl -sS http://ok.test:{port}/; curl -sS http://nope.test:{port}/ >/dev/null");
    let server = common::scripted_server(vec![
        message(&[tool_use(
            "toolu_1",
            "shell",
            serde_json::json!({ "command": command }),
        )]),
        message(&[text("Fetched.")]),
    ])
    .await;
    let (allowed, address) = (format!("ok.test:{port}"), format!("127.0.0.1:{port}"));
    let mut args = vec![
        "fetch it",
        "--network-allow",
        &allowed,
        "--network-allow",
        &address,
    ];
    if json {
        args.push("--json");
    }
    run_in(work, &server, &args)
        .env("AGENT_HOST_TEST_RESOLVE", "ok.test=127.0.0.1,nope.test=127.0.0.1")
        .output()
        .await
        .unwrap()
}

/// With a network allow-list each connection a command makes through agent-host's proxy
/// is an event of the call that ran it, in `--json` and as a line in the plain view.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sandboxed_command_s_connections_are_events_of_its_call() {
    let hello = agent_test_support::http::HelloServer::start().unwrap();
    let port = hello.port;
    let work = tempfile::tempdir().unwrap();
    let output = fetch_with_allow_list(work.path(), port, true).await;
    assert!(output.status.success(), "{}", stderr(&output));
    let events: Vec<Value> = stdout(&output)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let network: Vec<&Value> = events
        .iter()
        .filter(|e| e["kind"] == "NETWORK_CONNECTION")
        .collect();
    assert_eq!(network.len(), 2, "{}", stdout(&output));
    let (ok, nope) = (&network[0]["data"], &network[1]["data"]);
    assert_eq!(ok["call_id"], "toolu_1");
    assert_eq!(
        (ok["host"].as_str(), ok["allowed"].as_bool()),
        (Some("ok.test"), Some(true))
    );
    assert_eq!(ok["method"], "GET");
    assert!(ok["bytes_down"].as_u64().unwrap() > 0, "{ok}");
    assert_eq!(
        (nope["host"].as_str(), nope["allowed"].as_bool()),
        (Some("nope.test"), Some(false))
    );
    assert!(
        nope["reason"].as_str().unwrap().contains("not in network_allow"),
        "{nope}"
    );
    // Both before the call's end, whose output says what was refused.
    let end = events.iter().position(|e| e["kind"] == "TOOL_CALL_END").unwrap();
    let last_network = events
        .iter()
        .rposition(|e| e["kind"] == "NETWORK_CONNECTION")
        .unwrap();
    assert!(last_network < end);
    assert!(
        events[end]["data"]["output"]
            .as_str()
            .unwrap()
            .contains("nope.test"),
        "{}",
        events[end]
    );

    // The plain view shows one line for each.
    let output = fetch_with_allow_list(work.path(), port, false).await;
    let shown = stdout(&output);
    assert!(
        shown.contains(&format!("[net ok.test:{port} allowed, ")),
        "{shown}"
    );
    assert!(
        shown.contains(&format!("[net nope.test:{port} REFUSED: not in network_allow")),
        "{shown}"
    );
}
