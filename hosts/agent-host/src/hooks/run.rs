//! Running hooks: each one a process in the session's working directory (the user's in
//! the user's folder), given the event as one JSON object on standard input, within its
//! timeout. A hook that fails (another exit status, a timeout, a program that cannot run) is
//! reported in the log and does not stop the session, as in Claude Code; only a refusal
//! does.

use super::spec::{HookSpec, HooksConfig};
use super::start::{ProjectHooks, start};
use crate::environments::env_vars::EnvPolicy;
use crate::sandbox::Sandbox;
use agent_protocol::event::EventData;
use agent_protocol::ports::ApprovalRequest;
use serde_json::{Value, json};
use std::sync::Arc;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// The most of each of a hook's output streams that is kept (its decision is a line of
/// JSON, its reason a few lines).
const MAX_OUTPUT: u64 = 1 << 20;

/// The most of a refusal's reason the model is shown.
const MAX_REASON: usize = 2000;

#[derive(Debug)]
pub struct Hooks {
    config: HooksConfig,
    /// Where a trusted project's hooks run.
    project: ProjectHooks,
}

/// What one hook said.
#[derive(Debug, PartialEq, Eq)]
enum Outcome {
    Continue,
    Refuse(String),
    Failed(String),
}

impl Hooks {
    /// `None` when no hook is configured. A trusted project's hooks do not run until
    /// [`Hooks::with_project_sandbox`] says where.
    pub fn new(config: HooksConfig) -> Option<Arc<Self>> {
        (!config.is_empty()).then(|| {
            Arc::new(Self {
                config,
                project: ProjectHooks::NoSandboxGiven,
            })
        })
    }

    /// These hooks with a trusted project's run in `sandbox`, the session's command sandbox
    /// (`None`: the session runs commands with the user's rights, `danger-full-access`,
    /// and so these), with the variables `env_policy` gives the session's commands. The
    /// user's own hooks run unsandboxed either way, with agent-host's variables.
    pub fn with_project_sandbox(&self, sandbox: Option<Arc<Sandbox>>, env_policy: EnvPolicy) -> Arc<Self> {
        Arc::new(Self {
            config: self.config.clone(),
            project: match sandbox {
                Some(sandbox) => ProjectHooks::Sandboxed(sandbox, env_policy),
                None => ProjectHooks::Unsandboxed(env_policy),
            },
        })
    }

    /// Runs the `before_tool` hooks whose matcher takes the tool, in order; the first
    /// refusal ends it: `Some(reason)` for the model.
    pub async fn before_tool(&self, request: &ApprovalRequest, cwd: &str) -> Option<String> {
        let arguments: Value = serde_json::from_str(&request.arguments_json).unwrap_or(Value::Null);
        let input = json!({
            "hook_event_name": "before_tool",
            "session_id": request.session_id,
            "cwd": cwd,
            "call_id": request.call_id,
            "tool_name": request.tool_name,
            "tool_input": arguments,
        });
        for hook in self
            .config
            .before_tool
            .iter()
            .filter(|h| h.matches(&request.tool_name))
        {
            match run(hook, &input, cwd, &self.project).await {
                Outcome::Continue => {}
                Outcome::Refuse(reason) => {
                    return Some(format!(
                        "a before_tool hook ({}) refused this call: {reason}",
                        hook.command[0]
                    ));
                }
                Outcome::Failed(why) => report("before_tool", hook, &why),
            }
        }
        None
    }

    /// Runs the hooks of an event the session emitted (a tool call's end, the session's
    /// start, the end of an input), in order, waiting for each.
    pub async fn on_event(&self, session_id: &str, event: &EventData, cwd: &str) {
        let mut input = json!({"session_id": session_id, "cwd": cwd});
        let (name, hooks, tool) = match event {
            EventData::ToolCallEnd {
                call_id,
                tool_name,
                outcome,
            } => {
                input["call_id"] = json!(call_id);
                input["tool_name"] = json!(tool_name);
                match outcome.as_result() {
                    Ok(output) => input["tool_output"] = json!(output),
                    Err(error) => input["tool_error"] = json!(error),
                }
                ("after_tool", &self.config.after_tool, Some(tool_name))
            }
            EventData::SessionStart { .. } => ("session_start", &self.config.session_start, None),
            EventData::ProcessingEnd {
                stop_reason, turns, ..
            } => {
                input["stop_reason"] = json!(stop_reason);
                input["turns"] = json!(turns);
                ("stop", &self.config.stop, None)
            }
            _ => return,
        };
        input["hook_event_name"] = json!(name);
        let matching = hooks.iter().filter(|h| tool.is_none_or(|t| h.matches(t)));
        for hook in matching {
            if let Outcome::Failed(why) = run(hook, &input, cwd, &self.project).await {
                report(name, hook, &why);
            }
        }
    }
}

/// How a hook ended, and what it wrote.
struct Output {
    status: std::process::ExitStatus,
    stdout: Vec<u8>,
    stderr: Vec<u8>,
}

fn report(event: &str, hook: &HookSpec, why: &str) {
    tracing::warn!("the {event} hook {:?} failed: {why}", hook.command);
}

/// Runs one hook with `input` on its standard input.
async fn run(hook: &HookSpec, input: &Value, cwd: &str, project: &ProjectHooks) -> Outcome {
    let (mut child, stdin) = match start(hook, cwd, project) {
        Ok(started) => started,
        Err(why) => return Outcome::Failed(why),
    };
    let group = child.id();
    let (stdout, stderr) = (child.take_stdout(), child.take_stderr());
    let line = format!("{input}\n");
    // The input is written while the output is read, both within the timeout: a hook that
    // reads nothing cannot stall the write past it.
    let finished = async {
        let write = async move {
            if let Some(mut stdin) = stdin {
                // A hook that does not read its input may have closed it: its business.
                let _ = stdin.write_all(line.as_bytes()).await;
            }
        };
        // Kept up to a cap, the rest read and dropped (so the hook never stalls on a full
        // pipe): a hook, perhaps one a command rewrote, cannot fill agent-host's memory.
        let read = |pipe: Option<crate::environments::child::OutputPipe>| async move {
            let mut text = Vec::new();
            if let Some(mut pipe) = pipe {
                (&mut pipe).take(MAX_OUTPUT).read_to_end(&mut text).await?;
                tokio::io::copy(&mut pipe, &mut tokio::io::sink()).await?;
            }
            Ok::<_, std::io::Error>(text)
        };
        let ((), stdout, stderr, status) = tokio::join!(write, read(stdout), read(stderr), child.wait());
        Ok::<_, std::io::Error>(Output {
            status: status?,
            stdout: stdout?,
            stderr: stderr?,
        })
    };
    let output = match tokio::time::timeout(hook.timeout(), finished).await {
        Ok(Ok(output)) => output,
        Ok(Err(e)) => return Outcome::Failed(e.to_string()),
        Err(_) => {
            // The hook leads its group (a sandboxed one's init, whose end ends the rest); not
            // reaped yet, so the group is still its own.
            if let Ok(pid) = i32::try_from(group)
                && pid > 0
            {
                let _ = nix::sys::signal::killpg(
                    nix::unistd::Pid::from_raw(pid),
                    nix::sys::signal::Signal::SIGKILL,
                );
            }
            return Outcome::Failed(format!(
                "it did not finish within {} s",
                hook.timeout().as_secs_f64()
            ));
        }
    };
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    match output.status.code() {
        Some(0) => decision(&stdout),
        Some(2) => Outcome::Refuse(reason(&stderr, "the hook exited with status 2")),
        _ => Outcome::Failed(format!("it exited with {}: {}", output.status, stderr.trim())),
    }
}

/// A hook that exited 0 may still refuse, in JSON on its standard output.
fn decision(stdout: &str) -> Outcome {
    let Ok(value) = serde_json::from_str::<Value>(stdout.trim()) else {
        return Outcome::Continue;
    };
    match value["decision"].as_str() {
        Some("block" | "deny" | "refuse") => Outcome::Refuse(reason(
            value["reason"].as_str().unwrap_or_default(),
            "no reason given",
        )),
        _ => Outcome::Continue,
    }
}

fn reason(text: &str, otherwise: &str) -> String {
    let text = text.trim();
    let text = if text.is_empty() { otherwise } else { text };
    text.chars().take(MAX_REASON).collect()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::sandbox::SandboxConfig;

    fn hook(script: &str) -> HookSpec {
        HookSpec {
            command: vec!["sh".into(), "-c".into(), script.into()],
            matcher: None,
            timeout_sec: Some(5.0),
            base_dir: None,
        }
    }

    fn sandbox_of(work: &std::path::Path) -> Arc<Sandbox> {
        Arc::new(
            Sandbox::new(&SandboxConfig::default(), &[work.to_path_buf()])
                .unwrap()
                .unwrap(),
        )
    }

    #[tokio::test]
    async fn exit_status_and_json_decide_with_or_without_the_sandbox() {
        let input = json!({"tool_name": "shell"});
        let dir = tempfile::tempdir().unwrap();
        let cwd = dir.path().to_str().unwrap();
        for project in [
            ProjectHooks::Unsandboxed(EnvPolicy::default()),
            ProjectHooks::Sandboxed(sandbox_of(dir.path()), EnvPolicy::default()),
        ] {
            let decide = |hook: HookSpec, input: Value| {
                let project = project.clone();
                async move { run(&hook, &input, cwd, &project).await }
            };
            assert_eq!(
                decide(hook("cat > /dev/null"), input.clone()).await,
                Outcome::Continue
            );
            assert_eq!(
                decide(hook("echo 'no pushes' >&2; exit 2"), input.clone()).await,
                Outcome::Refuse("no pushes".into())
            );
            assert_eq!(
                decide(
                    hook(r#"echo '{"decision":"block","reason":"read-only day"}'"#),
                    input.clone()
                )
                .await,
                Outcome::Refuse("read-only day".into())
            );
            let failed = decide(hook("echo broken >&2; exit 1"), input.clone()).await;
            assert!(
                matches!(&failed, Outcome::Failed(why) if why.contains("broken")),
                "{failed:?}"
            );
            let slow = HookSpec {
                timeout_sec: Some(0.2),
                ..hook("sleep 30")
            };
            let ended = decide(slow, input.clone()).await;
            assert!(
                matches!(&ended, Outcome::Failed(why) if why.contains("did not finish")),
                "{ended:?}"
            );
            // A hook that never reads a large input is still cut off at its timeout.
            let big = json!({"tool_input": "x".repeat(1 << 20)});
            let stuck = HookSpec {
                timeout_sec: Some(0.3),
                ..hook("sleep 30")
            };
            let ended = decide(stuck, big).await;
            assert!(
                matches!(&ended, Outcome::Failed(why) if why.contains("did not finish")),
                "{ended:?}"
            );
            // The hook reads the event from its standard input, in the session's folder.
            let seen = decide(
                hook("read line; pwd > seen; echo \"$line\" >> seen"),
                input.clone(),
            )
            .await;
            assert_eq!(seen, Outcome::Continue);
            let written = std::fs::read_to_string(dir.path().join("seen")).unwrap();
            assert!(written.contains(r#"{"tool_name":"shell"}"#), "{written}");
            std::fs::remove_file(dir.path().join("seen")).unwrap();
        }
    }

    #[tokio::test]
    async fn a_projects_hook_writes_only_where_commands_may_and_the_users_anywhere() {
        let (work, outside) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        let cwd = work.path().to_str().unwrap();
        let input = json!({});
        let script = format!(
            "touch inside; touch {}/written 2>&1 || exit 1",
            outside.path().display()
        );
        let sandboxed = ProjectHooks::Sandboxed(sandbox_of(work.path()), EnvPolicy::default());
        let failed = run(&hook(&script), &input, cwd, &sandboxed).await;
        assert!(
            matches!(&failed, Outcome::Failed(why) if why.contains("exited with")),
            "{failed:?}"
        );
        assert!(work.path().join("inside").exists());
        assert!(!outside.path().join("written").exists());
        // A script named by a relative path is the workspace's, run in the sandbox too.
        let script_path = work.path().join("check.sh");
        std::fs::write(&script_path, "#!/bin/sh\ntouch ran-by-path\n").unwrap();
        std::fs::set_permissions(&script_path, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
        let by_path = HookSpec {
            command: vec!["./check.sh".into()],
            ..hook("")
        };
        assert_eq!(run(&by_path, &input, cwd, &sandboxed).await, Outcome::Continue);
        assert!(work.path().join("ran-by-path").exists());
        // The user's own hook runs in the user's folder with the user's rights.
        let users = HookSpec {
            base_dir: Some(outside.path().to_path_buf()),
            ..hook(&script)
        };
        assert_eq!(run(&users, &input, cwd, &sandboxed).await, Outcome::Continue);
        assert!(outside.path().join("written").exists() && outside.path().join("inside").exists());
        // A project's hook nobody gave a sandbox to does not run.
        std::fs::remove_file(work.path().join("inside")).unwrap();
        let refused = run(&hook(&script), &input, cwd, &ProjectHooks::NoSandboxGiven).await;
        assert!(
            matches!(&refused, Outcome::Failed(why) if why.contains("runs only in the command sandbox")),
            "{refused:?}"
        );
        assert!(!work.path().join("inside").exists());
    }
}
