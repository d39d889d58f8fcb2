//! One tool round: every call of a response is looked up, validated, approved and run, and
//! each failure becomes an `is_error` result the model can recover from (section 2.5).

use super::Session;
use crate::events::EventKind;
use crate::history::ToolResult;
use crate::llm::ToolCall;
use crate::ports::{Approval, ApprovalRequest, OutputStream};
use crate::tools::{self, Started, ToolContext};
use crate::truncation;
use serde_json::{Value, json};

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
        self.emit(
            EventKind::ToolCallStart,
            json!({"call_id": call.id, "tool_name": call.name, "arguments": call.arguments}),
        );
        if self.interruption().is_some() {
            return Started::Done(Err(format!(
                "Tool {} was not run: the user interrupted the session.",
                call.name
            )));
        }
        let Some(tool) = self.profile.registry.get(&call.name) else {
            return Started::Done(Err(format!(
                "Unknown tool: {}. Available tools: {}",
                call.name,
                self.profile.registry.names().join(", ")
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
            summary: summarize(call),
        }) {
            return Started::Done(Err(format!("The user denied this {} call: {reason}", call.name)));
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
            self.emit(
                EventKind::ToolCallOutputDelta,
                json!({"call_id": call.id, "stream": stream, "delta": delta}),
            );
        };
        let (max_chars, max_lines) = self.config.output_limits(&call.name);
        match started.finish(&mut on_output) {
            Ok(output) => {
                let content =
                    truncation::truncate_tool_output(&output.text, &call.name, max_chars, max_lines);
                let mut data = json!({"call_id": call.id, "tool_name": call.name, "output": output.text});
                if !output.images.is_empty() {
                    // Hosts learn what was shown to the model; the pixels stay in the history.
                    data["images"] = output
                        .images
                        .iter()
                        .map(|image| json!({"media_type": image.media_type, "base64_chars": image.data_base64.len()}))
                        .collect();
                }
                self.emit(EventKind::ToolCallEnd, data);
                ToolResult {
                    tool_call_id: call.id.clone(),
                    content,
                    is_error: false,
                    images: output.images,
                }
            }
            Err(error) => {
                let content = truncation::truncate_chars(&error, max_chars, truncation::Mode::HeadTail);
                self.emit(
                    EventKind::ToolCallEnd,
                    json!({"call_id": call.id, "tool_name": call.name, "error": error}),
                );
                ToolResult {
                    tool_call_id: call.id.clone(),
                    content,
                    is_error: true,
                    images: Vec::new(),
                }
            }
        }
    }
}

/// A one-line description of a call for approval prompts.
fn summarize(call: &ToolCall) -> String {
    let field = |name: &str| {
        call.arguments
            .get(name)
            .and_then(Value::as_str)
            .unwrap_or_default()
    };
    match call.name.as_str() {
        "shell" => format!("run `{}`", field("command")),
        "write_file" => format!("write {}", field("file_path")),
        "read_file" => format!("read {}", field("file_path")),
        other => format!("call {other}"),
    }
}
