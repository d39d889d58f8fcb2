//! `list_dir`: a directory's entries down to a depth, as an indented tree.

use super::traits::ToolTraits;
use super::{ToolContext, optional_u64};
use crate::llm::ToolDefinition;
use crate::ports::EntryKind;
use crate::truncation::Mode;
use agent_protocol::ToolCategory;
use serde_json::{Value, json};

/// Entries listed at most, so a huge tree cannot flood the context.
const MAX_ENTRIES: usize = 1_000;

/// Output limits and category (section 5.2 of the spec for the limits).
pub const TRAITS: ToolTraits = ToolTraits::new(ToolCategory::Search, 30_000, Mode::HeadTail);

pub fn definition() -> ToolDefinition {
    ToolDefinition {
        name: "list_dir".to_string(),
        description: "List the files and directories in a directory, down to a depth (default 2). \
            Ignored entries (.gitignore, .git) are left out."
            .to_string(),
        parameters: json!({
            "type": "object",
            "properties": {
                "path": {"type": "string", "description": "Directory to list (default: the working directory)."},
                "depth": {"type": "integer", "minimum": 1, "maximum": 10, "description": "Levels to descend (default 2)."}
            },
            "additionalProperties": false
        }),
    }
}

pub fn run(args: &Value, ctx: &ToolContext<'_>) -> Result<String, String> {
    let path = args.get("path").and_then(Value::as_str).unwrap_or(".");
    let depth = optional_u64(args, "depth")?.unwrap_or(2).clamp(1, 10) as u32;
    let entries = ctx.env.list_directory(path, depth).map_err(|e| e.to_string())?;
    if entries.is_empty() {
        return Ok(format!("{path} is empty"));
    }
    let mut out = Vec::new();
    for entry in entries.iter().take(MAX_ENTRIES) {
        let name = entry.path.rsplit('/').next().unwrap_or(&entry.path);
        let indent = "  ".repeat(entry.depth.saturating_sub(1) as usize);
        out.push(match entry.kind {
            EntryKind::Directory => format!("{indent}{name}/"),
            _ => format!("{indent}{name} ({} bytes)", entry.size),
        });
    }
    if entries.len() > MAX_ENTRIES {
        out.push(format!(
            "[{} more entries; list a subdirectory]",
            entries.len() - MAX_ENTRIES
        ));
    }
    Ok(out.join("\n"))
}
