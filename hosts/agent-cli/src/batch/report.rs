//! What a batch leaves: each task's `result.json` (written last and whole, so a task without
//! one is unfinished and runs again), and the summary table.

use serde::{Deserialize, Serialize};
use std::path::Path;

/// How a task ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TaskState {
    /// The agent finished its answer.
    Completed,
    /// A limit or an interruption stopped it.
    Stopped,
    /// It could not run or its session failed (see `error`).
    Failed,
}

/// One task's result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TaskResult {
    pub id: String,
    pub state: TaskState,
    /// The session's stop reason (`completed`, `turn_limit`, ...), when it ran.
    pub stop_reason: Option<String>,
    pub error: Option<String>,
    pub turns: u32,
    /// Tokens in and out, and the cost at the model catalog's prices (`None` when unknown).
    pub prompt_tokens: u64,
    pub output_tokens: u64,
    pub cost_usd: Option<f64>,
    pub final_text: String,
    /// The files it changed (their diff is in `changes.patch`).
    pub changed_files: Vec<String>,
    pub duration_ms: u64,
}

/// The finished result in `folder`, if there is one.
pub fn finished(folder: &Path) -> Option<TaskResult> {
    let text = std::fs::read_to_string(folder.join(RESULT)).ok()?;
    serde_json::from_str(&text).ok()
}

pub const RESULT: &str = "result.json";

/// Writes `result` as `folder/result.json`, whole or not at all (a temporary file renamed),
/// so that an interrupted write never passes for a finished task.
pub fn write(folder: &Path, result: &TaskResult) -> Result<(), String> {
    let json = serde_json::to_string_pretty(result).map_err(|e| e.to_string())?;
    let partial = folder.join(".result.json.partial");
    std::fs::write(&partial, json + "\n")
        .and_then(|()| std::fs::rename(&partial, folder.join(RESULT)))
        .map_err(|e| format!("cannot write the result of {}: {e}", result.id))
}

/// The summary: one line per task, then the totals.
pub fn table(results: &[(&TaskResult, bool)]) -> String {
    let mut rows = vec![[
        "TASK".to_string(),
        "STATE".to_string(),
        "STOP".to_string(),
        "TURNS".to_string(),
        "TOKENS".to_string(),
        "COST".to_string(),
        "FILES".to_string(),
    ]];
    for (result, skipped) in results {
        let state = match skipped {
            true => format!("{} (earlier run)", state_name(result.state)),
            false => state_name(result.state).to_string(),
        };
        rows.push([
            result.id.clone(),
            state,
            result.stop_reason.clone().unwrap_or_else(|| "-".to_string()),
            result.turns.to_string(),
            (result.prompt_tokens + result.output_tokens).to_string(),
            cost(result.cost_usd),
            result.changed_files.len().to_string(),
        ]);
    }
    let widths: Vec<usize> = (0..7)
        .map(|column| {
            rows.iter()
                .map(|row| row[column].chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut out = String::new();
    for row in &rows {
        let cells: Vec<String> = row
            .iter()
            .zip(&widths)
            .map(|(cell, width)| format!("{cell:<width$}"))
            .collect();
        out.push_str(cells.join("  ").trim_end());
        out.push('\n');
    }
    let count = |state| results.iter().filter(|(r, _)| r.state == state).count();
    // Folded from 0.0: an empty f64 sum is -0.0, printed as "$-0.0000".
    let total = results
        .iter()
        .filter_map(|(r, _)| r.cost_usd)
        .fold(0.0, |a, b| a + b);
    // A task that made no request cost nothing; one whose model has no price is counted.
    let unpriced = results
        .iter()
        .filter(|(r, _)| r.cost_usd.is_none() && r.prompt_tokens + r.output_tokens > 0)
        .count();
    let unpriced = match unpriced {
        0 => String::new(),
        n => format!(
            " (and {n} task{} at prices the model catalog does not know)",
            if n == 1 { "" } else { "s" }
        ),
    };
    out.push_str(&format!(
        "{} tasks: {} completed, {} stopped, {} failed; cost ${total:.4}{unpriced}\n",
        results.len(),
        count(TaskState::Completed),
        count(TaskState::Stopped),
        count(TaskState::Failed),
    ));
    out
}

fn state_name(state: TaskState) -> &'static str {
    match state {
        TaskState::Completed => "completed",
        TaskState::Stopped => "stopped",
        TaskState::Failed => "failed",
    }
}

fn cost(usd: Option<f64>) -> String {
    usd.map_or_else(|| "unknown".to_string(), |usd| format!("${usd:.4}"))
}
