//! What agent-host writes and sends (THREAT-MODEL.md, row 8). Session files are the user's
//! alone; a redirect never carries the key to another origin; a base URL's password stays
//! out of errors; a revoked host key is refused; a replayed recording runs no command and
//! changes no file unless the user says it is theirs.

use crate::common::sshd::Sshd;
use crate::common::{stderr, stdout};
use crate::{UserDirs, llm};
use scripted_llm::Reply;
use scripted_llm::anthropic::{message, text, tool_use};
use serde_json::json;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

fn mode(path: &Path) -> u32 {
    std::fs::metadata(path).unwrap().permissions().mode() & 0o777
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn session_files_are_readable_by_their_owner_only() {
    let llm = llm(vec![message(&[text("Hi.")])]).await;
    let dirs = UserDirs::new();
    let work = tempfile::tempdir().unwrap();
    let recording = work.path().join("run.jsonl");
    let output = dirs
        .agent_host()
        .args(["run", "hi", "--record"])
        .arg(&recording)
        .arg("--cwd")
        .arg(work.path())
        .env("ANTHROPIC_BASE_URL", llm.base_url())
        .output()
        .await
        .unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
    assert_eq!(mode(&recording), 0o600, "the recording");
    let sessions = dirs.state().join("sessions");
    assert_eq!(mode(&sessions), 0o700, "the sessions folder");
    let session = std::fs::read_dir(&sessions)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    // Folders 0700 and files 0600 all the way down (the checkpoints are a folder).
    let mut pending = vec![session];
    let mut files = 0;
    while let Some(dir) = pending.pop() {
        assert_eq!(mode(&dir), 0o700, "{}", dir.display());
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                pending.push(path);
            } else {
                assert_eq!(mode(&path), 0o600, "{}", path.display());
                files += 1;
            }
        }
    }
    assert!(files > 3, "the session's logs and its checkpoint");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_redirect_to_another_origin_carries_neither_the_key_nor_the_conversation() {
    let elsewhere = llm(vec![message(&[text("Got it.")])]).await;
    // However often the client retries, it is sent elsewhere.
    let redirect = Reply {
        status: 307,
        headers: vec![(
            "location".to_string(),
            format!("{}/v1/messages", elsewhere.base_url()),
        )],
        chunks: Vec::new(),
        delay_ms: 0,
    };
    let redirecting = llm(vec![redirect; 10]).await;
    let work = tempfile::tempdir().unwrap();
    let output = UserDirs::new()
        .agent_host()
        .args(["run", "the secret plan", "--no-persist", "--cwd"])
        .arg(work.path())
        .env("ANTHROPIC_BASE_URL", redirecting.base_url())
        .env("ANTHROPIC_API_KEY", "sk-redirect-key-19")
        .output()
        .await
        .unwrap();
    assert!(!output.status.success(), "{}", stdout(&output));
    assert!(
        elsewhere.requests().is_empty(),
        "the request followed the redirect"
    );
    assert!(stderr(&output).contains("307"), "{}", stderr(&output));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_base_urls_password_stays_out_of_errors_and_events() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let dirs = UserDirs::new();
    let work = tempfile::tempdir().unwrap();
    let output = dirs
        .agent_host()
        .args(["run", "hi", "--json", "--cwd"])
        .arg(work.path())
        .env(
            "ANTHROPIC_BASE_URL",
            format!("http://user:url-password-19@127.0.0.1:{port}"),
        )
        .output()
        .await
        .unwrap();
    assert!(!output.status.success());
    let everything = format!("{}{}{}", stdout(&output), stderr(&output), dirs.state_text());
    assert!(everything.contains("127.0.0.1"), "{everything}");
    assert!(!everything.contains("url-password-19"), "{everything}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_revoked_host_key_is_refused() {
    let sshd = Sshd::start().unwrap();
    let known = std::fs::read_to_string(&sshd.known_hosts).unwrap();
    let key: Vec<&str> = known.split_whitespace().skip(1).take(2).collect();
    std::fs::write(
        &sshd.known_hosts,
        format!("{known}\n@revoked * {}\n", key.join(" ")),
    )
    .unwrap();
    let work = tempfile::tempdir().unwrap();
    std::fs::write(work.path().join("a.txt"), "a\n").unwrap();
    let output = UserDirs::new()
        .agent_host()
        .args([
            "tool",
            "read_file",
            "--args",
            r#"{"file_path": "a.txt"}"#,
            "--env",
        ])
        .arg(sshd.url(work.path()))
        .arg("--ssh-key")
        .arg(&sshd.key)
        .arg("--known-hosts")
        .arg(&sshd.known_hosts)
        .output()
        .await
        .unwrap();
    assert!(!output.status.success(), "{}", stdout(&output));
    assert!(stderr(&output).contains("revoked"), "{}", stderr(&output));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_replayed_recording_runs_no_command_and_changes_no_file_unless_trusted() {
    let llm = llm(vec![
        message(&[
            tool_use("t1", "shell", json!({"command": "touch ran.txt"})),
            tool_use(
                "t2",
                "write_file",
                json!({"file_path": ".git/hooks/pre-commit", "content": "#!/bin/sh\nid\n"}),
            ),
        ]),
        message(&[text("Ran.")]),
    ])
    .await;
    let dirs = UserDirs::new();
    let recorded = tempfile::tempdir().unwrap();
    let recording = recorded.path().join("run.jsonl");
    let output = dirs
        .agent_host()
        .args(["run", "run it", "--no-persist", "--record"])
        .arg(&recording)
        .arg("--cwd")
        .arg(recorded.path())
        .env("ANTHROPIC_BASE_URL", llm.base_url())
        .output()
        .await
        .unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(recorded.path().join("ran.txt").exists());
    let replayed = tempfile::tempdir().unwrap();
    let output = dirs
        .agent_host()
        .args([
            "run",
            "run it",
            "--no-persist",
            "--provider",
            "replay",
            "--replay",
        ])
        .arg(&recording)
        .arg("--cwd")
        .arg(replayed.path())
        .output()
        .await
        .unwrap();
    assert!(
        !replayed.path().join(".git/hooks/pre-commit").exists(),
        "the replay wrote the recording's file"
    );
    assert!(
        !replayed.path().join("ran.txt").exists(),
        "the replay ran the recording's command"
    );
    let said = format!("{}{}", stdout(&output), stderr(&output));
    assert!(said.contains("--replay-trusted"), "{said}");
}
