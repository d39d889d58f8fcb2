//! The session's events as the chat shows them: assistant text as it streams, each tool
//! call as one line with its result folded (diffs for file changes), warnings and errors
//! marked, subagents' work in one line per call; and the status line's words.

use super::diff;
use super::file_changes::FileChanges;
use super::screen::Screen;
use super::spinner::status_line;
use super::status_bar::StatusBar;
use super::style::Palette;
use super::tool_lines::{error_lines, folded_output, summary};
use crate::terminal_text::{multi_line, one_line};
use agent_host::embed::{Event, EventData, ToolOutcome};
use agent_host::protocol::{CompactionTrigger, ToolCategory, Warning};
use agent_host::session_host::network_events;
use std::sync::Arc;
use std::time::Instant;
use terminal_markdown::{MarkdownStream, Style as MarkdownStyle};

/// Diff lines shown per changed file before the rest is counted.
const DIFF_LINES: usize = 16;

struct RunningTool {
    call_id: String,
    category: ToolCategory,
    /// The files the call means to change.
    changes: Vec<String>,
    label: String,
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
    /// Since when the agent waits for the user's answer (not counted as working time).
    waiting_since: Option<Instant>,
    /// The last finished call's whole output, for Ctrl-O: its line and the text.
    last_output: Option<(String, String)>,
    pub bar: StatusBar,
    /// The assistant's text rendered as markdown, block by block (on a terminal); `None`:
    /// streamed as it comes (a pipe, a file).
    markdown: Option<MarkdownStream>,
}

impl ChatView {
    pub fn new(
        palette: Palette,
        changes: Arc<FileChanges>,
        working_dir: String,
        bar: StatusBar,
        render_markdown: bool,
    ) -> Self {
        let markdown = render_markdown.then(|| {
            MarkdownStream::new(MarkdownStyle {
                color: palette.enabled(),
                width: super::screen::row_width(),
            })
        });
        Self {
            palette,
            changes,
            working_dir,
            busy_since: None,
            thinking_since: Instant::now(),
            running: Vec::new(),
            waiting_since: None,
            last_output: None,
            bar,
            markdown,
        }
    }

    /// Prints what the markdown renderer still holds (the answer ended, or was cut off).
    pub fn end_text(&mut self, screen: &mut Screen) {
        if let Some(markdown) = &mut self.markdown {
            for line in markdown.finish() {
                screen.line(&line);
            }
            screen.set_live_text("");
        }
        screen.end_text();
    }

    /// The last finished tool call's whole output: what it was, and the text.
    pub fn last_output(&self) -> Option<&(String, String)> {
        self.last_output.as_ref()
    }

    /// Output that Ctrl-O shows next (a `!command`'s).
    pub fn set_last_output(&mut self, label: String, output: &str) {
        self.last_output = Some((label, multi_line(output).into_owned()));
    }

    /// A question waits for the user (true) or was answered: the clocks stop meanwhile.
    pub fn waiting(&mut self, waiting: bool) {
        match (waiting, self.waiting_since) {
            (true, None) => self.waiting_since = Some(Instant::now()),
            (false, Some(since)) => {
                let paused = since.elapsed();
                self.waiting_since = None;
                let later = |t: Instant| t.checked_add(paused).unwrap_or(t);
                self.busy_since = self.busy_since.map(later);
                self.thinking_since = later(self.thinking_since);
                for tool in &mut self.running {
                    tool.started = later(tool.started);
                }
            }
            _ => {}
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
        self.waiting_since = None;
        self.running.clear();
    }

    /// The spinner line while the agent works.
    pub fn status(&self) -> Option<String> {
        let busy_since = self.busy_since?;
        if let Some(since) = self.waiting_since {
            let worked = since.saturating_duration_since(busy_since);
            return Some(self.palette.yellow(&format!(
                "waiting for your answer ({}s of work so far)",
                worked.as_secs()
            )));
        }
        let busy = busy_since.elapsed();
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

    pub fn show(&mut self, event: &Event, screen: &mut Screen) {
        if let Some(agent) = &event.agent_id {
            self.show_child(agent, event, screen);
            return;
        }
        let p = &self.palette;
        match &event.data {
            EventData::AssistantTextDelta { delta } => match &mut self.markdown {
                Some(markdown) => {
                    markdown.set_width(super::screen::row_width());
                    for line in markdown.push(delta) {
                        screen.line(&line);
                    }
                    screen.set_live_text(markdown.pending_line());
                }
                None => screen.stream_text(&multi_line(delta)),
            },
            EventData::AssistantTextEnd { usage, .. } => {
                self.end_text(screen);
                self.bar.response(usage);
                self.thinking_since = Instant::now();
            }
            EventData::ToolCallStart {
                call_id,
                tool_name,
                arguments,
                category,
                changes,
            } => {
                // The model names the tool (unknown names are shown too): escaped like its arguments.
                let tool_name = one_line(tool_name);
                let detail = summary(arguments, changes);
                screen.line(&format!("{} {} {detail}", p.cyan("●"), p.bold(&tool_name)));
                self.running.push(RunningTool {
                    call_id: call_id.clone(),
                    category: *category,
                    changes: changes.clone(),
                    label: format!("{tool_name} {detail}").trim_end().to_string(),
                    started: Instant::now(),
                });
            }
            EventData::ToolCallEnd { call_id, outcome, .. } => self.tool_finished(call_id, outcome, screen),
            // Warnings can quote an endpoint's error, the loop detector the model's calls.
            EventData::Warning(warning) => {
                if let Warning::ContextUsage {
                    tokens,
                    context_window,
                    ..
                } = warning
                {
                    self.bar.context_warning(*tokens, *context_window);
                }
                screen.line(&p.yellow(&format!("! {}", multi_line(warning.message()))))
            }
            EventData::LoopDetection { message, .. } => {
                screen.line(&p.yellow(&format!("! {}", multi_line(message))))
            }
            EventData::PlanUpdated { explanation, plan } => {
                screen.line(&p.bold("plan"));
                for line in crate::event_view::plan_lines(explanation.as_deref(), plan) {
                    screen.line(&format!("  {line}"));
                }
            }
            EventData::TurnLimit { limit, value } => {
                screen.line(&p.yellow(&format!("! stopped: {} reached ({value})", limit.as_str())))
            }
            EventData::NetworkConnection(connection) => {
                let line = format!("  ↳ {}", one_line(&network_events::summary(connection)));
                screen.line(&match connection.allowed {
                    true => p.dim(&line),
                    false => p.yellow(&line),
                })
            }
            EventData::ProcessingEnd {
                usage, session_usage, ..
            } if !usage.is_empty() => {
                self.bar.session_usage(session_usage);
                let mut line = crate::event_view::usage_text(usage);
                if session_usage.requests > usage.requests
                    && let Some(cost) = session_usage.cost_usd
                {
                    line.push_str(&format!(" (session ${cost:.4})"));
                }
                screen.line(&p.dim(&format!("· {line}")))
            }
            EventData::Compaction {
                trigger,
                tokens_after,
                ..
            } => {
                self.bar.compacted(Some(*tokens_after));
                // `/compact` prints its own result.
                if *trigger == CompactionTrigger::Requested {
                    return;
                }
                let text = crate::event_view::compaction_text(&event.data).unwrap_or_default();
                screen.line(&p.dim(&format!("· {text}")))
            }
            // ERROR ends the input with the same error, which the chat reports then.
            _ => {}
        }
    }

    fn tool_finished(&mut self, call_id: &str, outcome: &ToolOutcome, screen: &mut Screen) {
        let position = self.running.iter().position(|t| t.call_id == call_id);
        let tool = position.map(|i| self.running.remove(i));
        if self.running.is_empty() {
            self.thinking_since = Instant::now();
        }
        let paths = tool.as_ref().map(|t| t.changes.clone()).unwrap_or_default();
        // Taken in any case, so a failed patch's rollback is not shown later.
        let changes = self.changes.take(call_id, &paths, &self.working_dir);
        let label = tool.as_ref().map_or_else(String::new, |t| t.label.clone());
        let lines = match outcome {
            ToolOutcome::Error { error } => {
                self.set_last_output(label, error);
                error_lines(error, &self.palette)
            }
            ToolOutcome::Output { .. } if !changes.is_empty() => changes
                .iter()
                .flat_map(|change| diff::render(change, &self.palette, DIFF_LINES))
                .collect(),
            ToolOutcome::Output { output, .. } => {
                let category = tool.as_ref().map_or(ToolCategory::Host, |t| t.category);
                self.set_last_output(label, output);
                folded_output(category, output, &self.palette)
            }
        };
        for line in lines {
            screen.line(&line);
        }
    }

    /// A subagent's work in one line per tool call (its streamed text would interleave
    /// with the parent's): what it runs, what failed, and its final message.
    fn show_child(&mut self, agent: &str, event: &Event, screen: &mut Screen) {
        let line = match &event.data {
            EventData::ToolCallStart {
                tool_name,
                arguments,
                changes,
                ..
            } => format!("● {} {}", one_line(tool_name), summary(arguments, changes)),
            EventData::ToolCallEnd {
                outcome: ToolOutcome::Error { error },
                ..
            } => format!("  ✗ {}", one_line(error.lines().next().unwrap_or_default())),
            EventData::AssistantTextEnd { text, .. } if !text.is_empty() => {
                one_line(text.lines().next().unwrap_or_default()).into_owned()
            }
            EventData::Error { message, .. } => format!("error: {}", one_line(message)),
            _ => return,
        };
        screen.line(&self.palette.dim(&format!("  [{agent}] {line}")));
    }
}
