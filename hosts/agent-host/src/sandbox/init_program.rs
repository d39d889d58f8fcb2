//! The sandbox's init (`init.c`, built by build.rs): PID 1 of every sandboxed command's PID
//! namespace, executed from a sealed memfd so that it needs no file on disk; and agent-host's
//! side of its report pipe.

use super::SandboxError;
use std::ffi::CString;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::process::ExitStatusExt;
use std::process::ExitStatus;
use std::sync::OnceLock;
use std::time::Duration;

/// The init's executable, linked by build.rs.
static PROGRAM: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/agent-host-init"));

/// `MFD_EXEC` (Linux 6.3): says the memfd will be executed, which a kernel whose
/// `vm.memfd_noexec` is 1 requires. Older kernels refuse the flag, and need none.
const MFD_EXEC: libc::c_uint = 0x0010;

/// The name the init runs under (its `argv[0]`, seen in `ps`).
pub const NAME: &std::ffi::CStr = c"agent-host-init";

/// The init's executable, made once per process.
#[derive(Debug)]
pub struct InitProgram {
    /// The sealed memfd holding [`PROGRAM`], close-on-exec (executed by descriptor).
    executable: OwnedFd,
}

impl InitProgram {
    /// The process's init, made on first use.
    pub fn get() -> Result<&'static Self, SandboxError> {
        static INIT: OnceLock<Result<InitProgram, String>> = OnceLock::new();
        INIT.get_or_init(|| Self::make().map_err(|e| e.to_string()))
            .as_ref()
            .map_err(|why| SandboxError::Prepare {
                what: "the sandbox's init program".into(),
                source: std::io::Error::other(why.clone()),
            })
    }

    fn make() -> std::io::Result<Self> {
        Ok(Self {
            executable: above_stdio(sealed_memfd(PROGRAM)?)?,
        })
    }

    /// The descriptor to `execveat`.
    pub fn executable(&self) -> RawFd {
        self.executable.as_raw_fd()
    }

    /// The init's argument vector for a command: its name, the numbers of its report
    /// pipe, its lifeline and its start pipe, then the program's path and its own argument
    /// vector (see `init.c`).
    pub fn argv(pipes: &InitPipes, path: &CString, argv: &[CString]) -> Vec<CString> {
        let number = |fd: RawFd| CString::new(fd.to_string()).unwrap_or_default();
        [
            NAME.to_owned(),
            number(pipes.report),
            number(pipes.lifeline),
            number(pipes.start),
            path.clone(),
        ]
        .into_iter()
        .chain(argv.iter().cloned())
        .collect()
    }
}

/// The numbers of the init's three pipe ends (see `init.c`), as the child leaves them open.
pub struct InitPipes {
    pub report: RawFd,
    pub lifeline: RawFd,
    pub start: RawFd,
}

/// How long the init may take to say whether the command started: an `execve` takes well
/// under a millisecond, so this only guards against a hang (a program on a stalled
/// network filesystem).
pub const START_REPORT_WAIT: Duration = Duration::from_secs(30);

/// The next 4-byte word of the init's report, waiting at most `wait`; `None` when the
/// init closed the pipe without one.
pub fn read_report(report: &OwnedFd, wait: Duration) -> std::io::Result<Option<i32>> {
    let mut word = [0u8; 4];
    let mut filled = 0;
    let deadline = std::time::Instant::now() + wait;
    while filled < word.len() {
        let left = deadline.saturating_duration_since(std::time::Instant::now());
        let mut poll = libc::pollfd {
            fd: report.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: one pollfd on the stack.
        let ready = unsafe { libc::poll(&mut poll, 1, left.as_millis().min(i32::MAX as u128) as i32) };
        match ready {
            0 => {
                return Err(std::io::Error::new(
                    std::io::ErrorKind::TimedOut,
                    "the sandbox's init did not say whether the command started",
                ));
            }
            n if n < 0 => {
                let error = std::io::Error::last_os_error();
                match error.kind() {
                    std::io::ErrorKind::Interrupted => continue,
                    _ => return Err(error),
                }
            }
            _ => {}
        }
        // SAFETY: reads into the rest of `word`.
        let n = unsafe {
            libc::read(
                report.as_raw_fd(),
                word[filled..].as_mut_ptr().cast(),
                word.len() - filled,
            )
        };
        match n {
            0 => return Ok(None),
            n if n < 0 => {
                let error = std::io::Error::last_os_error();
                match error.kind() {
                    std::io::ErrorKind::Interrupted | std::io::ErrorKind::WouldBlock => continue,
                    _ => return Err(error),
                }
            }
            n => filled += n as usize,
        }
    }
    Ok(Some(i32::from_ne_bytes(word)))
}

/// The command's own wait status, which the init reports before it exits; `None` when it
/// was killed first (then the init's status is the command's).
pub fn command_status(report: &OwnedFd) -> Option<ExitStatus> {
    match read_report(report, Duration::ZERO) {
        Ok(Some(status)) => Some(ExitStatus::from_raw(status)),
        _ => None,
    }
}

/// A memfd holding `bytes`, sealed against any change.
fn sealed_memfd(bytes: &[u8]) -> std::io::Result<OwnedFd> {
    let create = |flags: libc::c_uint| {
        // SAFETY: a constant C string and flags; the result is checked.
        let fd = unsafe { libc::memfd_create(NAME.as_ptr(), flags) };
        match fd {
            fd if fd >= 0 => Ok(unsafe { OwnedFd::from_raw_fd(fd) }),
            _ => Err(std::io::Error::last_os_error()),
        }
    };
    let base = libc::MFD_CLOEXEC | libc::MFD_ALLOW_SEALING;
    let fd = match create(base | MFD_EXEC) {
        Err(e) if e.raw_os_error() == Some(libc::EINVAL) => create(base)?,
        other => other?,
    };
    let mut file = std::fs::File::from(fd);
    std::io::Write::write_all(&mut file, bytes)?;
    let seals = libc::F_SEAL_SEAL | libc::F_SEAL_SHRINK | libc::F_SEAL_GROW | libc::F_SEAL_WRITE;
    // SAFETY: fcntl on a descriptor we own.
    if unsafe { libc::fcntl(file.as_raw_fd(), libc::F_ADD_SEALS, seals) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(OwnedFd::from(file))
}

/// `fd` moved to a number of 3 or above (close-on-exec): the child's `dup2`s onto 0-2
/// must never overwrite it, even when agent-host was started with a standard stream closed.
pub fn above_stdio(fd: OwnedFd) -> std::io::Result<OwnedFd> {
    if fd.as_raw_fd() > 2 {
        return Ok(fd);
    }
    // SAFETY: duplicates a descriptor we own; the copy is ours.
    let copy = unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_DUPFD_CLOEXEC, 3) };
    match copy {
        c if c >= 0 => Ok(unsafe { OwnedFd::from_raw_fd(c) }),
        _ => Err(std::io::Error::last_os_error()),
    }
}
