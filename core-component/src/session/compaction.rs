//! Staged compaction (after the OpenDev paper's staged context management): when the
//! next request would fill too much of the context window, old tool outputs are elided
//! first, and if that is not enough the older turns are replaced by a summary the model
//! writes. The most recent turns stay verbatim, and a tool call is never separated from its
//! result: the kept tail starts at a turn that is not a tool result.
//!
//! Thresholds, as shares of the context window (estimated tokens of the whole request):
//! - [`ELIDE_AT_PERCENT`]: tool outputs older than the kept tail become a one-line note.
//! - [`SUMMARISE_AT_PERCENT`]: still over after eliding, the turns older than the kept tail
//!   are summarised.
//! - [`KEEP_RECENT_PERCENT`]: the most recent turns kept verbatim weigh at most this much
//!   (always at least the last turn and the call its results answer).

use super::Session;
use crate::events::{CompactionStage, CompactionTrigger, EventData, Warning};
use crate::history::{HistoryEntry, Turn};
use crate::llm::{ContentPart, LlmError, MessageView, Request, Usage};
use crate::truncation::{Mode, truncate_chars};

pub const ELIDE_AT_PERCENT: u64 = 60;
pub const SUMMARISE_AT_PERCENT: u64 = 80;
pub const KEEP_RECENT_PERCENT: u64 = 25;
/// An automatic summary replaces turns weighing at least this share of the window.
const SUMMARY_WORTH_PERCENT: u64 = 10;
/// Outputs shorter than this are not elided: the note would save nothing.
const ELIDE_MIN_CHARS: usize = 400;
/// The summary's own length limit, in tokens.
const SUMMARY_MAX_TOKENS: u32 = 4_096;
/// Share of the window the transcript sent for summarising may fill.
const TRANSCRIPT_PERCENT: u64 = 50;
/// Each tool output and call argument in the transcript is cut to this (head and tail).
const TRANSCRIPT_ITEM_CHARS: usize = 2_000;
/// Marks a history item as a summary, so a later compaction summarises it again.
pub const SUMMARY_HEADING: &str = "Summary of the conversation so far";

const SUMMARY_PROMPT: &str = "You compact the conversation of a coding agent so that it can go on \
with its task in a smaller context. Write what the agent will read instead of the conversation below. \
Keep, under these headings:\n\
1. Task: the user's request and every instruction or constraint they gave (quote exact wording that matters).\n\
2. Decisions: what was decided and why.\n\
3. Files: each file read, created or changed (its path) and what changed.\n\
4. Commands and results: commands run and what matters of their output (errors, test results).\n\
5. State: what is done, what remains, open problems and the next step.\n\
Be specific (paths, names, numbers) and brief. Do not invent anything. No preamble.";

pub use agent_protocol::CompactionReport;

impl Session {
    /// The estimated size of a request with `history`: system prompt, tools and history, at
    /// four characters a token (the same rough rule as the context warning).
    pub(super) fn estimated_tokens(&self) -> u64 {
        (self.request_prefix().1 + self.history.chars()) / 4
    }

    /// Before a request: compacts when the estimate passes the thresholds. A summary that
    /// fails is reported as a warning; the request goes ahead with what eliding saved.
    pub(super) fn compact_if_needed(&mut self) {
        let window = self.profile.context_window_size.max(1);
        let tokens = self.estimated_tokens();
        if tokens.saturating_mul(100) < window.saturating_mul(ELIDE_AT_PERCENT) {
            return;
        }
        if let (_, Some(error)) = self.compact_with(CompactionTrigger::Threshold, false) {
            self.emit(EventData::Warning(Warning::Compaction {
                message: format!("The conversation could not be summarised: {error}"),
            }));
        }
    }

    /// Compacts now, whatever the size: elides and summarises (`/compact`,
    /// `session.compact()`, and after a context-length error).
    pub fn compact(&mut self) -> Result<CompactionReport, crate::session::AgentError> {
        use crate::session::{AgentError, SessionState};
        match self.state {
            SessionState::Closed => return Err(AgentError::Closed),
            SessionState::Processing => return Err(AgentError::Busy),
            SessionState::Idle | SessionState::AwaitingInput => {}
        }
        match self.compact_with(CompactionTrigger::Requested, true) {
            (report, None) => Ok(report),
            (_, Some(e)) => Err(AgentError::Llm(format!(
                "the conversation could not be summarised: {e}"
            ))),
        }
    }

    /// Elides, then summarises when `force` or when still over the threshold. Returns what
    /// was done, and the summary request's error if it failed (what eliding did is kept).
    pub(super) fn compact_with(
        &mut self,
        trigger: CompactionTrigger,
        force: bool,
    ) -> (CompactionReport, Option<LlmError>) {
        let window = self.profile.context_window_size.max(1);
        let tokens_before = self.estimated_tokens();
        let turns_before = self.history.len() as u32;
        // Asked for, a compaction summarises even a history that fits: it keeps a quarter
        // of it at most.
        let history_tokens = self.history.chars() / 4;
        let keep_tokens = match force {
            true => (window * KEEP_RECENT_PERCENT / 100).min(history_tokens / 4),
            false => window * KEEP_RECENT_PERCENT / 100,
        };
        let keep_from = kept_tail_start(&self.history, keep_tokens);
        let mut elided = self.history.change(|turns| {
            let elided = elide_tool_outputs(&mut turns[..keep_from]);
            (elided, elided > 0)
        });
        let after_eliding = self.estimated_tokens();
        let over = after_eliding.saturating_mul(100) >= window.saturating_mul(SUMMARISE_AT_PERCENT);
        let mut report = CompactionReport {
            stage: CompactionStage::ToolOutputsElided,
            tokens_before,
            tokens_after: after_eliding,
            turns_before,
            turns_after: turns_before,
        };
        let mut summary_usage = Usage::default();
        let mut failure = None;
        // Unasked, a summary must be worth its request: the turns it replaces weigh at least
        // a tenth of the window (else the next round would summarise again, for little).
        // An earlier summary among them does not count: summarising it again gains nothing.
        let older_tokens = self.history[..keep_from]
            .iter()
            .filter(|turn| !is_summary(turn))
            .map(|turn| crate::history::chars_of(std::slice::from_ref(turn)) / 4)
            .sum::<u64>();
        let worth_it = older_tokens.saturating_mul(100) >= window.saturating_mul(SUMMARY_WORTH_PERCENT);
        if keep_from > 0 && (force || (over && worth_it)) {
            let reserved = self.reserve(crate::history::chars_of(&self.history[..keep_from]) / 4);
            match self.summarise(&self.history[..keep_from], window) {
                Ok((summary, usage)) => {
                    summary_usage = usage;
                    self.count_usage(&usage, reserved);
                    self.replace_older_turns(keep_from, summary);
                    report.stage = CompactionStage::Summarised;
                    report.tokens_after = self.estimated_tokens();
                    report.turns_after = self.history.len() as u32;
                }
                Err(error) => failure = Some(error),
            }
        }
        // The provider counted more than the estimate: even the kept turns must shrink, so
        // their own long outputs are cut to what the kept share allows.
        if trigger == CompactionTrigger::ContextLength {
            let tail_start = self.history.len() - (turns_before as usize - keep_from);
            let cut = self.history.change(|turns| {
                let cut = cut_long_outputs(&mut turns[tail_start..], keep_tokens as usize * 4);
                (cut, cut > 0)
            });
            if cut > 0 {
                report.tokens_after = self.estimated_tokens();
                elided += cut;
            }
        }
        if elided == 0 && report.stage == CompactionStage::ToolOutputsElided {
            return (report, failure);
        }
        self.ports.host.record_history(
            &self.id,
            &HistoryEntry::Replace {
                turns: self.history.to_vec(),
            },
        );
        self.emit(EventData::Compaction {
            trigger,
            stage: report.stage,
            tokens_before: report.tokens_before,
            tokens_after: report.tokens_after,
            turns_before: report.turns_before,
            turns_after: report.turns_after,
            summary_usage,
        });
        (report, failure)
    }

    /// Asks the model for a summary of `older` (as a transcript in one user message, so no
    /// protocol's pairing rules apply and no tools are needed).
    fn summarise(&self, older: &[Turn], window: u64) -> Result<(String, Usage), LlmError> {
        let budget = (window * TRANSCRIPT_PERCENT / 100 * 4) as usize;
        let transcript = truncate_chars(&transcript(older), budget, Mode::HeadTail);
        let options = summary_options(self.config.provider_options.as_ref());
        let request = Request {
            model: &self.config.model,
            system: SUMMARY_PROMPT,
            messages: vec![MessageView::user_text(format!(
                "The conversation so far:\n\n{transcript}\n\nWrite the summary now."
            ))],
            tools: Vec::new(),
            max_tokens: SUMMARY_MAX_TOKENS.min(
                self.config
                    .max_output_tokens
                    .unwrap_or(self.profile.default_max_output_tokens),
            ),
            reasoning_effort: None,
            provider_options: options.as_ref(),
            // A summary is prose, whatever shape the final answer must have.
            output_schema: None,
            // Another prefix than the conversation's: a cache of its own.
            cache_key: None,
            cache: None,
        };
        let response = self.call_with_retries(|| self.stream_quietly(&request))?;
        let summary = response.message.text();
        if summary.trim().is_empty() {
            return Err(LlmError::new(
                crate::llm::ErrorKind::Stream,
                "the model's summary was empty",
            ));
        }
        // A summary cut off by its length limit would lose what it had not reached yet.
        if response.finish_reason == crate::llm::FinishReason::Length {
            return Err(LlmError::new(
                crate::llm::ErrorKind::Stream,
                "the model's summary was cut off by its length limit",
            ));
        }
        Ok((summary, response.usage))
    }

    fn replace_older_turns(&mut self, keep_from: usize, summary: String) {
        let now = self.now();
        let replaced = keep_from;
        let summary = Turn::System {
            content: format!(
                "{SUMMARY_HEADING} ({replaced} earlier items were replaced by this summary to fit the context window):\n\n{summary}"
            ),
            timestamp_ms: now,
        };
        self.history.change(|turns| {
            let tail = turns.split_off(keep_from);
            let older = std::mem::replace(turns, vec![summary]);
            // The input being worked on stays word for word when the tail no longer has it.
            let tail_has_input = tail.iter().any(|t| matches!(t, Turn::User { .. }));
            if !tail_has_input
                && let Some(input) = older.iter().rev().find(|t| matches!(t, Turn::User { .. }))
            {
                turns.push(input.clone());
            }
            turns.extend(tail);
            ((), true)
        });
    }
}

/// The session's provider options without what a request with no tools and no reasoning
/// must not carry (a thinking budget over the summary's limit, a tool choice without tools).
fn summary_options(options: Option<&serde_json::Value>) -> Option<serde_json::Value> {
    const TOOLS_AND_REASONING: [&str; 5] = [
        "thinking",
        "reasoning",
        "tool_choice",
        "parallel_tool_calls",
        "tools",
    ];
    let mut options = options?.clone();
    if let Some(families) = options.as_object_mut() {
        for family in families.values_mut().filter_map(serde_json::Value::as_object_mut) {
            for key in TOOLS_AND_REASONING {
                family.remove(key);
            }
        }
    }
    Some(options)
}

/// Where the verbatim tail begins: the most recent turns weighing at most `keep_tokens`
/// (always the last turn), moved back so it does not begin with tool results (their call
/// stays with them).
fn kept_tail_start(history: &[Turn], keep_tokens: u64) -> usize {
    let mut start = history.len();
    let mut kept = 0u64;
    while start > 0 {
        let weight = crate::history::chars_of(&history[start - 1..start]) / 4;
        if start < history.len() && kept + weight > keep_tokens {
            break;
        }
        kept += weight;
        start -= 1;
    }
    while start > 0 && start < history.len() && matches!(history[start], Turn::ToolResults { .. }) {
        start -= 1;
    }
    start
}

fn is_summary(turn: &Turn) -> bool {
    matches!(turn, Turn::System { content, .. } if content.starts_with(SUMMARY_HEADING))
}

/// Replaces long tool outputs by a note; returns how many were elided.
fn elide_tool_outputs(turns: &mut [Turn]) -> usize {
    let mut elided = 0;
    for turn in turns {
        let Turn::ToolResults { results, .. } = turn else {
            continue;
        };
        for result in results {
            if result.content.len() < ELIDE_MIN_CHARS && result.images.is_empty() {
                continue;
            }
            result.content = format!(
                "[Output elided to save context: it was {} characters{}. Run the tool again if you need it.]",
                result.content.chars().count(),
                if result.images.is_empty() {
                    String::new()
                } else {
                    format!(" and {} images", result.images.len())
                }
            );
            result.images.clear();
            elided += 1;
        }
    }
    elided
}

/// Cuts the middle out of each tool output longer than `max_chars`, saying how much was
/// cut; returns how many were cut.
fn cut_long_outputs(turns: &mut [Turn], max_chars: usize) -> usize {
    let mut cut = 0;
    for turn in turns {
        let Turn::ToolResults { results, .. } = turn else {
            continue;
        };
        for result in results {
            let total = result.content.chars().count();
            if total <= max_chars.max(ELIDE_MIN_CHARS) {
                continue;
            }
            let head: String = result.content.chars().take(max_chars / 2).collect();
            let tail: String = result.content.chars().skip(total - max_chars / 2).collect();
            result.content = format!(
                "{head}\n\n[{} characters were cut from the middle of this output to fit the context window. \
                 Run the tool again with narrower parameters to see them.]\n\n{tail}",
                total - 2 * (max_chars / 2)
            );
            cut += 1;
        }
    }
    cut
}

/// The turns as plain text for the summary request, each long item cut in the middle.
fn transcript(turns: &[Turn]) -> String {
    let cut = |text: &str| truncate_chars(text, TRANSCRIPT_ITEM_CHARS, Mode::HeadTail);
    let mut out = String::new();
    for turn in turns {
        match turn {
            Turn::User { content, .. } => out.push_str(&format!("## User\n{}\n\n", cut(content))),
            Turn::Steering { content, .. } => {
                out.push_str(&format!("## User (while the agent worked)\n{}\n\n", cut(content)))
            }
            Turn::System { content, .. } => out.push_str(&format!("## Note\n{}\n\n", cut(content))),
            Turn::Assistant { message, .. } => {
                out.push_str("## Assistant\n");
                for part in &message.parts {
                    match part {
                        ContentPart::Text { text, .. } => out.push_str(&format!("{}\n", cut(text))),
                        ContentPart::ToolCall {
                            id, name, arguments, ..
                        } => out.push_str(&format!(
                            "[called {name} ({id}) with {}]\n",
                            cut(&arguments.to_string())
                        )),
                        ContentPart::Thinking { .. }
                        | ContentPart::RedactedThinking { .. }
                        | ContentPart::ToolResult { .. } => {}
                    }
                }
                out.push('\n');
            }
            Turn::ToolResults { results, .. } => {
                for result in results {
                    let status = if result.is_error { "failed" } else { "result" };
                    out.push_str(&format!(
                        "## Tool {status} ({})\n{}\n\n",
                        result.tool_call_id,
                        cut(&result.content)
                    ));
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::history::ToolResult;
    use crate::llm::Message;
    use serde_json::json;

    fn user(text: &str) -> Turn {
        Turn::User {
            content: text.to_string(),
            timestamp_ms: 0,
        }
    }

    fn call(id: &str) -> Turn {
        Turn::Assistant {
            message: Message {
                role: crate::llm::Role::Assistant,
                parts: vec![ContentPart::ToolCall {
                    id: id.to_string(),
                    name: "read_file".to_string(),
                    arguments: json!({"file_path": "a"}),
                    signature: None,
                }],
            },
            usage: Usage::default(),
            response_id: None,
            timestamp_ms: 0,
        }
    }

    fn results(id: &str, chars: usize) -> Turn {
        Turn::ToolResults {
            results: vec![ToolResult {
                tool_call_id: id.to_string(),
                content: "x".repeat(chars),
                is_error: false,
                images: Vec::new(),
            }],
            timestamp_ms: 0,
        }
    }

    #[test]
    fn the_kept_tail_never_begins_with_tool_results() {
        let history = vec![
            user("go"),
            call("1"),
            results("1", 4_000),
            call("2"),
            results("2", 4_000),
        ];
        // 1,000 tokens hold the last results but not their call: the call is kept too.
        assert_eq!(kept_tail_start(&history, 1_000), 3);
        assert_eq!(
            kept_tail_start(&history, 0),
            3,
            "the last turn always stays, with its call"
        );
        assert_eq!(kept_tail_start(&history, 100_000), 0);
    }

    #[test]
    fn the_summary_request_carries_no_tool_or_reasoning_options() {
        let options = json!({
            "anthropic": {"thinking": {"type": "enabled", "budget_tokens": 10000}, "beta_headers": ["x"], "tool_choice": {"type": "any"}},
            "openai": {"reasoning": {"effort": "high"}, "parallel_tool_calls": false, "service_tier": "flex"}
        });
        assert_eq!(
            summary_options(Some(&options)),
            Some(json!({"anthropic": {"beta_headers": ["x"]}, "openai": {"service_tier": "flex"}}))
        );
        assert_eq!(summary_options(None), None);
    }

    #[test]
    fn eliding_keeps_short_outputs_and_says_what_was_removed() {
        let mut turns = vec![results("1", 100), results("2", 5_000)];
        assert_eq!(elide_tool_outputs(&mut turns), 1);
        let Turn::ToolResults { results, .. } = &turns[1] else {
            panic!()
        };
        assert!(results[0].content.contains("it was 5000 characters"));
        assert_eq!(elide_tool_outputs(&mut turns), 0, "a note is not elided again");
    }
}
