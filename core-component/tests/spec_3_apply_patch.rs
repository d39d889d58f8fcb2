//! apply_patch v4a (appendix A of the spec) on an in-memory workspace: chunks apply in
//! order after their context, a failing hunk changes no file, the files a patch names.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use agent_core::patch::*;
use agent_test_support::fakes::FakeEnv;

fn patch(body: &str) -> String {
    format!("*** Begin Patch\n{body}*** End Patch\n")
}

#[test]
fn affected_paths_lists_each_file_once() {
    let patch = "*** Begin Patch\n*** Update File: a.py\n@@\n-x\n+y\n*** Move to: b.py\n\
                 *** Add File: c.py\n+z\n*** Update File: a.py\n*** End Patch";
    assert_eq!(affected_paths(patch), vec!["a.py", "b.py", "c.py"]);
}

#[test]
fn chunks_apply_in_order_after_their_context_and_a_missing_final_newline_stays_missing() {
    let env = FakeEnv::default();
    env.put("m.rs", "fn a() {\n    x\n}\nfn b() {\n    x\n}");
    let summary = apply(
        &patch("*** Update File: m.rs\n@@ fn b() {\n-    x\n+    y\n"),
        &env,
    );
    assert_eq!(
        summary.as_deref(),
        Ok("Success. Updated the following files:\nM m.rs\n")
    );
    assert_eq!(
        env.get("m.rs").as_deref(),
        Some("fn a() {\n    x\n}\nfn b() {\n    y\n}")
    );
}

/// Lines a patch does not change keep the file's bytes, whichever pass matched them, and
/// their line breaks; added lines take the file's usual break.
#[test]
fn context_lines_keep_the_file_s_bytes_and_breaks() {
    let env = FakeEnv::default();
    let typographic = "msg = \u{201c}hello\u{201d}  # greeting \u{2014} friendly";
    env.put("a.py", &format!("{typographic}\nx = 1   \ny = 2\n"));
    let body = "*** Update File: a.py\n@@\n msg = \"hello\"  # greeting - friendly\n x = 1\n-y = 2\n+y = 3\n";
    assert!(apply(&patch(body), &env).is_ok());
    assert_eq!(
        env.get("a.py").unwrap(),
        format!("{typographic}\nx = 1   \ny = 3\n"),
        "the typographic quotes and dash and the trailing spaces are the file's"
    );

    env.put("w.txt", "one\r\ntwo\r\nthree\r\n");
    let body = "*** Update File: w.txt\n@@\n one\n-two\n+TWO\n+two and a half\n three\n";
    assert!(apply(&patch(body), &env).is_ok());
    assert_eq!(
        env.get("w.txt").unwrap(),
        "one\r\nTWO\r\ntwo and a half\r\nthree\r\n"
    );

    env.put("mixed.txt", "a\r\nb\nc\r\nd");
    let body = "*** Update File: mixed.txt\n@@\n b\n-c\n+C\n d\n";
    assert!(apply(&patch(body), &env).is_ok());
    assert_eq!(
        env.get("mixed.txt").unwrap(),
        "a\r\nb\nC\r\nd",
        "each line keeps its break, the last stays unterminated"
    );

    // Appending after an unterminated last line: it gets a break, the new last line none.
    env.put("tail.txt", "a\r\nb");
    let body = "*** Update File: tail.txt\n@@\n b\n+c\n";
    assert!(apply(&patch(body), &env).is_ok());
    assert_eq!(env.get("tail.txt").unwrap(), "a\r\nb\r\nc");
}

#[test]
fn a_failing_hunk_leaves_every_file_as_it_was() {
    let env = FakeEnv::default();
    env.put("keep.txt", "keep\n");
    let result = apply(
        &patch("*** Add File: new.txt\n+hi\n*** Delete File: keep.txt\n*** Update File: keep.txt\n-x\n+y\n"),
        &env,
    );
    assert!(
        matches!(&result, Err(PatchError::Apply(m)) if m.contains("deletes it")),
        "{result:?}"
    );
    assert_eq!(env.get("keep.txt").as_deref(), Some("keep\n"));
    assert_eq!(env.get("new.txt"), None);

    let missing = apply(&patch("*** Update File: keep.txt\n-nope\n+yes\n"), &env);
    assert!(
        matches!(&missing, Err(PatchError::Apply(m)) if m.ends_with("in keep.txt:\nnope")),
        "the error quotes the lines that did not match: {missing:?}"
    );
}

#[test]
fn later_hunks_see_earlier_ones_and_moves_delete_the_source() {
    let env = FakeEnv::default();
    env.put("a.txt", "1\n");
    let result = apply(
        &patch("*** Add File: b.txt\n+2\n*** Update File: b.txt\n*** Move to: c/b.txt\n-2\n+3\n"),
        &env,
    );
    assert!(result.is_ok(), "{result:?}");
    assert_eq!(env.get("b.txt"), None);
    assert_eq!(env.get("c/b.txt").as_deref(), Some("3\n"));
}
