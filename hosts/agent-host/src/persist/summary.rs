//! What a session's events tell about it without its history: the input a crash cut short,
//! and a summary for `agent-host resume`.

use crate::session_host::control::AgentEvent;
use agent_protocol::{EventData, StopReason};

/// The input the session was working on when its log ends, if it never finished (the
/// process died, the instance trapped, or the user aborted it: Ctrl-C in `run`; a chat's
/// Ctrl-C cancels the input on purpose, and that input is finished).
pub fn interrupted_input(events: &[AgentEvent]) -> Option<String> {
    let mut current = None;
    for event in events.iter().filter(|e| e.agent_id.is_none()) {
        match &event.data {
            EventData::UserInput { content } => current = Some(content.clone()),
            EventData::ProcessingEnd {
                stop_reason: StopReason::Aborted,
                ..
            } => {}
            EventData::ProcessingEnd { .. } | EventData::Error { .. } => current = None,
            _ => {}
        }
    }
    current
}

/// A session's history in a few numbers and lines, from its events.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct HistorySummary {
    pub inputs: Vec<String>,
    pub tool_calls: usize,
    pub turns: usize,
    pub last_answer: Option<String>,
}

pub fn summarize(events: &[AgentEvent]) -> HistorySummary {
    let mut summary = HistorySummary::default();
    for event in events.iter().filter(|e| e.agent_id.is_none()) {
        match &event.data {
            EventData::UserInput { content } => summary.inputs.push(content.clone()),
            EventData::AssistantTextEnd { text, .. } => {
                summary.turns += 1;
                if !text.trim().is_empty() {
                    summary.last_answer = Some(text.clone());
                }
            }
            EventData::ToolCallEnd { .. } => summary.tool_calls += 1,
            _ => {}
        }
    }
    summary
}

/// What to submit to continue an input that a crash or a trap cut short: the input is in
/// the history already, with whatever was done for it.
pub fn continuation_prompt(input: &str) -> String {
    format!(
        "The previous run stopped before finishing the request below; the conversation above holds \
         everything that was done for it. Continue from there.\n\n{input}"
    )
}
