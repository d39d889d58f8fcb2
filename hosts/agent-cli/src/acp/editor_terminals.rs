//! Commands in the editor's own terminals (ACP `terminal/*`), only when the user asks for it
//! (`agent-host acp --editor-terminals`) and the client offers them: the editor shows each
//! command live in its terminal view, and the command runs there, OUTSIDE agent-host's
//! sandbox, with the editor's environment (its variables, credentials included). The tool
//! call's title says so. Approvals, read-only mode and the command guard still decide
//! whether a command runs; only where it runs changes.

use super::editor_files::EditorLink;
use agent_client_protocol::v1::schema::{
    CreateTerminalRequest, EnvVariable, KillTerminalRequest, ReleaseTerminalRequest, TerminalExitStatus,
    TerminalOutputRequest, WaitForTerminalExitRequest,
};
use agent_host::Environment;
use agent_host::environments::ProcessHandle;
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

    /// Where the command starts: its folder, which must lie in the workspace.
    async fn folder(&self, request: &SpawnRequest) -> Result<PathBuf, SpawnError> {
        let workspace = self.inner.working_directory();
        let Some(dir) = request.working_dir.as_deref().filter(|d| !d.is_empty()) else {
            return Ok(PathBuf::from(workspace));
        };
        let real = self
            .inner
            .real_path(dir)
            .await
            .map_err(|e| SpawnError::InvalidWorkingDir(e.to_string()))?;
        let workspace = std::fs::canonicalize(&workspace).unwrap_or_else(|_| PathBuf::from(&workspace));
        match PathBuf::from(&real).starts_with(&workspace) {
            true => Ok(PathBuf::from(real)),
            false => Err(SpawnError::InvalidWorkingDir(format!(
                "{dir} is outside the workspace {}",
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
        let cwd = self.folder(&request).await?;
        let env = request
            .env
            .iter()
            .map(|(name, value)| EnvVariable::new(name.clone(), value.clone()))
            .collect();
        let command = request.command.clone();
        let created = self
            .link
            .ask(|session| {
                CreateTerminalRequest::new(session, "/bin/bash")
                    .args(vec!["-c".to_string(), command.clone()])
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
        tokio::spawn(follow(
            self.link.clone(),
            id,
            timeout,
            chunks,
            ended,
            kill.clone(),
        ));
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
    let (mut streamed, mut timed_out, mut killed) = (0usize, false, false);
    let status = loop {
        let expiry = async {
            match deadline {
                Some(at) if !timed_out => tokio::time::sleep_until(at).await,
                _ => std::future::pending().await,
            }
        };
        tokio::select! {
            status = &mut exit => break status.map(|r| r.exit_status),
            () = kill.notified(), if !killed => {
                killed = true;
                let _ = link.ask(|session| KillTerminalRequest::new(session, id.clone())).await;
            }
            () = expiry => {
                timed_out = true;
                let _ = link.ask(|session| KillTerminalRequest::new(session, id.clone())).await;
            }
            _ = poll.tick() => {
                if let Ok(now) = link.ask(|session| TerminalOutputRequest::new(session, id.clone())).await
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
        .ask(|session| TerminalOutputRequest::new(session, id.clone()))
        .await
        .map(|o| o.output)
        .unwrap_or_default();
    let _ = link
        .ask(|session| ReleaseTerminalRequest::new(session, id.clone()))
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

/// The exit code, or 128 + the signal's number as a shell reports it (-1 when unknown).
fn exit_code(status: &TerminalExitStatus) -> (i32, String) {
    if let Some(code) = status.exit_code {
        return (i32::try_from(code).unwrap_or(i32::MAX), String::new());
    }
    match status.signal.as_deref() {
        Some(signal) => {
            let code = signal
                .parse::<nix::sys::signal::Signal>()
                .map_or(-1, |s| 128 + s as i32);
            (code, format!("killed by {signal}"))
        }
        None => (-1, String::new()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exits_and_signals_become_shell_exit_codes() {
        assert_eq!(exit_code(&TerminalExitStatus::new().exit_code(3u32)).0, 3);
        let killed = exit_code(&TerminalExitStatus::new().signal("SIGKILL"));
        assert_eq!(killed.0, 137);
        assert!(killed.1.contains("SIGKILL"));
        assert_eq!(exit_code(&TerminalExitStatus::new()).0, -1);
    }
}
