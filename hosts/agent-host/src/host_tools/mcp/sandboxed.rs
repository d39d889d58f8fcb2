//! A trusted project's stdio server, run in the session's command sandbox. Its program is
//! the repository's (`./server.js`, `python -m` a package in the workspace, a committed
//! `node_modules`), which the model's commands can rewrite: it gets no more rights than a
//! command has. The user's own servers are started by [`super::transport::stdio`].

use super::spec::McpServerSpec;
use super::transport::variables;
use crate::environments::child::{Launch, start_sandboxed};
use crate::sandbox::Sandbox;
use crate::sandbox::spawn::{SandboxedChild, Stdin};
use rmcp::RoleClient;
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use rmcp::transport::async_rw::AsyncRwTransport;
use std::ffi::{OsStr, OsString};
use std::future::Future;
use std::path::Path;
use std::time::Duration;
use tokio::net::unix::pipe;
use tokio::sync::oneshot;

/// How long a server given the end of its input may take to leave before it is killed
/// (rmcp's wait for a child process it closes).
const EXIT_WAIT: Duration = Duration::from_secs(3);

/// The server's messages over its pipes. The server, and every process it started, ends
/// when this is dropped (its sandbox's PID namespace ends with its init).
pub struct SandboxedServer {
    messages: AsyncRwTransport<RoleClient, pipe::Receiver, pipe::Sender>,
    child: Option<SandboxedChild>,
    /// Resolved once its standard error is all in the log.
    stderr_logged: Option<oneshot::Receiver<()>>,
}

/// Starts the server's program in `sandbox`, in `cwd`, with its variables and the
/// sandbox's `TMPDIR`; its standard error is copied to `log` (discarded when `None`).
pub fn start(
    spec: &McpServerSpec,
    cwd: &Path,
    sandbox: &Sandbox,
    log: Option<std::fs::File>,
) -> Result<SandboxedServer, String> {
    if !cwd.is_dir() {
        return Err(format!("its working directory {} is not a folder", cwd.display()));
    }
    let program = spec.command.clone().unwrap_or_default();
    let mut env = variables(spec);
    env.push((
        "TMPDIR".to_string(),
        sandbox.temp_dir().to_string_lossy().into_owned(),
    ));
    let launch = Launch {
        program: OsStr::new(&program),
        args: spec.args.iter().map(OsString::from).collect(),
        cwd,
        env,
    };
    let mut child = start_sandboxed(launch, sandbox, Stdin::Piped, None)
        .map_err(|e| format!("cannot run {program:?} in the {} sandbox: {e}", sandbox.mode()))?;
    let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
        return Err(format!("cannot run {program:?}: its pipes were not made"));
    };
    let stderr_logged = match child.stderr.take() {
        Some(stderr) => {
            Some(copy_stderr(stderr, log).map_err(|e| format!("cannot keep the log of {program:?}: {e}"))?)
        }
        None => None,
    };
    Ok(SandboxedServer {
        messages: AsyncRwTransport::new_client(stdout, stdin),
        child: Some(child),
        stderr_logged,
    })
}

/// Copies the server's standard error to `log` until the server and all it started end,
/// on a thread of its own: blocking writes to a file, and nothing for the runtime to wait
/// for when it shuts down. Without a log it is read and dropped, so the server never
/// stalls on a full pipe. The receiver resolves when the copy ends.
fn copy_stderr(stderr: pipe::Receiver, log: Option<std::fs::File>) -> std::io::Result<oneshot::Receiver<()>> {
    let mut from = std::fs::File::from(stderr.into_blocking_fd()?);
    let (done, logged) = oneshot::channel();
    std::thread::Builder::new()
        .name("mcp-server-stderr".into())
        .spawn(move || {
            // At most the log's cap from one start, the rest dropped: a server a command
            // rewrote cannot fill the disk.
            let copied = match log {
                Some(mut log) => std::io::copy(
                    &mut std::io::Read::take(&mut from, super::server::MAX_LOG_BYTES),
                    &mut log,
                )
                .and_then(|_| std::io::copy(&mut from, &mut std::io::sink())),
                None => std::io::copy(&mut from, &mut std::io::sink()),
            };
            if let Err(error) = copied {
                tracing::warn!("an MCP server's standard error could not be kept: {error}");
            }
            let _ = done.send(());
        })?;
    Ok(logged)
}

impl Transport<RoleClient> for SandboxedServer {
    type Error = std::io::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleClient>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        self.messages.send(item)
    }

    fn receive(&mut self) -> impl Future<Output = Option<RxJsonRpcMessage<RoleClient>>> + Send {
        self.messages.receive()
    }

    /// Closes the server's input, as the MCP spec's stdio shutdown says, gives it
    /// [`EXIT_WAIT`] to leave, then ends it and everything it started, and waits (as long
    /// again at most) for its last words to reach the log.
    async fn close(&mut self) -> Result<(), Self::Error> {
        let closed = self.messages.close().await;
        if let Some(mut child) = self.child.take() {
            let _ = tokio::time::timeout(EXIT_WAIT, child.wait()).await;
            // Dropped here: killed, with everything it started, unless it has left.
        }
        if let Some(logged) = self.stderr_logged.take() {
            let _ = tokio::time::timeout(EXIT_WAIT, logged).await;
        }
        closed
    }
}
