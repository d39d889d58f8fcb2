//! One tool round: every call of a response is looked up, validated, approved and run, and
//! each failure becomes an `is_error` result the model can recover from (section 2.5).

use super::{Session, call_repair};
use crate::events::{EventData, ImageInfo, ToolOutcome};
use crate::history::{HistoryEntry, ToolResult};
use crate::llm::ToolCall;
use crate::ports::{Approval, ApprovalRequest, OutputStream};
use crate::tools::{self, Started, ToolContext, ToolTraits};
use crate::truncation;

impl Session {
    /// Runs a response's tool calls and returns their results in the calls' order.
    ///
    /// When the profile allows parallel calls, every call is started first (builtin tools
    /// run to completion in order, commands are spawned) and only then are the commands
    /// waited for, so several processes really run at once from this single-threaded loop.
    pub(super) fn execute_round(&self, calls: &[ToolCall]) -> Vec<ToolResult> {
        if self.profile.supports_parallel_tool_calls && calls.len() > 1 {
            let started: Vec<Started> = calls.iter().map(|call| self.start_call(call)).collect();
            calls
                .iter()
                .zip(started)
                .map(|(call, started)| self.finish_call(call, started))
                .collect()
        } else {
            calls
                .iter()
                .map(|call| {
                    let started = self.start_call(call);
                    self.finish_call(call, started)
                })
                .collect()
        }
    }

    /// TOOL_CALL_START, then lookup, validation, approval and the start of execution.
    fn start_call(&self, call: &ToolCall) -> Started {
        let tool = self.profile.registry.get(&call.name);
        let traits = tool.map_or(ToolTraits::HOST, |t| t.traits);
        self.emit(EventData::ToolCallStart {
            call_id: call.id.clone(),
            tool_name: call.name.clone(),
            arguments: call.arguments.clone(),
            category: traits.category,
            changes: traits.changed_paths(&call.arguments),
        });
        if self.interruption().is_some() {
            return Started::Refused(format!(
                "Tool {} was not run: the user interrupted the session.",
                call.name
            ));
        }
        let Some(tool) = tool else {
            let available = self.profile.registry.names();
            let meant = call_repair::meant_tool(&call.name, &available)
                .map(|tool| format!(" Did you mean {tool}? Call it by that name."))
                .unwrap_or_default();
            return Started::Done(Err(format!(
                "Unknown tool: {}.{meant} Available tools: {}",
                call.name,
                available.join(", ")
            )));
        };
        if !call.arguments.is_object() {
            return Started::Done(Err(format!(
                "Invalid arguments for tool {}: expected a JSON object, got {}",
                call.name, call.arguments
            )));
        }
        if let Err(problem) = self.profile.validator.validate(&call.name, &call.arguments) {
            return Started::Done(Err(format!(
                "Invalid arguments for tool {}: {problem}",
                call.name
            )));
        }
        if let Approval::Deny(reason) = self.ports.host.approve(&ApprovalRequest {
            session_id: self.id.clone(),
            call_id: call.id.clone(),
            tool_name: call.name.clone(),
            arguments_json: call.arguments.to_string(),
            summary: traits.approval_summary(&call.name, &call.arguments),
            category: traits.category,
        }) {
            return Started::Refused(format!("The user denied this {} call: {reason}", call.name));
        }
        let ctx = ToolContext {
            env: self.ports.env.as_ref(),
            host_tools: self.ports.host_tools.as_ref(),
            session_id: &self.id,
            default_timeout_ms: self.profile.default_command_timeout_ms,
            max_timeout_ms: self.config.limits.max_command_timeout_ms,
            images_supported: self.profile.supports_images,
            host: self.ports.host.as_ref(),
            depth: self.config.depth,
            max_subagent_depth: self.config.limits.max_subagent_depth,
            stamps: &self.stamps,
        };
        match tools::start(tool, &call.arguments, &ctx) {
            Started::Done(Err(error)) => Started::Done(Err(format!("Tool error ({}): {error}", call.name))),
            other => other,
        }
    }

    /// Waits for a started call (streaming its output), then TOOL_CALL_END with the full
    /// output and a truncated result for the history.
    fn finish_call(&self, call: &ToolCall, started: Started) -> ToolResult {
        let mut on_output = |stream: OutputStream, delta: &str| {
            self.emit(EventData::ToolCallOutputDelta {
                call_id: call.id.clone(),
                stream,
                delta: delta.to_string(),
            });
        };
        let traits = self
            .profile
            .registry
            .get(&call.name)
            .map_or(ToolTraits::HOST, |t| t.traits);
        let limits = truncation::limits_for(&self.config, &call.name, &traits);
        // A refusal is the user's decision, not a mistake to fix: no reminder to try again.
        let remind = self.reminders_on() && !matches!(started, Started::Refused(_));
        let (result, outcome) = match started.finish(&mut on_output) {
            Ok(output) => {
                let content = self.shown_to_model(call, &output.text, &limits);
                // Hosts learn what was shown to the model; the pixels stay in the history.
                let images = output
                    .images
                    .iter()
                    .map(|image| ImageInfo {
                        media_type: image.media_type.clone(),
                        base64_chars: image.data_base64.len() as u64,
                    })
                    .collect();
                let result = ToolResult {
                    tool_call_id: call.id.clone(),
                    content,
                    is_error: false,
                    images: output.images,
                };
                (
                    result,
                    ToolOutcome::Output {
                        output: output.text,
                        images,
                    },
                )
            }
            Err(error) => {
                let mut content =
                    truncation::truncate_chars(&error, limits.max_chars, truncation::Mode::HeadTail);
                if remind {
                    content.push_str(&super::reminders::after_failure(&call.name, &error));
                }
                let result = ToolResult {
                    tool_call_id: call.id.clone(),
                    content,
                    is_error: true,
                    images: Vec::new(),
                };
                (result, ToolOutcome::Error { error })
            }
        };
        // The round's results become the next history item once every call is done; each is
        // journaled as it ends so that a host killed mid-round keeps the finished ones. The
        // journal first: a host that has seen TOOL_CALL_END (and was then killed) has the
        // result too.
        self.ports.host.record_history(
            &self.id,
            &HistoryEntry::ToolResult {
                index: self.history.len() as u32,
                result: result.clone(),
            },
        );
        self.emit(EventData::ToolCallEnd {
            call_id: call.id.clone(),
            tool_name: call.name.clone(),
            outcome,
        });
        result
    }
}
