//! `read_many_files`: several files at once (gemini-cli's tool), each under a header.

use super::ToolContext;
use super::traits::ToolTraits;
use crate::llm::ToolDefinition;
use crate::truncation::Mode;
use agent_protocol::ToolCategory;
use serde_json::{Value, json};

/// Bytes of file content returned in all; the rest is named, not shown.
const MAX_TOTAL_BYTES: usize = 200_000;

/// Output limits and category (section 5.2 of the spec for the limits).
pub const TRAITS: ToolTraits = ToolTraits::new(ToolCategory::Read, 30_000, Mode::HeadTail);

pub fn definition() -> ToolDefinition {
    ToolDefinition {
        name: "read_many_files".to_string(),
        description: "Read several text files at once. Each file's content follows a '--- path ---' \
            header. Entries may be paths or glob patterns (e.g. src/**/*.ts). Binary files are skipped."
            .to_string(),
        parameters: json!({
            "type": "object",
            "properties": {
                "paths": {"type": "array", "items": {"type": "string"}, "minItems": 1, "description": "Files or glob patterns, relative to the working directory."}
            },
            "required": ["paths"],
            "additionalProperties": false
        }),
    }
}

pub fn run(args: &Value, ctx: &ToolContext<'_>) -> Result<String, String> {
    let entries: Vec<&str> = args
        .get("paths")
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let mut files = Vec::new();
    for entry in &entries {
        if entry.contains(['*', '?', '[']) {
            files.extend(ctx.env.glob(entry, None).map_err(|e| format!("{entry}: {e}"))?);
        } else {
            files.push(entry.to_string());
        }
    }
    files.dedup();
    if files.is_empty() {
        return Err(format!("no file matches {}", entries.join(", ")));
    }
    let mut out = String::new();
    let mut skipped = Vec::new();
    for path in &files {
        let bytes = match ctx.env.read_file(path, None) {
            Ok(bytes) => bytes,
            Err(error) => {
                out.push_str(&format!("--- {path} ---\n[could not read: {error}]\n"));
                continue;
            }
        };
        if bytes[..bytes.len().min(8_192)].contains(&0) {
            skipped.push(format!("{path} (binary)"));
            continue;
        }
        if out.len() + bytes.len() > MAX_TOTAL_BYTES {
            skipped.push(format!("{path} (over the {MAX_TOTAL_BYTES}-byte total)"));
            continue;
        }
        ctx.stamps.saw(path, &ctx.env.working_directory(), &bytes);
        let text = String::from_utf8_lossy(&bytes);
        out.push_str(&format!("--- {path} ---\n{text}"));
        if !text.ends_with('\n') {
            out.push('\n');
        }
    }
    if !skipped.is_empty() {
        out.push_str(&format!(
            "[not shown: {}; read them one by one with read_file]\n",
            skipped.join(", ")
        ));
    }
    Ok(out)
}
