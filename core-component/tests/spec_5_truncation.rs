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
