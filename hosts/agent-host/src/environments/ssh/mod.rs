//! The SSH environment: commands over SSH exec channels, files over SFTP (russh and
//! russh-sftp), with the local environment's semantics: paths relative to the remote
//! working directory, `/bin/bash -c` in a new process group, stdin closed, stdout and stderr
//! streamed separately and capped, timeout with SIGTERM to the group, 2 s, SIGKILL.
//! The host key must be in known_hosts; nothing is accepted on first use.

mod files;
mod revoked;
mod sftp;

use crate::environments::command_output::CappedOutput;
use crate::environments::env_vars::EnvPolicy;
use crate::environments::environment::Environment;
use crate::environments::process::{KILL_GRACE, ProcessHandle};
use agent_protocol::ports::{
    DirEntry, ExecResult, FileStat, FsError, GrepMatch, GrepOptions, OutputChunk, OutputStream, SpawnError,
    SpawnRequest,
};
use async_trait::async_trait;
use russh::ChannelMsg;
use russh::client::{self, Handle};
use russh::keys::{PrivateKeyWithHashAlg, PublicKeyOrCertificate, check_known_hosts_path, load_secret_key};
use russh_sftp::client::SftpSession;
use sftp::SftpRoot;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::{Notify, mpsc, watch};

/// How long after SIGKILL a command may keep its channel open before the host stops waiting:
/// long enough for a slow server to start the wrapper and hear of its group, short enough that
/// a broken one cannot hang a tool call.
const UNSTARTED_GRACE: Duration = Duration::from_secs(10);

/// How long an abandoned command (its call already answered) is still watched for its
/// group id, so that a command the server starts late is killed when it does start.
const LATE_START_WATCH: Duration = Duration::from_secs(120);

/// `ssh://user@host[:port]/path`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SshTarget {
    pub user: String,
    pub host: String,
    pub port: u16,
    pub path: String,
}

impl SshTarget {
    pub fn parse(url: &str) -> Result<Self, String> {
        let bad = |why: &str| format!("{url}: {why} (expected ssh://user@host[:port]/path)");
        let rest = url
            .strip_prefix("ssh://")
            .ok_or_else(|| bad("not an ssh:// URL"))?;
        let (authority, path) = rest.split_once('/').ok_or_else(|| bad("no remote path"))?;
        let (user, host_port) = authority.split_once('@').ok_or_else(|| bad("no user"))?;
        let (host, port) = match host_port.rsplit_once(':') {
            Some((host, port)) => (host, port.parse().map_err(|_| bad("the port is not a number"))?),
            None => (host_port, 22),
        };
        if user.is_empty() || host.is_empty() {
            return Err(bad("the user or host is empty"));
        }
        Ok(Self {
            user: user.to_string(),
            host: host.to_string(),
            port,
            path: format!("/{path}"),
        })
    }
}

/// Checks the server's key against known_hosts.
struct HostKeyCheck {
    host: String,
    port: u16,
    known_hosts: PathBuf,
}

impl client::Handler for HostKeyCheck {
    type Error = anyhow::Error;

    async fn check_server_key(&mut self, key: &PublicKeyOrCertificate) -> Result<bool, Self::Error> {
        let PublicKeyOrCertificate::PublicKey { key, .. } = key else {
            anyhow::bail!(
                "{} offered a host certificate; only plain host keys are checked",
                self.host
            );
        };
        if revoked::is_revoked(&self.known_hosts, key).map_err(anyhow::Error::msg)? {
            anyhow::bail!(
                "the host key of {}:{} is revoked in {} (@revoked); it is never accepted",
                self.host,
                self.port,
                self.known_hosts.display()
            );
        }
        match check_known_hosts_path(&self.host, self.port, key, &self.known_hosts) {
            Ok(true) => Ok(true),
            Ok(false) => anyhow::bail!(
                "the host key of {host}:{port} is not in {file}; check it and add it, e.g. \
                 `ssh-keyscan -p {port} {host} >> {file}`",
                host = self.host,
                port = self.port,
                file = self.known_hosts.display()
            ),
            Err(error) => anyhow::bail!(
                "the host key of {}:{} does not match {}: {error} (a changed key may mean an attack)",
                self.host,
                self.port,
                self.known_hosts.display()
            ),
        }
    }
}

/// Files and processes of a remote machine.
pub struct SshEnvironment {
    session: Arc<Handle<HostKeyCheck>>,
    /// The remote filesystem, from the working directory.
    fs: SftpRoot,
    env_policy: EnvPolicy,
    platform: String,
    os_version: String,
}

fn home() -> PathBuf {
    std::env::var_os("HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/"))
}

impl SshEnvironment {
    /// Connects, checks the host key, authenticates with a key and opens SFTP.
    pub async fn connect(
        target: &SshTarget,
        key: Option<&Path>,
        known_hosts: Option<&Path>,
        env_policy: EnvPolicy,
    ) -> Result<Self, String> {
        let known_hosts = known_hosts
            .map(Path::to_path_buf)
            .unwrap_or_else(|| home().join(".ssh/known_hosts"));
        let check = HostKeyCheck {
            host: target.host.clone(),
            port: target.port,
            known_hosts,
        };
        let config = Arc::new(client::Config {
            inactivity_timeout: None,
            ..client::Config::default()
        });
        let address = format!("{}:{}", target.host, target.port);
        let mut session = client::connect(config, address.as_str(), check)
            .await
            .map_err(|e| format!("ssh {address}: {e:#}"))?;
        authenticate(&mut session, target, key).await?;
        let session = Arc::new(session);
        let channel = session
            .channel_open_session()
            .await
            .map_err(|e| format!("ssh {address}: cannot open a channel: {e}"))?;
        channel
            .request_subsystem(true, "sftp")
            .await
            .map_err(|e| format!("ssh {address}: the server offers no SFTP: {e}"))?;
        let sftp = SftpSession::new(channel.into_stream())
            .await
            .map_err(|e| format!("ssh {address}: SFTP failed to start: {e}"))?;
        let root = sftp.canonicalize(target.path.as_str()).await.map_err(|e| {
            format!(
                "ssh {address}: the working directory {} is not usable: {e}",
                target.path
            )
        })?;
        if !sftp.metadata(root.as_str()).await.is_ok_and(|m| m.is_dir()) {
            return Err(format!("ssh {address}: {root} is not a directory"));
        }
        let mut env = Self {
            session,
            fs: SftpRoot {
                sftp: Arc::new(sftp),
                root,
            },
            env_policy,
            platform: "linux".to_string(),
            os_version: String::new(),
        };
        let uname = env.run_quietly("uname -sr").await.unwrap_or_default();
        env.platform = match uname.split_whitespace().next() {
            Some("Darwin") => "darwin".to_string(),
            Some(name) => name.to_ascii_lowercase(),
            None => "linux".to_string(),
        };
        env.os_version = uname.trim().to_string();
        Ok(env)
    }

    /// Output of a short command run for the host itself (no policy, no timeout handling).
    async fn run_quietly(&self, command: &str) -> Result<String, String> {
        let mut channel = self
            .session
            .channel_open_session()
            .await
            .map_err(|e| e.to_string())?;
        channel.exec(true, command).await.map_err(|e| e.to_string())?;
        let mut out = Vec::new();
        while let Some(message) = channel.wait().await {
            if let ChannelMsg::Data { data } = message {
                out.extend_from_slice(&data);
            }
        }
        Ok(String::from_utf8_lossy(&out).into_owned())
    }

    /// The script that runs a command like the local environment does: environment policy,
    /// a new session and process group whose id is reported first on stderr, stdin closed.
    fn script(&self, request: &SpawnRequest, cwd: &str) -> String {
        let mut script = String::new();
        script.push_str(&match self.env_policy {
            EnvPolicy::InheritAll => {
                "for v in $(compgen -e); do case \"${v^^}\" in *KEY|*KEYS|*SECRET*|*TOKEN|*TOKENS|*PASSWORD*|*PASSWD|*PASS|*PASSPHRASE|*CREDENTIAL*|*COOKIE|*_PAT|PAT) unset \"$v\";; esac; done; ".to_string()
            }
            EnvPolicy::CoreOnly => "for v in $(compgen -e); do case \"$v\" in PATH|HOME|USER|LOGNAME|SHELL|LANG|LANGUAGE|TERM|TMPDIR|TZ|LC_*|CARGO_HOME|RUSTUP_HOME|GOPATH|GOROOT|NVM_DIR|PYENV_ROOT|VIRTUAL_ENV|JAVA_HOME) ;; *) unset \"$v\";; esac; done; ".to_string(),
            EnvPolicy::None => "for v in $(compgen -e); do unset \"$v\"; done; ".to_string(),
        });
        for (name, value) in &request.env {
            if name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') && !name.is_empty() {
                script.push_str(&format!("export {name}={}; ", quote(value)));
            }
        }
        script.push_str(&format!(
            "cd {} || exit 126; exec setsid -w /bin/bash -c 'printf \"{PGID_MARK}%s\\n\" \"$$\" >&2; exec /bin/bash -c \"$1\" </dev/null' agent {}",
            quote(cwd),
            quote(&request.command)
        ));
        format!("/bin/bash -c {}", quote(&script))
    }
}

/// Prefix of the stderr line that carries the remote process group id.
const PGID_MARK: &str = "\u{1e}agent-pgid:";

/// A string as one single-quoted shell word.
fn quote(text: &str) -> String {
    format!("'{}'", text.replace('\'', "'\\''"))
}

async fn authenticate(
    session: &mut Handle<HostKeyCheck>,
    target: &SshTarget,
    key: Option<&Path>,
) -> Result<(), String> {
    let candidates: Vec<PathBuf> = match key {
        Some(key) => vec![key.to_path_buf()],
        None => ["id_ed25519", "id_ecdsa", "id_rsa"]
            .iter()
            .map(|name| home().join(".ssh").join(name))
            .filter(|path| path.is_file())
            .collect(),
    };
    if candidates.is_empty() {
        return Err(format!(
            "ssh {}: no private key: pass --ssh-key or create ~/.ssh/id_ed25519",
            target.host
        ));
    }
    let rsa_hash = session.best_supported_rsa_hash().await.ok().flatten().flatten();
    let mut tried = Vec::new();
    for path in candidates {
        let key = load_secret_key(&path, None)
            .map_err(|e| format!("cannot load the key {}: {e}", path.display()))?;
        let outcome = session
            .authenticate_publickey(&target.user, PrivateKeyWithHashAlg::new(Arc::new(key), rsa_hash))
            .await
            .map_err(|e| format!("ssh {}: authentication failed: {e}", target.host))?;
        if outcome.success() {
            return Ok(());
        }
        tried.push(path.display().to_string());
    }
    Err(format!(
        "ssh {}@{}: the server refused the key(s) {}",
        target.user,
        target.host,
        tried.join(", ")
    ))
}

#[async_trait]
impl Environment for SshEnvironment {
    async fn read_file(&self, path: &str, range: Option<(u64, u64)>) -> Result<Vec<u8>, FsError> {
        files::read_file(&self.fs, path, range).await
    }

    async fn write_file(&self, path: &str, contents: &[u8]) -> Result<(), FsError> {
        files::write_file(&self.fs, path, contents).await
    }

    async fn delete_file(&self, path: &str) -> Result<(), FsError> {
        files::delete_file(&self.fs, path).await
    }

    async fn rename_file(&self, from: &str, to: &str) -> Result<(), FsError> {
        files::rename_file(&self.fs, from, to).await
    }

    async fn create_directory(&self, path: &str) -> Result<(), FsError> {
        let remote = self.fs.remote(path)?;
        files::create_dirs(&self.fs, &remote, path).await
    }

    async fn file_exists(&self, path: &str) -> bool {
        match self.fs.remote(path) {
            Ok(remote) => self.fs.sftp.try_exists(remote).await.unwrap_or(false),
            Err(_) => false,
        }
    }

    async fn stat(&self, path: &str) -> Result<FileStat, FsError> {
        files::stat(&self.fs, path).await
    }

    async fn list_directory(&self, path: &str, depth: u32) -> Result<Vec<DirEntry>, FsError> {
        files::list_directory(&self.fs, path, depth).await
    }

    async fn grep(&self, options: &GrepOptions) -> Result<Vec<GrepMatch>, FsError> {
        files::grep(&self.fs, options).await
    }

    async fn glob(&self, pattern: &str, path: Option<&str>) -> Result<Vec<String>, FsError> {
        files::glob(&self.fs, pattern, path).await
    }

    fn working_directory(&self) -> String {
        self.fs.root.clone()
    }

    fn platform(&self) -> String {
        self.platform.clone()
    }

    fn os_version(&self) -> String {
        self.os_version.clone()
    }

    async fn spawn(&self, request: SpawnRequest) -> Result<ProcessHandle, SpawnError> {
        let cwd = self
            .fs
            .remote(request.working_dir.as_deref().unwrap_or("."))
            .map_err(|e| SpawnError::InvalidWorkingDir(e.to_string()))?;
        if !self
            .fs
            .sftp
            .metadata(cwd.as_str())
            .await
            .is_ok_and(|m| m.is_dir())
        {
            return Err(SpawnError::InvalidWorkingDir(format!("{cwd} is not a directory")));
        }
        let channel = self
            .session
            .channel_open_session()
            .await
            .map_err(|e| SpawnError::Failed(format!("cannot open an SSH channel: {e}")))?;
        channel
            .exec(true, self.script(&request, &cwd))
            .await
            .map_err(|e| SpawnError::Failed(format!("the SSH server refused to run the command: {e}")))?;
        let _ = channel.eof().await;
        Ok(supervise(
            channel,
            self.session.clone(),
            Duration::from_millis(request.timeout_ms.max(1)),
        ))
    }

    async fn real_path(&self, path: &str) -> Result<String, FsError> {
        files::real_path(&self.fs, path).await
    }
}

/// Streams a remote command's output, enforces its timeout and reports its result.
fn supervise(
    mut channel: russh::Channel<client::Msg>,
    session: Arc<Handle<HostKeyCheck>>,
    timeout: Duration,
) -> ProcessHandle {
    let (chunk_tx, chunk_rx) = mpsc::unbounded_channel();
    let (result_tx, result_rx) = watch::channel(None);
    let kill = Arc::new(Notify::new());
    let kill_signal = kill.clone();
    tokio::spawn(async move {
        let started = Instant::now();
        let (mut stdout, mut stderr) = (CappedOutput::default(), CappedOutput::default());
        let mut pgid: Option<u32> = None;
        // stderr until the wrapper's group-id line is complete; `None` afterwards.
        let mut header: Option<Vec<u8>> = Some(Vec::new());
        let mut exit_code = -1;
        let mut timed_out = false;
        // The timer first runs to the timeout, then (once TERM was sent) to the SIGKILL.
        let timer = tokio::time::sleep(timeout);
        tokio::pin!(timer);
        let mut phase = Phase::Running;
        let result =
            |stdout: CappedOutput, stderr: CappedOutput, exit_code: i32, timed_out: bool| ExecResult {
                stdout: String::from_utf8_lossy(&stdout.finish()).into_owned(),
                stderr: String::from_utf8_lossy(&stderr.finish()).into_owned(),
                exit_code: if timed_out { -1 } else { exit_code },
                timed_out,
                duration_ms: started.elapsed().as_millis() as u64,
            };
        loop {
            let message = tokio::select! {
                message = channel.wait() => message,
                _ = &mut timer => {
                    phase = match phase {
                        Phase::Running => {
                            timed_out = true;
                            terminate(&session, pgid, "TERM").await;
                            timer.as_mut().reset(tokio::time::Instant::now() + KILL_GRACE);
                            Phase::Terminating
                        }
                        Phase::Terminating => {
                            terminate(&session, pgid, "KILL").await;
                            timer.as_mut().reset(tokio::time::Instant::now() + UNSTARTED_GRACE);
                            Phase::Killed
                        }
                        // The wrapper never reported its group (a server too slow or broken to
                        // start it): the call is answered now rather than hung, and the channel
                        // is watched a while longer so a late start is still killed.
                        Phase::Killed => {
                            let kept = (std::mem::take(&mut stdout), std::mem::take(&mut stderr));
                            let _ = result_tx.send(Some(result(kept.0, kept.1, exit_code, timed_out)));
                            timer.as_mut().reset(tokio::time::Instant::now() + LATE_START_WATCH);
                            Phase::Abandoned
                        }
                        Phase::Abandoned => {
                            let _ = channel.close().await;
                            break;
                        }
                    };
                    continue;
                }
                _ = kill_signal.notified(), if phase == Phase::Running => {
                    terminate(&session, pgid, "TERM").await;
                    timer.as_mut().reset(tokio::time::Instant::now() + KILL_GRACE);
                    phase = Phase::Terminating;
                    continue;
                }
            };
            let Some(message) = message else { break };
            match message {
                ChannelMsg::Data { data } => forward(&chunk_tx, &mut stdout, OutputStream::Stdout, &data),
                ChannelMsg::ExtendedData { data, ext: 1 } => match header.as_mut() {
                    None => forward(&chunk_tx, &mut stderr, OutputStream::Stderr, &data),
                    Some(buffer) => {
                        buffer.extend_from_slice(&data);
                        if let Some(end) = buffer.iter().position(|b| *b == b'\n') {
                            let buffer = header.take().unwrap_or_default();
                            let (line, rest) = buffer.split_at(end + 1);
                            match group_id(line) {
                                Some(id) => {
                                    pgid = Some(id);
                                    // A timeout or kill that came before the group was known
                                    // is delivered now.
                                    match phase {
                                        Phase::Terminating => terminate(&session, pgid, "TERM").await,
                                        Phase::Killed | Phase::Abandoned => {
                                            terminate(&session, pgid, "KILL").await
                                        }
                                        Phase::Running => {}
                                    }
                                }
                                None => forward(&chunk_tx, &mut stderr, OutputStream::Stderr, line),
                            }
                            forward(&chunk_tx, &mut stderr, OutputStream::Stderr, rest);
                        }
                    }
                },
                ChannelMsg::ExitStatus { exit_status } => exit_code = exit_status as i32,
                _ => {}
            }
        }
        if let Some(unfinished) = header {
            forward(&chunk_tx, &mut stderr, OutputStream::Stderr, &unfinished);
        }
        drop(chunk_tx);
        if phase != Phase::Abandoned {
            let _ = result_tx.send(Some(result(stdout, stderr, exit_code, timed_out)));
        }
    });
    ProcessHandle::from_parts(0, chunk_rx, result_rx, kill)
}

/// Where a remote command is in being stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    Running,
    /// TERM sent; KILL follows when the timer fires again.
    Terminating,
    /// KILL sent; if the group is still unknown when the timer fires again, the call is
    /// answered.
    Killed,
    /// The call was answered without the group known; a late group id is killed at once.
    Abandoned,
}

/// The process group id from the wrapper's first stderr line.
fn group_id(line: &[u8]) -> Option<u32> {
    String::from_utf8_lossy(line)
        .strip_prefix(PGID_MARK)?
        .trim()
        .parse()
        .ok()
}

fn forward(
    chunks: &mpsc::UnboundedSender<OutputChunk>,
    kept: &mut CappedOutput,
    stream: OutputStream,
    data: &[u8],
) {
    let shown = kept.push(data);
    if !shown.is_empty() {
        let _ = chunks.send(OutputChunk { stream, data: shown });
    }
}

/// Signals the remote process group over a second channel.
async fn terminate(session: &Handle<HostKeyCheck>, pgid: Option<u32>, signal: &str) {
    let Some(pgid) = pgid.filter(|id| *id > 1) else {
        return;
    };
    if let Ok(channel) = session.channel_open_session().await {
        let _ = channel
            .exec(false, format!("kill -{signal} -- -{pgid} 2>/dev/null"))
            .await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets_parse_with_and_without_a_port() {
        assert_eq!(
            SshTarget::parse("ssh://dev@example.org:2222/srv/app").unwrap(),
            SshTarget {
                user: "dev".into(),
                host: "example.org".into(),
                port: 2222,
                path: "/srv/app".into()
            }
        );
        assert_eq!(SshTarget::parse("ssh://me@host/w").unwrap().port, 22);
        for bad in [
            "ssh://host/w",
            "ssh://me@host",
            "http://me@host/w",
            "ssh://me@host:x/w",
        ] {
            assert!(
                SshTarget::parse(bad).unwrap_err().contains("expected ssh://"),
                "{bad}"
            );
        }
    }

    #[test]
    fn quoting_survives_single_quotes() {
        assert_eq!(quote("it's"), "'it'\\''s'");
    }
}
