//! A command started for the local environment: without a sandbox by tokio (std's
//! `posix_spawn`), in a sandbox by `sandbox::spawn` (its confinement entered before `exec`,
//! without copying agent-host's memory). The supervisor in `process` waits for either the
//! same way.

use crate::sandbox::spawn::{Program, SandboxedChild};
use crate::sandbox::{ConnectionSink, Sandbox};
use std::ffi::{CString, OsStr, OsString};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::{Path, PathBuf};
use std::process::{ExitStatus, Stdio};

/// What to start: a program, found on `PATH` when its name has no `/`, with its arguments,
/// in `cwd`, with exactly `env` (a later entry of a name wins).
pub(crate) struct Launch<'a> {
    pub program: &'a OsStr,
    pub args: Vec<OsString>,
    pub cwd: &'a Path,
    pub env: Vec<(String, String)>,
}

pub(crate) enum Child {
    Plain(tokio::process::Child),
    Sandboxed(SandboxedChild),
}

/// Output pipes of a child, whichever kind.
pub(crate) type OutputPipe = Box<dyn tokio::io::AsyncRead + Unpin + Send>;

impl Child {
    /// Starts `launch`, in `sandbox` when there is one. The child leads a process group of
    /// its own (a session, in the sandbox); stdin is `/dev/null`, stdout and stderr piped.
    pub(crate) fn start(
        launch: Launch<'_>,
        sandbox: Option<&Sandbox>,
        connections: Option<ConnectionSink>,
    ) -> Result<Self, crate::environments::process::StartError> {
        match sandbox {
            None => {
                let env = last_of_each(launch.env);
                let mut cmd = tokio::process::Command::new(launch.program);
                cmd.args(&launch.args)
                    .current_dir(launch.cwd)
                    .stdin(Stdio::null())
                    .stdout(Stdio::piped())
                    .stderr(Stdio::piped())
                    .kill_on_drop(true)
                    .process_group(0)
                    .env_clear()
                    .envs(env);
                Ok(Self::Plain(cmd.spawn()?))
            }
            Some(sandbox) => Ok(Self::Sandboxed(start_sandboxed(
                launch,
                sandbox,
                crate::sandbox::spawn::Stdin::Null,
                connections,
            )?)),
        }
    }

    pub(crate) fn id(&self) -> u32 {
        match self {
            Self::Plain(child) => child.id().unwrap_or(0),
            Self::Sandboxed(child) => child.id(),
        }
    }

    pub(crate) async fn wait(&mut self) -> std::io::Result<ExitStatus> {
        match self {
            Self::Plain(child) => child.wait().await,
            Self::Sandboxed(child) => child.wait().await,
        }
    }

    /// Once the command has ended: its proxy's last connections reported (see
    /// [`crate::sandbox::proxy`]); what the proxy refused, `host:port: reason` once each.
    pub(crate) async fn finish_network(&mut self) -> Vec<crate::sandbox::Refusal> {
        match self {
            Self::Sandboxed(child) => match child.proxy.take() {
                Some(proxy) => proxy.finish().await,
                None => Vec::new(),
            },
            Self::Plain(_) => Vec::new(),
        }
    }

    pub(crate) fn take_stdout(&mut self) -> Option<OutputPipe> {
        match self {
            Self::Plain(child) => child.stdout.take().map(|p| Box::new(p) as OutputPipe),
            Self::Sandboxed(child) => child.stdout.take().map(|p| Box::new(p) as OutputPipe),
        }
    }

    pub(crate) fn take_stderr(&mut self) -> Option<OutputPipe> {
        match self {
            Self::Plain(child) => child.stderr.take().map(|p| Box::new(p) as OutputPipe),
            Self::Sandboxed(child) => child.stderr.take().map(|p| Box::new(p) as OutputPipe),
        }
    }
}

/// Starts `launch` in `sandbox` (see [`crate::sandbox::spawn`]): stdout and stderr piped,
/// stdin `/dev/null` or piped. For programs agent-host runs on its own account that a
/// repository controls (a trusted project's hooks and MCP servers) as for commands. With a
/// network allow-list its proxy runs as long as the child, each connection sent to
/// `connections` (only logged without).
pub(crate) fn start_sandboxed(
    mut launch: Launch<'_>,
    sandbox: &Sandbox,
    stdin: crate::sandbox::spawn::Stdin,
    connections: Option<ConnectionSink>,
) -> Result<SandboxedChild, crate::environments::process::StartError> {
    launch.env.extend(sandbox.proxy_variables());
    let env = last_of_each(launch.env);
    let confinement = sandbox.prepare()?.in_dir(launch.cwd)?;
    let path = find_program(launch.program, &env)?;
    let program = Program {
        path: c_string(path.into_os_string().into_vec())?,
        argv: std::iter::once(launch.program.to_os_string())
            .chain(launch.args)
            .map(|arg| c_string(arg.into_vec()))
            .collect::<std::io::Result<_>>()?,
        env: env
            .into_iter()
            .map(|(name, value)| c_string(format!("{name}={value}").into_bytes()))
            .collect::<std::io::Result<_>>()?,
    };
    let mut child = crate::sandbox::spawn::spawn(&program, &confinement, stdin)?;
    if let Some(listener) = child.listener.take() {
        // Dropping the child on failure ends the command.
        child.proxy = Some(sandbox.serve_proxy(listener, connections)?);
    }
    Ok(child)
}

/// The variables with a later entry of a name replacing an earlier one, in first-seen order.
fn last_of_each(vars: Vec<(String, String)>) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::with_capacity(vars.len());
    for (name, value) in vars {
        match out.iter_mut().find(|(kept, _)| *kept == name) {
            Some(entry) => entry.1 = value,
            None => out.push((name, value)),
        }
    }
    out
}

/// The program's path: as given when it names a path, else the first executable file of
/// that name in the absolute folders of the command's `PATH` (glibc's default without one).
/// Searched before the child starts, since the child may not allocate; relative entries are
/// skipped because they would be judged from agent-host's folder, not the command's.
fn find_program(program: &OsStr, env: &[(String, String)]) -> std::io::Result<PathBuf> {
    if program.as_bytes().contains(&b'/') {
        return Ok(PathBuf::from(program));
    }
    let path = env
        .iter()
        .find(|(name, _)| name == "PATH")
        .map_or("/bin:/usr/bin", |(_, value)| value.as_str());
    std::env::split_paths(path)
        .filter(|dir| dir.is_absolute())
        .map(|dir| dir.join(program))
        .find(|candidate| is_executable(candidate))
        .ok_or_else(|| {
            std::io::Error::new(
                std::io::ErrorKind::NotFound,
                format!(
                    "{} was not found on the command's PATH",
                    program.to_string_lossy()
                ),
            )
        })
}

fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).is_ok_and(|meta| meta.is_file() && meta.permissions().mode() & 0o111 != 0)
}

fn c_string(bytes: Vec<u8>) -> std::io::Result<CString> {
    CString::new(bytes).map_err(|_| {
        std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "an argument or variable of the command contains a NUL byte",
        )
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn a_later_variable_of_a_name_wins() {
        let vars = |list: &[(&str, &str)]| list.iter().map(|(n, v)| (n.to_string(), v.to_string())).collect();
        assert_eq!(
            last_of_each(vars(&[("A", "1"), ("B", "2"), ("A", "3")])),
            vars(&[("A", "3"), ("B", "2")])
        );
    }

    #[test]
    fn a_bare_name_is_found_on_the_path_and_a_path_is_kept() {
        let env = vec![("PATH".to_string(), "/nonexistent::.:/usr/bin:/bin".to_string())];
        let found = find_program(OsStr::new("env"), &env).unwrap();
        assert!(found.ends_with("env") && is_executable(&found), "{found:?}");
        assert_eq!(
            find_program(OsStr::new("./x"), &env).unwrap(),
            PathBuf::from("./x")
        );
        assert!(find_program(OsStr::new("no-such-program-here"), &env).is_err());
    }

    #[test]
    fn a_relative_path_entry_is_not_searched() {
        // Judged from agent-host's folder it would be found (the tests run in the crate's).
        assert!(Path::new("../../scripts/bench.sh").is_file());
        let env = vec![("PATH".to_string(), "../../scripts".to_string())];
        assert!(find_program(OsStr::new("bench.sh"), &env).is_err());
    }
}
