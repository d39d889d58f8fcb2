//! `shell`: runs a command through the environment, streaming its output.

use super::{ToolContext, optional_u64, required_str};
use crate::llm::ToolDefinition;
use crate::ports::SpawnRequest;
use serde_json::{Value, json};

pub fn definition() -> ToolDefinition {
    ToolDefinition {
        name: "shell".to_string(),
        description: "Execute a shell command (bash) in the working directory. Returns stdout, stderr, \
                      the exit code and the duration. Commands are killed after the timeout."
            .to_string(),
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

pub fn run(args: &Value, ctx: &mut ToolContext<'_>) -> Result<String, String> {
    let command = required_str(args, "command")?;
    let timeout_ms = optional_u64(args, "timeout_ms")?
        .unwrap_or(ctx.default_timeout_ms)
        .min(ctx.max_timeout_ms);
    let mut process = ctx
        .env
        .spawn(SpawnRequest {
            command: command.to_string(),
            working_dir: None,
            timeout_ms,
            env: Vec::new(),
        })
        .map_err(|e| e.to_string())?;
    while let Some(chunk) = process.read_output() {
        (ctx.on_output)(chunk.stream, &String::from_utf8_lossy(&chunk.data));
    }
    let result = process.wait();
    let mut out = String::new();
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
            "[ERROR: Command timed out after {timeout_ms}ms. Partial output is shown above.\n\
             You can retry with a longer timeout by setting the timeout_ms parameter.]\n"
        ));
    } else {
        out.push_str(&format!(
            "Exit code: {} (duration {} ms)\n",
            result.exit_code, result.duration_ms
        ));
    }
    Ok(out)
}
