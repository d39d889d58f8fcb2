//! agent-host in an untrusted repository. Each test performs one attack a security review
//! found against the real binary (a hostile project file, a command reading the host's
//! secrets, a hostile git configuration, runaway commands and streams, a hostile server) and
//! checks it is refused now. The review's other findings (approval shapes, terminal control
//! characters, paths) are tested where their logic lives; THREAT-MODEL.md lists every test.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests may panic

#[path = "../common/mod.rs"]
mod common;

mod batch;
mod bounds;
mod credentials;
mod files_and_transport;
mod git_snapshot;
mod identity;
mod own_folders;
mod project_files;
mod project_programs;
mod sandbox;
mod sandbox_holds;
mod secrets;
mod transport_limits;
mod trust;

use std::path::{Path, PathBuf};

/// A user configuration folder and a state folder of the test's own.
pub struct UserDirs {
    pub root: tempfile::TempDir,
}

impl Default for UserDirs {
    fn default() -> Self {
        Self::new()
    }
}

impl UserDirs {
    pub fn new() -> Self {
        let root = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(root.path().join("config")).unwrap();
        Self { root }
    }

    pub fn config(&self) -> PathBuf {
        self.root.path().join("config")
    }

    pub fn state(&self) -> PathBuf {
        self.root.path().join("state")
    }

    /// `agent-host` with these folders.
    pub fn agent_host(&self) -> tokio::process::Command {
        let mut cmd = common::agent_host();
        cmd.env("AGENT_HOST_CONFIG_DIR", self.config())
            .env("AGENT_HOST_STATE_DIR", self.state());
        cmd
    }

    pub fn write_user_config(&self, text: &str) {
        std::fs::write(self.config().join("config.toml"), text).unwrap();
    }

    /// Every file under the state folder, concatenated (to look for leaked secrets).
    pub fn state_text(&self) -> String {
        fn walk(dir: &Path, out: &mut String) {
            let Ok(entries) = std::fs::read_dir(dir) else {
                return;
            };
            for entry in entries.flatten() {
                let path = entry.path();
                if path.is_dir() {
                    walk(&path, out);
                } else {
                    out.push_str(&String::from_utf8_lossy(
                        &std::fs::read(&path).unwrap_or_default(),
                    ));
                }
            }
        }
        let mut out = String::new();
        walk(&self.state(), &mut out);
        out
    }
}

/// A scripted LLM server answering with `replies` (keys not checked).
pub async fn llm(replies: Vec<scripted_llm::Reply>) -> scripted_llm::ScriptedServer {
    scripted_llm::ScriptedServer::replying(replies).await
}

/// Panics, showing both streams, unless `output` is a success.
pub fn succeeded(output: &std::process::Output) {
    assert!(
        output.status.success(),
        "{}\n{}",
        common::stdout(output),
        common::stderr(output)
    );
}

impl UserDirs {
    /// `agent-host run TASK ARGS... --cwd WORK` against the Anthropic endpoint at `url`.
    pub async fn run(&self, task: &str, args: &[&str], work: &Path, url: &str) -> std::process::Output {
        self.agent_host()
            .arg("run")
            .arg(task)
            .args(args)
            .arg("--cwd")
            .arg(work)
            .env("ANTHROPIC_BASE_URL", url)
            .output()
            .await
            .unwrap()
    }
}

/// A workspace with a project file.
pub fn project(config: &str) -> tempfile::TempDir {
    let work = tempfile::tempdir().unwrap();
    std::fs::create_dir(work.path().join(".agent")).unwrap();
    std::fs::write(work.path().join(".agent/config.toml"), config).unwrap();
    work
}
