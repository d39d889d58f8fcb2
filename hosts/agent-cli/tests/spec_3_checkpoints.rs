//! Checkpoints and undo: the workspace recorded before each input, restored by
//! `agent-host undo` and the embedding API, whatever changed the files (the file tools or
//! commands). The real binary and component, real files and commands, real HTTP to the
//! scripted server on 127.0.0.1.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests may panic

mod common;

use agent_host::LocalEnvironment;
use agent_host::config::session_config;
use agent_host::embed::{Error, SessionOptions};
use common::{agent_host, agent_host_at, stderr, stdout};
use scripted_llm::anthropic::{message, text, tool_use};
use scripted_llm::{Reply, ScriptedServer};
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::sync::Arc;

/// Every file under `dir` (but `.git`) with its bytes and executable bit.
fn files(dir: &Path) -> BTreeMap<String, (Vec<u8>, bool)> {
    let mut found = BTreeMap::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(next) = pending.pop() {
        for entry in std::fs::read_dir(next).unwrap().flatten() {
            let path = entry.path();
            if entry.file_type().unwrap().is_dir() {
                pending.push(path);
                continue;
            }
            let relative = path.strip_prefix(dir).unwrap().to_string_lossy().into_owned();
            let executable = entry.metadata().unwrap().permissions().mode() & 0o111 != 0;
            found.insert(relative, (std::fs::read(&path).unwrap(), executable));
        }
    }
    found
}

/// One input's replies: the calls in one response, then a closing answer.
fn calls_then_done(calls: &[(&str, &str, Value)]) -> Vec<Reply> {
    let uses: Vec<_> = calls
        .iter()
        .map(|(id, name, arguments)| tool_use(id, name, arguments.clone()))
        .collect();
    vec![message(&uses), message(&[text("Done.")])]
}

fn shell(id: &'static str, command: &str) -> (&'static str, &'static str, Value) {
    (id, "shell", json!({ "command": command }))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_inputs_and_shell_edits_are_undone_to_input_one_byte_for_byte() {
    let state = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    let w = work.path();
    std::fs::write(w.join("keep.txt"), b"untouched\n").unwrap();
    std::fs::write(w.join("code.py"), b"x = 1\r\nprint(x)\r\n").unwrap();
    std::fs::write(w.join("doc.md"), b"# Doc\n\nno final newline").unwrap();
    std::fs::write(w.join(".gitignore"), b"build/\n").unwrap();
    std::fs::create_dir(w.join("build")).unwrap();
    std::fs::write(w.join("build/cache.bin"), b"\x00\x01 built before").unwrap();
    let before = files(w);

    // Input 1: a file tool creates a file, a command rewrites another.
    let llm = ScriptedServer::replying(calls_then_done(&[
        (
            "t1",
            "write_file",
            json!({"file_path": "new.txt", "content": "created in 1\n"}),
        ),
        shell("t2", "printf 'changed by a command\\n' > doc.md"),
    ]))
    .await;
    let output = agent_host_at(state.path(), &llm)
        .args(["run", "input 1", "--cwd"])
        .arg(w)
        .output()
        .await
        .unwrap();
    assert!(output.status.success(), "stderr:\n{}", stderr(&output));
    let id = std::fs::read_dir(state.path().join("sessions"))
        .unwrap()
        .flatten()
        .next()
        .unwrap()
        .file_name()
        .to_string_lossy()
        .into_owned();

    // Inputs 2 and 3, resumed: sed -i, rm, chmod, a new folder, a write_file overwrite.
    let inputs = [
        calls_then_done(&[shell(
            "t3",
            "sed -i 's/x = 1/x = 3/' code.py && rm keep.txt && chmod +x doc.md",
        )]),
        calls_then_done(&[
            shell(
                "t4",
                "mkdir -p sub/deeper && printf deep > sub/deeper/file.txt && cat new.txt",
            ),
            (
                "t5",
                "write_file",
                json!({"file_path": "notes/plan.md", "content": "written in 3\n"}),
            ),
        ]),
    ];
    for (n, replies) in inputs.into_iter().enumerate() {
        let llm = ScriptedServer::replying(replies).await;
        let output = agent_host_at(state.path(), &llm)
            .args(["resume", &id, &format!("input {}", n + 2)])
            .output()
            .await
            .unwrap();
        assert!(output.status.success(), "stderr:\n{}", stderr(&output));
    }
    let changed = files(w);
    assert_eq!(changed["code.py"].0, b"x = 3\r\nprint(x)\r\n");
    assert!(changed["doc.md"].1 && !changed.contains_key("keep.txt"));
    assert_eq!(changed["sub/deeper/file.txt"].0, b"deep");

    let listed = agent_host()
        .env("AGENT_HOST_STATE_DIR", state.path())
        .args(["undo", &id[..8], "--list"])
        .output()
        .await
        .unwrap();
    assert!(listed.status.success(), "stderr:\n{}", stderr(&listed));
    let table = stdout(&listed);
    for n in 1..=3 {
        assert!(table.contains(&format!("input {n}")), "{table}");
    }

    let undone = agent_host()
        .env("AGENT_HOST_STATE_DIR", state.path())
        .current_dir(w)
        .args(["undo", "--to", "1"])
        .output()
        .await
        .unwrap();
    assert!(undone.status.success(), "stderr:\n{}", stderr(&undone));
    let report = stdout(&undone);
    assert!(report.contains("restored to before input 1"), "{report}");
    for line in [
        "restored  code.py",
        "restored  doc.md",
        "restored  keep.txt",
        "removed   new.txt",
        "removed   notes/plan.md",
        "removed   sub/deeper/file.txt",
    ] {
        assert!(report.contains(line), "{line:?} missing from:\n{report}");
    }
    let after = files(w);
    // Folders a command created stay (empty); the ignored build output was never touched.
    assert!(w.join("sub/deeper").is_dir());
    assert!(w.join("notes").is_dir());
    assert_eq!(after, before, "every file's bytes and mode as before input 1");

    // Used up: nothing left to undo, and the error says so.
    let again = agent_host()
        .env("AGENT_HOST_STATE_DIR", state.path())
        .args(["undo", &id, "--to", "2"])
        .output()
        .await
        .unwrap();
    assert_eq!(again.status.code(), Some(2));
    assert!(
        stderr(&again).contains("no checkpoint before input 2"),
        "{}",
        stderr(&again)
    );

    // The model hears about the restore with the next input.
    let llm = ScriptedServer::replying(vec![message(&[text("Noted.")])]).await;
    let output = agent_host_at(state.path(), &llm)
        .args(["resume", &id, "input 4"])
        .output()
        .await
        .unwrap();
    assert!(output.status.success(), "stderr:\n{}", stderr(&output));
    let body = llm.requests()[0].json();
    let last = body["messages"].as_array().unwrap().last().unwrap().to_string();
    assert!(
        last.contains("restored the workspace's files to how they were before input 1")
            && last.contains("input 4"),
        "{last}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_embedding_api_lists_checkpoints_undoes_and_restores() {
    let work = tempfile::tempdir().unwrap();
    let w = work.path();
    std::fs::write(w.join("a.txt"), b"a0").unwrap();
    let mut replies = calls_then_done(&[shell("t1", "printf a1 > a.txt")]);
    replies.extend(calls_then_done(&[(
        "t2",
        "write_file",
        json!({"file_path": "b.txt", "content": "b"}),
    )]));
    let llm = ScriptedServer::replying(replies).await;
    let host = common::host_at(&llm).await;
    let env = Arc::new(LocalEnvironment::new(w).unwrap());
    let session = host
        .open_session(SessionOptions {
            config: Some(session_config("anthropic", "m")),
            environment: Some(env),
            ..SessionOptions::default()
        })
        .await
        .unwrap();
    session.submit("first").await.unwrap();
    session.submit("second").await.unwrap();
    let listed = session.checkpoints().await.unwrap();
    let labels: Vec<(u32, &str)> = listed.iter().map(|c| (c.input, c.label.as_str())).collect();
    assert_eq!(labels, [(1, "first"), (2, "second")]);

    let undone = session.undo().await.unwrap();
    assert_eq!(
        (undone.input, undone.changes.removed.as_slice()),
        (2, &["b.txt".to_string()][..])
    );
    assert!(!w.join("b.txt").exists());
    assert_eq!(std::fs::read(w.join("a.txt")).unwrap(), b"a1");

    let restored = session.restore(1).await.unwrap();
    assert_eq!(restored.changes.restored, ["a.txt"]);
    assert_eq!(std::fs::read(w.join("a.txt")).unwrap(), b"a0");
    let error = session.restore(1).await.unwrap_err();
    assert!(
        matches!(&error, Error::Checkpoints(m) if m.contains("no checkpoint before input 1")),
        "{error}"
    );
    session.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_read_only_session_has_no_checkpoints_and_says_why() {
    let work = tempfile::tempdir().unwrap();
    let llm = ScriptedServer::replying(vec![message(&[text("Hi.")])]).await;
    let host = common::host_at(&llm).await;
    let session = host
        .open_session(SessionOptions {
            config: Some(session_config("anthropic", "m")),
            environment: Some(Arc::new(LocalEnvironment::new(work.path()).unwrap())),
            read_only: true,
            ..SessionOptions::default()
        })
        .await
        .unwrap();
    session.submit("hello").await.unwrap();
    let error = session.checkpoints().await.unwrap_err().to_string();
    assert!(
        error.contains("only a local workspace that the session may change"),
        "{error}"
    );
    session.close().await.unwrap();
}

/// The user changes the mode mid-session (the chat's `/approval`): leaving read-only lets
/// commands run and starts checkpoints numbered by input; going back refuses again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_leaves_read_only_mode_and_goes_back_to_it() {
    use agent_host::approval::ApprovalMode;
    let work = tempfile::tempdir().unwrap();
    let w = work.path();
    let mut replies = calls_then_done(&[shell("t1", "printf one > one.txt")]);
    replies.extend(calls_then_done(&[shell("t2", "printf two > two.txt")]));
    replies.extend(calls_then_done(&[(
        "t3",
        "write_file",
        json!({"file_path": "three.txt", "content": "3"}),
    )]));
    let llm = ScriptedServer::replying(replies).await;
    let host = common::host_at(&llm).await;
    let session = host
        .open_session(SessionOptions {
            config: Some(session_config("anthropic", "m")),
            environment: Some(Arc::new(LocalEnvironment::new(w).unwrap())),
            read_only: true,
            ..SessionOptions::default()
        })
        .await
        .unwrap();
    assert_eq!(session.approval_mode().await, ApprovalMode::ReadOnly);
    session.submit("input 1").await.unwrap();
    assert!(!w.join("one.txt").exists());

    session.set_approval_mode(ApprovalMode::Auto).await.unwrap();
    assert_eq!(session.approval_mode().await, ApprovalMode::Auto);
    session.submit("input 2").await.unwrap();
    assert_eq!(std::fs::read(w.join("two.txt")).unwrap(), b"two");
    let listed = session.checkpoints().await.unwrap();
    let inputs: Vec<u32> = listed.iter().map(|c| c.input).collect();
    assert_eq!(inputs, [2], "{listed:?}");

    session.set_approval_mode(ApprovalMode::ReadOnly).await.unwrap();
    session.submit("input 3").await.unwrap();
    assert!(!w.join("three.txt").exists());
    // The conversation went on through both moves: the last request holds every input.
    let body = llm.requests().last().unwrap().body.clone();
    for input in ["input 1", "input 2", "input 3"] {
        assert!(body.contains(input), "{input} missing from {body}");
    }
    // Putting files back is a change too: refused until the mode allows changes.
    let refused = session.restore(2).await.unwrap_err().to_string();
    assert!(refused.contains("read-only mode"), "{refused}");
    assert!(w.join("two.txt").exists());
    session.set_approval_mode(ApprovalMode::Ask).await.unwrap();
    let restored = session.restore(2).await.unwrap();
    assert_eq!(restored.changes.removed, ["two.txt"]);
    session.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn undo_refuses_a_session_open_in_another_process_then_works_once_it_is_closed() {
    let state = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    let llm = ScriptedServer::replying(calls_then_done(&[shell("t1", "printf made > made.txt")])).await;
    let host = common::host_at(&llm).await;
    let session = host
        .open_session(SessionOptions {
            config: Some(session_config("anthropic", "m")),
            environment: Some(Arc::new(LocalEnvironment::new(work.path()).unwrap())),
            store: Some(agent_host::persist::SessionStore::new(state.path())),
            ..SessionOptions::default()
        })
        .await
        .unwrap();
    session.submit("make a file").await.unwrap();
    let undo = || {
        let mut cmd = agent_host();
        cmd.env("AGENT_HOST_STATE_DIR", state.path())
            .args(["undo", session.id()]);
        cmd
    };
    let refused = undo().output().await.unwrap();
    assert_eq!(refused.status.code(), Some(2));
    assert!(
        stderr(&refused).contains("is open in another agent-host process"),
        "{}",
        stderr(&refused)
    );
    assert!(work.path().join("made.txt").exists());
    session.close().await.unwrap();
    let undone = undo().output().await.unwrap();
    assert!(undone.status.success(), "stderr:\n{}", stderr(&undone));
    assert!(
        stdout(&undone).contains("removed   made.txt"),
        "{}",
        stdout(&undone)
    );
    assert!(!work.path().join("made.txt").exists());
}
