//! `grep`: search file contents (ripgrep in the native host), respecting ignore files.

use super::traits::ToolTraits;
use super::{ToolContext, optional_u64, required_str};
use crate::llm::ToolDefinition;
use crate::ports::{GrepOptions, GrepOutputMode};
use crate::truncation::Mode;
use agent_protocol::ToolCategory;
use serde_json::{Value, json};

/// Matches returned when the call names no limit.
const DEFAULT_MAX_RESULTS: u32 = 200;

/// Output limits and category (section 5.2 of the spec for the limits).
pub const TRAITS: ToolTraits = ToolTraits::new(ToolCategory::Search, 20_000, Mode::Tail).max_lines(200);

pub fn definition() -> ToolDefinition {
    ToolDefinition {
        name: "grep".to_string(),
        description: "Search file contents with a regular expression. Ignored files (.gitignore) and \
            binary files are skipped. Returns matching lines as path:line:text, or the matching \
            files, or counts per file."
            .to_string(),
        parameters: json!({
            "type": "object",
            "properties": {
                "pattern": {"type": "string", "minLength": 1, "description": "Regular expression (Rust regex syntax)."},
                "path": {"type": "string", "description": "File or directory to search (default: the working directory)."},
                "glob": {"type": "string", "description": "Only files matching this glob, e.g. *.rs or src/**/*.ts."},
                "case_insensitive": {"type": "boolean", "description": "Ignore case (default false)."},
                "fixed_strings": {"type": "boolean", "description": "Treat the pattern as a literal string."},
                "max_results": {"type": "integer", "minimum": 1, "description": "Maximum number of results (default 200)."},
                "output_mode": {"type": "string", "enum": ["content", "files_with_matches", "count"], "description": "What to return (default content)."}
            },
            "required": ["pattern"],
            "additionalProperties": false
        }),
    }
}

pub fn run(args: &Value, ctx: &ToolContext<'_>) -> Result<String, String> {
    let flag = |name: &str| args.get(name).and_then(Value::as_bool).unwrap_or(false);
    let output_mode = match args.get("output_mode").and_then(Value::as_str) {
        None | Some("content") => GrepOutputMode::Content,
        Some("files_with_matches") => GrepOutputMode::FilesWithMatches,
        Some("count") => GrepOutputMode::Count,
        Some(other) => return Err(format!("argument `output_mode`: unknown mode {other:?}")),
    };
    let max_results = optional_u64(args, "max_results")?
        .map(|n| u32::try_from(n).unwrap_or(u32::MAX))
        .unwrap_or(DEFAULT_MAX_RESULTS);
    let options = GrepOptions {
        pattern: required_str(args, "pattern")?.to_string(),
        path: args.get("path").and_then(Value::as_str).map(str::to_string),
        glob_filter: args.get("glob").and_then(Value::as_str).map(str::to_string),
        case_insensitive: flag("case_insensitive"),
        fixed_strings: flag("fixed_strings"),
        max_results,
        output_mode,
    };
    let matches = ctx.env.grep(&options).map_err(|e| e.to_string())?;
    if matches.is_empty() {
        return Ok(format!("No matches for {:?}", options.pattern));
    }
    let mut out: Vec<String> = matches
        .iter()
        .map(|m| match output_mode {
            GrepOutputMode::Content => format!("{}:{}:{}", m.path, m.line_number, m.line),
            GrepOutputMode::FilesWithMatches => m.path.clone(),
            GrepOutputMode::Count => format!("{}:{}", m.path, m.line_number),
        })
        .collect();
    if matches.len() as u64 >= u64::from(max_results) {
        out.push(format!(
            "[stopped at {max_results} results; narrow the search or raise max_results]"
        ));
    }
    Ok(out.join("\n"))
}
