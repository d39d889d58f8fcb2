//! Starting one hook's process. The user's hooks run with the user's rights, in the user's
//! configuration folder. A trusted project's hook is a file of the repository (or a program
//! reading one), which the model's commands can rewrite: it runs in the session's command
//! sandbox, so whatever a command wrote into it can do no more than the command could.

use super::spec::HookSpec;
use crate::environments::child::{Child, Launch, start_sandboxed};
use crate::environments::env_vars::EnvPolicy;
use crate::sandbox::Sandbox;
use crate::sandbox::spawn::Stdin;
use std::ffi::{OsStr, OsString};
use std::path::Path;
use std::process::Stdio;
use std::sync::Arc;

/// Where a trusted project's hooks (those without a `base_dir`) run.
#[derive(Debug, Clone)]
pub(super) enum ProjectHooks {
    /// Nobody said which sandbox: they do not run (an embedder that builds hooks from a
    /// configuration without the session's sandbox gets no unconfined project program).
    NoSandboxGiven,
    /// In the session's command sandbox, with the variables its commands get.
    Sandboxed(Arc<Sandbox>, EnvPolicy),
    /// With the user's rights: the session runs commands so (`danger-full-access`); with
    /// the variables its commands get.
    Unsandboxed(EnvPolicy),
}

/// The variables a trusted project's hook gets: what the session's commands get (its
/// policy; never a credential, an endpoint's key or agent-host's own queue address), since
/// a command may have written the hook.
fn project_variables(policy: EnvPolicy) -> Vec<(String, String)> {
    policy.filter(
        std::env::vars_os().filter_map(|(k, v)| Some((k.into_string().ok()?, v.into_string().ok()?))),
        &crate::secrets::allowed(),
    )
}

/// A hook's standard input, whichever way it was started.
pub(super) type InputPipe = Box<dyn tokio::io::AsyncWrite + Unpin + Send>;

/// Starts `hook` for a session in `cwd`: stdin, stdout and stderr piped, leading a process
/// group of its own. The error says why it could not start.
pub(super) fn start(
    hook: &HookSpec,
    cwd: &str,
    project: &ProjectHooks,
) -> Result<(Child, Option<InputPipe>), String> {
    let program = &hook.command[0];
    let sandbox = match (&hook.base_dir, project) {
        (Some(_), _) => None,
        (None, ProjectHooks::Unsandboxed(policy)) => {
            return start_plain(hook, cwd, Some(project_variables(*policy)))
                .map_err(|e| format!("cannot run {program:?}: {e}"));
        }
        (None, ProjectHooks::Sandboxed(sandbox, policy)) => Some((sandbox, *policy)),
        (None, ProjectHooks::NoSandboxGiven) => {
            return Err(
                "a project's hook runs only in the command sandbox, and none was set up for it: not run"
                    .to_string(),
            );
        }
    };
    match sandbox {
        None => start_plain(hook, cwd, None),
        Some((sandbox, policy)) => start_in(sandbox, hook, cwd, project_variables(policy)),
    }
    .map_err(|e| format!("cannot run {program:?}: {e}"))
}

/// With the user's rights: the user's hook in the user's folder, with agent-host's
/// variables; a project's (in `danger-full-access`) in the session's (a remote session's
/// folder is not here: then where agent-host runs), with `variables`.
fn start_plain(
    hook: &HookSpec,
    cwd: &str,
    variables: Option<Vec<(String, String)>>,
) -> Result<(Child, Option<InputPipe>), String> {
    let mut command = tokio::process::Command::new(&hook.command[0]);
    command
        .args(&hook.command[1..])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        // Its own process group, so that a timeout ends whatever it started too.
        .process_group(0);
    if let Some(variables) = variables {
        command.env_clear().envs(variables);
    }
    match &hook.base_dir {
        Some(dir) => {
            command.current_dir(dir);
        }
        None if Path::new(cwd).is_dir() => {
            command.current_dir(cwd);
        }
        None => {}
    }
    let mut child = command.spawn().map_err(|e| e.to_string())?;
    let stdin = child.stdin.take().map(|pipe| Box::new(pipe) as InputPipe);
    Ok((Child::Plain(child), stdin))
}

/// In `sandbox`, in the session's folder, with `variables` and the sandbox's own `TMPDIR`,
/// as a command gets.
fn start_in(
    sandbox: &Sandbox,
    hook: &HookSpec,
    cwd: &str,
    mut env: Vec<(String, String)>,
) -> Result<(Child, Option<InputPipe>), String> {
    let cwd = Path::new(cwd);
    if !cwd.is_dir() {
        return Err(format!(
            "the session's folder {} is not a folder on this machine, where the sandbox is",
            cwd.display()
        ));
    }
    env.push((
        "TMPDIR".to_string(),
        sandbox.temp_dir().to_string_lossy().into_owned(),
    ));
    let launch = Launch {
        program: OsStr::new(&hook.command[0]),
        args: hook.command[1..].iter().map(OsString::from).collect(),
        cwd,
        env,
    };
    let mut child = start_sandboxed(launch, sandbox, Stdin::Piped, None).map_err(|e| e.to_string())?;
    let stdin = child.stdin.take().map(|pipe| Box::new(pipe) as InputPipe);
    Ok((Child::Sandboxed(child), stdin))
}
