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
            std::fs::read(format!("/proc/{pid}/environ"))
                .is_ok_and(|environ| environ.split(|&b| b == 0).any(|entry| entry == wanted))
        })
        .filter(|&pid| !is_zombie(pid))
        .collect()
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
