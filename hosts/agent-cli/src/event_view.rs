//! How `agent-host run` shows a session's events: readable text, or JSON lines for scripts.
//! The readable text is escaped (see [`crate::terminal_text`]): the model's words, its
//! calls and the tools' output would otherwise reach the terminal as they are, escape
//! sequences included.

use crate::terminal_text::{multi_line, one_line};
use agent_host::embed::{Event, EventData, ToolOutcome};
use agent_host::protocol::{CompactionStage, CompactionTrigger};
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

    pub fn show(&mut self, event: &Event) {
        let mut out = std::io::stdout().lock();
        if self.json {
            let _ = writeln!(out, "{}", event.to_json());
            return;
        }
        if let Some(agent) = &event.agent_id {
            self.show_child(&mut out, agent, event);
            return;
        }
        match &event.data {
            EventData::AssistantTextDelta { delta } => {
                let _ = write!(out, "{}", multi_line(delta));
                self.mid_line = !delta.ends_with('\n');
            }
            EventData::ToolCallStart {
                tool_name, arguments, ..
            } => {
                self.break_line(&mut out);
                let _ = writeln!(
                    out,
                    "> {} {}",
                    one_line(tool_name),
                    summarize_arguments(arguments)
                );
            }
            EventData::ToolCallEnd { outcome, .. } => match outcome.as_result() {
                Err(error) => {
                    let _ = writeln!(out, "  ! {}", multi_line(&first_lines(error, 3)));
                }
                Ok(output) => {
                    let _ = writeln!(out, "{}", indent(&multi_line(&first_lines(output, 8))));
                }
            },
            EventData::SteeringInjected { content } => {
                self.break_line(&mut out);
                let _ = writeln!(out, "[steering] {}", multi_line(content));
            }
            EventData::LoopDetection { message, .. } => {
                self.break_line(&mut out);
                let _ = writeln!(out, "[loop_detection] {}", multi_line(message));
            }
            EventData::Compaction { .. } => {
                self.break_line(&mut out);
                let _ = writeln!(
                    out,
                    "[compaction] {}",
                    compaction_text(&event.data).unwrap_or_default()
                );
            }
            EventData::Warning(warning) => {
                self.break_line(&mut out);
                let _ = writeln!(out, "[warning] {}", multi_line(warning.message()));
            }
            EventData::TurnLimit { limit, value } => {
                self.break_line(&mut out);
                let _ = writeln!(out, "[turn limit] {} reached ({value})", limit.as_str());
            }
            EventData::Error { message, .. } => {
                self.break_line(&mut out);
                eprintln!("[error] {}", multi_line(message));
            }
            _ => {}
        }
        let _ = out.flush();
    }

    /// A subagent's work in one line per tool call (its streamed text would interleave with
    /// the parent's): what it runs, what failed, and its final message.
    fn show_child(&mut self, out: &mut impl Write, agent: &str, event: &Event) {
        let line = match &event.data {
            EventData::ToolCallStart {
                tool_name, arguments, ..
            } => format!("> {} {}", one_line(tool_name), summarize_arguments(arguments)),
            EventData::ToolCallEnd {
                outcome: ToolOutcome::Error { error },
                ..
            } => format!("  ! {}", multi_line(&first_lines(error, 1))),
            EventData::AssistantTextEnd { text, .. } if !text.is_empty() => {
                multi_line(&first_lines(text, 3)).into_owned()
            }
            EventData::Error { message, .. } => format!("[error] {}", multi_line(message)),
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
    // Line by line: a long command keeps its "(N more lines)" note on a line of its own.
    multi_line(&first_lines(&text, 1)).into_owned()
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

/// A COMPACTION event in words: what was done and the estimated sizes before and after.
pub fn compaction_text(data: &EventData) -> Option<String> {
    let EventData::Compaction {
        trigger,
        stage,
        tokens_before,
        tokens_after,
        turns_before,
        turns_after,
        ..
    } = data
    else {
        return None;
    };
    let why = match trigger {
        CompactionTrigger::Threshold => "the context window was filling up",
        CompactionTrigger::ContextLength => "the model refused the request as too long",
        CompactionTrigger::Requested => "asked for",
    };
    let what = match stage {
        CompactionStage::ToolOutputsElided => "old tool outputs elided".to_string(),
        CompactionStage::Summarised => {
            format!("older turns summarised ({turns_before} → {turns_after} items)")
        }
    };
    Some(format!(
        "conversation compacted ({why}): {what}, ~{tokens_before} → ~{tokens_after} tokens"
    ))
}
