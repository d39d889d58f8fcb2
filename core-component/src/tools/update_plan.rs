//! `update_plan` (codex's plan tool; Claude Code's and gemini-cli's todo lists do the same):
//! the model keeps a short checklist for the input, each step pending, in progress or
//! completed. Each call replaces the plan and reaches the host as a PLAN_UPDATED event, so a
//! host can show it; the model gets a one-line acknowledgement.

use super::ToolContext;
use super::traits::ToolTraits;
use crate::llm::ToolDefinition;
use crate::truncation::Mode;
use agent_protocol::ToolCategory;
use agent_protocol::event::{Event, EventData, PlanStatus, PlanStep};
use serde_json::{Value, json};

/// It changes nothing but the plan the host shows.
pub const TRAITS: ToolTraits = ToolTraits::new(ToolCategory::Read, 2_000, Mode::HeadTail);

/// More steps than this is not a plan but a transcript.
const MAX_STEPS: usize = 50;
const MAX_STEP_CHARS: usize = 500;

pub fn definition() -> ToolDefinition {
    ToolDefinition {
        name: "update_plan".to_string(),
        description: "Keep a short plan for a task of several steps: give the whole list each time, \
            each step with its status (pending, in_progress, completed), at most one in_progress. \
            Update it as you finish steps. Skip it for simple tasks."
            .to_string(),
        parameters: json!({
            "type": "object",
            "properties": {
                "explanation": {"type": "string", "description": "Why the plan changed (optional)."},
                "plan": {
                    "type": "array",
                    "description": "The steps, in order.",
                    "items": {
                        "type": "object",
                        "properties": {
                            "step": {"type": "string"},
                            "status": {"type": "string", "enum": ["pending", "in_progress", "completed"]}
                        },
                        "required": ["step", "status"],
                        "additionalProperties": false
                    }
                }
            },
            "required": ["plan"],
            "additionalProperties": false
        }),
    }
}

pub fn run(args: &Value, ctx: &ToolContext<'_>) -> Result<String, String> {
    let plan = parse(args)?;
    let explanation = args
        .get("explanation")
        .and_then(Value::as_str)
        .map(str::trim)
        .filter(|e| !e.is_empty())
        .map(str::to_string);
    let done = plan.iter().filter(|s| s.status == PlanStatus::Completed).count();
    let current = plan.iter().find(|s| s.status == PlanStatus::InProgress);
    let summary = match current {
        Some(step) => format!(
            "Plan updated: {done} of {} steps done; now: {}",
            plan.len(),
            step.step
        ),
        None => format!("Plan updated: {done} of {} steps done.", plan.len()),
    };
    ctx.host.emit(Event::new(
        ctx.session_id.to_string(),
        ctx.host.now_ms(),
        EventData::PlanUpdated { explanation, plan },
    ));
    Ok(summary)
}

/// The steps; every mistake named, so the model can send the plan again.
fn parse(args: &Value) -> Result<Vec<PlanStep>, String> {
    let steps = args
        .get("plan")
        .and_then(Value::as_array)
        .ok_or("plan (an array of {step, status}) is required")?;
    if steps.len() > MAX_STEPS {
        return Err(format!(
            "a plan has at most {MAX_STEPS} steps, not {}",
            steps.len()
        ));
    }
    let mut plan = Vec::with_capacity(steps.len());
    for (at, item) in steps.iter().enumerate() {
        let step = item
            .get("step")
            .and_then(Value::as_str)
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .ok_or_else(|| format!("plan[{at}].step must be a non-empty string"))?;
        let status = match item.get("status").and_then(Value::as_str) {
            Some("pending") => PlanStatus::Pending,
            Some("in_progress") => PlanStatus::InProgress,
            Some("completed") => PlanStatus::Completed,
            other => {
                return Err(format!(
                    "plan[{at}].status must be pending, in_progress or completed, not {}",
                    other.map_or_else(|| "missing".to_string(), |s| format!("{s:?}"))
                ));
            }
        };
        plan.push(PlanStep {
            step: step.chars().take(MAX_STEP_CHARS).collect(),
            status,
        });
    }
    if plan.iter().filter(|s| s.status == PlanStatus::InProgress).count() > 1 {
        return Err("at most one step is in_progress at a time".to_string());
    }
    Ok(plan)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn a_plan_is_read_and_its_mistakes_named() {
        let plan = parse(&json!({"plan": [
            {"step": "Read the parser", "status": "completed"},
            {"step": " Fix it ", "status": "in_progress"},
            {"step": "Test", "status": "pending"}
        ]}))
        .unwrap();
        assert_eq!(plan[1].step, "Fix it");
        assert_eq!(plan[1].status, PlanStatus::InProgress);
        for (args, expected) in [
            (json!({}), "plan (an array"),
            (
                json!({"plan": [{"step": "", "status": "pending"}]}),
                "plan[0].step",
            ),
            (json!({"plan": [{"step": "a", "status": "done"}]}), "not \"done\""),
            (
                json!({"plan": [{"step": "a", "status": "in_progress"}, {"step": "b", "status": "in_progress"}]}),
                "at most one step",
            ),
        ] {
            let error = parse(&args).unwrap_err();
            assert!(error.contains(expected), "{args}: {error}");
        }
    }
}
