//! Edits change only what they change. Through `agent-host tool apply_patch` and
//! `agent-host tool edit_file` (the real binary and component, real files): typographic
//! punctuation and trailing whitespace of context lines stay the file's, CRLF stays CRLF
//! (also for added lines), a missing final newline stays missing, and a fuzzy edit lands
//! at the file's indentation.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests may panic

mod common;

use common::{agent_host, stderr};
use serde_json::{Value, json};
use std::path::Path;

/// Runs `tool` with `args` in `work`; panics with its stderr when it fails.
async fn tool(work: &Path, tool: &str, args: Value) {
    let output = agent_host()
        .args(["tool", tool, "--args"])
        .arg(args.to_string())
        .arg("--cwd")
        .arg(work)
        .output()
        .await
        .unwrap();
    assert!(output.status.success(), "{tool}: {}", stderr(&output));
}

fn patch(body: &str) -> Value {
    json!({ "patch": format!("*** Begin Patch\n{body}*** End Patch\n") })
}

fn read(work: &Path, name: &str) -> String {
    String::from_utf8(std::fs::read(work.join(name)).unwrap()).unwrap()
}

const TYPOGRAPHIC: &str = "msg = \u{201c}hello\u{201d}  # greeting \u{2014} friendly";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn apply_patch_keeps_typographic_punctuation_of_context_lines() {
    let work = tempfile::tempdir().unwrap();
    std::fs::write(work.path().join("a.py"), format!("{TYPOGRAPHIC}\nx = 1\n")).unwrap();
    let body = "*** Update File: a.py\n@@\n msg = \"hello\"  # greeting - friendly\n-x = 1\n+x = 2\n";
    tool(work.path(), "apply_patch", patch(body)).await;
    assert_eq!(read(work.path(), "a.py"), format!("{TYPOGRAPHIC}\nx = 2\n"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn apply_patch_keeps_trailing_whitespace_of_context_lines() {
    let work = tempfile::tempdir().unwrap();
    std::fs::write(work.path().join("b.txt"), "keep  \t\nold\n").unwrap();
    tool(
        work.path(),
        "apply_patch",
        patch("*** Update File: b.txt\n@@\n keep\n-old\n+new\n"),
    )
    .await;
    assert_eq!(read(work.path(), "b.txt"), "keep  \t\nnew\n");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn apply_patch_keeps_crlf_also_for_added_lines() {
    let work = tempfile::tempdir().unwrap();
    std::fs::write(work.path().join("w.txt"), "one\r\ntwo\r\nthree\r\n").unwrap();
    tool(
        work.path(),
        "apply_patch",
        patch("*** Update File: w.txt\n@@\n one\n-two\n+2\n+2.5\n three\n"),
    )
    .await;
    assert_eq!(read(work.path(), "w.txt"), "one\r\n2\r\n2.5\r\nthree\r\n");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn apply_patch_keeps_a_missing_final_newline_missing() {
    let work = tempfile::tempdir().unwrap();
    std::fs::write(work.path().join("n.txt"), "a\nb\nc").unwrap();
    tool(
        work.path(),
        "apply_patch",
        patch("*** Update File: n.txt\n@@\n a\n-b\n+B\n c\n"),
    )
    .await;
    assert_eq!(read(work.path(), "n.txt"), "a\nB\nc");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn edit_file_keeps_line_endings_final_newline_and_the_file_s_indentation() {
    let work = tempfile::tempdir().unwrap();
    let edit =
        |file: &str, old: &str, new: &str| json!({"file_path": file, "old_string": old, "new_string": new});

    std::fs::write(work.path().join("w.txt"), "one\r\ntwo\r\nthree\r\n").unwrap();
    tool(work.path(), "edit_file", edit("w.txt", "two\n", "2\n2.5\n")).await;
    assert_eq!(read(work.path(), "w.txt"), "one\r\n2\r\n2.5\r\nthree\r\n");

    std::fs::write(work.path().join("n.txt"), "a\nb\nc").unwrap();
    tool(work.path(), "edit_file", edit("n.txt", "b", "B")).await;
    assert_eq!(read(work.path(), "n.txt"), "a\nB\nc");

    // Mixed endings: the lines the edit does not touch keep theirs.
    std::fs::write(work.path().join("m.txt"), "a\r\nb\nc\r\n").unwrap();
    tool(work.path(), "edit_file", edit("m.txt", "b", "B")).await;
    assert_eq!(read(work.path(), "m.txt"), "a\r\nB\nc\r\n");

    // The model wrote the block at 4 spaces, the file has it at 8: matched by a fuzzy pass,
    // the replacement lands at 8.
    std::fs::write(
        work.path().join("i.py"),
        "class A:\n    def f(self):\n        if x:\n            y()\n",
    )
    .unwrap();
    tool(
        work.path(),
        "edit_file",
        edit(
            "i.py",
            "    if x:\n        y()\n",
            "    if x:\n        z()\n    w()\n",
        ),
    )
    .await;
    assert_eq!(
        read(work.path(), "i.py"),
        "class A:\n    def f(self):\n        if x:\n            z()\n        w()\n"
    );
}
