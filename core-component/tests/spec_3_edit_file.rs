//! Section 3.3 of the spec: edit_file, exact and fuzzy (and read_many_files of the Gemini
//! profile), through a session's tool round over in-memory fakes.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests may panic

mod common;

use agent_core::{SessionConfig, StopReason};
use agent_test_support::fakes::FakeEnv;
use common::{Harness, text_reply, tool_reply};
use serde_json::{Value, json};

/// Runs one edit_file call on `file` (holding `content`); returns the tool result.
fn edit(content: &str, args: Value) -> (Value, Option<String>) {
    let env = FakeEnv::default();
    env.put("src/lib.rs", content);
    let mut h = Harness::with(
        env,
        SessionConfig::new("anthropic", "m"),
        vec![tool_reply(&[("e1", "edit_file", args)]), text_reply("done")],
    );
    let outcome = h.session.submit("edit it").unwrap();
    assert_eq!(outcome.stop_reason, StopReason::Completed);
    (h.tool_results(1)[0].clone(), h.env.get("src/lib.rs"))
}

const FILE: &str = "fn a() {\n    one();\n}\n\nfn b() {\n    one();\n}\n";

#[test]
fn an_exact_unique_match_is_replaced() {
    let (result, file) = edit(
        FILE,
        json!({"file_path": "src/lib.rs", "old_string": "fn b() {\n    one();", "new_string": "fn b() {\n    two();"}),
    );
    assert_eq!(result["is_error"], false);
    assert_eq!(result["content"], "Edited src/lib.rs: replaced 1 occurrence");
    assert_eq!(
        file.unwrap(),
        "fn a() {\n    one();\n}\n\nfn b() {\n    two();\n}\n"
    );
}

#[test]
fn a_match_found_only_fuzzily_is_replaced_and_the_pass_is_named() {
    // The model lost the indentation: the file's own lines are what get replaced.
    let (result, file) = edit(
        FILE,
        json!({"file_path": "src/lib.rs", "old_string": "fn b() {\none();\n}", "new_string": "fn b() {\n    two();\n}"}),
    );
    assert_eq!(result["is_error"], false, "{result}");
    assert!(
        result["content"].as_str().unwrap().contains("line-trimmed pass"),
        "{result}"
    );
    assert_eq!(
        file.unwrap(),
        "fn a() {\n    one();\n}\n\nfn b() {\n    two();\n}\n"
    );
}

#[test]
fn several_matches_are_an_error_unless_replace_all() {
    let (result, file) = edit(
        FILE,
        json!({"file_path": "src/lib.rs", "old_string": "one();", "new_string": "two();"}),
    );
    assert_eq!(result["is_error"], true);
    let message = result["content"].as_str().unwrap();
    assert!(
        message.contains("matches 2 places in src/lib.rs (lines 2, 6)"),
        "{message}"
    );
    assert_eq!(file.unwrap(), FILE, "nothing changed");

    let (result, file) = edit(
        FILE,
        json!({"file_path": "src/lib.rs", "old_string": "one();", "new_string": "two();", "replace_all": true}),
    );
    assert_eq!(result["content"], "Edited src/lib.rs: replaced 2 occurrences");
    assert!(!file.unwrap().contains("one()"));
}

#[test]
fn text_that_is_not_there_is_an_error_that_says_what_to_do() {
    let (result, file) = edit(
        FILE,
        json!({"file_path": "src/lib.rs", "old_string": "fn c() {}", "new_string": "fn d() {}"}),
    );
    assert_eq!(result["is_error"], true);
    assert!(
        result["content"]
            .as_str()
            .unwrap()
            .contains("was not found in src/lib.rs")
    );
    assert_eq!(file.unwrap(), FILE);
}

#[test]
fn crlf_files_keep_their_line_endings() {
    let (result, file) = edit(
        "a\r\nb\r\n",
        json!({"file_path": "src/lib.rs", "old_string": "a\nb", "new_string": "a\nc"}),
    );
    assert_eq!(result["is_error"], false, "{result}");
    assert_eq!(file.unwrap(), "a\r\nc\r\n");
}

#[test]
fn read_many_files_shows_each_file_under_a_header_and_expands_globs() {
    let env = FakeEnv::default();
    env.put("src/a.rs", "fn a() {}\n");
    env.put("src/b.rs", "fn b() {}");
    env.put("notes.txt", "notes\n");
    let mut config = SessionConfig::new("gemini", "m");
    config.protocol = agent_core::llm::WireProtocol::AnthropicMessages;
    let mut h = Harness::with(
        env,
        config,
        vec![
            tool_reply(&[(
                "r1",
                "read_many_files",
                json!({"paths": ["*.rs", "notes.txt", "missing.txt"]}),
            )]),
            text_reply("done"),
        ],
    );
    // The fake server speaks Anthropic's protocol whatever the profile.
    h.session.submit("read").unwrap_or_else(|e| panic!("{e}"));
    let result = &h.tool_results(1)[0];
    let text = result["content"].as_str().unwrap();
    assert_eq!(result["is_error"], false);
    assert!(
        text.starts_with(
            "--- src/a.rs ---\nfn a() {}\n--- src/b.rs ---\nfn b() {}\n--- notes.txt ---\nnotes\n"
        ),
        "{text}"
    );
    assert!(
        text.contains("--- missing.txt ---\n[could not read: file not found: missing.txt]"),
        "{text}"
    );
}
