//! Real processes for the local environment: `/bin/bash -c` (or a program run directly, for
//! command tools) in a new process group, stdin closed, stdout and stderr drained
//! continuously (streamed and kept, up to a cap), and a timeout that sends SIGTERM to the
//! group, waits 2 s, then SIGKILL.

use crate::environments::call_tag;
use crate::environments::child::{Child, Launch};
use crate::environments::command_output::drain;
use crate::environments::env_vars::EnvPolicy;
use crate::sandbox::{ConnectionSink, Refusal, Sandbox, SandboxError};
use agent_protocol::ports::{ExecResult, OutputChunk, OutputStream};
use egress_proxy::ConnectionRecord;
use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;
use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};
use tokio::sync::{Notify, mpsc, watch};

/// Time between SIGTERM and SIGKILL.
pub const KILL_GRACE: Duration = Duration::from_secs(2);
/// How long pipes may stay open after the shell exits (a backgrounded child holding them).
const PIPE_LINGER: Duration = Duration::from_millis(500);

/// A spawned command, as the component's `process` resource.
pub struct ProcessHandle {
    /// 0 until the command has started (it may wait for a place).
    pid: Arc<AtomicU32>,
    output: mpsc::UnboundedReceiver<OutputChunk>,
    result: watch::Receiver<Option<ExecResult>>,
    kill: Arc<Notify>,
    /// Set before the result is sent when a sandboxed command failed in a way the sandbox
    /// may explain: the stderr line that says so.
    refusal: Arc<OnceLock<String>>,
    /// Set before the result is sent: what the network allow-list's proxy refused.
    network_refusals: Arc<OnceLock<Vec<Refusal>>>,
    /// Set before the result is sent: whether the command failed (or timed out).
    command_failed: Arc<OnceLock<bool>>,
    /// How to run the same command without the sandbox (sandboxed shell commands only).
    rerun: Option<UnsandboxedRerun>,
    /// Appended to the result's stderr: what happened to the command on its way.
    note: Option<String>,
    /// With a network allow-list, the connections the command's proxy made or refused, as
    /// they end; all are in before the result.
    connections: Option<mpsc::UnboundedReceiver<ConnectionRecord>>,
    /// Connections of a run this one replaced, not yet taken.
    carried: Vec<ConnectionRecord>,
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
            pid: Arc::new(AtomicU32::new(pid)),
            output,
            result,
            kill,
            refusal: Arc::default(),
            network_refusals: Arc::default(),
            command_failed: Arc::default(),
            rerun: None,
            note: None,
            connections: None,
            carried: Vec::new(),
        }
    }

    /// Resolves once the command has ended (its result is in, whether or not anyone waits
    /// for it) or can no longer report: for a wrapper that keeps something until then.
    pub fn ended(&self) -> impl std::future::Future<Output = ()> + Send + 'static {
        let mut result = self.result.clone();
        async move {
            let _ = result.wait_for(Option::is_some).await;
        }
    }

    pub fn pid(&self) -> u32 {
        self.pid.load(Ordering::Relaxed)
    }

    /// Next output chunk; `None` once both streams are closed.
    pub async fn read_output(&mut self) -> Option<OutputChunk> {
        self.output.recv().await
    }

    /// The next connection the command's proxy made or refused, as it ends; `None` once the
    /// command has ended and every connection is reported (at once without an allow-list).
    pub async fn next_connection(&mut self) -> Option<ConnectionRecord> {
        match &mut self.connections {
            Some(connections) => connections.recv().await,
            None => None,
        }
    }

    /// The next output chunk or ended connection, whichever comes first; `Output(None)`
    /// once both streams are closed.
    pub async fn next_output_or_connection(&mut self) -> OutputOrConnection {
        if !self.carried.is_empty() {
            return OutputOrConnection::Connection(self.carried.remove(0));
        }
        let connections = async {
            match &mut self.connections {
                Some(connections) => connections.recv().await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            chunk = self.output.recv() => OutputOrConnection::Output(chunk),
            Some(record) = connections => OutputOrConnection::Connection(record),
        }
    }

    /// Takes over the connections `earlier` (a run this one replaces) reported and nobody
    /// has taken yet: they come first from this handle.
    pub fn carry_connections_of(&mut self, earlier: &mut ProcessHandle) {
        let mut carried = earlier.connections_so_far();
        carried.append(&mut self.carried);
        self.carried = carried;
    }

    /// The connections reported so far and not yet taken.
    pub fn connections_so_far(&mut self) -> Vec<ConnectionRecord> {
        let mut taken = std::mem::take(&mut self.carried);
        if let Some(connections) = &mut self.connections {
            while let Ok(record) = connections.try_recv() {
                taken.push(record);
            }
        }
        taken
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

    /// Once the command has ended: whether it failed (a non-zero exit or its timeout).
    pub fn failed(&self) -> bool {
        self.command_failed.get().copied().unwrap_or(false)
    }

    /// Once the command has ended: the requests the network allow-list's proxy refused.
    pub fn network_refusals(&self) -> &[Refusal] {
        self.network_refusals.get().map(Vec::as_slice).unwrap_or_default()
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

/// What a running command reported next (see [`ProcessHandle::next_output_or_connection`]).
pub enum OutputOrConnection {
    Output(Option<OutputChunk>),
    Connection(ConnectionRecord),
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
        ran_in: sandbox.clone(),
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
    /// The sandbox itself, for running it there again (after the user allowed a host).
    ran_in: Arc<Sandbox>,
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
        self.start_in(None)
    }

    /// The sandbox it ran in (to allow a host there before running it again).
    pub fn sandbox_itself(&self) -> &Arc<Sandbox> {
        &self.ran_in
    }

    /// Starts the command again in the same sandbox (whose allow-list may have grown since).
    pub fn start_sandboxed(self) -> Result<ProcessHandle, StartError> {
        let sandbox = self.ran_in.clone();
        self.start_in(Some(sandbox))
    }

    fn start_in(self, sandbox: Option<Arc<Sandbox>>) -> Result<ProcessHandle, StartError> {
        spawn(
            &self.command,
            RunIn {
                cwd: &self.cwd,
                timeout: self.timeout,
                policy: self.policy,
                extra_env: &self.extra_env,
                sandbox,
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

/// Commands that run at once in one agent-host process, all sessions and subagents
/// together, unless [`MAX_RUNNING_VAR`] says otherwise; more wait for a place (their
/// timeout runs from their start). One response may hold thousands of calls.
pub const MAX_RUNNING: usize = 32;
/// The variable that sets [`MAX_RUNNING`].
pub const MAX_RUNNING_VAR: &str = "AGENT_HOST_MAX_RUNNING_COMMANDS";

/// The places for running commands (see [`MAX_RUNNING`]).
fn running_slots() -> &'static Arc<tokio::sync::Semaphore> {
    static SLOTS: OnceLock<Arc<tokio::sync::Semaphore>> = OnceLock::new();
    SLOTS.get_or_init(|| Arc::new(tokio::sync::Semaphore::new(running_slots_total())))
}

/// How many commands may run at once: [`MAX_RUNNING_VAR`] when set to a positive number
/// (else a warning), else [`MAX_RUNNING`].
fn running_slots_total() -> usize {
    static TOTAL: OnceLock<usize> = OnceLock::new();
    *TOTAL.get_or_init(|| match std::env::var(MAX_RUNNING_VAR) {
        Err(_) => MAX_RUNNING,
        Ok(value) => match value.trim().parse::<usize>() {
            Ok(n) if n > 0 => n,
            _ => {
                tracing::warn!("{MAX_RUNNING_VAR}={value:?} is not a positive number; using {MAX_RUNNING}");
                MAX_RUNNING
            }
        },
    })
}

/// Everything needed to start a command, owned: a command waiting for a place starts
/// later, from a task of its own.
struct Pending {
    program: OsString,
    args: Vec<OsString>,
    cwd: PathBuf,
    env: Vec<(String, String)>,
    timeout: Duration,
    sandbox: Option<Arc<Sandbox>>,
    /// The call's tag in the command's environment (see [`call_tag`]).
    tag: String,
    /// Where its proxy reports connections (with a network allow-list).
    connections: Option<ConnectionSink>,
}

impl Pending {
    fn start(&self) -> Result<Child, StartError> {
        let launch = Launch {
            program: &self.program,
            args: self.args.clone(),
            cwd: &self.cwd,
            env: self.env.clone(),
        };
        Child::start(launch, self.sandbox.as_deref(), self.connections.clone())
    }
}

/// What the supervisor reports to the command's handle.
struct Reporting {
    chunks: mpsc::UnboundedSender<OutputChunk>,
    result: watch::Sender<Option<ExecResult>>,
    kill: Arc<Notify>,
    refusal: Arc<OnceLock<String>>,
    network_refusals: Arc<OnceLock<Vec<Refusal>>>,
    command_failed: Arc<OnceLock<bool>>,
    pid: Arc<AtomicU32>,
}

/// Runs `program` supervised: own process group, stdin closed, pipes drained, the timeout,
/// and the sandbox if there is one; once a place is free (see [`MAX_RUNNING`]).
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
    let (connections, connections_rx) = match sandbox.as_ref().and_then(|s| s.network_allow()) {
        Some(_) => {
            let (tx, rx) = mpsc::unbounded_channel();
            (Some(tx), Some(rx))
        }
        None => (None, None),
    };
    let pending = Pending {
        program: program.to_os_string(),
        args,
        cwd: cwd.to_path_buf(),
        env,
        timeout,
        sandbox,
        tag,
        connections,
    };
    let (chunk_tx, chunk_rx) = mpsc::unbounded_channel();
    let (result_tx, result_rx) = watch::channel(None);
    let reporting = Reporting {
        chunks: chunk_tx,
        result: result_tx,
        kill: Arc::new(Notify::new()),
        refusal: Arc::new(OnceLock::new()),
        network_refusals: Arc::new(OnceLock::new()),
        command_failed: Arc::new(OnceLock::new()),
        pid: Arc::new(AtomicU32::new(0)),
    };
    let handle = ProcessHandle {
        pid: reporting.pid.clone(),
        output: chunk_rx,
        result: result_rx,
        kill: reporting.kill.clone(),
        refusal: reporting.refusal.clone(),
        network_refusals: reporting.network_refusals.clone(),
        command_failed: reporting.command_failed.clone(),
        rerun: None,
        note: None,
        connections: connections_rx,
        carried: Vec::new(),
    };
    match running_slots().clone().try_acquire_owned() {
        Ok(place) => {
            // Started here, so that a command that cannot start is the call's error.
            let child = pending.start()?;
            tokio::spawn(supervise(child, pending, reporting, place));
        }
        Err(_) => {
            tracing::info!(
                "a command waits for a place: {} commands are running ({MAX_RUNNING_VAR})",
                running_slots_total()
            );
            tokio::spawn(async move {
                let place = tokio::select! {
                    place = running_slots().clone().acquire_owned() => place,
                    _ = reporting.kill.notified() => {
                        let _ = reporting.result.send(Some(not_started("it was stopped while it waited to start")));
                        return;
                    }
                };
                let Ok(place) = place else { return };
                match pending.start() {
                    Ok(child) => supervise(child, pending, reporting, place).await,
                    Err(e) => {
                        let _ = reporting
                            .result
                            .send(Some(not_started(&format!("it could not start: {e}"))));
                    }
                }
            });
        }
    }
    Ok(handle)
}

/// The result of a command that never ran.
fn not_started(why: &str) -> ExecResult {
    ExecResult {
        stdout: String::new(),
        stderr: format!("agent-host: the command did not run: {why}"),
        exit_code: -1,
        timed_out: false,
        duration_ms: 0,
    }
}

/// Drains the command's output, applies its timeout and kill switch, ends whatever it left
/// running and reports its result; its place is given back at the end.
async fn supervise(
    mut child: Child,
    pending: Pending,
    reporting: Reporting,
    _place: tokio::sync::OwnedSemaphorePermit,
) {
    let Reporting {
        chunks,
        result: result_tx,
        kill,
        refusal: refused,
        network_refusals: network_refused,
        command_failed,
        pid: shared_pid,
    } = reporting;
    let Pending {
        timeout,
        sandbox,
        tag,
        ..
    } = pending;
    let started = Instant::now();
    let pid = child.id();
    shared_pid.store(pid, Ordering::Relaxed);
    live_groups().insert(pid, tag.clone());
    let stdout = child
        .take_stdout()
        .map(|s| tokio::spawn(drain(s, OutputStream::Stdout, chunks.clone())));
    let stderr = child
        .take_stderr()
        .map(|s| tokio::spawn(drain(s, OutputStream::Stderr, chunks)));
    let mut timed_out = false;
    let status = tokio::select! {
        status = child.wait() => status,
        _ = tokio::time::sleep(timeout) => {
            timed_out = true;
            terminate(&mut child, pid).await
        }
        _ = kill.notified() => terminate(&mut child, pid).await,
    };
    // The call is over, and so is everything it left running, in its group (`sleep 300 &`
    // would otherwise outlive it, and agent-host, holding the output pipes open) or out
    // of it (`setsid`). A sandboxed command's PID namespace ended with its init; an
    // unsandboxed one's escapees are found by the call's tag.
    let _ = killpg(Pid::from_raw(pid as i32), Signal::SIGKILL);
    live_groups().remove(&pid);
    let network_refusals = child.finish_network().await;
    if sandbox.is_none() {
        let _ = tokio::task::spawn_blocking(move || call_tag::kill_tagged(&tag)).await;
    }
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
    // Judged on the command's own output: the network note below quotes the proxy, whose
    // words ("could not resolve") must not read as the sandbox refusing something.
    let refusal = sandbox
        .as_ref()
        .filter(|_| failed)
        .and_then(|s| s.refusal_line(&stderr));
    if let Some(sandbox) = &sandbox
        && !network_refusals.is_empty()
    {
        // Said whatever the exit code: a program may go on without what it was refused.
        append_line(&mut stderr, &sandbox.explain_network_refusals(&network_refusals));
    }
    let _ = network_refused.set(network_refusals);
    let _ = command_failed.set(failed);
    if let (Some(sandbox), Some(line)) = (&sandbox, refusal) {
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
