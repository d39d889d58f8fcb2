//! Finding what a command left running outside its process group.
//!
//! Killing a command's group ends `sleep 300 &`, but not a process that made its own
//! session (`setsid`, a daemonising server): it has another group and is reparented to
//! init. Every command therefore starts with a variable naming its call, which its
//! descendants inherit; when the call ends, every process of ours whose environment still
//! holds that name is killed. A process that clears or rewrites its environment escapes
//! this sweep: only a PID namespace (the command sandbox) closes that.

use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// The variable that names a command's call in its environment.
pub const CALL_VAR: &str = "AGENT_HOST_CALL";

/// How many times the sweep looks again: a process may fork while it is being killed.
const SWEEPS: usize = 3;

/// A call's tag, unique among the calls of every agent-host process on this machine.
pub fn next_tag() -> String {
    static NEXT: AtomicU64 = AtomicU64::new(1);
    format!("{}-{}", std::process::id(), NEXT.fetch_add(1, Ordering::Relaxed))
}

/// Kills every process whose environment carries `tag`; returns how many were killed.
pub fn kill_tagged(tag: &str) -> usize {
    let wanted = format!("{CALL_VAR}={tag}");
    // One budget for the whole call: processes stuck in an exec cannot slow it further.
    let deadline = Instant::now() + EXEC_WAIT;
    // A process killed in one sweep may not be a zombie yet in the next: count it once.
    let mut killed = std::collections::BTreeSet::new();
    for _ in 0..SWEEPS {
        let found = tagged_processes(wanted.as_bytes(), deadline);
        if found.is_empty() {
            break;
        }
        for pid in found {
            if kill(Pid::from_raw(pid), Signal::SIGKILL).is_ok() {
                killed.insert(pid);
            }
        }
    }
    if !killed.is_empty() {
        tracing::debug!(
            tag,
            killed = killed.len(),
            "killed processes that left their command's group"
        );
    }
    killed.len()
}

/// How long processes in the middle of an `exec` are waited for, all together: loading a
/// program takes well under a millisecond, but a busy machine may not run it for a while.
const EXEC_WAIT: Duration = Duration::from_millis(500);

/// Live processes (not zombies) whose initial environment holds the entry `wanted`.
/// Processes of other users cannot be read and are skipped, as are those that vanish.
///
/// A process in the middle of an `exec` (`setsid sh -c '...; exec sleep 300'` escaping
/// while its command ends) has its new memory but not yet its new environment, and reads
/// as empty: those are read again until `deadline`, or they would escape the sweep.
fn tagged_processes(wanted: &[u8], deadline: Instant) -> Vec<i32> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    let own = std::process::id() as i32;
    let mut tagged = Vec::new();
    let mut in_exec = Vec::new();
    let pids = entries
        .filter_map(|entry| entry.ok()?.file_name().to_str()?.parse::<i32>().ok())
        .filter(|&pid| pid != own);
    for pid in pids {
        match read_environment(pid, wanted) {
            Environment::Tagged => tagged.push(pid),
            Environment::InExec => in_exec.push(pid),
            Environment::Other => {}
        }
    }
    while !in_exec.is_empty() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_micros(200));
        in_exec.retain(|&pid| match read_environment(pid, wanted) {
            Environment::Tagged => {
                tagged.push(pid);
                false
            }
            Environment::InExec => true,
            Environment::Other => false,
        });
    }
    tagged.retain(|&pid| !is_zombie(pid));
    tagged
}

enum Environment {
    Tagged,
    /// Empty while the process is in an exec: not known yet.
    InExec,
    Other,
}

fn read_environment(pid: i32, wanted: &[u8]) -> Environment {
    let holds = |environ: &[u8]| environ.split(|&b| b == 0).any(|entry| entry == wanted);
    let Ok(environ) = std::fs::read(format!("/proc/{pid}/environ")) else {
        return Environment::Other;
    };
    if holds(&environ) {
        return Environment::Tagged;
    }
    if !environ.is_empty() {
        return Environment::Other;
    }
    if Stat::of(pid).is_some_and(|stat| stat.in_exec()) {
        return Environment::InExec;
    }
    // The exec may have ended between the two reads.
    match std::fs::read(format!("/proc/{pid}/environ")) {
        Ok(environ) if holds(&environ) => Environment::Tagged,
        _ => Environment::Other,
    }
}

/// What the sweep needs of `/proc/PID/stat`, read as bytes (a program's name need not be
/// UTF-8, and may hold spaces and parentheses: the fields start after its last `)`).
struct Stat {
    state: u8,
    flags: u64,
    /// Where the environment ends in the process's memory (field 51, Linux 3.5); 0 while an
    /// exec has replaced the memory but not yet placed the new environment, and for a
    /// process without memory.
    env_end: Option<u64>,
}

impl Stat {
    fn of(pid: i32) -> Option<Self> {
        let stat = std::fs::read(format!("/proc/{pid}/stat")).ok()?;
        let name_end = stat.iter().rposition(|&b| b == b')')?;
        let fields: Vec<&[u8]> = stat[name_end + 1..]
            .split(|b| b.is_ascii_whitespace())
            .filter(|f| !f.is_empty())
            .collect();
        // `fields[0]` is field 3 (the state).
        let number =
            |field: usize| -> Option<u64> { std::str::from_utf8(fields.get(field - 3)?).ok()?.parse().ok() };
        Some(Self {
            state: *fields.first()?.first()?,
            flags: number(9)?,
            env_end: number(51),
        })
    }

    /// A user process, neither exiting nor a zombie, whose memory has no environment yet.
    fn in_exec(&self) -> bool {
        const PF_EXITING: u64 = 0x4;
        const PF_KTHREAD: u64 = 0x0020_0000;
        !matches!(self.state, b'Z' | b'X' | b'x')
            && self.flags & (PF_EXITING | PF_KTHREAD) == 0
            && self.env_end == Some(0)
    }
}

/// A zombie, or a process that is gone.
fn is_zombie(pid: i32) -> bool {
    Stat::of(pid).is_none_or(|stat| stat.state == b'Z')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kernel_threads_zombies_and_running_programs_are_not_taken_for_an_exec() {
        let in_exec = |pid: i32| Stat::of(pid).is_some_and(|stat| stat.in_exec());
        assert!(!in_exec(std::process::id() as i32));
        let kernel_thread = std::fs::read_dir("/proc")
            .unwrap()
            .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<i32>().ok())
            .find(|&pid| Stat::of(pid).is_some_and(|stat| stat.flags & 0x0020_0000 != 0));
        // None is visible in a container with its own process namespace.
        if let Some(pid) = kernel_thread {
            assert!(!in_exec(pid), "kernel thread {pid}");
        }
        let mut quick = std::process::Command::new("true").spawn().unwrap();
        let pid = quick.id() as i32;
        while !is_zombie(pid) {
            std::thread::yield_now();
        }
        assert!(!in_exec(pid));
        quick.wait().unwrap();
    }

    #[test]
    fn a_program_named_with_bytes_that_are_not_utf8_is_killed_too() {
        use std::os::unix::ffi::OsStrExt;
        let folder = tempfile::tempdir().unwrap();
        // Not UTF-8, with a space and a parenthesis, which /proc/PID/stat shows as they are.
        let program = folder.path().join(std::ffi::OsStr::from_bytes(b"\xff sl) eep"));
        // A link, not a copy: a copy's writable descriptor, inherited by a command another
        // test forks meanwhile, would make the exec fail (ETXTBSY). The name a process
        // gets is the one it was started by.
        std::os::unix::fs::symlink("/bin/sleep", &program).unwrap();
        let tag = next_tag();
        let mut child = std::process::Command::new(&program)
            .arg("300")
            .env(CALL_VAR, &tag)
            .spawn()
            .unwrap();
        environment_in_place(child.id());
        assert!(!is_zombie(child.id() as i32));
        assert_eq!(kill_tagged(&tag), 1);
        assert!(!child.wait().unwrap().success());
    }

    #[test]
    fn tags_differ_between_calls() {
        assert_ne!(next_tag(), next_tag());
    }

    /// Waits until `pid`'s exec has set up its environment. `spawn` returns once the
    /// child's exec released the parent's memory, which is before the kernel records
    /// where the new environment lies; until then `/proc/PID/environ` reads empty.
    fn environment_in_place(pid: u32) {
        while std::fs::read(format!("/proc/{pid}/environ")).is_ok_and(|e| e.is_empty()) {
            std::thread::yield_now();
        }
    }

    #[test]
    fn a_process_carrying_the_tag_is_killed_and_others_are_not() {
        let tag = next_tag();
        let mut tagged = std::process::Command::new("sleep")
            .arg("300")
            .env(CALL_VAR, &tag)
            .spawn()
            .unwrap();
        let mut other = std::process::Command::new("sleep")
            .arg("300")
            // Not a tag `next_tag` can give another test running alongside.
            .env(CALL_VAR, format!("{tag}-other"))
            .spawn()
            .unwrap();
        environment_in_place(tagged.id());
        environment_in_place(other.id());
        assert_eq!(kill_tagged(&tag), 1);
        assert!(!tagged.wait().unwrap().success());
        assert_eq!(
            other.try_wait().unwrap(),
            None,
            "a process with another tag was killed"
        );
        other.kill().unwrap();
        other.wait().unwrap();
    }
}
