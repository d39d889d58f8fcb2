//! `shell`: runs a command through the environment; its output streams as it arrives.

use super::traits::{ApprovalSummary, ToolTraits};
use super::{ToolContext, optional_u64, required_str};
use crate::llm::ToolDefinition;
use crate::ports::{ExecResult, SpawnRequest};
use crate::truncation::Mode;
use agent_protocol::ToolCategory;
use serde_json::{Value, json};

/// Output limits and category (section 5.2 of the spec for the limits).
pub const TRAITS: ToolTraits = ToolTraits::new(ToolCategory::Command, 30_000, Mode::HeadTail)
    .max_lines(256)
    .approval(ApprovalSummary::Run("command"));

/// The shell tool as a profile offers it: the description names the profile's default
/// timeout, which the model needs to know to ask for more.
pub fn definition(default_timeout_ms: u64) -> ToolDefinition {
    ToolDefinition {
        name: "shell".to_string(),
        description: format!(
            "Execute a shell command (bash) in the working directory. Returns stdout, stderr, \
             the exit code and the duration. Commands are killed after {} seconds unless \
             timeout_ms says otherwise.",
            default_timeout_ms / 1000
        ),
        parameters: json!({
            "type": "object",
            "properties": {
                "command": {"type": "string", "description": "The command to run."},
                "timeout_ms": {"type": "integer", "minimum": 1, "description": "Timeout in milliseconds (overrides the default)."},
                "description": {"type": "string", "description": "A short human-readable description of what the command does."}
            },
            "required": ["command"],
            "additionalProperties": false
        }),
    }
}

pub fn prepare(args: &Value, ctx: &ToolContext<'_>) -> Result<SpawnRequest, String> {
    let command = required_str(args, "command")?;
    let timeout_ms = optional_u64(args, "timeout_ms")?
        .unwrap_or(ctx.default_timeout_ms)
        .min(ctx.max_timeout_ms);
    Ok(SpawnRequest {
        command: command.to_string(),
        working_dir: None,
        timeout_ms,
        env: Vec::new(),
    })
}

pub fn report(result: &ExecResult, request: &SpawnRequest) -> String {
    let mut out = String::with_capacity(result.stdout.len() + result.stderr.len() + 200);
    out.push_str(&result.stdout);
    if !result.stderr.is_empty() {
        if !out.is_empty() && !out.ends_with('\n') {
            out.push('\n');
        }
        out.push_str(&result.stderr);
    }
    if !out.is_empty() && !out.ends_with('\n') {
        out.push('\n');
    }
    if result.timed_out {
        out.push_str(&format!(
            "[ERROR: Command timed out after {}ms. Partial output is shown above.\n\
             You can retry with a longer timeout by setting the timeout_ms parameter.]\n",
            request.timeout_ms
        ));
    } else {
        out.push_str(&format!(
            "Exit code: {} (duration {} ms)\n",
            result.exit_code, result.duration_ms
        ));
    }
    out
}
