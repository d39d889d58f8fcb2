//! Attacks on the editor as the environment: paths outside the workspace, denied, through
//! links, hard links, FIFOs and read-only mode refused before the editor is asked; a name that
//! is not UTF-8; a command that swaps a folder for a link while the editor writes.

use super::editor::{common_result, strings};
use super::{client, last_results};
use scripted_llm::ScriptedServer;
use scripted_llm::anthropic::{message, text, tool_use};
use serde_json::json;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn outside_denied_linked_and_read_only_paths_are_refused_before_the_editor_is_asked() {
    let work = tempfile::tempdir().unwrap();
    let elsewhere = tempfile::tempdir().unwrap();
    let outside = elsewhere.path().join("outside.txt");
    std::fs::write(&outside, "outside secret\n").unwrap();
    std::fs::create_dir(work.path().join("secret")).unwrap();
    std::fs::write(work.path().join("secret/key.txt"), "denied secret\n").unwrap();
    std::os::unix::fs::symlink(&outside, work.path().join("link.txt")).unwrap();
    std::fs::write(work.path().join("inside.txt"), "inside\n").unwrap();
    let outside = outside.display().to_string();
    let llm = ScriptedServer::replying(vec![
        message(&[
            tool_use("r0", "read_file", json!({"file_path": "inside.txt"})),
            tool_use("r1", "read_file", json!({"file_path": outside})),
            tool_use("r2", "read_file", json!({"file_path": "secret/key.txt"})),
            tool_use("r3", "read_file", json!({"file_path": "link.txt"})),
            tool_use("w1", "write_file", json!({"file_path": outside, "content": "x"})),
            tool_use(
                "w2",
                "write_file",
                json!({"file_path": "secret/new.txt", "content": "x"}),
            ),
            tool_use(
                "w3",
                "write_file",
                json!({"file_path": "link.txt", "content": "x"}),
            ),
        ]),
        message(&[text("Refused.")]),
        message(&[
            tool_use("r4", "read_file", json!({"file_path": "link.txt"})),
            tool_use("r5", "read_file", json!({"file_path": outside})),
            tool_use("r6", "read_file", json!({"file_path": "fifo"})),
            // A hard-linked file may be read (row 6 of the threat model), not written.
            tool_use("r7", "read_file", json!({"file_path": "hard.txt"})),
            tool_use(
                "w5",
                "write_file",
                json!({"file_path": "hard.txt", "content": "x"}),
            ),
            tool_use(
                "w6",
                "write_file",
                json!({"file_path": "dangling.txt", "content": "x"}),
            ),
            tool_use(
                "w7",
                "write_file",
                json!({"file_path": "link.txt", "content": "x"}),
            ),
        ]),
        message(&[text("Refused again.")]),
        message(&[tool_use(
            "w4",
            "write_file",
            json!({"file_path": "inside.txt", "content": "x"}),
        )]),
        message(&[text("Read-only.")]),
    ])
    .await;
    let args = ["--approval", "auto", "--deny-dir", "secret"];
    let seen = client(work.path(), &llm, &["try", "--fs"], &args).await;
    assert_eq!(seen["stop_reason"], "end_turn", "{seen}");
    let results = super::common::last_tool_results(&llm.requests());
    assert_eq!(results.len(), 7, "{results:?}");
    assert_eq!(
        results[0],
        ("r0".to_string(), false, "  1 | inside\n".to_string()),
        "{results:?}"
    );
    for (id, is_error, text) in &results[1..] {
        assert!(is_error, "{id} was not refused: {text}");
        assert!(!text.contains("secret\n"), "{id}: {text}");
    }
    // Only the allowed read reached the editor.
    let inside = work.path().join("inside.txt").display().to_string();
    assert_eq!(seen["reads"], json!([inside]), "{seen}");
    assert_eq!(seen["writes"], json!([]), "{seen}");
    assert_eq!(
        std::fs::read_to_string(elsewhere.path().join("outside.txt")).unwrap(),
        "outside secret\n"
    );

    // Without --deny-dir, the local environment's own confinement refuses (no path policy
    // wraps it then): links out, a FIFO (without blocking), a file with another hard link
    // (to one outside), a dangling link out.
    let outside_twin = elsewhere.path().join("twin.txt");
    std::fs::write(&outside_twin, "outside twin\n").unwrap();
    std::fs::hard_link(&outside_twin, work.path().join("hard.txt")).unwrap();
    std::os::unix::fs::symlink(elsewhere.path().join("new.txt"), work.path().join("dangling.txt")).unwrap();
    nix::unistd::mkfifo(&work.path().join("fifo"), nix::sys::stat::Mode::S_IRWXU).unwrap();
    let seen = client(work.path(), &llm, &["try again", "--fs"], &args[..2]).await;
    assert_eq!(seen["stop_reason"], "end_turn", "{seen}");
    let results = super::common::last_tool_results(&llm.requests());
    assert_eq!(results.len(), 7, "{results:?}");
    for (id, is_error, text) in results.iter().filter(|(id, _, _)| id != "r7") {
        assert!(is_error, "{id} was not refused: {text}");
    }
    // The hard-linked file was read (by r7, and before w5 by the stale-read guard and the
    // diff), nothing else.
    let hard = work.path().join("hard.txt").display().to_string();
    let reads = strings(&seen["reads"]);
    assert!(!reads.is_empty() && reads.iter().all(|r| *r == hard), "{seen}");
    assert_eq!(seen["writes"], json!([]), "{seen}");
    assert_eq!(std::fs::read_to_string(&outside_twin).unwrap(), "outside twin\n");
    assert!(!elsewhere.path().join("new.txt").exists());

    // Read-only mode refuses the write before anything else.
    let seen = client(
        work.path(),
        &llm,
        &["write", "--fs", "--mode", "read-only"],
        &args[..2],
    )
    .await;
    assert_eq!(seen["stop_reason"], "end_turn", "{seen}");
    assert!(last_results(&llm).contains("read-only"), "{}", last_results(&llm));
    assert_eq!(seen["writes"], json!([]), "{seen}");
    assert_eq!(
        std::fs::read_to_string(work.path().join("inside.txt")).unwrap(),
        "inside\n"
    );
}

/// The attack on the editor's writes: agent-host checks where a write lands, then the editor
/// (outside the sandbox) opens the path; a command running meanwhile swaps a folder on the
/// path for a link out of the workspace. The client here saves each write 1 s after the
/// request, so the window is wide open; the command is started first (the core starts a
/// round's commands and runs its file tools before waiting for them), and the write must wait
/// for its end, then find the link and refuse.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_command_cannot_swap_a_folder_for_a_link_while_the_editor_writes() {
    let work = tempfile::tempdir().unwrap();
    let elsewhere = tempfile::tempdir().unwrap();
    std::fs::create_dir(work.path().join("dir")).unwrap();
    let swap = format!(
        "sleep 0.3; mv dir dir.real && ln -s {} dir && echo swapped",
        elsewhere.path().display()
    );
    let llm = ScriptedServer::replying(vec![
        message(&[
            tool_use("s1", "shell", json!({"command": swap})),
            tool_use(
                "w1",
                "write_file",
                json!({"file_path": "dir/x.txt", "content": "planted\n"}),
            ),
        ]),
        message(&[text("Done.")]),
    ])
    .await;
    let seen = client(
        work.path(),
        &llm,
        &["write", "--fs", "--save-after", "1"],
        &["--approval", "auto"],
    )
    .await;
    assert_eq!(seen["stop_reason"], "end_turn", "{seen}");
    let mut results = super::common::last_tool_results(&llm.requests());
    results.sort();
    assert!(results[0].2.contains("swapped"), "{results:?}");
    assert!(
        !elsewhere.path().join("x.txt").exists(),
        "the editor's write landed outside the workspace"
    );
    let (_, refused, why) = &results[1];
    assert!(*refused && why.contains("outside"), "{results:?}");
    assert_eq!(seen["writes"], json!([]), "{seen}");
}

/// The attack on text paths (found by a review): the editor takes paths as text, so a real
/// folder named `\xff` would reach it as U+FFFD, and a link named U+FFFD can point out of
/// the workspace. A sandboxed command sets it up; the read and the write must stay with the
/// files agent-host checked.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_name_that_is_not_utf8_cannot_lead_the_editor_out_of_the_workspace() {
    let work = tempfile::tempdir().unwrap();
    let elsewhere = tempfile::tempdir().unwrap();
    std::fs::write(elsewhere.path().join("secret.txt"), "outside secret\n").unwrap();
    let setup = format!(
        "mkdir $'\\xff' && echo dummy > $'\\xff'/secret.txt && ln -s {} $'\\xef\\xbf\\xbd' && ln -s $'\\xff' x && echo ready",
        elsewhere.path().display()
    );
    let llm = ScriptedServer::replying(vec![
        message(&[tool_use("s1", "shell", json!({"command": setup}))]),
        message(&[tool_use("r1", "read_file", json!({"file_path": "x/secret.txt"}))]),
        message(&[tool_use(
            "w1",
            "write_file",
            json!({"file_path": "x/secret.txt", "content": "planted\n"}),
        )]),
        message(&[text("Done.")]),
    ])
    .await;
    let seen = client(
        work.path(),
        &llm,
        &["go", "--fs", "--save-after", "0"],
        &["--approval", "auto"],
    )
    .await;
    assert_eq!(seen["stop_reason"], "end_turn", "{seen}");
    assert!(
        common_result(&llm, "s1").contains("ready"),
        "{}",
        common_result(&llm, "s1")
    );
    let read = common_result(&llm, "r1");
    assert!(
        read.contains("dummy") && !read.contains("outside secret"),
        "{read}"
    );
    assert_eq!(
        std::fs::read_to_string(elsewhere.path().join("secret.txt")).unwrap(),
        "outside secret\n"
    );
    assert_eq!(seen["reads"], json!([]), "{seen}");
    assert_eq!(seen["writes"], json!([]), "{seen}");
}
