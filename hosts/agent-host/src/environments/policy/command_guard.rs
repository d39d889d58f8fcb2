//! A guard against commands that destroy a machine: recursive deletion of `/` or a home,
//! filesystem creation, raw writes to disks, fork bombs. The refusal explains itself so the
//! model can take another way or ask the user. It is a seatbelt, not a sandbox: a
//! determined command line can always be written another way.

use crate::environments::environment::Environment;
use crate::environments::process::ProcessHandle;
use agent_protocol::ports::{SpawnError, SpawnRequest};
use async_trait::async_trait;
use regex::Regex;
use std::sync::{Arc, LazyLock};

/// (pattern, why it is refused).
const RULES: &[(&str, &str)] = &[
    (
        r"\brm\s+(?:-[A-Za-z-]*\s+|--[a-z-]+\s+)*(?:-[A-Za-z]*[rR][A-Za-z]*|--recursive)\b(?:\s+-[A-Za-z-]+|\s+--[a-z-]+)*\s+(?:/|/\*|~|~/|~/\*|\$HOME|\$\{HOME\}|/home|/root|/etc|/usr|/var|/bin|/sbin|/lib|/boot|/opt)/?(?:\s|$|;|&|\|)",
        "it deletes the root directory, a home directory or a system directory recursively",
    ),
    (
        r"--no-preserve-root",
        "it disables rm's protection of the root directory",
    ),
    (
        r"\bmkfs(?:\.[a-z0-9]+)?\b",
        "it creates a filesystem, erasing a disk or partition",
    ),
    (
        r"\bdd\b[^;&|]*\bof=/dev/(?:sd|hd|vd|xvd|nvme|mmcblk|disk|loop)",
        "it writes raw data to a disk device",
    ),
    (
        r">\s*/dev/(?:sd|hd|vd|xvd|nvme|mmcblk|disk)[a-z0-9]*",
        "it overwrites a disk device",
    ),
    (
        r":\s*\(\s*\)\s*\{\s*:\s*\|\s*:\s*&\s*\}",
        "it is a fork bomb, which exhausts the machine's processes",
    ),
    (
        r"\bchmod\s+(?:-[A-Za-z]*R[A-Za-z]*\s+)\S+\s+/(?:\s|$)",
        "it changes the permissions of every file on the machine",
    ),
    (
        r"\bchown\s+(?:-[A-Za-z]*R[A-Za-z]*\s+)\S+\s+/(?:\s|$)",
        "it changes the owner of every file on the machine",
    ),
    (
        r"\b(?:shutdown|reboot|halt|poweroff)\b",
        "it shuts the machine down or restarts it",
    ),
];

static COMPILED: LazyLock<Vec<(Regex, &'static str)>> = LazyLock::new(|| {
    RULES
        .iter()
        .filter_map(|(pattern, why)| Regex::new(pattern).ok().map(|re| (re, *why)))
        .collect()
});

/// Why a command is refused, if it is.
pub fn dangerous(command: &str) -> Option<&'static str> {
    if let Some((_, why)) = COMPILED.iter().find(|(re, _)| re.is_match(command)) {
        return Some(why);
    }
    named_fork_bomb(command).then_some("it is a fork bomb, which exhausts the machine's processes")
}

/// `f(){ f|f& };f` with any function name (the regex crate has no back-references).
fn named_fork_bomb(command: &str) -> bool {
    static DEFINITION: LazyLock<Option<Regex>> =
        LazyLock::new(|| Regex::new(r"([A-Za-z_][A-Za-z0-9_]*)\s*\(\s*\)\s*\{([^}]*)\}").ok());
    let Some(definition) = DEFINITION.as_ref() else {
        return false;
    };
    definition.captures_iter(command).any(|c| {
        let (name, body) = (&c[1], c[2].replace(char::is_whitespace, ""));
        body.contains(&format!("{name}|{name}&"))
    })
}

pub struct CommandGuard {
    inner: Arc<dyn Environment>,
}

impl CommandGuard {
    pub fn new(inner: Arc<dyn Environment>) -> Self {
        Self { inner }
    }
}

#[async_trait]
impl crate::environments::delegating::Delegating for CommandGuard {
    fn inner(&self) -> &dyn Environment {
        &*self.inner
    }

    async fn spawn(&self, request: SpawnRequest) -> Result<ProcessHandle, SpawnError> {
        if let Some(why) = dangerous(&request.command) {
            return Err(SpawnError::Denied(format!(
                "the command `{}` was not run: {why}. If it is really needed, ask the user to run it themselves.",
                request.command
            )));
        }
        self.inner.spawn(request).await
    }
}

#[cfg(test)]
mod tests {
    use super::dangerous;

    #[test]
    fn destructive_commands_are_recognised() {
        for command in [
            "rm -rf /",
            "rm -rf / --no-preserve-root",
            "sudo rm -fr /*",
            "rm -r -f ~",
            "rm --recursive --force $HOME",
            "cd /tmp && rm -rf /usr ; echo done",
            "mkfs.ext4 /dev/sda1",
            "dd if=/dev/zero of=/dev/sda bs=1M",
            "cat image > /dev/nvme0n1",
            ":(){ :|:& };:",
            "bomb() { bomb | bomb & }; bomb",
            "chmod -R 777 /",
            "shutdown -h now",
        ] {
            assert!(dangerous(command).is_some(), "not caught: {command}");
        }
    }

    #[test]
    fn ordinary_commands_pass() {
        for command in [
            "rm -rf ./build",
            "rm -rf target/ node_modules",
            "rm -rf /tmp/agent-test-123",
            "rm file.txt",
            "dd if=/dev/zero of=./disk.img bs=1M count=10",
            "cargo test -- --nocapture",
            "chmod -R 755 ./scripts",
            "grep -r mkfile src/",
        ] {
            assert!(
                dangerous(command).is_none(),
                "refused: {command}: {:?}",
                dangerous(command)
            );
        }
    }
}
