//! Staged compaction, run natively over in-memory fakes with Anthropic streams.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests may panic

mod common;

use agent_core::protocol::{HistoryEntry, ResumeRequest};
use agent_core::{EventKind, Session, SessionConfig, StopReason};
use agent_test_support::fakes::{FakeEnv, ScriptedResponse, ports};
use common::{Harness, text_reply, tool_reply};
use serde_json::{Value, json};
use std::collections::HashSet;
use std::rc::Rc;

const WINDOW: u64 = 40_000;

fn read(id: &str, path: &str) -> ScriptedResponse {
    tool_reply(&[(id, "read_file", json!({"file_path": path}))])
}

/// Files of 30,000 characters (about 7,500 tokens each, with read_file's line numbers).
fn harness(replies: Vec<ScriptedResponse>) -> Harness {
    let env = FakeEnv::default();
    for name in ["a.txt", "b.txt", "c.txt", "d.txt"] {
        let line = format!("{name} {}\n", "z".repeat(90));
        env.put(name, &line.repeat(300));
    }
    let mut config = SessionConfig::new("anthropic", "m");
    config.context_window_size = Some(WINDOW);
    Harness::with(env, config, replies)
}

/// Every tool_result of a request answers a tool_use of an earlier message of the same
/// request, and every tool_use is answered: the pairing all providers require.
fn assert_pairs_valid(body: &Value) {
    let mut calls = HashSet::new();
    let mut answered = HashSet::new();
    for message in body["messages"].as_array().unwrap() {
        for block in message["content"].as_array().into_iter().flatten() {
            match block["type"].as_str() {
                Some("tool_use") => {
                    calls.insert(block["id"].as_str().unwrap().to_string());
                }
                Some("tool_result") => {
                    let id = block["tool_use_id"].as_str().unwrap().to_string();
                    assert!(calls.contains(&id), "result {id} without its call in {body}");
                    answered.insert(id);
                }
                _ => {}
            }
        }
    }
    assert_eq!(calls, answered, "a call without its result");
}

fn compactions(h: &Harness) -> Vec<Value> {
    h.events_of(EventKind::Compaction)
}

#[test]
fn old_tool_outputs_are_elided_before_the_window_fills_and_the_task_finishes() {
    let mut h = harness(vec![
        read("1", "a.txt"),
        read("2", "b.txt"),
        read("3", "c.txt"),
        read("4", "d.txt"),
        text_reply("done"),
    ]);
    let outcome = h.session.submit("read the four files").unwrap();
    assert_eq!(outcome.stop_reason, StopReason::Completed);
    assert_eq!(outcome.final_text, "done");

    let found = compactions(&h);
    assert!(!found.is_empty(), "the window filled without a compaction");
    for event in &found {
        assert_eq!(event["trigger"], "threshold");
        assert_eq!(event["stage"], "tool_outputs_elided");
        assert!(event["tokens_after"].as_u64() < event["tokens_before"].as_u64());
    }
    let bodies = h.transport.request_bodies();
    for body in &bodies {
        assert_pairs_valid(body);
        let size = body.to_string().len() as u64 / 4;
        assert!(
            size < WINDOW,
            "a request of ~{size} tokens was sent into a {WINDOW} window"
        );
    }
    // The last request: the oldest output is a note, the newest is whole, every call kept.
    let last = bodies.last().unwrap().to_string();
    assert!(last.contains("Output elided to save context"));
    assert_eq!(
        last.matches("d.txt zzz").count(),
        300,
        "the newest output is whole"
    );
    for id in ["1", "2", "3", "4"] {
        assert!(last.contains(&format!("\"tool_use_id\":\"{id}\"")));
    }
}

#[test]
fn compact_summarises_older_turns_keeps_the_recent_ones_and_survives_resume() {
    let mut h = harness(vec![
        read("1", "a.txt"),
        text_reply("a.txt holds z lines"),
        read("2", "b.txt"),
        text_reply("b.txt too"),
        text_reply("TASK: compare files. FILES: a.txt, b.txt read. STATE: done."),
        text_reply("continuing"),
    ]);
    let start = h.session.snapshot();
    h.session.submit("what is in a.txt?").unwrap();
    h.session.submit("and b.txt?").unwrap();
    let report = h.session.compact().unwrap();
    assert!(report.tokens_after < report.tokens_before);
    assert!(report.turns_after < report.turns_before);

    // The summary request: the summary prompt, no tools, the conversation as text.
    let bodies = h.transport.request_bodies();
    let summary_request = &bodies[4];
    assert!(
        summary_request
            .get("tools")
            .is_none_or(|t| t.as_array().unwrap().is_empty())
    );
    let system = summary_request["system"].to_string();
    assert!(system.contains("compact the conversation"), "{system}");
    let transcript = summary_request["messages"][0]["content"].to_string();
    assert!(transcript.contains("what is in a.txt?"));
    assert!(transcript.contains("[called read_file (1)"));

    let event = &compactions(&h)[0];
    assert_eq!(event["trigger"], "requested");
    assert_eq!(event["stage"], "summarised");
    assert!(event["summary_usage"]["output_tokens"].as_u64().unwrap() > 0);

    // The next request starts with the summary and keeps the recent turns verbatim.
    h.session.submit("go on").unwrap();
    let next = h.transport.request_bodies().pop().unwrap();
    assert_pairs_valid(&next);
    let first = next["messages"][0]["content"].to_string();
    assert!(first.contains("Summary of the conversation so far"), "{first}");
    assert!(first.contains("TASK: compare files"));
    let text = next.to_string();
    assert!(
        text.contains("and b.txt?"),
        "the recent input stays word for word"
    );
    assert!(
        !text.contains("what is in a.txt?"),
        "the older input is summarised"
    );

    // The journal replays to the same history.
    let journal: Vec<String> = h
        .host
        .journal
        .borrow()
        .iter()
        .map(HistoryEntry::to_json)
        .collect();
    assert!(
        h.host
            .journal
            .borrow()
            .iter()
            .any(|e| matches!(e, HistoryEntry::Replace { .. }))
    );
    let resumed = Session::resume(
        &ResumeRequest {
            snapshot: start,
            journal,
            ..Default::default()
        },
        ports(h.env.clone(), h.transport.clone(), Rc::new(Default::default())),
    )
    .unwrap();
    assert_eq!(resumed.history(), h.session.history());
}

#[test]
fn a_context_length_error_is_followed_by_compaction_and_success() {
    let overflow = ScriptedResponse::json(
        400,
        r#"{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 210000 tokens > 200000 maximum"}}"#,
    );
    let mut h = harness(vec![
        read("1", "a.txt"),
        text_reply("read it"),
        read("2", "b.txt"),
        overflow,
        text_reply("summary: a.txt and b.txt were read"),
        text_reply("finished after compaction"),
    ]);
    h.session.submit("read a.txt").unwrap();
    let outcome = h.session.submit("now b.txt").unwrap();
    assert_eq!(outcome.stop_reason, StopReason::Completed);
    assert_eq!(outcome.final_text, "finished after compaction");
    let event = &compactions(&h)[0];
    assert_eq!(event["trigger"], "context_length");
    assert_eq!(event["stage"], "summarised");
    let bodies = h.transport.request_bodies();
    assert_pairs_valid(bodies.last().unwrap());
    assert!(
        h.events_of(EventKind::Warning)
            .iter()
            .all(|w| w["kind"] != "context_length"),
        "the refusal was handled, not reported"
    );
}

#[test]
fn a_failed_summary_is_a_warning_and_the_session_goes_on() {
    let broken = ScriptedResponse::json(
        400,
        r#"{"type":"error","error":{"type":"invalid_request_error","message":"bad summary request"}}"#,
    );
    let mut h = harness(vec![
        read("1", "a.txt"),
        text_reply("ok"),
        broken,
        text_reply("still here"),
    ]);
    h.session.submit("read a.txt").unwrap();
    let error = h.session.compact().unwrap_err();
    assert!(error.to_string().contains("could not be summarised"), "{error}");
    let outcome = h.session.submit("hello").unwrap();
    assert_eq!(outcome.final_text, "still here");
}
