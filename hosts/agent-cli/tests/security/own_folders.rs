//! agent-host's own folders: the state folder (other sessions' histories, saved outputs) and
//! the configuration folder are agent-host's, not the commands'. A sandboxed command cannot
//! read what is in them however agent-host runs it (`tool` uses no settings, `run` does),
//! not even a file it found by listing them (names can be listed: THREAT-MODEL.md), and
//! other users cannot enter them (0700), even where an older agent-host left them open.

use crate::common::{stderr, stdout};
use crate::{UserDirs, llm, project, succeeded};
use scripted_llm::anthropic::{message, text, tool_use};
use serde_json::json;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Output;

const HISTORY_CANARY: &str = "history-of-another-session-c4n4ry";
const CONFIG_CANARY: &str = "the-users-configuration-c4n4ry";
const OTHER_SESSION: &str = "20250101-000000-another-session";

/// Another session in the state folder and a user configuration file, each holding a
/// canary, as an older agent-host (or `mkdir -p`) left them: open to every user. Returns
/// the other session's history.
fn another_session(dirs: &UserDirs) -> PathBuf {
    let session = dirs.state().join("sessions").join(OTHER_SESSION);
    std::fs::create_dir_all(&session).unwrap();
    let history = session.join("history.jsonl");
    std::fs::write(&history, format!("{{\"input\":\"{HISTORY_CANARY}\"}}\n")).unwrap();
    for dir in [dirs.state(), dirs.state().join("sessions"), session] {
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    dirs.write_user_config(&format!("# {CONFIG_CANARY}\n"));
    history
}

/// A command that reads the other session's history and the user's configuration by their
/// paths, written out (the command does not need agent-host's variables to find them), and
/// every file it finds by listing the folders.
fn reading(dirs: &UserDirs, history: &Path) -> String {
    format!(
        "cat {history}; cat {state}/sessions/*/history.jsonl; ls -laR {state} {config}; \
         find {state} {config} -type f -exec cat {{}} +; \
         for f in $(ls -d {state}/sessions/*/*); do cat \"$f\"; done; \
         cat {config}/config.toml; echo RAN",
        history = history.display(),
        state = dirs.state().display(),
        config = dirs.config().display(),
    )
}

/// `agent-host tool shell` (no settings: the entry point that used to leave agent-host's
/// folders off the deny list) running `command` in `work`.
async fn tool_shell(dirs: &UserDirs, work: &Path, command: &str, flags: &[&str]) -> Output {
    crate::identity::tool_shell(dirs.agent_host(), work, command, flags)
        .output()
        .await
        .unwrap()
}

fn seen(output: &Output) -> String {
    format!("{}{}", stdout(output), stderr(output))
}

fn mode(path: &Path) -> u32 {
    std::fs::metadata(path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .permissions()
        .mode()
        & 0o777
}

/// The state folder and agent-host's folders in it, with their modes.
fn state_modes(dirs: &UserDirs) -> Vec<(PathBuf, u32)> {
    let state = dirs.state();
    [state.clone(), state.join("sessions"), state.join("outputs")]
        .into_iter()
        .map(|dir| (dir.clone(), mode(&dir)))
        .collect()
}

fn assert_private(modes: &[(PathBuf, u32)]) {
    for (dir, mode) in modes {
        assert_eq!(*mode, 0o700, "{} is {mode:o}", dir.display());
    }
}

#[tokio::test]
async fn a_command_run_by_tool_cannot_read_another_session_or_the_configuration() {
    let dirs = UserDirs::new();
    let history = another_session(&dirs);
    let work = tempfile::tempdir().unwrap();

    // Without the sandbox the command reads both: the paths are right.
    let unconfined = tool_shell(
        &dirs,
        work.path(),
        &reading(&dirs, &history),
        &["--sandbox", "danger-full-access"],
    )
    .await;
    let shown = seen(&unconfined);
    assert!(
        shown.contains(HISTORY_CANARY) && shown.contains(CONFIG_CANARY),
        "{shown}"
    );

    let read = tool_shell(&dirs, work.path(), &reading(&dirs, &history), &[]).await;
    let shown = seen(&read);
    assert!(shown.contains("RAN"), "the command did not run: {shown}");
    assert!(
        !shown.contains(HISTORY_CANARY),
        "another session was read: {shown}"
    );
    assert!(
        !shown.contains(CONFIG_CANARY),
        "the configuration was read: {shown}"
    );

    // The folders the older agent-host left open were narrowed.
    assert_private(&state_modes(&dirs));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_command_the_model_runs_cannot_read_another_session_and_the_folders_are_private() {
    let dirs = UserDirs::new();
    let history = another_session(&dirs);
    let work = tempfile::tempdir().unwrap();
    let llm = llm(vec![
        message(&[tool_use(
            "t1",
            "shell",
            json!({ "command": reading(&dirs, &history) }),
        )]),
        message(&[text("Done.")]),
    ])
    .await;
    let output = dirs.run("look around", &[], work.path(), &llm.base_url()).await;
    succeeded(&output);
    let requests = llm.requests();
    assert_eq!(requests.len(), 2, "{}", stderr(&output));
    let result = requests[1].tool_results()[0]["content"].to_string();
    assert!(result.contains("RAN"), "the command did not run: {result}");
    assert!(
        !result.contains(HISTORY_CANARY),
        "another session was read: {result}"
    );
    assert!(
        !result.contains(CONFIG_CANARY),
        "the configuration was read: {result}"
    );

    let mut modes = state_modes(&dirs);
    let own_session = std::fs::read_dir(dirs.state().join("sessions"))
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .find(|dir| !dir.ends_with(OTHER_SESSION))
        .expect("the run saved its session");
    modes.push((own_session.clone(), mode(&own_session)));
    assert_private(&modes);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_folders_agent_host_creates_are_private() {
    let dirs = UserDirs::new();
    let work = tempfile::tempdir().unwrap();
    let llm = llm(vec![
        message(&[tool_use("t1", "shell", json!({ "command": "echo hello" }))]),
        message(&[text("Done.")]),
    ])
    .await;
    assert!(!dirs.state().exists());
    let output = dirs.run("say hello", &[], work.path(), &llm.base_url()).await;
    succeeded(&output);
    assert_private(&state_modes(&dirs));

    // The trust list's folder, made by `agent-host trust`.
    let config = dirs.root.path().join("new-config");
    let project = project("approval = \"ask\"\n");
    let trusted = dirs
        .agent_host()
        .env("AGENT_HOST_CONFIG_DIR", &config)
        .arg("trust")
        .arg(project.path())
        .output()
        .await
        .unwrap();
    succeeded(&trusted);
    assert_private(&[(config.clone(), mode(&config))]);
}
