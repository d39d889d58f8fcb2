//! A shell command the sandbox refused, offered to run again without it. In `ask` mode the
//! user is asked, every time, whether the command may run with all their rights, as codex
//! asks after a sandbox denial; an approval starts it again in the same place and its
//! output follows the first run's. Elsewhere the model reads what the sandbox refused and
//! the user widens the sandbox by flag or configuration.
//!
//! The component does not say which tool call a process belongs to, but it approves a call
//! and starts its process one after the other from a single thread, so the process started
//! next after an approved command call, running that call's very command, is that call's:
//! [`CommandCalls`] keeps the pairing, and a process that does not match (a call whose
//! arguments failed after approval, a command the core starts itself) is never offered.

use crate::approval::ApprovalPolicy;
use crate::approval::policy::command_of;
use crate::environments::process::{ProcessHandle, UnsandboxedRerun};
use crate::sandbox::Refusal;
use crate::session_host::control::SessionControl;
use agent_protocol::ToolCategory;
use agent_protocol::ports::{Approval, ApprovalRequest, OutputChunk, OutputStream};
use std::collections::HashMap;
use std::sync::Arc;

/// Which command call each running process of a session belongs to.
#[derive(Debug, Default)]
pub struct CommandCalls {
    /// The command call approved last, whose process has not started yet.
    approved: Option<ApprovalRequest>,
    /// By process resource.
    by_process: HashMap<u32, ApprovalRequest>,
    /// The call of each running process, by process resource, kept until the process is
    /// dropped (for its network connections' events).
    call_ids: HashMap<u32, String>,
    /// The session the calls are of (learned from them).
    session_id: Option<String>,
}

impl CommandCalls {
    /// Notes the decision on a call: an allowed command call is the one the next process
    /// belongs to; any other decision means no process follows.
    pub fn decided(&mut self, request: &ApprovalRequest, decision: &Approval) {
        if self.session_id.is_none() {
            self.session_id = Some(request.session_id.clone());
        }
        self.approved = (request.category == ToolCategory::Command && *decision == Approval::Allow)
            .then(|| request.clone());
    }

    /// A process running `command` started (`Some`) or failed to start (`None`): it
    /// belongs to the command call approved last if that call's command is `command`.
    pub fn started(&mut self, process: Option<u32>, command: &str) {
        if let (Some(call), Some(process)) = (self.approved.take(), process)
            && command_of(&call.arguments_json) == command
        {
            self.call_ids.insert(process, call.call_id.clone());
            self.by_process.insert(process, call);
        }
    }

    /// The session and the call a process belongs to, as far as known.
    pub fn call_of(&self, process: u32) -> (Option<&str>, Option<&str>) {
        (
            self.session_id.as_deref(),
            self.call_ids.get(&process).map(String::as_str),
        )
    }

    /// The process was dropped.
    pub fn dropped(&mut self, process: u32) {
        self.by_process.remove(&process);
        self.call_ids.remove(&process);
    }

    /// The call a process belongs to, given once: asking is done at most once per process.
    pub fn take(&mut self, process: u32) -> Option<ApprovalRequest> {
        self.by_process.remove(&process)
    }
}

/// What the output stream carries between the refused run and the approved one.
const RERUN_MARKER: &str = "\n[agent-host: the sandbox may have refused this command; the user approved running \
                            it again without the sandbox]\n";

/// Once `process` (of `call`) has ended, asks whether it may run again without the sandbox
/// when the sandbox refused it, and on approval puts the new run in its place. Returns the
/// marker to stream before the new run's output, `None` when nothing was started.
pub async fn offer(
    approvals: &ApprovalPolicy,
    control: Option<&Arc<SessionControl>>,
    call: &ApprovalRequest,
    process: &mut ProcessHandle,
) -> Option<OutputChunk> {
    if !approvals.offers_unsandboxed_reruns() {
        return None;
    }
    let rerun = process.take_unsandboxed_rerun()?;
    let interrupted = || control.is_some_and(|c| c.interruption().is_some());
    if interrupted() {
        return None;
    }
    until_interrupted(control, process.wait()).await?;
    let hosts: Vec<egress_proxy::Entry> = process
        .network_refusals()
        .iter()
        .filter_map(Refusal::entry_to_allow)
        .collect();
    // Offered only for a command that failed: one that went on without the host need not
    // run again (and repeat what it did).
    if !hosts.is_empty() && process.failed() {
        return offer_hosts(approvals, control, call, process, rerun, &hosts).await;
    }
    let refusal_line = process.sandbox_refusal()?.to_string();
    let refusal = format!("{}: {refusal_line}", rerun.sandbox());
    let decision = until_interrupted(
        control,
        approvals.rerun_unsandboxed(call, rerun.command(), &refusal),
    )
    .await??;
    tracing::info!(call = %call.call_id, command = %rerun.command(), ?decision, "rerun without the sandbox");
    match decision {
        Approval::Allow if !interrupted() => match rerun.start() {
            Ok(mut again) => {
                again.carry_connections_of(process);
                again.add_note(&format!(
                    "[agent-host: this is the result of running the command again without the \
                     sandbox, with all the user's rights, which the user approved after the \
                     sandbox may have refused its first run ({refusal_line}); whatever the first \
                     run changed inside the workspace is still there]"
                ));
                *process = again;
                Some(OutputChunk {
                    stream: OutputStream::Stderr,
                    data: RERUN_MARKER.as_bytes().to_vec(),
                })
            }
            Err(error) => {
                process.add_note(&format!(
                    "[agent-host: the user approved running it again without the sandbox, but it \
                     could not start: {error}]"
                ));
                None
            }
        },
        Approval::Allow => None,
        Approval::Deny(reason) => {
            process.add_note(&format!(
                "[agent-host: the user was asked whether to run it again without the sandbox and \
                 declined: {reason}]"
            ));
            None
        }
    }
}

/// Asks, host by host, whether `hosts`, which the network allow-list refused `process`, may
/// be reached by every later command of this process; those approved join the sandbox's list
/// and, if any was, the command runs again in it, in `process`'s place. Returns the marker to
/// stream before the new run's output, `None` when nothing was started.
async fn offer_hosts(
    approvals: &ApprovalPolicy,
    control: Option<&Arc<SessionControl>>,
    call: &ApprovalRequest,
    process: &mut ProcessHandle,
    rerun: UnsandboxedRerun,
    hosts: &[egress_proxy::Entry],
) -> Option<OutputChunk> {
    let mut allowed = Vec::new();
    for host in hosts {
        let named = host.to_string();
        let decision =
            until_interrupted(control, approvals.allow_host(call, rerun.command(), &named)).await??;
        tracing::info!(call = %call.call_id, host = %named, ?decision, "a host allowed for later commands");
        match decision {
            Approval::Allow => allowed.push(host.clone()),
            Approval::Deny(reason) => process.add_note(&format!(
                "[agent-host: the user was asked whether to allow {named} and declined: {reason}]"
            )),
        }
    }
    let interrupted = control.is_some_and(|c| c.interruption().is_some());
    if allowed.is_empty() || interrupted {
        return None;
    }
    rerun.sandbox_itself().allow_hosts(&allowed);
    let named: Vec<String> = allowed.iter().map(ToString::to_string).collect();
    let named = named.join(", ");
    match rerun.start_sandboxed() {
        Ok(mut again) => {
            again.add_note(&format!(
                "[agent-host: this is the result of running the command again after the user \
                 allowed {named} for every later command; whatever the first run changed is \
                 still there]"
            ));
            again.carry_connections_of(process);
            *process = again;
            Some(OutputChunk {
                stream: OutputStream::Stderr,
                data: format!("\n[agent-host: the user allowed {named}; running the command again]\n")
                    .into_bytes(),
            })
        }
        Err(error) => {
            process.add_note(&format!(
                "[agent-host: the user allowed {named}, but the command could not start again: {error}]"
            ));
            None
        }
    }
}

/// `work`'s outcome, or `None` when the session is interrupted first.
async fn until_interrupted<T>(
    control: Option<&Arc<SessionControl>>,
    work: impl std::future::Future<Output = T>,
) -> Option<T> {
    match control {
        Some(control) => tokio::select! {
            outcome = work => Some(outcome),
            _ = control.interrupted() => None,
        },
        None => Some(work.await),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(id: &str, category: ToolCategory, command: &str) -> ApprovalRequest {
        ApprovalRequest {
            session_id: "s".into(),
            call_id: id.into(),
            tool_name: "shell".into(),
            arguments_json: serde_json::json!({ "command": command }).to_string(),
            summary: format!("run `{command}`"),
            category,
        }
    }

    #[test]
    fn a_process_belongs_to_the_approved_call_that_runs_its_command_and_only_once() {
        let mut calls = CommandCalls::default();
        calls.decided(&call("c1", ToolCategory::Command, "make"), &Approval::Allow);
        calls.started(Some(7), "make");
        assert_eq!(calls.take(7).map(|c| c.call_id).as_deref(), Some("c1"));
        assert_eq!(calls.take(7), None, "asked about once");

        // Approved, then its arguments failed: the next process runs something else and is
        // nobody's, and the approval does not wait for a later one either.
        calls.decided(&call("c2", ToolCategory::Command, "make"), &Approval::Allow);
        calls.started(Some(8), "git status");
        calls.started(Some(9), "make");
        assert_eq!((calls.take(8), calls.take(9)), (None, None));

        // A process that failed to start uses the approval up.
        calls.decided(&call("c3", ToolCategory::Command, "make"), &Approval::Allow);
        calls.started(None, "make");
        calls.started(Some(10), "make");
        assert_eq!(calls.take(10), None);

        // Denied calls and calls that are not commands pair with nothing.
        calls.decided(
            &call("c4", ToolCategory::Command, "make"),
            &Approval::Deny("no".into()),
        );
        calls.started(Some(11), "make");
        calls.decided(&call("c5", ToolCategory::Write, "make"), &Approval::Allow);
        calls.started(Some(12), "make");
        assert_eq!((calls.take(11), calls.take(12)), (None, None));
    }
}
