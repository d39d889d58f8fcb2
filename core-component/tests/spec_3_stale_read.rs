//! The stale-read guard. write_file, edit_file and apply_patch refuse to change a
//! file that changed since the session last read or wrote it, and write_file (and a patch's
//! `Add File`) to replace an existing file the session never read; the refusal is an error
//! result that tells the model to read the file again, and nothing is written. Off with
//! `limits.stale_read_guard = false`.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests may panic

mod common;

use agent_core::file_stamps::FileStamps;
use agent_core::patch::{PatchError, apply_guarded};
use agent_core::{EventKind, SessionConfig, StopReason};
use agent_test_support::fakes::FakeEnv;
use common::{Harness, text_reply, tool_reply};
use serde_json::{Value, json};

fn read(id: &str) -> Vec<(&str, &str, Value)> {
    vec![(id, "read_file", json!({"file_path": "a.txt"}))]
}

fn edit<'a>(id: &'a str, old: &str, new: &str) -> Vec<(&'a str, &'a str, Value)> {
    vec![(
        id,
        "edit_file",
        json!({"file_path": "a.txt", "old_string": old, "new_string": new}),
    )]
}

fn write<'a>(id: &'a str, content: &str) -> Vec<(&'a str, &'a str, Value)> {
    vec![(
        id,
        "write_file",
        json!({"file_path": "a.txt", "content": content}),
    )]
}

/// Each TOOL_CALL_END as its error, or `None` when the call succeeded.
fn errors(h: &Harness) -> Vec<Option<String>> {
    h.events_of(EventKind::ToolCallEnd)
        .iter()
        .map(|end| end["error"].as_str().map(str::to_string))
        .collect()
}

#[test]
fn a_file_changed_since_it_was_read_is_not_changed_until_read_again() {
    let env = FakeEnv::default();
    env.put("a.txt", "one\n");
    let mut h = Harness::with(
        env,
        SessionConfig::new("anthropic", "m"),
        vec![
            tool_reply(&write("w1", "clobbered\n")),
            tool_reply(&read("r1")),
            text_reply("read it"),
            tool_reply(&edit("e1", "changed", "CHANGED")),
            tool_reply(&read("r2")),
            tool_reply(&edit("e2", "changed", "CHANGED")),
            tool_reply(&write("w2", "mine\n")),
            text_reply("done"),
        ],
    );
    assert_eq!(
        h.session.submit("first").unwrap().stop_reason,
        StopReason::Completed
    );
    // Between the inputs, someone else changes the file.
    h.env.put("a.txt", "changed\n");
    assert_eq!(
        h.session.submit("second").unwrap().stop_reason,
        StopReason::Completed
    );
    let errors = errors(&h);
    assert_eq!(errors.len(), 6, "{errors:?}");
    let never_read = errors[0].as_deref().unwrap();
    assert!(
        never_read.contains("a.txt already exists and you have not read it"),
        "{never_read}"
    );
    assert_eq!(errors[1], None, "the read");
    let stale = errors[2].as_deref().unwrap();
    assert!(
        stale.contains("a.txt changed on disk since you last read or wrote it")
            && stale.contains("Read it again"),
        "{stale}"
    );
    assert_eq!(
        errors[3..],
        [None, None, None],
        "read again, edited, then overwritten: its own write counts as seen"
    );
    assert_eq!(h.env.get("a.txt").as_deref(), Some("mine\n"));
}

#[test]
fn the_guard_can_be_turned_off() {
    let env = FakeEnv::default();
    env.put("a.txt", "one\n");
    let mut config = SessionConfig::new("anthropic", "m");
    config.limits.stale_read_guard = false;
    let mut h = Harness::with(
        env,
        config,
        vec![tool_reply(&write("w1", "two\n")), text_reply("done")],
    );
    h.session.submit("go").unwrap();
    assert_eq!(errors(&h), [None]);
    assert_eq!(h.env.get("a.txt").as_deref(), Some("two\n"));
}

#[test]
fn a_patch_to_a_stale_or_unread_file_changes_nothing() {
    let env = FakeEnv::default();
    env.put("a.txt", "one\n");
    env.put("b.txt", "bee\n");
    let stamps = FileStamps::new(true);
    let wd = agent_core::ports::Environment::working_directory(&env);
    stamps.saw("a.txt", &wd, b"one\n");
    let update = "*** Begin Patch\n*** Update File: a.txt\n@@\n-one\n+ONE\n*** End Patch\n";
    env.put("a.txt", "uno\n");
    let stale = apply_guarded(update, &env, &stamps);
    assert!(
        matches!(&stale, Err(PatchError::Apply(m)) if m.contains("changed on disk")),
        "{stale:?}"
    );
    let add_over = "*** Begin Patch\n*** Add File: b.txt\n+new\n*** End Patch\n";
    let unread = apply_guarded(add_over, &env, &stamps);
    assert!(
        matches!(&unread, Err(PatchError::Apply(m)) if m.contains("not read it")),
        "{unread:?}"
    );
    assert_eq!(h_files(&env), ("uno\n".to_string(), "bee\n".to_string()));

    stamps.saw("a.txt", &wd, b"uno\n");
    let update = "*** Begin Patch\n*** Update File: a.txt\n@@\n-uno\n+UNO\n*** End Patch\n";
    assert!(apply_guarded(update, &env, &stamps).is_ok());
    // Its own write is what it saw last: a second patch applies.
    let again = "*** Begin Patch\n*** Update File: a.txt\n@@\n-UNO\n+Uno\n*** End Patch\n";
    assert!(apply_guarded(again, &env, &stamps).is_ok());
    assert_eq!(env.get("a.txt").as_deref(), Some("Uno\n"));
}

fn h_files(env: &FakeEnv) -> (String, String) {
    (env.get("a.txt").unwrap(), env.get("b.txt").unwrap())
}

#[test]
fn deleting_then_adding_a_file_in_one_patch_still_needs_it_read() {
    let env = FakeEnv::default();
    env.put("c.txt", "theirs\n");
    let stamps = FileStamps::new(true);
    let replace = "*** Begin Patch\n*** Delete File: c.txt\n*** Add File: c.txt\n+mine\n*** End Patch\n";
    let refused = apply_guarded(replace, &env, &stamps);
    assert!(
        matches!(&refused, Err(PatchError::Apply(m)) if m.contains("not read it") && m.contains("No file of this patch was changed")),
        "{refused:?}"
    );
    assert_eq!(env.get("c.txt").as_deref(), Some("theirs\n"));
}
