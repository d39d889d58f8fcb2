//! Real processes for the local environment: `/bin/bash -c` (or a program run directly, for
//! command tools) in a new process group, stdin closed, stdout and stderr drained
//! continuously (streamed and kept, up to a cap), and a timeout that sends SIGTERM to the
//! group, waits 2 s, then SIGKILL.

use crate::environments::call_tag;
use crate::environments::child::{Child, Launch};
use crate::environments::env_vars::EnvPolicy;
use crate::sandbox::{Sandbox, SandboxError};
use agent_protocol::ports::{ExecResult, OutputChunk, OutputStream};
use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;
use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};
use tokio::io::AsyncReadExt;
use tokio::sync::{Notify, mpsc, watch};

/// Bytes of each stream of one command kept for its result and streamed as output deltas,
/// unless [`OUTPUT_CAP_VAR`] says otherwise; beyond it output is counted, not kept, so a
/// runaway command fills neither the host's memory nor the session's log (the model sees far
/// less: the core truncates what it is shown).
pub const OUTPUT_CAP: usize = 16 * 1024 * 1024;
/// The variable that sets the cap, in bytes (`K`, `M` and `G` suffixes allowed).
pub const OUTPUT_CAP_VAR: &str = "AGENT_HOST_MAX_COMMAND_OUTPUT";

/// The cap in effect: [`OUTPUT_CAP_VAR`] when set and valid (else a warning), else
/// [`OUTPUT_CAP`].
pub fn output_cap() -> usize {
    static CAP: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *CAP.get_or_init(|| {
        let Ok(value) = std::env::var(OUTPUT_CAP_VAR) else {
            return OUTPUT_CAP;
        };
        parse_size(&value).unwrap_or_else(|| {
            tracing::warn!("{OUTPUT_CAP_VAR}={value:?} is not a size (e.g. 4M); using {OUTPUT_CAP} bytes");
            OUTPUT_CAP
        })
    })
}

/// `4096`, `64K`, `4M`, `1G` as bytes.
pub fn parse_size(value: &str) -> Option<usize> {
    let value = value.trim();
    let (digits, unit) = match value.char_indices().last()? {
        (i, 'K' | 'k') => (&value[..i], 1 << 10),
        (i, 'M' | 'm') => (&value[..i], 1 << 20),
        (i, 'G' | 'g') => (&value[..i], 1 << 30),
        _ => (value, 1),
    };
    digits
        .trim()
        .parse::<usize>()
        .ok()?
        .checked_mul(unit)
        .filter(|n| *n > 0)
}
/// Time between SIGTERM and SIGKILL.
pub const KILL_GRACE: Duration = Duration::from_secs(2);
/// How long pipes may stay open after the shell exits (a backgrounded child holding them).
const PIPE_LINGER: Duration = Duration::from_millis(500);

/// A spawned command, as the component's `process` resource.
pub struct ProcessHandle {
    pid: u32,
    output: mpsc::UnboundedReceiver<OutputChunk>,
    result: watch::Receiver<Option<ExecResult>>,
    kill: Arc<Notify>,
    /// Set before the result is sent when a sandboxed command failed in a way the sandbox
    /// may explain: the stderr line that says so.
    refusal: Arc<OnceLock<String>>,
    /// How to run the same command without the sandbox (sandboxed shell commands only).
    rerun: Option<UnsandboxedRerun>,
    /// Appended to the result's stderr: what happened to the command on its way.
    note: Option<String>,
}

impl ProcessHandle {
    /// A handle over any backend: its chunks, its final result and a kill switch.
    pub fn from_parts(
        pid: u32,
        output: mpsc::UnboundedReceiver<OutputChunk>,
        result: watch::Receiver<Option<ExecResult>>,
        kill: Arc<Notify>,
    ) -> Self {
        Self {
            pid,
            output,
            result,
            kill,
            refusal: Arc::default(),
            rerun: None,
            note: None,
        }
    }

    pub fn pid(&self) -> u32 {
        self.pid
    }

    /// Next output chunk; `None` once both streams are closed.
    pub async fn read_output(&mut self) -> Option<OutputChunk> {
        self.output.recv().await
    }

    /// Waits for exit (or the timeout) and returns everything the process wrote.
    pub async fn wait(&mut self) -> ExecResult {
        let mut result = match self.result.wait_for(Option::is_some).await {
            Ok(result) => result.clone().unwrap_or_else(lost_result),
            Err(_) => lost_result(),
        };
        if let Some(note) = &self.note {
            append_line(&mut result.stderr, note);
        }
        result
    }

    /// Once the command has ended: the line of its stderr that shows the sandbox refused
    /// something, when it failed in the sandbox that way; `None` otherwise.
    pub fn sandbox_refusal(&self) -> Option<&str> {
        self.refusal.get().map(String::as_str)
    }

    /// How to run this command again without the sandbox; `None` for a command that ran
    /// without one, or when already taken.
    pub fn take_unsandboxed_rerun(&mut self) -> Option<UnsandboxedRerun> {
        self.rerun.take()
    }

    /// Adds a line to the end of the result's stderr.
    pub fn add_note(&mut self, note: &str) {
        match &mut self.note {
            Some(notes) => append_line(notes, note),
            None => self.note = Some(note.to_string()),
        }
    }

    /// Terminates the process group (SIGTERM, grace period, SIGKILL).
    pub fn kill(&self) {
        self.kill.notify_one();
    }
}

impl Drop for ProcessHandle {
    fn drop(&mut self) {
        // Nobody can wait for it any more: do not leave it running.
        if self.result.borrow().is_none() {
            self.kill.notify_one();
        }
    }
}

/// `line` after `text`, on a line of its own.
fn append_line(text: &mut String, line: &str) {
    if !text.is_empty() && !text.ends_with('\n') {
        text.push('\n');
    }
    text.push_str(line);
}

fn lost_result() -> ExecResult {
    ExecResult {
        stdout: String::new(),
        stderr: "the process supervisor stopped unexpectedly".to_string(),
        exit_code: -1,
        timed_out: false,
        duration_ms: 0,
    }
}

/// How a command runs: where, for how long, with which variables, in which sandbox.
#[derive(Clone)]
pub struct RunIn<'a> {
    pub cwd: &'a Path,
    pub timeout: Duration,
    pub policy: EnvPolicy,
    pub extra_env: &'a [(String, String)],
    /// `None`: with all the user's rights (`danger-full-access`).
    pub sandbox: Option<Arc<Sandbox>>,
}

/// Starts `command` with bash: the host's variables that `policy` keeps, then the extra ones.
pub fn spawn(command: &str, run_in: RunIn<'_>) -> Result<ProcessHandle, StartError> {
    let rerun = run_in.sandbox.as_ref().map(|sandbox| UnsandboxedRerun {
        command: command.to_string(),
        cwd: run_in.cwd.to_path_buf(),
        timeout: run_in.timeout,
        policy: run_in.policy,
        extra_env: run_in.extra_env.to_vec(),
        sandbox: sandbox.describe(),
    });
    let args = vec![OsString::from("-c"), OsString::from(command)];
    let mut handle = start(OsStr::new("/bin/bash"), args, run_in)?;
    handle.rerun = rerun;
    Ok(handle)
}

/// A shell command that ran in the sandbox, ready to run again without it: what the
/// user may approve after the sandbox refused it (see `session_host::sandbox_rerun`).
pub struct UnsandboxedRerun {
    command: String,
    cwd: PathBuf,
    timeout: Duration,
    policy: EnvPolicy,
    extra_env: Vec<(String, String)>,
    /// The sandbox it ran in, described: `workspace-write (network off)`.
    sandbox: String,
}

impl UnsandboxedRerun {
    pub fn command(&self) -> &str {
        &self.command
    }

    /// The sandbox the command ran in.
    pub fn sandbox(&self) -> &str {
        &self.sandbox
    }

    /// Starts the command again, in the same place with the same variables and timeout,
    /// with all the user's rights.
    pub fn start(self) -> Result<ProcessHandle, StartError> {
        spawn(
            &self.command,
            RunIn {
                cwd: &self.cwd,
                timeout: self.timeout,
                policy: self.policy,
                extra_env: &self.extra_env,
                sandbox: None,
            },
        )
    }
}

/// Why a command did not start.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    #[error(transparent)]
    Sandbox(#[from] SandboxError),
    #[error("{0}")]
    Io(#[from] std::io::Error),
}

/// Starts `program` with `args` directly, without a shell: each argument reaches the
/// program as one argv element, exactly as given. Everything else is as in [`spawn`].
pub fn spawn_program(
    program: &Path,
    args: &[String],
    run_in: RunIn<'_>,
) -> Result<ProcessHandle, StartError> {
    let args = args.iter().map(OsString::from).collect();
    start(program.as_os_str(), args, run_in)
}

/// Runs `program` supervised: own process group, stdin closed, pipes drained, the timeout,
/// and the sandbox if there is one.
fn start(program: &OsStr, args: Vec<OsString>, run_in: RunIn<'_>) -> Result<ProcessHandle, StartError> {
    let RunIn {
        cwd,
        timeout,
        policy,
        extra_env,
        sandbox,
    } = run_in;
    let mut env = policy.filter(
        std::env::vars_os().filter_map(|(k, v)| Some((k.into_string().ok()?, v.into_string().ok()?))),
        &crate::secrets::allowed(),
    );
    if let Some(sandbox) = &sandbox {
        env.push((
            "TMPDIR".to_string(),
            sandbox.temp_dir().to_string_lossy().into_owned(),
        ));
    }
    env.extend(extra_env.iter().cloned());
    let tag = call_tag::next_tag();
    env.push((call_tag::CALL_VAR.to_string(), tag.clone()));
    let started = Instant::now();
    let launch = Launch {
        program,
        args,
        cwd,
        env,
    };
    let mut child = Child::start(launch, sandbox.as_deref())?;
    let pid = child.id();
    live_groups().insert(pid, tag.clone());
    let (chunk_tx, chunk_rx) = mpsc::unbounded_channel();
    let (result_tx, result_rx) = watch::channel(None);
    let kill = Arc::new(Notify::new());
    let refusal = Arc::new(OnceLock::new());
    let refused = refusal.clone();
    let stdout = child
        .take_stdout()
        .map(|s| tokio::spawn(drain(s, OutputStream::Stdout, chunk_tx.clone())));
    let stderr = child
        .take_stderr()
        .map(|s| tokio::spawn(drain(s, OutputStream::Stderr, chunk_tx)));
    let kill_signal = kill.clone();
    tokio::spawn(async move {
        let mut timed_out = false;
        let status = tokio::select! {
            status = child.wait() => status,
            _ = tokio::time::sleep(timeout) => {
                timed_out = true;
                terminate(&mut child, pid).await
            }
            _ = kill_signal.notified() => terminate(&mut child, pid).await,
        };
        // The call is over, and so is everything it left running, in its group (`sleep 300 &`
        // would otherwise outlive it, and agent-host, holding the output pipes open) or out
        // of it (`setsid`).
        let _ = killpg(Pid::from_raw(pid as i32), Signal::SIGKILL);
        live_groups().remove(&pid);
        let _ = tokio::task::spawn_blocking(move || call_tag::kill_tagged(&tag)).await;
        let exit_code = status.ok().and_then(|s| s.code()).unwrap_or(-1);
        let collect = |task: Option<tokio::task::JoinHandle<Vec<u8>>>| async move {
            let Some(task) = task else { return Vec::new() };
            let abort = task.abort_handle();
            match tokio::time::timeout(PIPE_LINGER, task).await {
                Ok(Ok(bytes)) => bytes,
                _ => {
                    abort.abort();
                    Vec::new()
                }
            }
        };
        let (out, err) = tokio::join!(collect(stdout), collect(stderr));
        // A credential a command printed anyway (read from a file) is not handed on.
        let mut stderr = crate::secrets::redact_known(&String::from_utf8_lossy(&err));
        let failed = timed_out || exit_code != 0;
        if let Some(sandbox) = sandbox.filter(|_| failed)
            && let Some(line) = sandbox.refusal_line(&stderr)
        {
            append_line(&mut stderr, &sandbox.explain_denial());
            let _ = refused.set(line);
        }
        let _ = result_tx.send(Some(ExecResult {
            stdout: crate::secrets::redact_known(&String::from_utf8_lossy(&out)),
            stderr,
            exit_code: if timed_out { -1 } else { exit_code },
            timed_out,
            duration_ms: started.elapsed().as_millis() as u64,
        }));
    });
    Ok(ProcessHandle {
        pid,
        output: chunk_rx,
        result: result_rx,
        kill,
        refusal,
        rerun: None,
        note: None,
    })
}

/// The process groups of the commands running now (each command leads its own), with
/// their calls' tags.
fn live_groups() -> std::sync::MutexGuard<'static, std::collections::BTreeMap<u32, String>> {
    static LIVE: std::sync::Mutex<std::collections::BTreeMap<u32, String>> =
        std::sync::Mutex::new(std::collections::BTreeMap::new());
    LIVE.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Kills every running command with all it started: for a process about to exit without
/// unwinding (`std::process::exit` runs no destructor, so no handle kills its command).
pub fn kill_every_command() {
    for (pid, tag) in std::mem::take(&mut *live_groups()) {
        let _ = killpg(Pid::from_raw(pid as i32), Signal::SIGKILL);
        call_tag::kill_tagged(&tag);
    }
}

/// SIGTERM to the group, then SIGKILL after the grace period.
async fn terminate(child: &mut Child, pid: u32) -> std::io::Result<std::process::ExitStatus> {
    let group = Pid::from_raw(pid as i32);
    let _ = killpg(group, Signal::SIGTERM);
    match tokio::time::timeout(KILL_GRACE, child.wait()).await {
        Ok(status) => {
            // The shell may have exited on SIGTERM while a child ignores it.
            let _ = killpg(group, Signal::SIGKILL);
            status
        }
        Err(_) => {
            let _ = killpg(group, Signal::SIGKILL);
            child.wait().await
        }
    }
}

/// Output of one stream kept up to [`output_cap`]; beyond it bytes are counted only.
#[derive(Default)]
pub struct CappedOutput {
    kept: Vec<u8>,
    dropped: usize,
}

impl CappedOutput {
    /// Keeps what fits and returns it (what should be streamed on).
    pub fn push(&mut self, data: &[u8]) -> Vec<u8> {
        let room = output_cap().saturating_sub(self.kept.len());
        let keep = data.len().min(room);
        self.kept.extend_from_slice(&data[..keep]);
        self.dropped += data.len() - keep;
        data[..keep].to_vec()
    }

    /// Everything kept, with a note of what was discarded.
    pub fn finish(mut self) -> Vec<u8> {
        if self.dropped > 0 {
            self.kept.extend_from_slice(
                format!(
                    "\n[output capped at {} bytes ({OUTPUT_CAP_VAR}): {} further bytes were discarded]\n",
                    output_cap(),
                    self.dropped
                )
                .as_bytes(),
            );
        }
        self.kept
    }
}

/// Reads a pipe to its end, forwarding chunks and keeping up to [`output_cap`] bytes.
async fn drain(
    mut pipe: impl tokio::io::AsyncRead + Unpin,
    stream: OutputStream,
    chunks: mpsc::UnboundedSender<OutputChunk>,
) -> Vec<u8> {
    let mut output = CappedOutput::default();
    let mut buf = vec![0u8; 16 * 1024];
    loop {
        match pipe.read(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                let live = output.push(&buf[..n]);
                if !live.is_empty() {
                    // A known credential is kept out of the streamed deltas too (one split
                    // across two reads is not recognised; the result is redacted whole).
                    let data = match String::from_utf8(live) {
                        Ok(text) => crate::secrets::redact_known(&text).into_bytes(),
                        Err(raw) => raw.into_bytes(),
                    };
                    let _ = chunks.send(OutputChunk { stream, data });
                }
            }
        }
    }
    output.finish()
}

#[cfg(test)]
mod tests {
    use super::parse_size;

    #[test]
    fn sizes_read_with_their_units() {
        assert_eq!(parse_size("4096"), Some(4096));
        assert_eq!(parse_size("64K"), Some(64 << 10));
        assert_eq!(parse_size(" 4m "), Some(4 << 20));
        assert_eq!(parse_size("1G"), Some(1 << 30));
        assert_eq!(parse_size("0"), None);
        assert_eq!(parse_size("lots"), None);
    }
}
