//! Conversation turns (section 2.4 of the spec) and their conversion to LLM messages.

use crate::llm::{ContentPart, MessageView, WireCache};

pub use agent_protocol::{HistoryEntry, ResumeRequest, ToolResult, Turn};

/// The messages of a request, borrowed from the history. Steering and system turns become
/// user messages: the model reads them as further instructions.
pub fn to_messages(history: &[Turn]) -> Vec<MessageView<'_>> {
    history
        .iter()
        .map(|turn| match turn {
            Turn::User { content, .. } | Turn::Steering { content, .. } => {
                MessageView::user_text(content.as_str())
            }
            Turn::System { content, .. } => MessageView::user_text(format!("[system] {content}")),
            Turn::Assistant { message, .. } => MessageView::from(message),
            Turn::ToolResults { results, .. } => MessageView::tool_results(results),
        })
        .collect()
}

/// A session's history, with what is derived from it for every request: its size, for the
/// estimates made before each one (compaction, budgets, the context warning), and its items
/// serialised for the wire ([`WireCache`]). Both are kept up to date as turns are appended
/// and made again after any other change, which goes through [`History::change`].
#[derive(Debug, Default)]
pub struct History {
    turns: Vec<Turn>,
    chars: std::cell::Cell<Option<u64>>,
    wire: std::cell::RefCell<WireCache>,
}

impl History {
    pub fn new(turns: Vec<Turn>) -> Self {
        Self {
            turns,
            chars: std::cell::Cell::new(None),
            wire: Default::default(),
        }
    }

    pub fn push(&mut self, turn: Turn) {
        if let Some(chars) = self.chars.get() {
            self.chars
                .set(Some(chars + chars_of(std::slice::from_ref(&turn))));
        }
        self.turns.push(turn);
    }

    /// Changes the turns in any other way. `change` returns its result and whether it
    /// changed anything; only then is what is derived from the turns made again.
    pub fn change<R>(&mut self, change: impl FnOnce(&mut Vec<Turn>) -> (R, bool)) -> R {
        let (result, changed) = change(&mut self.turns);
        if changed {
            self.chars.set(None);
            self.wire.get_mut().clear();
        }
        result
    }

    /// The serialised items of the history, for requests whose messages are its turns.
    pub fn wire_cache(&self) -> &std::cell::RefCell<WireCache> {
        &self.wire
    }

    /// Characters of everything the model is sent from the history (see [`chars_of`]).
    pub fn chars(&self) -> u64 {
        match self.chars.get() {
            Some(chars) => chars,
            None => {
                let chars = chars_of(&self.turns);
                self.chars.set(Some(chars));
                chars
            }
        }
    }
}

impl std::ops::Deref for History {
    type Target = [Turn];

    fn deref(&self) -> &[Turn] {
        &self.turns
    }
}

/// What an image weighs in the estimate: about 1,600 tokens, what Anthropic and OpenAI bill
/// for a picture near their default size limit, at the estimate's four characters a token.
const IMAGE_CHARS: usize = 6_400;

/// Size of everything the model is sent from `turns`, in bytes: close to characters for
/// code, and the heuristic (1 token ~ 4 characters) is rough anyway.
pub fn chars_of(turns: &[Turn]) -> u64 {
    let chars: usize = turns
        .iter()
        .map(|turn| match turn {
            Turn::User { content, .. } | Turn::Steering { content, .. } | Turn::System { content, .. } => {
                content.len()
            }
            Turn::ToolResults { results, .. } => results
                .iter()
                .map(|r| r.content.len() + r.images.len() * IMAGE_CHARS)
                .sum(),
            Turn::Assistant { message, .. } => message
                .parts
                .iter()
                .map(|part| match part {
                    ContentPart::Text { text, .. } | ContentPart::Thinking { text, .. } => text.len(),
                    ContentPart::ToolCall { name, arguments, .. } => name.len() + arguments.to_string().len(),
                    ContentPart::ToolResult { content, images, .. } => {
                        content.len() + images.len() * IMAGE_CHARS
                    }
                    ContentPart::RedactedThinking { data } => data.len(),
                })
                .sum(),
        })
        .sum();
    chars as u64
}
