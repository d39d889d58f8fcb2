//! Running hooks: each one a process in the session's working directory, given the event as
//! one JSON object on standard input, within its timeout. A hook that fails (another exit
//! status, a timeout, a program that cannot run) is reported in the log and does not stop
//! the session, as in Claude Code; only a refusal does.

use super::spec::{HookSpec, HooksConfig};
use agent_protocol::event::EventData;
use agent_protocol::ports::ApprovalRequest;
use serde_json::{Value, json};
use std::path::Path;
use std::process::Stdio;
use std::sync::Arc;
use tokio::io::AsyncWriteExt;

/// The most of a refusal's reason the model is shown.
const MAX_REASON: usize = 2000;

#[derive(Debug)]
pub struct Hooks {
    config: HooksConfig,
}

/// What one hook said.
#[derive(Debug, PartialEq, Eq)]
enum Outcome {
    Continue,
    Refuse(String),
    Failed(String),
}

impl Hooks {
    /// `None` when no hook is configured.
    pub fn new(config: HooksConfig) -> Option<Arc<Self>> {
        (!config.is_empty()).then(|| Arc::new(Self { config }))
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
            match run(hook, &input, cwd).await {
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
            if let Outcome::Failed(why) = run(hook, &input, cwd).await {
                report(name, hook, &why);
            }
        }
    }
}

fn report(event: &str, hook: &HookSpec, why: &str) {
    tracing::warn!("the {event} hook {:?} failed: {why}", hook.command);
}

/// Runs one hook with `input` on its standard input.
async fn run(hook: &HookSpec, input: &Value, cwd: &str) -> Outcome {
    let mut command = tokio::process::Command::new(&hook.command[0]);
    command
        .args(&hook.command[1..])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    // The user's hook runs in the user's folder; a project's in the session's (a remote
    // session's folder is not here: then where agent-host runs).
    match &hook.base_dir {
        Some(dir) => {
            command.current_dir(dir);
        }
        None if Path::new(cwd).is_dir() => {
            command.current_dir(cwd);
        }
        None => {}
    }
    // Its own process group, so that a timeout ends whatever it started too.
    command.process_group(0);
    let mut child = match command.spawn() {
        Ok(child) => child,
        Err(e) => return Outcome::Failed(format!("cannot run {:?}: {e}", hook.command[0])),
    };
    let group = child.id();
    let stdin = child.stdin.take();
    let line = format!("{input}\n");
    // The input is written while the output is read, both within the timeout: a hook that
    // reads nothing cannot stall the write past it.
    let finished = async move {
        let write = async move {
            if let Some(mut stdin) = stdin {
                // A hook that does not read its input may have closed it: its business.
                let _ = stdin.write_all(line.as_bytes()).await;
            }
        };
        let ((), output) = tokio::join!(write, child.wait_with_output());
        output
    };
    let output = match tokio::time::timeout(hook.timeout(), finished).await {
        Ok(Ok(output)) => output,
        Ok(Err(e)) => return Outcome::Failed(e.to_string()),
        Err(_) => {
            if let Some(pid) = group.and_then(|pid| i32::try_from(pid).ok()) {
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

    fn hook(script: &str) -> HookSpec {
        HookSpec {
            command: vec!["sh".into(), "-c".into(), script.into()],
            matcher: None,
            timeout_sec: Some(5.0),
            base_dir: None,
        }
    }

    #[tokio::test]
    async fn exit_status_and_json_decide() {
        let input = json!({"tool_name": "shell"});
        let dir = tempfile::tempdir().unwrap();
        let cwd = dir.path().to_str().unwrap();
        assert_eq!(
            run(&hook("cat > /dev/null"), &input, cwd).await,
            Outcome::Continue
        );
        assert_eq!(
            run(&hook("echo 'no pushes' >&2; exit 2"), &input, cwd).await,
            Outcome::Refuse("no pushes".into())
        );
        assert_eq!(
            run(
                &hook(r#"echo '{"decision":"block","reason":"read-only day"}'"#),
                &input,
                cwd
            )
            .await,
            Outcome::Refuse("read-only day".into())
        );
        let failed = run(&hook("echo broken >&2; exit 1"), &input, cwd).await;
        assert!(
            matches!(&failed, Outcome::Failed(why) if why.contains("broken")),
            "{failed:?}"
        );
        let slow = HookSpec {
            timeout_sec: Some(0.2),
            ..hook("sleep 30")
        };
        assert!(
            matches!(run(&slow, &input, cwd).await, Outcome::Failed(why) if why.contains("did not finish"))
        );
        // A hook that never reads a large input is still cut off at its timeout.
        let big = json!({"tool_input": "x".repeat(1 << 20)});
        let stuck = HookSpec {
            timeout_sec: Some(0.3),
            ..hook("sleep 30")
        };
        assert!(
            matches!(run(&stuck, &big, cwd).await, Outcome::Failed(why) if why.contains("did not finish"))
        );
        // The hook reads the event from its standard input, in the session's folder.
        let seen = run(
            &hook("read line; pwd > seen; echo \"$line\" >> seen"),
            &input,
            cwd,
        )
        .await;
        assert_eq!(seen, Outcome::Continue);
        let written = std::fs::read_to_string(dir.path().join("seen")).unwrap();
        assert!(written.contains(r#"{"tool_name":"shell"}"#), "{written}");
    }
}
