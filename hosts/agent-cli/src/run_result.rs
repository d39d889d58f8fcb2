//! How a headless run ends for the script that started it: the final message written to a
//! file (`--output-last-message`), and with `--json` a last `RESULT` line holding the state,
//! the stop reason, the final text, usage, cost, duration and session id (as codex's `exec`
//! and Claude Code's `-p` end their streams).

use agent_host::embed::{Outcome, StopReason};
use agent_host::protocol::UsageTotals;
use serde_json::{Value, json};
use std::path::Path;
use std::time::Duration;

/// What the run came to.
pub struct RunResult<'a> {
    pub session_id: &'a str,
    pub outcome: Result<&'a Outcome, String>,
    /// The session's usage as its last input ended.
    pub usage: Option<UsageTotals>,
    pub duration: Duration,
    /// The final answer checked against `--output-schema`: its value, or what is wrong.
    pub checked: Option<&'a Result<Value, String>>,
}

impl RunResult<'_> {
    /// `completed`, `awaiting_input`, `limit`, `interrupted`, `context_length` or `failed`.
    fn state(&self) -> &'static str {
        if let Some(Err(_)) = self.checked {
            return "schema_mismatch";
        }
        match &self.outcome {
            Err(_) => "failed",
            Ok(outcome) => match outcome.stop_reason {
                StopReason::Completed => "completed",
                StopReason::AwaitingInput => "awaiting_input",
                StopReason::TurnLimit | StopReason::RoundLimit => "limit",
                StopReason::Cancelled | StopReason::Aborted => "interrupted",
                StopReason::ContextLength => "context_length",
            },
        }
    }

    /// The `RESULT` line of `--json`.
    pub fn json_line(&self) -> Value {
        let (stop_reason, final_text, turns, error) = match &self.outcome {
            Ok(outcome) => (
                serde_json::to_value(outcome.stop_reason).unwrap_or(Value::Null),
                Value::String(outcome.final_text.clone()),
                json!(outcome.turns),
                Value::Null,
            ),
            Err(message) => (
                Value::Null,
                Value::Null,
                Value::Null,
                Value::String(message.clone()),
            ),
        };
        let usage = self.usage.unwrap_or_default();
        let (structured, error) = match self.checked {
            Some(Ok(value)) => (value.clone(), error),
            Some(Err(problem)) => (Value::Null, Value::String(problem.clone())),
            None => (Value::Null, error),
        };
        json!({
            "kind": "RESULT",
            "session_id": self.session_id,
            "data": {
                "state": self.state(),
                "stop_reason": stop_reason,
                "final_text": final_text,
                "turns": turns,
                "error": error,
                "structured_output": structured,
                "usage": usage,
                "cost_usd": usage.cost_usd,
                "duration_ms": u64::try_from(self.duration.as_millis()).unwrap_or(u64::MAX),
            }
        })
    }
}

/// Writes the final message to `file`; after a failure the file is emptied, so a script never
/// takes an earlier run's answer for this one's.
pub fn write_last_message(file: &Path, outcome: Option<&Outcome>) -> Result<(), String> {
    let text = outcome.map(|o| o.final_text.as_str()).unwrap_or_default();
    std::fs::write(file, text)
        .map_err(|e| format!("cannot write the final message to {}: {e}", file.display()))
}
