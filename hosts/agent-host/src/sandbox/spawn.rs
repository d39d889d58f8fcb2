//! Starting a sandboxed command without copying agent-host.
//!
//! A command's confinement must be entered between the child's start and its `exec`. std's
//! `Command` runs such code (`pre_exec`) in a `fork`ed child, and `fork` copies the parent's
//! page tables: the cost grew with agent-host's memory (1.7 ms added in a 9 MiB process,
//! 10.6 ms at 112 MiB; now about 1 ms at either, BENCHMARKS.md section 6). This makes the
//! child the way `posix_spawn` does: `clone(CLONE_VM | CLONE_VFORK)`, so it runs in
//! agent-host's memory on a stack of its own while agent-host's thread waits, until it
//! `exec`s or exits. Nothing in the child allocates or takes a lock: it resets signal
//! handlers, moves the prepared pipes onto 0-2 (every other descriptor closes at `exec`),
//! enters the prepared [`Confinement`] and `exec`s prepared strings.
//!
//! The child is cloned into new namespaces, a PID namespace among them, whose first process
//! it is; what it executes is the sandbox's init ([`super::init_program`]), which starts
//! the command, reports through a pipe whether it ran and, later, how it ended, and exits
//! with it, ending every process the command left behind. Its exit is read through a
//! pidfd, the command's output through the pipes, both with tokio.

use super::confine::Confinement;
use super::init_program::{
    InitPipes, InitProgram, START_REPORT_WAIT, above_stdio as moved_above_stdio, command_status, read_report,
};
use std::ffi::{CString, c_char, c_int, c_void};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::process::ExitStatusExt;
use std::process::ExitStatus;
use std::sync::atomic::{AtomicI32, Ordering};
use tokio::io::unix::AsyncFd;
use tokio::net::unix::pipe;

/// The child's own stack; it only runs the confinement's system calls and `execve`.
const STACK_SIZE: usize = 256 * 1024;

/// What to run: the program's path (no search), its arguments (the first is its name) and
/// its whole environment.
pub struct Program {
    pub path: CString,
    pub argv: Vec<CString>,
    pub env: Vec<CString>,
}

/// A command started by [`spawn`].
pub struct SandboxedChild {
    /// The init's pid (the command's process group is the init's).
    pid: u32,
    pidfd: AsyncFd<OwnedFd>,
    /// The init's report pipe: the command's wait status arrives there before the init
    /// exits.
    report: OwnedFd,
    /// The write end of the init's lifeline, never written: when agent-host drops it or
    /// ends (however), the init ends the command and everything it started.
    _lifeline: OwnedFd,
    pub stdin: Option<pipe::Sender>,
    pub stdout: Option<pipe::Receiver>,
    pub stderr: Option<pipe::Receiver>,
    /// With a network allow-list: the listening socket made in the command's network
    /// namespace, for agent-host's proxy to serve (see [`super::network`]).
    pub listener: Option<std::net::TcpListener>,
    /// The proxy serving `listener`, kept as long as the command.
    pub proxy: Option<super::proxy::CommandProxy>,
    status: Option<ExitStatus>,
}

/// Everything the child reads, prepared in the parent.
struct ChildPlan<'a> {
    /// The init's memfd and argument vector (see [`InitProgram::argv`]).
    init: RawFd,
    init_argv: *const *const c_char,
    env: *const *const c_char,
    stdin: RawFd,
    stdout: RawFd,
    stderr: RawFd,
    /// The init's three descriptors, left open across its `exec`.
    report: RawFd,
    lifeline: RawFd,
    start: RawFd,
    /// Where the child sends the proxy's listening socket; -1 without an allow-list.
    handover: RawFd,
    confinement: &'a Confinement,
    /// An empty signal mask, the command's (as std gives every command it starts).
    unblocked: libc::sigset_t,
    /// The errno of what failed, set by the child before it exits.
    failure: &'a AtomicI32,
}

/// Whether the command reads `/dev/null` or a pipe agent-host writes to.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Stdin {
    Null,
    Piped,
}

/// Starts `program` in `confinement`, stdin from `/dev/null` or piped, stdout and stderr
/// piped. Needs a tokio runtime (the pipes and the pidfd are registered with it).
pub fn spawn(program: &Program, confinement: &Confinement, stdin: Stdin) -> std::io::Result<SandboxedChild> {
    let (stdout_read, stdout_write) = pipe_pair()?;
    let (stderr_read, stderr_write) = pipe_pair()?;
    let (stdin_read, stdin_write) = match stdin {
        Stdin::Piped => {
            let (read, write) = pipe_pair()?;
            (read, Some(write))
        }
        Stdin::Null => (open_dev_null()?, None),
    };
    let started = start(program, confinement, [&stdin_read, &stdout_write, &stderr_write])?;
    drop((stdin_read, stdout_write, stderr_write));
    let pid = started.pid;
    let watched = move || -> std::io::Result<SandboxedChild> {
        // SAFETY: the pidfd is owned by the AsyncFd from here on and never replaced.
        let pidfd =
            unsafe { AsyncFd::register_with_interest(pidfd_open(pid)?, tokio::io::Interest::READABLE) }?;
        Ok(SandboxedChild {
            pid: pid as u32,
            pidfd,
            report: started.report,
            _lifeline: started.lifeline,
            stdin: stdin_write.map(pipe::Sender::from_owned_fd).transpose()?,
            stdout: Some(pipe::Receiver::from_owned_fd(stdout_read)?),
            stderr: Some(pipe::Receiver::from_owned_fd(stderr_read)?),
            listener: started.listener,
            proxy: None,
            status: None,
        })
    };
    watched().inspect_err(|_| {
        // Nothing would end or reap the command otherwise.
        // SAFETY: the child is ours and not reaped yet.
        unsafe { libc::kill(pid, libc::SIGKILL) };
        reap(pid);
    })
}

/// Runs `program` in `confinement` to its end, every stream on `/dev/null`: the sandbox's
/// self-test, through the same start as every command.
pub fn run_quietly(program: &Program, confinement: &Confinement) -> std::io::Result<ExitStatus> {
    let null = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open("/dev/null")?;
    let started = start(program, confinement, [&null, &null, &null])?;
    let mut status = 0;
    // SAFETY: waits for our own child.
    if unsafe { libc::waitpid(started.pid, &mut status, 0) } < 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(command_status(&started.report).unwrap_or(ExitStatus::from_raw(status)))
}

/// A started init: its pid, the read end of its report pipe, the write end of its
/// lifeline (dropping it ends the command and all it started) and, with an allow-list, the
/// proxy's listening socket in its network namespace.
struct Started {
    pid: i32,
    report: OwnedFd,
    lifeline: OwnedFd,
    listener: Option<std::net::TcpListener>,
}

/// The clone itself: returns once the init has reported that the command runs, or with
/// what failed in the child, the init or the command's `execve`.
fn start(
    program: &Program,
    confinement: &Confinement,
    streams: [&dyn AsRawFd; 3],
) -> std::io::Result<Started> {
    let init = InitProgram::get().map_err(std::io::Error::other)?;
    // Moved above 0-2 first (agent-host may run with a standard stream closed, and then a
    // new descriptor can be one of them): the child's `dup2`s then never overwrite a source.
    let [stdin, stdout, stderr] = streams;
    let stdin = above_stdio(stdin.as_raw_fd())?;
    let stdout = above_stdio(stdout.as_raw_fd())?;
    let stderr = above_stdio(stderr.as_raw_fd())?;
    // The init's three pipes (see `init.c`). The ends it gets are moved, not copied, so
    // that once it holds them their end of file is its: the report's when it exits, the
    // start pipe's and the lifeline's when agent-host drops its own ends.
    let (report_read, report_write) = pipe_pair_above_stdio()?;
    let (start_read, start_write) = pipe_pair_above_stdio()?;
    let (lifeline_read, lifeline_write) = pipe_pair_above_stdio()?;
    let handover = confinement
        .network_isolated()
        .then(super::network::Handover::new)
        .transpose()?;
    let pipes = InitPipes {
        report: report_write.as_raw_fd(),
        lifeline: lifeline_read.as_raw_fd(),
        start: start_read.as_raw_fd(),
    };
    let init_argv = InitProgram::argv(&pipes, &program.path, &program.argv);
    let init_argv_pointers = null_terminated(&init_argv);
    let env = null_terminated(&program.env);
    let failure = AtomicI32::new(0);
    // SAFETY: sigset_t is plain data; sigfillset initialises it.
    let mut all: libc::sigset_t = unsafe { std::mem::zeroed() };
    let mut mask: libc::sigset_t = unsafe { std::mem::zeroed() };
    let mut unblocked: libc::sigset_t = unsafe { std::mem::zeroed() };
    unsafe {
        libc::sigfillset(&mut all);
        libc::sigemptyset(&mut unblocked);
    }
    // No signal handler of agent-host may run in the child, on its stack and in shared memory,
    // before the child has reset them: all are blocked around the clone.
    // SAFETY: valid sigset pointers.
    unsafe { libc::pthread_sigmask(libc::SIG_SETMASK, &all, &mut mask) };
    let plan = ChildPlan {
        init: init.executable(),
        init_argv: init_argv_pointers.as_ptr(),
        env: env.as_ptr(),
        stdin: stdin.as_raw_fd(),
        stdout: stdout.as_raw_fd(),
        stderr: stderr.as_raw_fd(),
        report: pipes.report,
        lifeline: pipes.lifeline,
        start: pipes.start,
        handover: handover.as_ref().map_or(-1, |h| h.sender()),
        confinement,
        unblocked,
        failure: &failure,
    };
    let mut stack = vec![0u8; STACK_SIZE];
    // The stack grows down on every architecture agent-host runs on; 16-byte aligned.
    let top = (stack.as_mut_ptr() as usize + STACK_SIZE) & !15;
    // SAFETY: CLONE_VFORK suspends this thread until the child has exec'd or exited, so
    // `plan`, `argv`, `env` and `stack` outlive every use the child makes of them; the child
    // makes only system calls (see `child_main`).
    let pid = unsafe {
        libc::clone(
            child_main,
            top as *mut c_void,
            libc::CLONE_VM | libc::CLONE_VFORK | libc::SIGCHLD | confinement.clone_flags(),
            &plan as *const ChildPlan as *mut c_void,
        )
    };
    let clone_error = std::io::Error::last_os_error();
    // SAFETY: restores the mask saved above.
    unsafe { libc::pthread_sigmask(libc::SIG_SETMASK, &mask, std::ptr::null_mut()) };
    // Only the init may hold these now.
    drop((report_write, start_read, lifeline_read));
    if pid < 0 {
        return Err(clone_error);
    }
    let failed = failure.load(Ordering::SeqCst);
    if failed != 0 {
        reap(pid);
        return Err(std::io::Error::from_raw_os_error(failed));
    }
    // Sent before the child's `exec`, so waiting for nothing.
    let listener = handover.map(super::network::Handover::receive).transpose();
    let started = listener
        .and_then(|listener| read_report(&report_read, START_REPORT_WAIT).map(|r| (r, listener)))
        .and_then(|(running, listener)| match running {
            Some(0) => release(pid, confinement, start_write).map(|()| listener),
            _ => Err(std::io::Error::other("the sandbox's init did not start")),
        })
        .and_then(|listener| read_report(&report_read, START_REPORT_WAIT).map(|r| (r, listener)));
    match started {
        Ok((Some(0), listener)) => Ok(Started {
            pid,
            report: report_read,
            lifeline: lifeline_write,
            listener,
        }),
        result => {
            // SAFETY: our child, not reaped yet.
            unsafe { libc::kill(pid, libc::SIGKILL) };
            reap(pid);
            Err(match result {
                Ok((Some(errno), _)) => std::io::Error::from_raw_os_error(errno),
                Ok((None, _)) => {
                    std::io::Error::other("the sandbox's init ended before starting the command")
                }
                Err(e) => e,
            })
        }
    }
}

/// Lets the init start the command, once it has said it runs (its `exec` complete, so its
/// `/proc` files are its own): first its user namespace's maps (not for root), which only
/// a process outside the namespace can write (see [`super::mounts::IdMaps`]), then the byte
/// it waits for.
fn release(pid: i32, confinement: &Confinement, start: OwnedFd) -> std::io::Result<()> {
    if let Some(maps) = confinement.id_maps() {
        maps.write(pid)?;
    }
    let mut start = std::fs::File::from(start);
    std::io::Write::write_all(&mut start, b"1")
}

/// The child, until `exec`: only system calls on prepared data (it shares agent-host's
/// memory). A failure leaves its errno in the plan and exits with 127.
extern "C" fn child_main(arg: *mut c_void) -> c_int {
    // SAFETY: `arg` is the parent's `ChildPlan`, alive while the parent waits (CLONE_VFORK).
    let plan = unsafe { &*(arg as *const ChildPlan) };
    let fail = |error: i32| -> c_int {
        plan.failure.store(error.max(1), Ordering::SeqCst);
        // SAFETY: ends the child without running anything of the parent's.
        unsafe { libc::_exit(127) }
    };
    // SAFETY (the rest): plain system calls on the prepared plan.
    unsafe {
        // agent-host's handlers must not run in the child; what agent-host ignores stays
        // ignored across `exec` as usual, except SIGPIPE, which Rust ignores for itself.
        let mut default: libc::sigaction = std::mem::zeroed();
        default.sa_sigaction = libc::SIG_DFL;
        for signal in 1..=libc::SIGRTMAX() {
            let mut current: libc::sigaction = std::mem::zeroed();
            let ignored = libc::sigaction(signal, std::ptr::null(), &mut current) == 0
                && current.sa_sigaction == libc::SIG_IGN;
            if !ignored || signal == libc::SIGPIPE {
                libc::sigaction(signal, &default, std::ptr::null_mut());
            }
        }
        libc::pthread_sigmask(libc::SIG_SETMASK, &plan.unblocked, std::ptr::null_mut());
        for (from, to) in [(plan.stdin, 0), (plan.stdout, 1), (plan.stderr, 2)] {
            if libc::dup2(from, to) < 0 {
                return fail(errno());
            }
        }
        // Every other descriptor closes at `exec`: one agent-host inherited without
        // close-on-exec (from a launcher: a terminal, an IDE, a CI runner) was opened before
        // the confinement and would carry past it. Marked, not closed, since the Landlock
        // ruleset's is still needed. Linux 5.11; the sandbox needs 6.2.
        if libc::syscall(
            libc::SYS_close_range,
            3,
            libc::c_uint::MAX,
            libc::CLOSE_RANGE_CLOEXEC,
        ) != 0
        {
            return fail(errno());
        }
    }
    // In the command's network namespace, with the capabilities the namespace gave (root
    // drops its own in `enter`).
    if plan.handover >= 0
        && let Err(error) = super::network::listen_in_child(plan.handover)
    {
        return fail(error.raw_os_error().unwrap_or(libc::EINVAL));
    }
    if let Err(error) = plan.confinement.enter() {
        return fail(error.raw_os_error().unwrap_or(libc::EINVAL));
    }
    // SAFETY: plain fcntls, then execveat with null-terminated arrays of pointers to live C
    // strings.
    unsafe {
        // The init's own descriptors cross its `exec`; it closes them for the command.
        for fd in [plan.report, plan.lifeline, plan.start] {
            if libc::fcntl(fd, libc::F_SETFD, 0) != 0 {
                return fail(errno());
            }
        }
        libc::syscall(
            libc::SYS_execveat,
            plan.init,
            c"".as_ptr(),
            plan.init_argv,
            plan.env,
            libc::AT_EMPTY_PATH,
        );
    }
    fail(errno())
}

fn errno() -> i32 {
    std::io::Error::last_os_error()
        .raw_os_error()
        .unwrap_or(libc::EINVAL)
}

impl SandboxedChild {
    pub fn id(&self) -> u32 {
        self.pid
    }

    /// Waits for the command to exit (it is reaped then).
    pub async fn wait(&mut self) -> std::io::Result<ExitStatus> {
        loop {
            if let Some(status) = self.status {
                return Ok(status);
            }
            let mut ready = self.pidfd.readable().await?;
            match self.try_reap()? {
                Some(status) => self.status = Some(command_status(&self.report).unwrap_or(status)),
                None => ready.clear_ready(),
            }
        }
    }
    /// The exit status if the command has exited (reaping it), without waiting.
    fn try_reap(&self) -> std::io::Result<Option<ExitStatus>> {
        // SAFETY: siginfo_t is plain data, filled by waitid.
        let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
        let fd = self.pidfd.get_ref().as_raw_fd();
        // SAFETY: a valid pidfd of our child and a siginfo to fill.
        let rc = unsafe {
            libc::waitid(
                libc::P_PIDFD,
                fd as libc::id_t,
                &mut info,
                libc::WEXITED | libc::WNOHANG,
            )
        };
        if rc < 0 {
            return Err(std::io::Error::last_os_error());
        }
        // SAFETY: waitid filled `info` (a zero pid means not exited yet).
        let (pid, status, code) = unsafe { (info.si_pid(), info.si_status(), info.si_code) };
        if pid == 0 {
            return Ok(None);
        }
        let raw = match code {
            libc::CLD_EXITED => (status & 0xff) << 8,
            libc::CLD_DUMPED => (status & 0x7f) | 0x80,
            _ => status & 0x7f,
        };
        Ok(Some(ExitStatus::from_raw(raw)))
    }
}

impl Drop for SandboxedChild {
    /// A command whose handle goes without being waited for is killed and reaped.
    fn drop(&mut self) {
        if self.status.is_some() {
            return;
        }
        // SAFETY: our child, not reaped yet, so the pid is still its own.
        unsafe { libc::kill(self.pid as i32, libc::SIGKILL) };
        if !matches!(self.try_reap(), Ok(Some(_))) {
            let pid = self.pid as i32;
            // Without a thread (none left to make) the command stays a zombie until
            // agent-host exits; a panic in a drop would be worse.
            let _ = std::thread::Builder::new()
                .name("reap".into())
                .spawn(move || reap(pid));
        }
    }
}

/// A close-on-exec copy of `fd` numbered 3 or above.
fn above_stdio(fd: RawFd) -> std::io::Result<OwnedFd> {
    // SAFETY: duplicates a descriptor this function's caller keeps open meanwhile.
    let copy = unsafe { libc::fcntl(fd, libc::F_DUPFD_CLOEXEC, 3) };
    if copy < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: a new descriptor we own.
    Ok(unsafe { OwnedFd::from_raw_fd(copy) })
}

/// Waits for our child `pid` and reaps it.
fn reap(pid: i32) {
    let mut status = 0;
    // SAFETY: waits for our own child.
    unsafe { libc::waitpid(pid, &mut status, 0) };
}

fn pidfd_open(pid: i32) -> std::io::Result<OwnedFd> {
    // SAFETY: pidfd_open takes a pid and flags and returns a new descriptor.
    let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid, 0) };
    if fd < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: a descriptor we own from here on.
    Ok(unsafe { OwnedFd::from_raw_fd(fd as RawFd) })
}

fn open_dev_null() -> std::io::Result<OwnedFd> {
    let file = std::fs::File::open("/dev/null")?;
    Ok(OwnedFd::from(file))
}

/// A pipe, both ends close-on-exec and numbered 3 or above (moved there if need be).
fn pipe_pair_above_stdio() -> std::io::Result<(OwnedFd, OwnedFd)> {
    let (read, write) = pipe_pair()?;
    Ok((moved_above_stdio(read)?, moved_above_stdio(write)?))
}

/// A pipe, both ends close-on-exec (the child's `dup2` onto 0-2 clears the flag there).
fn pipe_pair() -> std::io::Result<(OwnedFd, OwnedFd)> {
    let (read, write) = nix::unistd::pipe2(nix::fcntl::OFlag::O_CLOEXEC)?;
    Ok((read, write))
}

fn null_terminated(strings: &[CString]) -> Vec<*const c_char> {
    strings
        .iter()
        .map(|s| s.as_ptr())
        .chain(std::iter::once(std::ptr::null()))
        .collect()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::sandbox::{Sandbox, SandboxConfig};
    use tokio::io::AsyncReadExt;

    struct Ran {
        status: ExitStatus,
        stdout: String,
        stderr: String,
    }

    /// Runs `argv` (the first is the program's path) in the default sandbox of a fresh
    /// workspace, which is also its folder.
    async fn run_in_workspace(work: &std::path::Path, argv: &[&str]) -> Ran {
        let sandbox = Sandbox::new(&SandboxConfig::default(), &[work.to_path_buf()])
            .unwrap()
            .unwrap();
        let confinement = sandbox.prepare().unwrap().in_dir(work).unwrap();
        let program = Program {
            path: CString::new(argv[0]).unwrap(),
            argv: argv.iter().map(|a| CString::new(*a).unwrap()).collect(),
            env: vec![c"PATH=/usr/bin:/bin".to_owned()],
        };
        let mut child = spawn(&program, &confinement, Stdin::Null).unwrap();
        let (mut stdout, mut stderr) = (String::new(), String::new());
        child
            .stdout
            .take()
            .unwrap()
            .read_to_string(&mut stdout)
            .await
            .unwrap();
        child
            .stderr
            .take()
            .unwrap()
            .read_to_string(&mut stderr)
            .await
            .unwrap();
        let status = child.wait().await.unwrap();
        Ran {
            status,
            stdout,
            stderr,
        }
    }

    #[tokio::test]
    async fn the_command_gets_its_folder_its_arguments_its_variables_and_only_three_streams() {
        let work = tempfile::tempdir().unwrap();
        let script = r#"pwd; echo "$1|$2|$PATH"; ls /proc/self/fd; echo oops >&2; exit 3"#;
        let ran = run_in_workspace(work.path(), &["/bin/bash", "-c", script, "bash", "a b", "c"]).await;
        let mut lines = ran.stdout.lines();
        assert_eq!(
            lines.next().unwrap(),
            work.path().canonicalize().unwrap().to_str().unwrap()
        );
        assert_eq!(lines.next().unwrap(), "a b|c|/usr/bin:/bin");
        // ls's own listing descriptor is 3: nothing of agent-host's was inherited.
        assert_eq!(lines.collect::<Vec<_>>(), ["0", "1", "2", "3"], "{}", ran.stdout);
        assert_eq!(ran.stderr, "oops\n");
        assert_eq!(ran.status.code(), Some(3));
    }

    #[tokio::test]
    async fn a_broken_pipe_ends_the_writer_quietly_as_outside_agent_host() {
        // agent-host ignores SIGPIPE (Rust does); a command must not inherit that, or `yes`
        // would spin on EPIPE and complain instead of ending.
        let work = tempfile::tempdir().unwrap();
        let ran = run_in_workspace(
            work.path(),
            &["/bin/bash", "-c", "yes | head -n 1; echo ${PIPESTATUS[0]}"],
        )
        .await;
        assert_eq!(ran.stdout, "y\n141\n", "{}", ran.stderr);
        assert_eq!(ran.stderr, "");
    }

    #[tokio::test]
    async fn a_command_killed_by_a_signal_reports_the_signal() {
        use std::os::unix::process::ExitStatusExt;
        let work = tempfile::tempdir().unwrap();
        let ran = run_in_workspace(work.path(), &["/bin/bash", "-c", "kill -TERM $$"]).await;
        assert_eq!(
            (ran.status.code(), ran.status.signal()),
            (None, Some(libc::SIGTERM))
        );
    }

    #[tokio::test]
    async fn a_script_without_an_interpreter_line_runs_with_sh_as_execvp_would() {
        let work = tempfile::tempdir().unwrap();
        let script = work.path().join("hello");
        std::fs::write(&script, "echo \"hello $1\"\n").unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
        let ran = run_in_workspace(work.path(), &[script.to_str().unwrap(), "there"]).await;
        assert_eq!(ran.stdout, "hello there\n", "{}", ran.stderr);
        assert!(ran.status.success());
    }

    #[tokio::test]
    async fn a_program_that_cannot_be_started_is_the_error_execve_gave() {
        let work = tempfile::tempdir().unwrap();
        let sandbox = Sandbox::new(&SandboxConfig::default(), &[work.path().to_path_buf()])
            .unwrap()
            .unwrap();
        let confinement = sandbox.prepare().unwrap().in_dir(work.path()).unwrap();
        let program = Program {
            path: c"/no/such/program".to_owned(),
            argv: vec![c"program".to_owned()],
            env: Vec::new(),
        };
        let error = spawn(&program, &confinement, Stdin::Null).err().unwrap();
        assert_eq!(error.raw_os_error(), Some(libc::ENOENT));
    }
}
