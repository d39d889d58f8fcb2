//! How `agent-host run` shows a session's events: readable text, or JSON lines for scripts.
//! The readable text is escaped (see [`crate::terminal_text`]): the model's words, its
//! calls and the tools' output would otherwise reach the terminal as they are, escape
//! sequences included.

use crate::terminal_text::{multi_line, one_line};
use agent_host::embed::{Event, EventData, ToolOutcome};
use agent_host::protocol::{CompactionStage, CompactionTrigger, ErrorKind, UsageTotals};
use agent_host::session_host::network_events;
use std::io::Write;

/// Prints events for people (or as JSON lines for scripts).
pub struct EventView {
    json: bool,
    /// Whether the cursor is in the middle of streamed assistant text.
    mid_line: bool,
    /// The kind of the error that ended the input (the message is `run`'s to print).
    ending_error: Option<ErrorKind>,
    /// The session's usage as its last input ended.
    session_usage: Option<UsageTotals>,
}

/// What the events told by the end of a run.
#[derive(Debug, Default)]
pub struct Seen {
    /// The kind of the error that ended the input, if one did.
    pub ending_error: Option<ErrorKind>,
    /// The session's usage as its last input ended.
    pub session_usage: Option<UsageTotals>,
}

impl EventView {
    pub fn new(json: bool) -> Self {
        Self {
            json,
            mid_line: false,
            ending_error: None,
            session_usage: None,
        }
    }

    pub fn show(&mut self, event: &Event) {
        let mut out = std::io::stdout().lock();
        match (&event.agent_id, &event.data) {
            (None, EventData::Error { kind, .. }) => self.ending_error = Some(*kind),
            (None, EventData::ProcessingEnd { session_usage, .. }) => {
                self.session_usage = Some(*session_usage)
            }
            _ => {}
        }
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
            EventData::PlanUpdated { explanation, plan } => {
                self.break_line(&mut out);
                let _ = writeln!(out, "[plan]");
                for line in plan_lines(explanation.as_deref(), plan) {
                    let _ = writeln!(out, "  {line}");
                }
            }
            EventData::LoopDetection { message, .. } => {
                self.break_line(&mut out);
                let _ = writeln!(out, "[loop_detection] {}", multi_line(message));
            }
            // On stderr: stdout keeps only the answer, for scripts.
            EventData::ProcessingEnd { usage, .. } if !usage.is_empty() => {
                self.break_line(&mut out);
                eprintln!("[usage] {}", usage_text(usage));
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
            // What the command's text cannot say: which hosts it reached, and what it sent.
            EventData::NetworkConnection(connection) => {
                self.break_line(&mut out);
                let _ = writeln!(out, "  [{}]", one_line(&network_events::summary(connection)));
            }
            // The error that ends the input is what `run` reports as it exits, once.
            EventData::Error { .. } => self.break_line(&mut out),
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

    /// Ends the output; what the events told.
    pub fn finish(&mut self) -> Seen {
        self.break_line(&mut std::io::stdout());
        Seen {
            ending_error: self.ending_error,
            session_usage: self.session_usage,
        }
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

/// Requests added up, in words: `3 requests · 48,210 tokens in (40,960 cached) · 812 out
/// (210 reasoning) · $0.0413`; the cost is left out when the model has no price.
pub fn usage_text(usage: &UsageTotals) -> String {
    let mut text = format!(
        "{} request{} · {} tokens in",
        usage.requests,
        if usage.requests == 1 { "" } else { "s" },
        thousands(usage.prompt_tokens)
    );
    if usage.cached_tokens > 0 {
        text.push_str(&format!(" ({} cached)", thousands(usage.cached_tokens)));
    }
    text.push_str(&format!(" · {} out", thousands(usage.output_tokens)));
    if usage.reasoning_tokens > 0 {
        text.push_str(&format!(" ({} reasoning)", thousands(usage.reasoning_tokens)));
    }
    if let Some(cost) = usage.cost_usd {
        text.push_str(&format!(" · ${cost:.4}"));
    }
    text
}

/// `1234567` as `1,234,567`.
fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, digit) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(digit);
    }
    out
}

/// The model's plan, a line per step (`[x]` done, `[>]` in progress, `[ ]` to do), after
/// its explanation; the model's words escaped.
pub fn plan_lines(explanation: Option<&str>, plan: &[agent_host::protocol::event::PlanStep]) -> Vec<String> {
    use agent_host::protocol::event::PlanStatus;
    let mut lines: Vec<String> = explanation
        .map(|e| one_line(e).into_owned())
        .into_iter()
        .collect();
    for step in plan {
        let mark = match step.status {
            PlanStatus::Completed => "[x]",
            PlanStatus::InProgress => "[>]",
            PlanStatus::Pending => "[ ]",
        };
        lines.push(format!("{mark} {}", one_line(&step.step)));
    }
    lines
}

#[cfg(test)]
mod usage_tests {
    use super::*;

    #[test]
    fn usage_reads_as_words_with_thousands_separated() {
        let usage = UsageTotals {
            requests: 3,
            prompt_tokens: 48_210,
            cached_tokens: 40_960,
            cache_write_tokens: 0,
            output_tokens: 812,
            reasoning_tokens: 210,
            cost_usd: Some(0.041_31),
        };
        assert_eq!(
            usage_text(&usage),
            "3 requests · 48,210 tokens in (40,960 cached) · 812 out (210 reasoning) · $0.0413"
        );
        let one = UsageTotals {
            requests: 1,
            prompt_tokens: 999,
            output_tokens: 1_000_000,
            ..UsageTotals::default()
        };
        assert_eq!(usage_text(&one), "1 request · 999 tokens in · 1,000,000 out");
    }
}
