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
fn chunks_apply_in_order_after_their_context_and_the_result_ends_with_a_newline() {
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
        Some("fn a() {\n    x\n}\nfn b() {\n    y\n}\n")
    );
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
