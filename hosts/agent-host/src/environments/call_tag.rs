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
    // A process killed in one sweep may not be a zombie yet in the next: count it once.
    let mut killed = std::collections::BTreeSet::new();
    for _ in 0..SWEEPS {
        let found = tagged_processes(wanted.as_bytes());
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

/// Live processes (not zombies) whose initial environment holds the entry `wanted`.
/// Processes of other users cannot be read and are skipped, as are those that vanish.
fn tagged_processes(wanted: &[u8]) -> Vec<i32> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    let own = std::process::id() as i32;
    entries
        .filter_map(|entry| entry.ok()?.file_name().to_str()?.parse::<i32>().ok())
        .filter(|&pid| pid != own)
        .filter(|&pid| {
            environment(pid).is_some_and(|environ| environ.split(|&b| b == 0).any(|entry| entry == wanted))
        })
        .filter(|&pid| !is_zombie(pid))
        .collect()
}

/// How long a process in the middle of an `exec` is waited for: loading a program takes
/// well under a millisecond, but a busy machine may not run it for a while.
const EXEC_WAIT: std::time::Duration = std::time::Duration::from_millis(500);

/// `pid`'s initial environment. A process in the middle of an `exec` (`setsid sh -c '...;
/// exec sleep 300'` escaping while its command ends) has its new memory but not yet its
/// new environment, and reads as empty: it is waited for, or it would escape the sweep.
fn environment(pid: i32) -> Option<Vec<u8>> {
    let started = std::time::Instant::now();
    loop {
        let environ = std::fs::read(format!("/proc/{pid}/environ")).ok()?;
        if !environ.is_empty() || !in_exec(pid) || started.elapsed() > EXEC_WAIT {
            return Some(environ);
        }
        std::thread::sleep(std::time::Duration::from_micros(200));
    }
}

/// Whether `pid` is a user process whose memory has no environment yet: between `exec`
/// replacing its memory and placing the new program's environment (stat's `env_end`, field
/// 51, is 0 then; a process with an empty environment has it set). Kernel threads have no
/// memory and are not in an exec.
fn in_exec(pid: i32) -> bool {
    const PF_KTHREAD: u64 = 0x0020_0000;
    let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
        return false;
    };
    // Fields after the command's name, from the third (state) on.
    let Some((_, after_name)) = stat.rsplit_once(')') else {
        return false;
    };
    let fields: Vec<&str> = after_name.split_whitespace().collect();
    let field = |number: usize| fields.get(number - 3).and_then(|f| f.parse::<u64>().ok());
    let live = fields
        .first()
        .is_some_and(|state| !matches!(*state, "Z" | "X" | "x"));
    live && field(9).is_some_and(|flags| flags & PF_KTHREAD == 0) && field(51) == Some(0)
}

fn is_zombie(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|stat| {
            let (_, after_name) = stat.rsplit_once(')')?;
            after_name.split_whitespace().next().map(|state| state == "Z")
        })
        .unwrap_or(true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kernel_threads_zombies_and_running_programs_are_not_taken_for_an_exec() {
        assert!(!in_exec(std::process::id() as i32));
        let kernel_thread = std::fs::read_dir("/proc")
            .unwrap()
            .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<i32>().ok())
            .find(|pid| {
                std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
                    let flags = stat
                        .rsplit_once(')')
                        .and_then(|(_, rest)| rest.split_whitespace().nth(6)?.parse::<u64>().ok());
                    flags.is_some_and(|f| f & 0x0020_0000 != 0)
                })
            });
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
