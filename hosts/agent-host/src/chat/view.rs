//! The session's events as the chat shows them: assistant text as it streams, each tool
//! call as one line with its result folded (diffs for file changes), warnings and errors
//! marked, subagents' work in one line per call; and the status line's words.

use super::diff;
use super::file_changes::FileChanges;
use super::screen::Screen;
use super::spinner::status_line;
use super::style::Palette;
use super::tool_lines::{changed_paths, error_lines, folded_output, summary};
use agent_host::AgentEvent;
use serde_json::Value;
use std::sync::Arc;
use std::time::Instant;

/// Diff lines shown per changed file before the rest is counted.
const DIFF_LINES: usize = 16;

struct RunningTool {
    call_id: String,
    name: String,
    label: String,
    arguments: Value,
    started: Instant,
}

/// Turns events into lines on the screen and knows what the agent is doing now.
pub struct ChatView {
    palette: Palette,
    changes: Arc<FileChanges>,
    working_dir: String,
    busy_since: Option<Instant>,
    /// When the model was last asked (the input started, or the last tool finished).
    thinking_since: Instant,
    running: Vec<RunningTool>,
}

impl ChatView {
    pub fn new(palette: Palette, changes: Arc<FileChanges>, working_dir: String) -> Self {
        Self {
            palette,
            changes,
            working_dir,
            busy_since: None,
            thinking_since: Instant::now(),
            running: Vec::new(),
        }
    }

    pub fn input_started(&mut self) {
        let now = Instant::now();
        self.busy_since = Some(now);
        self.thinking_since = now;
        self.running.clear();
    }

    pub fn input_finished(&mut self) {
        self.busy_since = None;
        self.running.clear();
    }

    /// The spinner line while the agent works.
    pub fn status(&self) -> Option<String> {
        let busy = self.busy_since?.elapsed();
        let line = match self.running.last() {
            Some(tool) => {
                let more = match self.running.len() {
                    1 => String::new(),
                    n => format!(" (+{} more)", n - 1),
                };
                status_line(
                    &format!("{}{more}", tool.label),
                    tool.started.elapsed(),
                    busy,
                    &self.palette,
                )
            }
            None => status_line("thinking", self.thinking_since.elapsed(), busy, &self.palette),
        };
        Some(line)
    }

    pub fn show(&mut self, event: &AgentEvent, screen: &mut Screen) {
        if let Some(agent) = &event.agent_id {
            self.show_child(agent, event, screen);
            return;
        }
        let data = &event.data;
        let text = |field: &str| data.get(field).and_then(Value::as_str).unwrap_or_default();
        let p = &self.palette;
        match event.kind.as_str() {
            "ASSISTANT_TEXT_DELTA" => screen.stream_text(text("delta")),
            "ASSISTANT_TEXT_END" => {
                screen.end_text();
                self.thinking_since = Instant::now();
            }
            "TOOL_CALL_START" => {
                let name = text("tool_name").to_string();
                let arguments = data.get("arguments").cloned().unwrap_or(Value::Null);
                let detail = summary(&name, &arguments);
                screen.line(&format!("{} {} {detail}", p.cyan("●"), p.bold(&name)));
                self.running.push(RunningTool {
                    call_id: text("call_id").to_string(),
                    label: format!("{name} {detail}").trim_end().to_string(),
                    name,
                    arguments,
                    started: Instant::now(),
                });
            }
            "TOOL_CALL_END" => self.tool_finished(data, screen),
            "WARNING" | "LOOP_DETECTION" => {
                screen.line(&p.yellow(&format!("! {}", text("message"))));
            }
            "TURN_LIMIT" => screen.line(&p.yellow(&format!(
                "! stopped: {} reached ({})",
                text("limit"),
                data["value"]
            ))),
            // ERROR ends the input with the same error, which the chat reports then.
            _ => {}
        }
    }

    fn tool_finished(&mut self, data: &Value, screen: &mut Screen) {
        let call_id = data.get("call_id").and_then(Value::as_str).unwrap_or_default();
        let position = self.running.iter().position(|t| t.call_id == call_id);
        let tool = position.map(|i| self.running.remove(i));
        if self.running.is_empty() {
            self.thinking_since = Instant::now();
        }
        let name = data.get("tool_name").and_then(Value::as_str).unwrap_or_default();
        let paths = tool
            .as_ref()
            .and_then(|t| changed_paths(&t.name, &t.arguments))
            .unwrap_or_default();
        // Taken in any case, so a failed patch's rollback is not shown later.
        let changes = self.changes.take(&paths, &self.working_dir);
        let lines = if let Some(error) = data.get("error").and_then(Value::as_str) {
            error_lines(error, &self.palette)
        } else if !changes.is_empty() {
            changes
                .iter()
                .flat_map(|change| diff::render(change, &self.palette, DIFF_LINES))
                .collect()
        } else {
            let output = data.get("output").and_then(Value::as_str).unwrap_or_default();
            folded_output(name, output, &self.palette)
        };
        for line in lines {
            screen.line(&line);
        }
    }

    /// A subagent's work in one line per tool call (its streamed text would interleave
    /// with the parent's): what it runs, what failed, and its final message.
    fn show_child(&mut self, agent: &str, event: &AgentEvent, screen: &mut Screen) {
        let field = |name: &str| event.data.get(name).and_then(Value::as_str).unwrap_or_default();
        let line = match event.kind.as_str() {
            "TOOL_CALL_START" => {
                let name = field("tool_name");
                format!("● {name} {}", summary(name, &event.data["arguments"]))
            }
            "TOOL_CALL_END" if event.data.get("error").is_some_and(|e| !e.is_null()) => {
                format!("  ✗ {}", field("error").lines().next().unwrap_or_default())
            }
            "ASSISTANT_TEXT_END" if !field("text").is_empty() => {
                field("text").lines().next().unwrap_or_default().to_string()
            }
            "ERROR" => format!("error: {}", field("message")),
            _ => return,
        };
        screen.line(&self.palette.dim(&format!("  [{agent}] {line}")));
    }
}
