//! Resuming a saved session (section 2.3 of the spec, lifecycle across host restarts): the
//! history entries a session journals through `record_history`, replayed after its last
//! snapshot, give back exactly the history the model saw, reasoning signatures included; a
//! round the journal leaves open is closed; a journal that does not fit is refused.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use agent_core::history::{HistoryEntry, Turn};
use agent_core::llm::ContentPart;
use agent_core::{AgentError, ResumeRequest, Session, SessionConfig, SessionState};
use agent_test_support::fakes::{FakeEnv, RecordingHost, ScriptedTransport, ports};
use common::{Harness, blocks_reply, text_reply};
use serde_json::json;
use std::rc::Rc;

fn journal(host: &RecordingHost) -> Vec<String> {
    host.journal.borrow().iter().map(HistoryEntry::to_json).collect()
}

/// Two rounds with signed reasoning: two shell calls, then an answer.
fn reasoning_replies() -> Vec<agent_test_support::fakes::ScriptedResponse> {
    vec![
        blocks_reply(&[
            json!({"type": "thinking", "thinking": "Two commands.", "signature": "sig-1"}),
            json!({"type": "tool_use", "id": "t1", "name": "shell", "input": {"command": "echo one"}}),
            json!({"type": "tool_use", "id": "t2", "name": "shell", "input": {"command": "echo two"}}),
        ]),
        blocks_reply(&[
            json!({"type": "thinking", "thinking": "Both ran.", "signature": "sig-2"}),
            json!({"type": "text", "text": "Done."}),
        ]),
    ]
}

fn resume(h: &Harness, request: &ResumeRequest) -> Result<(Session, Rc<RecordingHost>), AgentError> {
    let host = Rc::new(RecordingHost::default());
    let transport = Rc::new(ScriptedTransport::new(vec![text_reply("again")]));
    Session::resume(request, ports(h.env.clone(), transport, host.clone())).map(|s| (s, host))
}

#[test]
fn the_journal_after_a_snapshot_gives_back_the_exact_history_signatures_included() {
    let mut h = Harness::new(reasoning_replies());
    let start = h.session.snapshot();
    h.session.submit("Run both").unwrap();
    let (resumed, _) = resume(
        &h,
        &ResumeRequest {
            snapshot: start,
            journal: journal(&h.host),
            ..Default::default()
        },
    )
    .unwrap();
    assert_eq!(resumed.history(), h.session.history());
    let Turn::Assistant { message, .. } = &resumed.history()[1] else {
        panic!("{:?}", resumed.history()[1]);
    };
    assert!(matches!(
        &message.parts[0],
        ContentPart::Thinking { signature: Some(s), .. } if s == "sig-1"
    ));
    assert_eq!(resumed.state(), SessionState::Idle);
    // Entries the snapshot already holds are skipped: a later snapshot plus the whole journal
    // gives the same.
    let (again, _) = resume(
        &h,
        &ResumeRequest {
            snapshot: h.session.snapshot(),
            journal: journal(&h.host),
            ..Default::default()
        },
    )
    .unwrap();
    assert_eq!(again.history(), h.session.history());
    assert_eq!(
        serde_json::from_str::<serde_json::Value>(&again.snapshot()).unwrap()["total_turns"],
        2
    );
}

#[test]
fn a_round_the_journal_leaves_open_keeps_finished_results_and_marks_the_others_interrupted() {
    let mut h = Harness::new(reasoning_replies());
    let start = h.session.snapshot();
    h.session.submit("Run both").unwrap();
    // The host died after the first call's result was journaled: user, assistant, t1.
    let cut: Vec<String> = journal(&h.host).into_iter().take(3).collect();
    assert!(cut[2].contains("\"op\":\"tool_result\""), "{cut:?}");
    let (resumed, host) = resume(
        &h,
        &ResumeRequest {
            snapshot: start,
            journal: cut,
            ..Default::default()
        },
    )
    .unwrap();
    let Some(Turn::ToolResults { results, .. }) = resumed.history().last() else {
        panic!("{:?}", resumed.history());
    };
    assert_eq!(results.len(), 2);
    assert!(
        results[0].content.starts_with("ran: echo one\n") && !results[0].is_error,
        "{:?}",
        results[0]
    );
    assert!(
        results[1].is_error && results[1].content.contains("interrupted"),
        "{:?}",
        results[1]
    );
    // The closing turn is journaled like any other.
    assert!(matches!(
        host.journal.borrow().as_slice(),
        [HistoryEntry::Append {
            index: 2,
            turn: Turn::ToolResults { .. }
        }]
    ));
}

#[test]
fn resuming_can_change_the_model_and_allow_more_turns() {
    let mut h = Harness::new(reasoning_replies());
    h.session.submit("Run both").unwrap();
    let (resumed, _) = resume(
        &h,
        &ResumeRequest {
            snapshot: h.session.snapshot(),
            journal: Vec::new(),
            model: Some("claude-other".to_string()),
            more_turns: Some(3),
        },
    )
    .unwrap();
    assert_eq!(resumed.config().model, "claude-other");
    assert_eq!(resumed.config().limits.max_turns, 5);
    let (unlimited, _) = resume(
        &h,
        &ResumeRequest {
            snapshot: h.session.snapshot(),
            more_turns: Some(0),
            ..Default::default()
        },
    )
    .unwrap();
    assert_eq!(unlimited.config().limits.max_turns, 0);
}

#[test]
fn a_journal_that_does_not_fit_the_snapshot_is_refused_naming_the_entry() {
    let h = Harness::with(
        FakeEnv::default(),
        SessionConfig::new("anthropic", "m"),
        Vec::new(),
    );
    let entry = HistoryEntry::Append {
        index: 4,
        turn: Turn::User {
            content: "x".to_string(),
            timestamp_ms: 1,
        },
    };
    let request = ResumeRequest {
        snapshot: h.session.snapshot(),
        journal: vec![entry.to_json()],
        ..Default::default()
    };
    let Err(AgentError::InvalidConfig(message)) = resume(&h, &request).map(|_| ()) else {
        panic!("accepted");
    };
    assert!(
        message.starts_with("journal entry 0:") && message.contains("item 4"),
        "{message}"
    );
    let request = ResumeRequest {
        snapshot: h.session.snapshot(),
        journal: vec!["{\"op\":\"?\"}".to_string()],
        ..Default::default()
    };
    let Err(AgentError::InvalidConfig(message)) = resume(&h, &request).map(|_| ()) else {
        panic!("accepted");
    };
    assert!(
        message.starts_with("journal entry 0: invalid history entry"),
        "{message}"
    );
}
