//! How `agent-host run` shows a session's events: readable text, or JSON lines for scripts.

use agent_host::AgentEvent;
use std::io::Write;

/// Prints events for people (or as JSON lines for scripts).
pub struct EventView {
    json: bool,
    /// Whether the cursor is in the middle of streamed assistant text.
    mid_line: bool,
}

impl EventView {
    pub fn new(json: bool) -> Self {
        Self {
            json,
            mid_line: false,
        }
    }

    pub fn show(&mut self, event: &AgentEvent) {
        let mut out = std::io::stdout().lock();
        if self.json {
            if let Ok(line) = serde_json::to_string(event) {
                let _ = writeln!(out, "{line}");
            }
            return;
        }
        if let Some(agent) = &event.agent_id {
            self.show_child(&mut out, agent, event);
            return;
        }
        let data = &event.data;
        let text = |field: &str| {
            data.get(field)
                .and_then(|v| v.as_str())
                .unwrap_or_default()
                .to_string()
        };
        match event.kind.as_str() {
            "ASSISTANT_TEXT_DELTA" => {
                let _ = write!(out, "{}", text("delta"));
                self.mid_line = !text("delta").ends_with('\n');
            }
            "TOOL_CALL_START" => {
                self.break_line(&mut out);
                let _ = writeln!(
                    out,
                    "> {} {}",
                    text("tool_name"),
                    summarize_arguments(&data["arguments"])
                );
            }
            "TOOL_CALL_END" => {
                if let Some(error) = data.get("error").and_then(|v| v.as_str()) {
                    let _ = writeln!(out, "  ! {}", first_lines(error, 3));
                } else {
                    let _ = writeln!(out, "{}", indent(&first_lines(&text("output"), 8)));
                }
            }
            "STEERING_INJECTED" => {
                self.break_line(&mut out);
                let _ = writeln!(out, "[steering] {}", text("content"));
            }
            "LOOP_DETECTION" | "WARNING" => {
                self.break_line(&mut out);
                let _ = writeln!(out, "[{}] {}", event.kind.to_lowercase(), text("message"));
            }
            "TURN_LIMIT" => {
                self.break_line(&mut out);
                let _ = writeln!(out, "[turn limit] {} reached ({})", text("limit"), data["value"]);
            }
            "ERROR" => {
                self.break_line(&mut out);
                eprintln!("[error] {}", text("message"));
            }
            _ => {}
        }
        let _ = out.flush();
    }

    /// A subagent's work in one line per tool call (its streamed text would interleave with
    /// the parent's): what it runs, what failed, and its final message.
    fn show_child(&mut self, out: &mut impl Write, agent: &str, event: &AgentEvent) {
        let field = |name: &str| event.data.get(name).and_then(|v| v.as_str()).unwrap_or_default();
        let line = match event.kind.as_str() {
            "TOOL_CALL_START" => format!(
                "> {} {}",
                field("tool_name"),
                summarize_arguments(&event.data["arguments"])
            ),
            "TOOL_CALL_END" if event.data.get("error").is_some_and(|e| !e.is_null()) => {
                format!("  ! {}", first_lines(field("error"), 1))
            }
            "ASSISTANT_TEXT_END" if !field("text").is_empty() => first_lines(field("text"), 3),
            "ERROR" => format!("[error] {}", field("message")),
            _ => return,
        };
        self.break_line(out);
        for text in line.lines() {
            let _ = writeln!(out, "[{agent}] {text}");
        }
    }

    fn break_line(&mut self, out: &mut impl Write) {
        if self.mid_line {
            let _ = writeln!(out);
            self.mid_line = false;
        }
    }

    pub fn finish(&mut self) {
        self.break_line(&mut std::io::stdout());
    }
}

fn summarize_arguments(arguments: &serde_json::Value) -> String {
    let text = match arguments.get("command").or_else(|| arguments.get("file_path")) {
        Some(serde_json::Value::String(s)) => s.clone(),
        _ => arguments.to_string(),
    };
    first_lines(&text, 1)
}

fn first_lines(text: &str, n: usize) -> String {
    let lines: Vec<&str> = text.trim_end().lines().collect();
    if lines.len() <= n {
        return lines.join("\n");
    }
    format!("{}\n... ({} more lines)", lines[..n].join("\n"), lines.len() - n)
}

fn indent(text: &str) -> String {
    text.lines()
        .map(|l| format!("  {l}"))
        .collect::<Vec<_>>()
        .join("\n")
}
