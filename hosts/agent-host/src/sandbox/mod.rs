//! Commands in an OS sandbox: the shell stops giving back the authority the component
//! lacks.
//!
//! Every command the local environment starts (the shell tool, command tools, plugins'
//! commands, the git snapshot) runs, in the `read-only` and `workspace-write` modes, under:
//! - **Landlock** (Linux 6.2+, ABI 3): reads everywhere except the denied paths (the user's
//!   keys and agent-host's own files), writes only in the writable roots and a private
//!   temporary directory; signals and abstract sockets only within the sandbox (ABI 6+);
//! - **a mount namespace** in which everything outside the writable roots is read-only
//!   (so no `chmod`, `chown`, `touch` or `setxattr` reaches a file there, which Landlock
//!   does not govern) and the workspace's `.git` and `.agent` are read-only bind mounts
//!   (made before Landlock, which then forbids unmounting them);
//! - **a PID namespace** whose first process is the sandbox's init (`init.c`): when the
//!   command ends, or agent-host does, so does every process it started, however it left
//!   its group or cleared its environment; and at most [`max_processes`] processes at once
//!   (`RLIMIT_NPROC` in the command's own user namespace; root is not held to it);
//! - **seccomp**: no socket but Unix datagrams and pairs unless the network is allowed, no
//!   io_uring, no set-user-ID or set-group-ID bit on any file;
//! - `no_new_privs` and a session of its own (no controlling terminal to read or write).
//!
//! Everything that allocates or opens files is prepared in agent-host ([`Sandbox::prepare`]);
//! the forked child only makes system calls ([`confine::Confinement::enter`]).

mod confine;
mod denied;
mod filesystem;
mod init_program;
mod mounts;
pub mod network;
pub mod probe;
pub mod proxy;
pub(crate) mod spawn;
mod syscall_filter;

pub use confine::Confinement;
pub use egress_proxy::{AllowList, ConnectionRecord, Entry, StaticResolver};
pub use network::NetworkAccess;
pub use proxy::{ConnectionSink, NameResolution, Refusal};

use std::path::{Path, PathBuf};
use std::str::FromStr;

/// How much a command may do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, PartialOrd, Ord)]
pub enum SandboxMode {
    /// No writes anywhere but a private temporary directory.
    ReadOnly,
    /// Writes in the workspace, the `--allow-dir` roots and a private temporary directory;
    /// the workspace's `.git` and `.agent` stay read-only.
    #[default]
    WorkspaceWrite,
    /// No sandbox: everything the user can do.
    DangerFullAccess,
}

impl SandboxMode {
    pub fn name(self) -> &'static str {
        match self {
            Self::ReadOnly => "read-only",
            Self::WorkspaceWrite => "workspace-write",
            Self::DangerFullAccess => "danger-full-access",
        }
    }
}

impl std::fmt::Display for SandboxMode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for SandboxMode {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "read-only" => Ok(Self::ReadOnly),
            "workspace-write" => Ok(Self::WorkspaceWrite),
            "danger-full-access" => Ok(Self::DangerFullAccess),
            other => Err(format!(
                "unknown sandbox mode {other:?}: use read-only, workspace-write or danger-full-access"
            )),
        }
    }
}

/// `.git` and `.agent` in `root`, and the repository a `.git` file (a worktree's or a
/// submodule's `gitdir:` pointer) names: what a command must not change in a workspace it
/// may otherwise write, since git and agent-host run what they hold (hooks, configuration).
pub(crate) fn protected_paths(root: &Path) -> Vec<PathBuf> {
    let mut found: Vec<PathBuf> = [".git", ".agent"]
        .iter()
        .filter_map(|name| root.join(name).canonicalize().ok())
        .collect();
    if let Some(text) = git_pointer(&root.join(".git"))
        && let Some(target) = text.lines().next().and_then(|l| l.strip_prefix("gitdir:"))
        && let Ok(target) = root.join(target.trim()).canonicalize()
    {
        found.push(target);
    }
    found
}

/// The start of a `.git` file (a worktree's or submodule's `gitdir:` line): read before
/// every command, so a command cannot make it cost anything: not followed when it is a
/// link (to `/proc/self/pagemap`, `/proc/kmsg`), not waited on when it is a FIFO, only a
/// regular file, at most 4 KiB of it (a sparse 3 GB `.git` is no more).
fn git_pointer(path: &Path) -> Option<String> {
    use std::io::Read;
    use std::os::unix::fs::OpenOptionsExt;
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(path)
        .ok()?;
    if !file.metadata().ok()?.is_file() {
        return None;
    }
    let mut text = String::new();
    file.take(4096).read_to_string(&mut text).ok()?;
    Some(text)
}

/// What the user asked for.
#[derive(Debug, Clone, Default)]
pub struct SandboxConfig {
    pub mode: SandboxMode,
    /// How much of the network commands reach.
    pub network: NetworkAccess,
    /// With [`NetworkAccess::AllowList`], the hosts commands reach through the proxy.
    pub network_allow: egress_proxy::AllowList,
    /// Where the proxy resolves names: the system's resolver, or (tests) a fixed map.
    #[doc(hidden)]
    pub resolution: NameResolution,
    /// Paths commands may not read, besides [`denied::default_denied_reads`].
    pub deny_read: Vec<PathBuf>,
}

impl SandboxConfig {
    /// Every path commands may not read: agent-host's own list (credentials in the home
    /// folder, its configuration and state folders, `/dev`) and the user's additions. Also
    /// what no component may be granted (`host_tools::component::folders`).
    pub fn denied_reads(&self) -> Vec<PathBuf> {
        denied::default_denied_reads()
            .into_iter()
            .chain(self.deny_read.iter().cloned())
            .collect()
    }
}

#[derive(Debug, thiserror::Error)]
pub enum SandboxError {
    #[error(
        "the {mode} sandbox needs {needs}, and {found}. Commands are refused rather than run \
         unconfined: choose `--sandbox danger-full-access` (or `sandbox = \"danger-full-access\"` \
         in config.toml) to run them with all your rights"
    )]
    Unsupported {
        mode: SandboxMode,
        needs: &'static str,
        found: String,
    },
    #[error("cannot prepare the sandbox: {what}: {source}")]
    Prepare {
        what: String,
        #[source]
        source: std::io::Error,
    },
    #[error("cannot build the sandbox's rules: {0}")]
    Rules(String),
    #[error(
        "{0} was moved or replaced since the session started; the sandbox protects paths by \
         name, so commands are refused until a new session starts"
    )]
    Moved(PathBuf),
}

/// A sandbox ready to confine commands: its roots resolved, its temporary directory made.
#[derive(Debug)]
pub struct Sandbox {
    mode: SandboxMode,
    network: NetworkAccess,
    /// The proxy's rules, with an allow-list.
    proxy: Option<proxy::ProxyRules>,
    /// Where commands may write besides `temp` (canonical): the workspace and the extra
    /// roots in workspace-write, none in read-only.
    roots: Vec<PathBuf>,
    /// Paths commands may not read, as given: resolved again for every command, so one
    /// created since (`~/.aws` after `aws configure`) is denied too.
    deny_read: Vec<PathBuf>,
    temp: tempfile::TempDir,
    filter: std::sync::Arc<seccompiler::BpfProgram>,
    /// The roots and the paths protected or hidden inside them when the sandbox was made,
    /// with their device and inode: renaming a parent away (`mv work work2; mkdir work`)
    /// would otherwise leave the next command's rules protecting nothing.
    pinned: Vec<(PathBuf, (u64, u64))>,
}

/// What one command's rules are built from, resolved when it starts.
struct Resolved {
    /// `.git` (and the repository a `.git` file points to) and `.agent` inside the
    /// writable roots.
    protected: Vec<PathBuf>,
    /// Denied paths that exist, canonical.
    deny_read: Vec<PathBuf>,
}

impl Resolved {
    /// The denied paths inside `writable`, to be covered by a mount: Landlock's grant on
    /// the root would let them through. One that holds a root (a configuration folder
    /// that is the workspace) is left out: covering it would hide the workspace. Denied
    /// paths elsewhere are left to Landlock, whose refusal ("Permission denied") tells the
    /// command, and so the model, why; a cover would make them look empty.
    fn hidden(&self, writable: &[PathBuf]) -> Vec<PathBuf> {
        self.deny_read
            .iter()
            .filter(|d| writable.iter().any(|w| d.starts_with(w)))
            .filter(|d| !writable.iter().any(|w| w.starts_with(d)))
            .cloned()
            .collect()
    }
}

/// Processes (threads included) one sandboxed command may have at once, unless
/// [`MAX_PROCESSES_VAR`] says otherwise: enough for a parallel build, few enough that a
/// fork bomb stops there.
pub const MAX_PROCESSES: u64 = 4096;
/// The variable that sets [`MAX_PROCESSES`].
pub const MAX_PROCESSES_VAR: &str = "AGENT_HOST_MAX_COMMAND_PROCESSES";

/// The limit in effect: [`MAX_PROCESSES_VAR`] when set to a positive number (else a
/// warning), else [`MAX_PROCESSES`].
pub fn max_processes() -> u64 {
    static LIMIT: std::sync::OnceLock<u64> = std::sync::OnceLock::new();
    *LIMIT.get_or_init(|| {
        let Ok(value) = std::env::var(MAX_PROCESSES_VAR) else {
            return MAX_PROCESSES;
        };
        match value.trim().parse::<u64>() {
            Ok(n) if n > 0 => n,
            _ => {
                tracing::warn!(
                    "{MAX_PROCESSES_VAR}={value:?} is not a positive number; using {MAX_PROCESSES}"
                );
                MAX_PROCESSES
            }
        }
    })
}

/// A path's device and inode, following links; `None` when it does not exist.
fn identity(path: &Path) -> Option<(u64, u64)> {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata(path).ok().map(|m| (m.dev(), m.ino()))
}

impl Sandbox {
    /// The sandbox for commands run in `roots` (the workspace first), or `None` in
    /// `danger-full-access`. Fails when this kernel cannot enforce the mode.
    pub fn new(config: &SandboxConfig, roots: &[PathBuf]) -> Result<Option<Self>, SandboxError> {
        if config.mode == SandboxMode::DangerFullAccess {
            return Ok(None);
        }
        probe::require_landlock(config.mode)?;
        // Made in the canonical temporary folder, so its path needs no resolving later.
        let temp = std::env::temp_dir()
            .canonicalize()
            .and_then(|dir| {
                tempfile::Builder::new()
                    .prefix("agent-host-sandbox-")
                    .tempdir_in(dir)
            })
            .map_err(|source| SandboxError::Prepare {
                what: "the private temporary directory".into(),
                source,
            })?;
        let roots = match config.mode {
            SandboxMode::WorkspaceWrite => roots.iter().filter_map(|r| r.canonicalize().ok()).collect(),
            _ => Vec::new(),
        };
        let deny_read = config.denied_reads();
        let mut sandbox = Self {
            mode: config.mode,
            network: config.network,
            proxy: (config.network == NetworkAccess::AllowList)
                .then(|| proxy::ProxyRules::new(&config.network_allow, &config.resolution)),
            roots,
            deny_read,
            temp,
            filter: std::sync::Arc::new(syscall_filter::syscall_filter(config.network)?),
            pinned: Vec::new(),
        };
        let resolved = sandbox.resolve();
        let inside_roots = resolved.hidden(&sandbox.roots);
        sandbox.pinned = sandbox
            .roots
            .iter()
            .chain(&resolved.protected)
            .chain(&inside_roots)
            .filter_map(|p| identity(p).map(|id| (p.clone(), id)))
            .collect();
        sandbox.self_test(config.mode)?;
        Ok(Some(sandbox))
    }

    /// The paths commands may not read (the user's credentials, agent-host's own files).
    pub fn denied_reads(&self) -> &[PathBuf] {
        &self.deny_read
    }

    pub fn mode(&self) -> SandboxMode {
        self.mode
    }

    /// Where commands may write besides their private temporary directory (canonical; none
    /// in `read-only`).
    pub fn writable_roots(&self) -> &[PathBuf] {
        &self.roots
    }

    pub fn network(&self) -> NetworkAccess {
        self.network
    }

    /// The hosts commands reach, with an allow-list.
    pub fn network_allow(&self) -> Option<std::sync::Arc<egress_proxy::AllowList>> {
        self.proxy.as_ref().map(proxy::ProxyRules::allow_list)
    }

    /// Lets the commands started from now on reach `entries` too (the user allowed them for
    /// the session, see `session_host::sandbox_rerun`); nothing without an allow-list.
    pub fn allow_hosts(&self, entries: &[egress_proxy::Entry]) {
        if let Some(rules) = &self.proxy {
            rules.allow_more(entries);
        }
    }

    /// The variables that send a command's HTTP clients to its proxy, with an allow-list
    /// (none otherwise). They come last: a command's own settings cannot replace them
    /// (nor would it help: nothing else is reachable).
    pub fn proxy_variables(&self) -> Vec<(String, String)> {
        match self.proxy {
            Some(_) => network::proxy_variables(),
            None => Vec::new(),
        }
    }

    /// The private temporary directory commands get as `TMPDIR`.
    pub fn temp_dir(&self) -> &Path {
        self.temp.path()
    }

    /// Everything one command's confinement needs, prepared here so that the forked child
    /// only makes system calls. The rules are built per command: a file created in a
    /// denied path's parent since the last command is judged like its siblings.
    pub fn prepare(&self) -> Result<Confinement, SandboxError> {
        if let Some((path, _)) = self.pinned.iter().find(|(p, id)| identity(p) != Some(*id)) {
            return Err(SandboxError::Moved(path.clone()));
        }
        let resolved = self.resolve();
        let writable = self.writable();
        let ruleset = filesystem::ruleset(&writable, &resolved.deny_read)?;
        let hidden = resolved.hidden(&writable);
        let mounts = mounts::CommandMounts::plan(&writable, &resolved.protected, &hidden)?;
        Ok(Confinement::new(
            ruleset,
            mounts,
            self.filter.clone(),
            self.network,
            max_processes(),
        ))
    }

    /// Every place commands may write: the roots, then the temporary directory.
    fn writable(&self) -> Vec<PathBuf> {
        self.roots
            .iter()
            .cloned()
            .chain([self.temp.path().to_path_buf()])
            .collect()
    }

    fn resolve(&self) -> Resolved {
        let protected = self
            .roots
            .iter()
            .flat_map(|root| protected_paths(root))
            // Inside a root, but never a root itself (`.agent -> .` would make the whole
            // workspace read-only).
            .filter(|p| self.roots.iter().any(|r| p.starts_with(r) && p != r))
            .collect();
        let deny_read = self
            .deny_read
            .iter()
            .filter_map(|p| p.canonicalize().ok())
            .collect();
        Resolved { protected, deny_read }
    }

    /// One line for headers and `config show`.
    pub fn describe(&self) -> String {
        match &self.proxy {
            Some(rules) => format!("{} (network allow-list: {})", self.mode, rules.summary()),
            None => format!("{} (network {})", self.mode, self.network),
        }
    }

    /// The first line of a failed command's stderr that the sandbox may explain (a refused
    /// write, read, connection or name lookup); `None` when no line looks like that.
    pub fn refusal_line(&self, stderr: &str) -> Option<String> {
        const TELLTALES: &[&str] = &[
            "Permission denied",
            "Read-only file system",
            "Operation not permitted",
            "Could not resolve host",
            "Temporary failure in name resolution",
            "Network is unreachable",
        ];
        let line = stderr
            .lines()
            .find(|line| TELLTALES.iter().any(|t| line.contains(t)))?;
        Some(line.trim().chars().take(300).collect())
    }

    /// What to tell the model when a command failed in a way the sandbox may explain
    /// (see [`Sandbox::refusal_line`]).
    pub fn explain_denial(&self) -> String {
        let writable: Vec<String> = self.writable().iter().map(|p| p.display().to_string()).collect();
        let protected: Vec<String> = self
            .resolve()
            .protected
            .iter()
            .map(|p| p.display().to_string())
            .collect();
        let mut note = format!(
            "[agent-host sandbox: this command ran in {} mode. Writes are allowed only in {} \
             (the last is $TMPDIR)",
            self.mode,
            writable.join(", ")
        );
        if !protected.is_empty() {
            note.push_str(&format!("; {} are read-only", protected.join(", ")));
        }
        note.push_str("; the user's credentials (~/.ssh, ~/.aws, ...) cannot be read");
        match self.network {
            NetworkAccess::Off => note.push_str("; the network is off"),
            NetworkAccess::AllowList => note.push_str(&format!(
                "; the network is reached only through agent-host's proxy ({}), only for \
                 these hosts: {} (programs that ignore HTTP_PROXY/HTTPS_PROXY, and \
                 non-HTTP protocols such as git over ssh, reach nothing)",
                network::PROXY_ADDRESS,
                self.proxy
                    .as_ref()
                    .map(proxy::ProxyRules::summary)
                    .unwrap_or_default()
            )),
            NetworkAccess::On => {}
        }
        note.push_str("; local daemons' sockets (D-Bus, Docker, ssh-agent) cannot be reached");
        note.push_str(
            ". Do not retry the same way: work inside the allowed places, or tell the user \
             what needs more access (agent-host --sandbox, --network-allow HOST, \
             --sandbox-network).]",
        );
        note
    }

    /// What to tell the model when the network allow-list's proxy refused some of a
    /// command's requests (`host:port: reason` each).
    pub fn explain_network_refusals(&self, refusals: &[proxy::Refusal]) -> String {
        let refusals: Vec<String> = refusals.iter().map(ToString::to_string).collect();
        format!(
            "[agent-host sandbox: the network allow-list refused this command's requests: {}. \
             Commands reach only these hosts, through agent-host's proxy: {}. Do not try to \
             get around it; if the task needs another host, tell the user, who can allow it \
             (--network-allow HOST, or network_allow in config.toml).]",
            refusals.join("; "),
            self.proxy
                .as_ref()
                .map(proxy::ProxyRules::summary)
                .unwrap_or_default()
        )
    }

    /// Runs `true` under the full confinement once, so a kernel that cannot do what the
    /// mode needs is found now and said plainly, not at the first command.
    fn self_test(&self, mode: SandboxMode) -> Result<(), SandboxError> {
        let confinement = self.prepare()?;
        let program = spawn::Program {
            path: c"/bin/true".to_owned(),
            argv: vec![c"true".to_owned()],
            env: Vec::new(),
        };
        let status = spawn::run_quietly(&program, &confinement).map_err(|e| SandboxError::Unsupported {
            mode,
            needs: "Landlock, seccomp, and mount and PID namespaces (for a user other than root, \
                    unprivileged user namespaces)",
            found: format!("entering it failed on this machine: {e}"),
        })?;
        match status.success() {
            true => Ok(()),
            false => Err(SandboxError::Unsupported {
                mode,
                needs: "a command to start inside it",
                found: format!("/bin/true ended with {status}"),
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn modes_read_and_print_alike_and_order_from_the_strictest() {
        for mode in [
            SandboxMode::ReadOnly,
            SandboxMode::WorkspaceWrite,
            SandboxMode::DangerFullAccess,
        ] {
            assert_eq!(mode.name().parse::<SandboxMode>().unwrap(), mode);
        }
        assert!(SandboxMode::ReadOnly < SandboxMode::WorkspaceWrite);
        assert!(SandboxMode::WorkspaceWrite < SandboxMode::DangerFullAccess);
        let error = "none".parse::<SandboxMode>().unwrap_err();
        assert!(
            error.contains("read-only, workspace-write or danger-full-access"),
            "{error}"
        );
    }

    #[test]
    fn a_denial_is_explained_with_the_places_a_command_may_write() {
        let work = tempfile::tempdir().unwrap();
        std::fs::create_dir(work.path().join(".git")).unwrap();
        let sandbox = Sandbox::new(&SandboxConfig::default(), &[work.path().to_path_buf()])
            .unwrap()
            .unwrap();
        let stderr = "making it\nbash: /etc/x: Permission denied\nbash: /etc/y: Permission denied\n";
        assert_eq!(
            sandbox.refusal_line(stderr).as_deref(),
            Some("bash: /etc/x: Permission denied")
        );
        assert_eq!(sandbox.refusal_line("error: no such file"), None);
        let note = sandbox.explain_denial();
        let root = work.path().canonicalize().unwrap();
        assert!(note.contains(&root.display().to_string()), "{note}");
        assert!(note.contains(".git") && note.contains("read-only"), "{note}");
        assert!(note.contains("network is off"), "{note}");
    }

    #[test]
    fn a_git_file_is_read_bounded_never_followed_and_never_waited_on() {
        let work = tempfile::tempdir().unwrap();
        let git = work.path().join(".git");
        let real = work.path().join("real-repository");
        std::fs::create_dir(&real).unwrap();
        std::fs::write(&git, format!("gitdir: {}\n", real.display())).unwrap();
        assert!(protected_paths(work.path()).contains(&real.canonicalize().unwrap()));
        // A huge (sparse) file: 4 KiB of it at most.
        let file = std::fs::File::create(&git).unwrap();
        file.set_len(3 << 30).unwrap();
        assert_eq!(git_pointer(&git).map(|text| text.len()), Some(4096));
        // A link (to a file that never ends) is not followed; a FIFO is not waited on.
        std::fs::remove_file(&git).unwrap();
        std::os::unix::fs::symlink("/dev/zero", &git).unwrap();
        assert_eq!(git_pointer(&git), None);
        std::fs::remove_file(&git).unwrap();
        nix::unistd::mkfifo(&git, nix::sys::stat::Mode::S_IRWXU).unwrap();
        assert_eq!(git_pointer(&git), None);
    }

    #[test]
    fn danger_full_access_makes_no_sandbox() {
        let config = SandboxConfig {
            mode: SandboxMode::DangerFullAccess,
            ..SandboxConfig::default()
        };
        assert!(Sandbox::new(&config, &[]).unwrap().is_none());
    }
}
