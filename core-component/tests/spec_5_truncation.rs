//! Section 5 of the spec: the model sees truncated output, the event stream the full one.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests may panic

mod common;

use agent_core::ports::ExecResult;
use agent_core::{EventKind, SessionConfig};
use agent_test_support::fakes::FakeEnv;
use common::{Harness, text_reply, tool_reply};
use serde_json::json;

#[test]
fn tool_call_end_has_the_full_output_and_the_history_the_truncated_one() {
    let big = (0..1000).map(|i| format!("line {i}\n")).collect::<String>();
    let env = FakeEnv::new(Box::new(move |_| ExecResult {
        stdout: big.clone(),
        ..ExecResult::default()
    }));
    let mut h = Harness::with(
        env,
        SessionConfig::new("anthropic", "m"),
        vec![
            tool_reply(&[("t1", "shell", json!({"command": "seq"}))]),
            text_reply("ok"),
        ],
    );
    h.session.submit("x").unwrap();
    let full = h.events_of(EventKind::ToolCallEnd)[0]["output"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(full.contains("line 500\n") && full.lines().count() == 1001);
    let seen = h.tool_results(1)[0]["content"].as_str().unwrap().to_string();
    assert!(seen.starts_with("line 0\n") && seen.contains("lines omitted") && !seen.contains("line 500\n"));
    assert!(seen.lines().count() <= 257);
}

#[test]
fn per_tool_overrides_apply() {
    let env = FakeEnv::default();
    env.put("big.txt", &"x".repeat(5_000));
    let mut config = SessionConfig::new("anthropic", "m");
    config
        .tool_output_limits
        .push(agent_core::config::ToolOutputLimit {
            tool: "read_file".to_string(),
            max_chars: Some(100),
            max_lines: None,
        });
    let mut h = Harness::with(
        env,
        config,
        vec![
            tool_reply(&[("t1", "read_file", json!({"file_path": "big.txt"}))]),
            text_reply("ok"),
        ],
    );
    h.session.submit("x").unwrap();
    let seen = h.tool_results(1)[0]["content"].as_str().unwrap().to_string();
    assert!(seen.contains("characters were removed from the middle"), "{seen}");
    assert!(seen.len() < 600);
}

/// A line of `width` characters saying its number, so a page read back in the wrong place
/// shows.
fn numbered_output(lines: usize, width: usize) -> String {
    (0..lines)
        .map(|i| format!("{:<width$}\n", format!("output line {i:05}"), width = width))
        .collect()
}

/// Output offloading: what truncation cut is saved in the environment's scratch folder, the
/// marker names the file, and read_file pages through it: a scripted model reads 1 MB back whole.
#[test]
fn a_truncated_1_mb_output_is_saved_and_read_back_whole_through_the_path_in_the_marker() {
    let big = numbered_output(10_000, 99);
    assert_eq!(big.len(), 1_000_000);
    let produced = big.clone();
    let env = FakeEnv::new(Box::new(move |_| ExecResult {
        stdout: produced.clone(),
        ..ExecResult::default()
    }))
    .with_scratch("/scratch");
    let mut config = SessionConfig::new("anthropic", "m");
    config.session_id = Some("session-1".to_string());
    let saved = "/scratch/session-1/shell-c1.txt";
    let mut replies = vec![tool_reply(&[("c1", "shell", json!({"command": "produce"}))])];
    for page in 0..25 {
        let id = format!("r{page}");
        replies.push(tool_reply(&[(
            id.as_str(),
            "read_file",
            json!({"file_path": saved, "offset": 1 + page * 400, "limit": 400}),
        )]));
    }
    replies.push(text_reply("read it all"));
    let mut h = Harness::with(env, config, replies);
    h.session.submit("produce a lot, then read it").unwrap();

    let marker = h.tool_results(1)[0]["content"].as_str().unwrap().to_string();
    assert!(marker.len() < 40_000, "the model sees a cut output");
    assert!(
        marker.contains(&format!(
            "The full output was saved to {saved}: read it with read_file"
        )),
        "{}",
        &marker[..2_000.min(marker.len())]
    );
    let mut read_back = String::new();
    for request in 2..27 {
        let results = h.tool_results(request);
        let page = results.last().unwrap()["content"].as_str().unwrap();
        assert!(
            !page.contains("Tool output was truncated"),
            "a page fits read_file's limit"
        );
        for line in page.lines().filter(|l| !l.starts_with('[')) {
            let (_, text) = line.split_once(" | ").unwrap();
            read_back.push_str(text);
            read_back.push('\n');
        }
    }
    assert_eq!(read_back, big, "the 1 MB output read back whole");
}

#[test]
fn without_a_scratch_folder_the_marker_says_the_output_is_in_the_event_stream() {
    let env = FakeEnv::new(Box::new(|_| ExecResult {
        stdout: numbered_output(100, 500),
        ..ExecResult::default()
    }));
    let mut h = Harness::with(
        env,
        SessionConfig::new("anthropic", "m"),
        vec![
            tool_reply(&[("c1", "shell", json!({"command": "produce"}))]),
            text_reply("ok"),
        ],
    );
    h.session.submit("x").unwrap();
    let seen = h.tool_results(1)[0]["content"].as_str().unwrap().to_string();
    assert!(seen.contains("The full output is available in the event stream"));
    assert!(!seen.contains("saved to"));
}
