//! Section 2.10 of the spec: loop detection, run natively over in-memory fakes.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests may panic

mod common;

use agent_core::{EventKind, SessionConfig, StopReason};
use agent_test_support::fakes::{FakeEnv, ScriptedResponse};
use common::{Harness, text_reply, tool_reply};
use serde_json::json;

fn read(path: &str) -> ScriptedResponse {
    tool_reply(&[("t", "read_file", json!({"file_path": path}))])
}

fn harness(config: SessionConfig, replies: Vec<ScriptedResponse>) -> Harness {
    let env = FakeEnv::default();
    env.put("a.txt", "a");
    env.put("b.txt", "b");
    env.put("c.txt", "c");
    Harness::with(env, config, replies)
}

#[test]
fn ten_identical_calls_inject_a_warning_once() {
    let mut replies: Vec<_> = (0..12).map(|_| read("a.txt")).collect();
    replies.push(text_reply("giving up"));
    let mut h = harness(SessionConfig::new("anthropic", "m"), replies);
    let outcome = h.session.submit("loop").unwrap();
    assert_eq!(outcome.stop_reason, StopReason::Completed);

    let detections = h.events_of(EventKind::LoopDetection);
    assert_eq!(detections.len(), 1, "one warning for one loop, not one per round");
    assert_eq!(detections[0]["pattern_length"], 1);
    let warning = detections[0]["message"].as_str().unwrap();
    assert!(warning.starts_with("Loop detected: the last 10 tool calls"));

    // The warning is a steering turn: user text right after the tenth tool result (the
    // Anthropic adapter merges consecutive user turns into one message).
    let eleventh_request = &h.transport.request_bodies()[10];
    let messages = eleventh_request["messages"].as_array().unwrap();
    let last = messages.last().unwrap();
    assert_eq!(last["role"], "user");
    let blocks = last["content"].as_array().unwrap();
    assert_eq!(blocks[0]["type"], "tool_result");
    assert_eq!(blocks.last().unwrap()["text"], warning);
    let tenth_request = &h.transport.request_bodies()[9];
    let text = tenth_request.to_string();
    assert!(
        !text.contains("Loop detected"),
        "no warning before the tenth call"
    );
}

#[test]
fn a_cycle_of_three_calls_is_a_loop() {
    let mut replies: Vec<_> = ["a.txt", "b.txt", "c.txt"]
        .iter()
        .cycle()
        .take(10)
        .map(|p| read(p))
        .collect();
    replies.push(text_reply("done"));
    let mut h = harness(SessionConfig::new("anthropic", "m"), replies);
    h.session.submit("cycle").unwrap();
    let detections = h.events_of(EventKind::LoopDetection);
    assert_eq!(detections.len(), 1);
    assert_eq!(detections[0]["pattern_length"], 3);
}

#[test]
fn varied_calls_and_disabled_detection_give_no_warning() {
    let mut replies: Vec<_> = (0..10)
        .map(|i| tool_reply(&[("t", "read_file", json!({"file_path": "a.txt", "offset": i + 1}))]))
        .collect();
    replies.push(text_reply("done"));
    let mut h = harness(SessionConfig::new("anthropic", "m"), replies);
    h.session.submit("read pages").unwrap();
    assert!(h.events_of(EventKind::LoopDetection).is_empty());

    let mut config = SessionConfig::new("anthropic", "m");
    config.limits.enable_loop_detection = false;
    let mut replies: Vec<_> = (0..10).map(|_| read("a.txt")).collect();
    replies.push(text_reply("done"));
    let mut h = harness(config, replies);
    h.session.submit("loop").unwrap();
    assert!(h.events_of(EventKind::LoopDetection).is_empty());
}

#[test]
fn the_window_is_configurable_and_counts_calls_across_rounds() {
    let mut config = SessionConfig::new("anthropic", "m");
    config.limits.loop_detection_window = 4;
    // Two rounds of two identical calls each: four calls in the window.
    let double = || {
        tool_reply(&[
            ("t1", "read_file", json!({"file_path": "a.txt"})),
            ("t2", "read_file", json!({"file_path": "a.txt"})),
        ])
    };
    let mut h = harness(config, vec![double(), double(), text_reply("done")]);
    h.session.submit("go").unwrap();
    let detections = h.events_of(EventKind::LoopDetection);
    assert_eq!(detections.len(), 1);
    assert_eq!(detections[0]["window"], 4);
}
