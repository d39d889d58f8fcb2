//! A workspace's `.agent/config.toml` is read before the project is trusted. A repository
//! that makes it (or `.agent`) a link to one of the user's credential files must not get
//! the file's lines shown (the TOML parser's message quoted the line it could not parse:
//! `run` printed a GitHub token and an AWS key id, `batch` wrote them to `result.json`) nor
//! its values used; a FIFO must not hang agent-host; and a file that is not TOML is reported
//! by line and column, never by its text.

use crate::common::{stderr, stdout};
use crate::{UserDirs, llm, project};
use scripted_llm::anthropic::{message, text};
use std::path::Path;
use std::process::Output;
use std::time::Duration;

const TOKEN: &str = "ghp_SECRETSECRET";
const KEY_ID: &str = "AKIAIOSFODNN7EXAMPLE";

/// What a credential file linked as the project file holds: the first line is TOML, the
/// second is not (the parser stops there and used to quote it).
fn credentials() -> String {
    format!("url = \"https://bob:{TOKEN}@github.com\"\naws_access_key_id = {KEY_ID}\n")
}

/// Runs `cmd`, guarded against a hang (each command here ends within seconds).
async fn finished(mut cmd: tokio::process::Command) -> Output {
    tokio::time::timeout(Duration::from_secs(120), cmd.output())
        .await
        .expect("agent-host hung on the project file")
        .unwrap()
}

/// `run` (plain and `--json`), `config show` (plain and `--json`) and `trust` in `work`: each
/// fails naming `expected`, and none shows the credentials or reaches the model.
async fn refused_everywhere(work: &Path, expected: &str) {
    let llm = llm(vec![message(&[text("Done.")])]).await;
    let dirs = UserDirs::new();
    let cwd = work.to_str().unwrap();
    let commands: [&[&str]; 5] = [
        &["run", "hello", "--no-persist", "--cwd", cwd],
        &["run", "hello", "--no-persist", "--json", "--cwd", cwd],
        &["config", "show", "--cwd", cwd],
        &["config", "show", "--json", "--cwd", cwd],
        &["trust", cwd],
    ];
    for args in commands {
        let mut cmd = dirs.agent_host();
        cmd.args(args).env("ANTHROPIC_BASE_URL", llm.base_url());
        let output = finished(cmd).await;
        let shown = format!("{}{}", stdout(&output), stderr(&output));
        assert_eq!(output.status.code(), Some(2), "{args:?}: {shown}");
        assert!(shown.contains(expected), "{args:?}: {shown}");
        for secret in [TOKEN, KEY_ID] {
            assert!(!shown.contains(secret), "{args:?} showed {secret}: {shown}");
        }
    }
    assert!(llm.requests().is_empty(), "a run used the linked file");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_project_file_linked_to_a_credential_file_is_neither_shown_nor_used() {
    let home = tempfile::tempdir().unwrap();
    std::fs::write(home.path().join(".git-credentials"), credentials()).unwrap();
    let work = tempfile::tempdir().unwrap();
    std::fs::create_dir(work.path().join(".agent")).unwrap();
    std::os::unix::fs::symlink(
        home.path().join(".git-credentials"),
        work.path().join(".agent/config.toml"),
    )
    .unwrap();
    refused_everywhere(work.path(), ".agent/config.toml is a symbolic link").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agent_folder_linked_to_a_folder_of_the_user_is_neither_shown_nor_used() {
    let home = tempfile::tempdir().unwrap();
    std::fs::create_dir(home.path().join("keys")).unwrap();
    std::fs::write(home.path().join("keys/config.toml"), credentials()).unwrap();
    let work = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(home.path().join("keys"), work.path().join(".agent")).unwrap();
    refused_everywhere(work.path(), ".agent is a symbolic link").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_project_file_that_is_not_toml_is_reported_by_line_and_column_only() {
    let secret = "hunter2-not-toml-secret";
    let work = project(&format!("model = \"m\"\npassword = {secret}\n"));
    let dirs = UserDirs::new();
    for args in [&["config", "show"][..], &["run", "hello", "--no-persist"]] {
        let mut cmd = dirs.agent_host();
        cmd.args(args)
            .arg("--cwd")
            .arg(work.path())
            .env("ANTHROPIC_BASE_URL", "http://127.0.0.1:9");
        let output = finished(cmd).await;
        let shown = format!("{}{}", stdout(&output), stderr(&output));
        assert_eq!(output.status.code(), Some(2), "{shown}");
        let file = work.path().join(".agent/config.toml");
        assert!(
            shown.contains(&format!("{}: line 2, column ", file.display())),
            "{shown}"
        );
        assert!(!shown.contains(secret), "the line was quoted: {shown}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fifo_as_the_project_file_or_the_named_file_does_not_block() {
    let work = tempfile::tempdir().unwrap();
    std::fs::create_dir(work.path().join(".agent")).unwrap();
    let fifo = work.path().join(".agent/config.toml");
    let made = std::process::Command::new("mkfifo").arg(&fifo).status().unwrap();
    assert!(made.success());
    let dirs = UserDirs::new();
    let mut in_workspace = dirs.agent_host();
    in_workspace.args(["config", "show", "--cwd"]).arg(work.path());
    let mut named = dirs.agent_host();
    named.args(["config", "show", "--config"]).arg(&fifo);
    for cmd in [in_workspace, named] {
        let output = finished(cmd).await;
        assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
        assert!(stderr(&output).contains("is a FIFO"), "{}", stderr(&output));
    }
}
