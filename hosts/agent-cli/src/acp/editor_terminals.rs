//! Commands in the editor's own terminals (ACP `terminal/*`), only when the user asks for it
//! (`agent-host acp --editor-terminals`) and the client offers them: the editor shows each
//! command live in its terminal view, and the command runs there, OUTSIDE agent-host's
//! sandbox, with the editor's environment (its variables, credentials included): what
//! `--sandbox` and the variable policy say does not apply. The tool call's title and its
//! permission question say so. Approvals, read-only mode and the command guard still decide
//! whether a command runs; only where it runs changes. Every request to the editor has a time
//! limit, at most 32 terminals run at once, and a command's input is closed (a terminal would
//! otherwise wait for typing).

use super::editor_files::EditorLink;
use agent_client_protocol::v1::schema::{
    CreateTerminalRequest, EnvVariable, KillTerminalRequest, ReleaseTerminalRequest, TerminalExitStatus,
    TerminalOutputRequest, WaitForTerminalExitRequest,
};
use agent_host::Environment;
use agent_host::environments::{ProcessHandle, nearest_real_path};
use agent_protocol::ports::{ExecResult, OutputChunk, OutputStream, SpawnError, SpawnRequest};
use async_trait::async_trait;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::{Notify, mpsc, watch};

/// How often a running command's output is fetched from the editor.
const POLL: Duration = Duration::from_millis(200);
/// The most output the editor keeps per terminal (its beginning is dropped past it).
const OUTPUT_LIMIT: u64 = 1024 * 1024;
/// How long a killed command's terminal gets to report its exit.
const KILL_GRACE: Duration = Duration::from_secs(10);
/// Terminals running at once, all sessions together (as for local commands).
const MAX_TERMINALS: usize = 32;

fn terminal_slots() -> Arc<tokio::sync::Semaphore> {
    static SLOTS: std::sync::OnceLock<Arc<tokio::sync::Semaphore>> = std::sync::OnceLock::new();
    SLOTS
        .get_or_init(|| Arc::new(tokio::sync::Semaphore::new(MAX_TERMINALS)))
        .clone()
}

/// A command started in the editor's terminal: the command line and the terminal's id, for
/// the tool call that shows it.
pub type TerminalStarted = (String, String);

/// The local environment with commands run in the editor's terminals.
pub struct EditorTerminals {
    inner: Arc<dyn Environment>,
    link: Arc<EditorLink>,
    started: mpsc::UnboundedSender<TerminalStarted>,
}

impl EditorTerminals {
    pub fn new(
        inner: Arc<dyn Environment>,
        link: Arc<EditorLink>,
        started: mpsc::UnboundedSender<TerminalStarted>,
    ) -> Self {
        Self { inner, link, started }
    }

    /// Where the command starts: its folder, which must be a folder in the workspace.
    fn folder(&self, request: &SpawnRequest) -> Result<PathBuf, SpawnError> {
        let workspace = PathBuf::from(self.inner.working_directory());
        let dir = request
            .working_dir
            .as_deref()
            .filter(|d| !d.is_empty())
            .unwrap_or(".");
        let real = nearest_real_path(&workspace.join(dir))
            .map_err(|e| SpawnError::InvalidWorkingDir(format!("{dir}: {e}")))?;
        let workspace = std::fs::canonicalize(&workspace).unwrap_or(workspace);
        match real.starts_with(&workspace) && real.is_dir() && real.to_str().is_some() {
            true => Ok(real),
            false => Err(SpawnError::InvalidWorkingDir(format!(
                "{dir} is not a folder in the workspace {}",
                workspace.display()
            ))),
        }
    }
}

#[async_trait]
impl agent_host::environments::Delegating for EditorTerminals {
    fn inner(&self) -> &dyn Environment {
        &*self.inner
    }

    async fn spawn(&self, request: SpawnRequest) -> Result<ProcessHandle, SpawnError> {
        if !self.link.terminals() {
            return self.inner.spawn(request).await;
        }
        let cwd = self.folder(&request)?;
        let slot = terminal_slots()
            .acquire_owned()
            .await
            .map_err(|_| SpawnError::Failed("no terminal can be opened now".to_string()))?;
        let env = request
            .env
            .iter()
            .map(|(name, value)| EnvVariable::new(name.clone(), value.clone()))
            .collect();
        let command = request.command.clone();
        // Input closed, as for local commands: a terminal would wait for typing.
        let script = format!("exec </dev/null\n{command}");
        let created = self
            .link
            .ask_briefly(|session| {
                CreateTerminalRequest::new(session, "/bin/bash")
                    .args(vec!["-c".to_string(), script])
                    .cwd(cwd)
                    .env(env)
                    .output_byte_limit(OUTPUT_LIMIT)
            })
            .await
            .map_err(|why| SpawnError::Failed(format!("the editor did not open a terminal: {why}")))?;
        let id = created.terminal_id.0.to_string();
        let _ = self.started.send((request.command, id.clone()));
        let (chunks, output) = mpsc::unbounded_channel();
        let (ended, result) = watch::channel(None);
        let kill = Arc::new(Notify::new());
        let timeout = (request.timeout_ms > 0).then(|| Duration::from_millis(request.timeout_ms));
        let (link, kill_switch) = (self.link.clone(), kill.clone());
        tokio::spawn(async move {
            follow(link, id, timeout, chunks, ended, kill_switch).await;
            drop(slot);
        });
        Ok(ProcessHandle::from_parts(0, output, result, kill))
    }
}

/// Follows one terminal to its end: its output streamed as it grows, a kill or the timeout
/// passed on, then its whole output and exit as the command's result; the terminal is
/// released (the editor keeps showing it).
async fn follow(
    link: Arc<EditorLink>,
    id: String,
    timeout: Option<Duration>,
    chunks: mpsc::UnboundedSender<OutputChunk>,
    ended: watch::Sender<Option<ExecResult>>,
    kill: Arc<Notify>,
) {
    let start = Instant::now();
    let deadline = timeout.map(|t| tokio::time::Instant::now() + t);
    let exit = link.ask(|session| WaitForTerminalExitRequest::new(session, id.clone()));
    tokio::pin!(exit);
    let mut poll = tokio::time::interval(POLL);
    let (mut streamed, mut timed_out) = (0usize, false);
    // Set once the command was killed: from then on the exit is waited for a while only.
    let mut given_up_at: Option<tokio::time::Instant> = None;
    let status = loop {
        let expiry = async {
            match (given_up_at, deadline) {
                (Some(at), _) => tokio::time::sleep_until(at + KILL_GRACE).await,
                (None, Some(at)) => tokio::time::sleep_until(at).await,
                (None, None) => std::future::pending().await,
            }
        };
        tokio::select! {
            status = &mut exit => break status.map(|r| r.exit_status),
            () = kill.notified(), if given_up_at.is_none() => {
                given_up_at = Some(tokio::time::Instant::now());
                let _ = link.ask_briefly(|session| KillTerminalRequest::new(session, id.clone())).await;
            }
            () = expiry => match given_up_at {
                Some(_) => break Err("the terminal did not report its end after it was killed".to_string()),
                None => {
                    timed_out = true;
                    given_up_at = Some(tokio::time::Instant::now());
                    let _ = link.ask_briefly(|session| KillTerminalRequest::new(session, id.clone())).await;
                }
            },
            _ = poll.tick() => {
                if let Ok(now) = link.ask_briefly(|session| TerminalOutputRequest::new(session, id.clone())).await
                    && !now.truncated
                    && now.output.len() > streamed
                    && now.output.is_char_boundary(streamed)
                {
                    let _ = chunks.send(OutputChunk {
                        stream: OutputStream::Stdout,
                        data: now.output.as_bytes()[streamed..].to_vec(),
                    });
                    streamed = now.output.len();
                }
            }
        }
    };
    let output = link
        .ask_briefly(|session| TerminalOutputRequest::new(session, id.clone()))
        .await
        .map(|o| o.output)
        .unwrap_or_default();
    let _ = link
        .ask_briefly(|session| ReleaseTerminalRequest::new(session, id.clone()))
        .await;
    let (exit_code, note) = match &status {
        Ok(status) => exit_code(status),
        Err(why) => (-1, format!("the editor did not say how the command ended: {why}")),
    };
    let _ = ended.send(Some(ExecResult {
        stdout: output,
        stderr: note,
        exit_code,
        timed_out,
        duration_ms: u64::try_from(start.elapsed().as_millis()).unwrap_or(u64::MAX),
    }));
}

/// The exit code, or 128 + the signal's number as a shell reports it (-1 when unknown); a
/// signal is named in the note. Clients name signals as `SIGKILL`, `KILL`, `Killed` or `9`.
fn exit_code(status: &TerminalExitStatus) -> (i32, String) {
    if let Some(signal) = status.signal.as_deref().filter(|s| !s.is_empty()) {
        let named = signal.trim().to_ascii_uppercase();
        let number = named.parse::<i32>().ok().or_else(|| {
            let full = if named.starts_with("SIG") {
                named.clone()
            } else {
                format!("SIG{named}")
            };
            match full.as_str() {
                "SIGKILLED" => Some(9),
                "SIGTERMINATED" => Some(15),
                _ => full.parse::<nix::sys::signal::Signal>().ok().map(|s| s as i32),
            }
        });
        let code = number.map_or(-1, |n| 128 + n);
        return (code, format!("ended by the signal {signal}"));
    }
    match status.exit_code {
        Some(code) => (i32::try_from(code).unwrap_or(i32::MAX), String::new()),
        None => (-1, String::new()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exits_and_signals_become_shell_exit_codes() {
        assert_eq!(exit_code(&TerminalExitStatus::new().exit_code(3u32)).0, 3);
        for named in ["SIGKILL", "KILL", "9", "Killed"] {
            let killed = exit_code(&TerminalExitStatus::new().exit_code(1u32).signal(named));
            assert_eq!(killed.0, 137, "{named}");
            assert!(killed.1.contains(named));
        }
        assert_eq!(exit_code(&TerminalExitStatus::new().signal("SIGTERM")).0, 143);
        assert_eq!(exit_code(&TerminalExitStatus::new()).0, -1);
    }
}
