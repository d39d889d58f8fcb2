//! `glob`: find files by name pattern, newest first.

use super::traits::ToolTraits;
use super::{ToolContext, required_str};
use crate::llm::ToolDefinition;
use crate::truncation::Mode;
use agent_protocol::ToolCategory;
use serde_json::{Value, json};

/// Output limits and category (section 5.2 of the spec for the limits).
pub const TRAITS: ToolTraits = ToolTraits::new(ToolCategory::Search, 20_000, Mode::Tail).max_lines(500);

pub fn definition() -> ToolDefinition {
    ToolDefinition {
        name: "glob".to_string(),
        description: "Find files whose path matches a glob pattern (e.g. **/*.py, src/*.ts), newest \
            first. Ignored files (.gitignore) are skipped."
            .to_string(),
        parameters: json!({
            "type": "object",
            "properties": {
                "pattern": {"type": "string", "minLength": 1, "description": "Glob pattern."},
                "path": {"type": "string", "description": "Directory to search (default: the working directory)."}
            },
            "required": ["pattern"],
            "additionalProperties": false
        }),
    }
}

pub fn run(args: &Value, ctx: &ToolContext<'_>) -> Result<String, String> {
    let pattern = required_str(args, "pattern")?;
    let path = args.get("path").and_then(Value::as_str);
    let files = ctx.env.glob(pattern, path).map_err(|e| e.to_string())?;
    if files.is_empty() {
        return Ok(format!("No files match {pattern:?}"));
    }
    Ok(files.join("\n"))
}
