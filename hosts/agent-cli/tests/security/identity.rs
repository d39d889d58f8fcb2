//! Who runs agent-host in the sandbox tests: the user the tests run as, and, when that is
//! root, also an ordinary user (`nobody`), since root and an ordinary user reach the same
//! sandbox by different roads (a user namespace for the ordinary user, kept capabilities
//! dropped for root) and each road must hold.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Output;
use std::sync::OnceLock;

/// The ordinary user's ids when the tests run as root: `nobody`'s, which every Linux has.
const NOBODY: (u32, u32) = (65534, 65534);

/// One user agent-host is run as.
#[derive(Clone)]
pub struct Identity {
    /// `None`: the tests' own user.
    ids: Option<(u32, u32)>,
    binary: PathBuf,
}

impl Identity {
    pub fn name(&self) -> String {
        match self.ids {
            None if running_as_root() => "root".to_string(),
            None => "the tests' user".to_string(),
            Some((uid, _)) => format!("uid {uid}"),
        }
    }

    /// A fresh folder this user owns (0755, so both can look inside).
    pub fn folder(&self) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
        self.own(dir.path());
        dir
    }

    /// Makes everything under `path` this user's.
    pub fn own(&self, path: &Path) {
        let Some((uid, gid)) = self.ids else { return };
        std::os::unix::fs::lchown(path, Some(uid), Some(gid)).unwrap();
        if path.is_dir() && !path.is_symlink() {
            for entry in std::fs::read_dir(path).unwrap() {
                self.own(&entry.unwrap().path());
            }
        }
    }

    /// `agent-host` as this user, with its own configuration and state folders in `home`.
    pub fn agent_host(&self, home: &Path) -> tokio::process::Command {
        let mut command = crate::common::agent_host();
        command
            .as_std_mut()
            .env("HOME", home)
            .env("AGENT_HOST_CONFIG_DIR", home.join(".config/agent-host"))
            .env("AGENT_HOST_STATE_DIR", home.join(".local/state/agent-host"));
        if let Some((uid, gid)) = self.ids {
            // The same settings, another program path: one `nobody` may run.
            let mut as_user = tokio::process::Command::new(&self.binary);
            for (name, value) in command.as_std().get_envs() {
                match value {
                    Some(value) => as_user.env(name, value),
                    None => as_user.env_remove(name),
                };
            }
            as_user.uid(uid).gid(gid);
            command = as_user;
        }
        command
    }

    /// `agent-host tool shell` running `command` in `work` with `flags`, not started.
    pub fn shell_command(
        &self,
        work: &Path,
        home: &Path,
        command: &str,
        flags: &[&str],
    ) -> tokio::process::Command {
        tool_shell(self.agent_host(home), work, command, flags)
    }

    /// [`Self::shell_command`], run to its end.
    pub async fn shell(&self, work: &Path, home: &Path, command: &str, flags: &[&str]) -> Output {
        self.shell_command(work, home, command, flags)
            .output()
            .await
            .unwrap()
    }
}

/// `agent-host` (as `base` is set up) as `tool shell`, running `command` in `work` with
/// `flags`: one sandboxed command, as the model's shell tool runs it.
pub fn tool_shell(
    mut base: tokio::process::Command,
    work: &Path,
    command: &str,
    flags: &[&str],
) -> tokio::process::Command {
    base.args(["tool", "shell", "--args"])
        .arg(serde_json::json!({ "command": command }).to_string())
        .args(flags)
        .arg("--cwd")
        .arg(work);
    base
}

/// Whether the tests run as root (`/proc/self` belongs to the process's user).
fn running_as_root() -> bool {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata("/proc/self").is_ok_and(|meta| meta.uid() == 0)
}

/// The users to run each sandbox attack as: the tests' own, then an ordinary user when the
/// tests run as root and the kernel lets an ordinary user make the sandbox's namespaces
/// (otherwise a line says why that run is skipped).
pub async fn identities() -> Vec<Identity> {
    let own = Identity {
        ids: None,
        binary: PathBuf::from(env!("CARGO_BIN_EXE_agent-host")),
    };
    match ordinary_user().await {
        Ok(ordinary) => vec![own, ordinary],
        Err(why) => {
            eprintln!("skipped: the run as an ordinary user: {why}");
            vec![own]
        }
    }
}

/// `nobody`, when the tests run as root and its sandbox works here.
pub async fn ordinary_user() -> Result<Identity, String> {
    if !running_as_root() {
        return Err("the tests already run as an ordinary user".to_string());
    }
    let binary = binary_for_anyone().map_err(|e| format!("cannot give nobody the binary: {e}"))?;
    let user = Identity {
        ids: Some(NOBODY),
        binary,
    };
    let home = user.folder();
    let work = user.folder();
    let probe = user.shell(work.path(), home.path(), "echo sandboxed", &[]).await;
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&probe.stdout),
        String::from_utf8_lossy(&probe.stderr)
    );
    match said.contains("sandboxed") && probe.status.success() {
        true => Ok(user),
        false if said.contains("unprivileged user namespaces") => Err(format!(
            "this kernel does not let an ordinary user make the sandbox's namespaces: {}",
            said.trim()
        )),
        false => panic!("the sandbox failed for an ordinary user: {said}"),
    }
}

/// The agent-host binary where `nobody` can run it: the build's own folder may sit under
/// a home folder only root may enter. A hard link (or a copy) in a folder of the system's
/// temporary directory, made once per test process.
fn binary_for_anyone() -> std::io::Result<PathBuf> {
    static BINARY: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    BINARY
        .get_or_init(|| {
            let source = Path::new(env!("CARGO_BIN_EXE_agent-host"));
            let dir = std::env::temp_dir().join("agent-host-tests-for-any-user");
            let place = || -> std::io::Result<PathBuf> {
                std::fs::create_dir_all(&dir)?;
                std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755))?;
                let staged = dir.join(format!("agent-host.{}", std::process::id()));
                let _ = std::fs::remove_file(&staged);
                if std::fs::hard_link(source, &staged).is_err() {
                    std::fs::copy(source, &staged)?;
                }
                std::fs::set_permissions(&staged, std::fs::Permissions::from_mode(0o755))?;
                let target = dir.join("agent-host");
                std::fs::rename(&staged, &target)?;
                Ok(target)
            };
            place().map_err(|e| format!("{}: {e}", dir.display()))
        })
        .clone()
        .map_err(std::io::Error::other)
}
