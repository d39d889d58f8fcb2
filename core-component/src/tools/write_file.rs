//! `write_file`: writes a whole file, creating parent directories.

use super::traits::{ApprovalSummary, Changes, ToolTraits};
use super::{ToolContext, required_str};
use crate::llm::ToolDefinition;
use crate::truncation::Mode;
use agent_protocol::ToolCategory;
use serde_json::{Value, json};

/// Output limits and category (section 5.2 of the spec for the limits).
pub const TRAITS: ToolTraits = ToolTraits::new(ToolCategory::Write, 1_000, Mode::Tail)
    .changes(Changes::Argument("file_path"))
    .approval(ApprovalSummary::Verb("write", "file_path"));

pub fn definition() -> ToolDefinition {
    ToolDefinition {
        name: "write_file".to_string(),
        description: "Write content to a file. Creates the file and parent directories if needed; \
                      replaces the file if it exists. Prefer editing existing files over rewriting them."
            .to_string(),
        parameters: json!({
            "type": "object",
            "properties": {
                "file_path": {"type": "string", "description": "Path of the file, absolute or relative to the working directory."},
                "content": {"type": "string", "description": "The full content of the file."}
            },
            "required": ["file_path", "content"],
            "additionalProperties": false
        }),
    }
}

pub fn run(args: &Value, ctx: &ToolContext<'_>) -> Result<String, String> {
    let path = required_str(args, "file_path")?;
    let content = required_str(args, "content")?;
    let existed = ctx.env.file_exists(path);
    let working_dir = ctx.env.working_directory();
    if existed && ctx.stamps.enabled() {
        let current = ctx.env.read_file(path, None).ok();
        ctx.stamps.check(path, &working_dir, current.as_deref(), true)?;
    }
    ctx.env
        .write_file(path, content.as_bytes())
        .map_err(|e| e.to_string())?;
    ctx.stamps.saw(path, &working_dir, content.as_bytes());
    let verb = if existed { "Overwrote" } else { "Created" };
    Ok(format!("{verb} {path} ({} bytes)", content.len()))
}
