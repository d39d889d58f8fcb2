//! `read_file`: line-numbered file contents with offset and limit.

use super::{ToolContext, optional_u64, required_str};
use crate::llm::ToolDefinition;
use serde_json::{Value, json};

const DEFAULT_LIMIT: u64 = 2_000;
/// Bytes inspected for NUL to tell binary from text.
const BINARY_SNIFF: usize = 8_192;

pub fn definition() -> ToolDefinition {
    ToolDefinition {
        name: "read_file".to_string(),
        description:
            "Read a file from the filesystem. Returns line-numbered content in \"NNN | content\" format. \
                      Use offset and limit to page through large files."
                .to_string(),
        parameters: json!({
            "type": "object",
            "properties": {
                "file_path": {"type": "string", "description": "Path of the file, absolute or relative to the working directory."},
                "offset": {"type": "integer", "minimum": 1, "description": "1-based line number to start reading from."},
                "limit": {"type": "integer", "minimum": 1, "description": "Maximum number of lines to read (default 2000)."}
            },
            "required": ["file_path"],
            "additionalProperties": false
        }),
    }
}

pub fn run(args: &Value, ctx: &ToolContext<'_>) -> Result<String, String> {
    let path = required_str(args, "file_path")?;
    let offset = optional_u64(args, "offset")?.unwrap_or(1).max(1);
    let limit = optional_u64(args, "limit")?.unwrap_or(DEFAULT_LIMIT).max(1);
    let bytes = ctx.env.read_file(path, None).map_err(|e| e.to_string())?;
    if bytes[..bytes.len().min(BINARY_SNIFF)].contains(&0) {
        return Err(format!(
            "{path} is a binary file ({} bytes); read_file only shows text",
            bytes.len()
        ));
    }
    let text = String::from_utf8_lossy(&bytes);
    if text.is_empty() {
        return Ok(format!("({path} is empty)"));
    }
    let lines: Vec<&str> = text.lines().collect();
    let start = usize::try_from(offset - 1).unwrap_or(usize::MAX);
    if start >= lines.len() {
        return Err(format!(
            "offset {offset} is past the end of {path}, which has {} lines",
            lines.len()
        ));
    }
    let end = start
        .saturating_add(usize::try_from(limit).unwrap_or(usize::MAX))
        .min(lines.len());
    let width = end.to_string().len().max(3);
    let mut out = String::with_capacity(text.len().min(1 << 20) + (end - start) * (width + 3));
    for (i, line) in lines[start..end].iter().enumerate() {
        out.push_str(&format!("{:>width$} | {}\n", start + i + 1, line));
    }
    if end < lines.len() {
        out.push_str(&format!(
            "[{} more lines; continue with offset {}]\n",
            lines.len() - end,
            end + 1
        ));
    }
    Ok(out)
}
