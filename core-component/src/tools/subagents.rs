//! The subagent tools of spec section 7, in every profile: `spawn_agent` starts a child
//! session through the host (its own instance, running concurrently), `send_input` steers it
//! or gives it a new input, `wait` returns its result, `close_agent` stops it. The depth limit
//! is enforced here, so every host gets it.

use super::traits::ToolTraits;
use super::{ToolContext, optional_u64, required_str};
use crate::llm::ToolDefinition;
use crate::ports::SubagentRequest;
use crate::truncation::Mode;
use agent_protocol::ToolCategory;
use serde_json::{Value, json};

/// Output limits of spawn_agent and wait, which carry a subagent's report (section 5.2).
pub const REPORT_TRAITS: ToolTraits = ToolTraits::new(ToolCategory::Agent, 20_000, Mode::HeadTail);
/// Output limits of send_input and close_agent.
pub const CONTROL_TRAITS: ToolTraits = ToolTraits::new(ToolCategory::Agent, 30_000, Mode::HeadTail);

/// The tools' traits, in the order of `definitions`.
pub const TRAITS: [ToolTraits; 4] = [REPORT_TRAITS, CONTROL_TRAITS, REPORT_TRAITS, CONTROL_TRAITS];

pub fn definitions() -> Vec<ToolDefinition> {
    let agent_id = json!({"type": "string", "description": "The id spawn_agent returned."});
    vec![
        ToolDefinition {
            name: "spawn_agent".to_string(),
            description:
                "Spawn a subagent to handle a scoped task autonomously. It runs at the same time as \
                          you, with its own conversation, in the same workspace (or the subdirectory you \
                          give). Returns its id at once: do other work, then call wait for its result. \
                          Give it a complete, self-contained task: it does not see your conversation."
                    .to_string(),
            parameters: json!({
                "type": "object",
                "properties": {
                    "task": {"type": "string", "description": "What the subagent should do, with all the context it needs."},
                    "working_dir": {"type": "string", "description": "Subdirectory to scope the subagent to, relative to the working directory."},
                    "model": {"type": "string", "description": "Model to use (default: yours)."},
                    "max_turns": {"type": "integer", "minimum": 0, "description": "Turn limit (default 0: unlimited)."}
                },
                "required": ["task"],
                "additionalProperties": false
            }),
        },
        ToolDefinition {
            name: "send_input".to_string(),
            description: "Send a message to a subagent: while it works, the message steers it; once it has \
                          finished, the message starts its next input."
                .to_string(),
            parameters: json!({
                "type": "object",
                "properties": {"agent_id": agent_id, "message": {"type": "string"}},
                "required": ["agent_id", "message"],
                "additionalProperties": false
            }),
        },
        ToolDefinition {
            name: "wait".to_string(),
            description: "Wait for a subagent to finish its current input and return its result: its final \
                          message, whether it succeeded, and the turns it used."
                .to_string(),
            parameters: json!({
                "type": "object",
                "properties": {"agent_id": agent_id},
                "required": ["agent_id"],
                "additionalProperties": false
            }),
        },
        ToolDefinition {
            name: "close_agent".to_string(),
            description: "Stop a subagent (its running commands are killed) and forget it.".to_string(),
            parameters: json!({
                "type": "object",
                "properties": {"agent_id": agent_id},
                "required": ["agent_id"],
                "additionalProperties": false
            }),
        },
    ]
}

pub fn spawn_agent(args: &Value, ctx: &ToolContext<'_>) -> Result<String, String> {
    if ctx.depth + 1 > ctx.max_subagent_depth {
        return Err(if ctx.depth > 0 {
            format!(
                "subagents cannot spawn subagents of their own (this session is at depth {} and the \
                 limit is {}); do the task yourself",
                ctx.depth, ctx.max_subagent_depth
            )
        } else {
            "subagents are disabled for this session (max_subagent_depth is 0); do the task yourself"
                .to_string()
        });
    }
    let task = required_str(args, "task")?;
    if task.trim().is_empty() {
        return Err("task is empty: describe what the subagent should do".to_string());
    }
    let max_turns = optional_u64(args, "max_turns")?.unwrap_or(0);
    let request = SubagentRequest {
        parent_session_id: ctx.session_id.to_string(),
        task: task.to_string(),
        working_dir: optional_string(args, "working_dir"),
        model: optional_string(args, "model"),
        max_turns: u32::try_from(max_turns).map_err(|_| format!("max_turns {max_turns} is too large"))?,
        depth: ctx.depth + 1,
    };
    let id = ctx.host.spawn_subagent(&request)?;
    let scope = request.working_dir.as_deref().unwrap_or(".");
    Ok(format!(
        "Spawned subagent {id} (status: running, working directory: {scope}). Call wait with agent_id \"{id}\" for its result."
    ))
}

pub fn send_input(args: &Value, ctx: &ToolContext<'_>) -> Result<String, String> {
    let id = required_str(args, "agent_id")?;
    ctx.host.subagent_send(id, required_str(args, "message")?)?;
    Ok(format!("Sent to subagent {id}."))
}

pub fn wait(args: &Value, ctx: &ToolContext<'_>) -> Result<String, String> {
    let id = required_str(args, "agent_id")?;
    let result = ctx.host.subagent_wait(id)?;
    let status = if result.success { "completed" } else { "failed" };
    Ok(json!({
        "agent_id": id,
        "status": status,
        "success": result.success,
        "turns_used": result.turns_used,
        "output": result.output,
    })
    .to_string())
}

pub fn close_agent(args: &Value, ctx: &ToolContext<'_>) -> Result<String, String> {
    let id = required_str(args, "agent_id")?;
    ctx.host.subagent_close(id)?;
    Ok(format!("Closed subagent {id}."))
}

fn optional_string(args: &Value, field: &str) -> Option<String> {
    args.get(field)
        .and_then(Value::as_str)
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_string)
}
