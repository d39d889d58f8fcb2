//! `apply_patch`: the v4a patch format codex-family models are trained on (appendix A).

use super::traits::{Changes, ToolTraits};
use super::{ToolContext, required_str};
use crate::llm::ToolDefinition;
use crate::truncation::Mode;
use agent_protocol::ToolCategory;
use serde_json::{Value, json};

/// Output limits and category (section 5.2 of the spec for the limits).
pub const TRAITS: ToolTraits =
    ToolTraits::new(ToolCategory::Write, 10_000, Mode::Tail).changes(Changes::Patch);

pub fn definition() -> ToolDefinition {
    ToolDefinition {
        name: "apply_patch".to_string(),
        description: "Apply a patch to add, delete, update or move files. The patch uses this format:\n\
            *** Begin Patch\n\
            *** Add File: path/new.txt\n+line of the new file\n\
            *** Delete File: path/old.txt\n\
            *** Update File: path/file.py\n*** Move to: path/renamed.py   (optional)\n\
            @@ a line near the change, e.g. a function signature (optional)\n \
            unchanged context line\n-removed line\n+added line\n\
            *** End Patch\n\
            Show about 3 lines of context around each change. Paths are relative to the working \
            directory. If any part of the patch fails to apply, no file is changed."
            .to_string(),
        parameters: json!({
            "type": "object",
            "properties": {
                "patch": {"type": "string", "description": "The whole patch, from '*** Begin Patch' to '*** End Patch'."}
            },
            "required": ["patch"],
            "additionalProperties": false
        }),
    }
}

pub fn run(args: &Value, ctx: &ToolContext<'_>) -> Result<String, String> {
    let patch = required_str(args, "patch")?;
    crate::patch::apply_guarded(patch, ctx.env, ctx.stamps).map_err(|e| e.to_string())
}
