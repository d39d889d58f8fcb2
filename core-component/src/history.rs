//! Conversation turns (section 2.4 of the spec) and their conversion to LLM messages.

use crate::llm::{ContentPart, ImageData, Message, Role, Usage};
use serde::{Deserialize, Serialize};

/// The outcome of one tool call, as the model will see it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolResult {
    pub tool_call_id: String,
    pub content: String,
    pub is_error: bool,
    /// Images the tool returned (never truncated; each counts as a fixed size for context).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub images: Vec<ImageData>,
}

/// One entry of the history.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Turn {
    User {
        content: String,
        timestamp_ms: u64,
    },
    /// The model's response exactly as produced: text, reasoning (with signatures) and
    /// tool calls in order, so it can be replayed verbatim.
    Assistant {
        message: Message,
        usage: Usage,
        response_id: Option<String>,
        timestamp_ms: u64,
    },
    ToolResults {
        results: Vec<ToolResult>,
        timestamp_ms: u64,
    },
    System {
        content: String,
        timestamp_ms: u64,
    },
    Steering {
        content: String,
        timestamp_ms: u64,
    },
}

/// Builds the messages of a request from the history. Steering and system turns become
/// user messages: the model reads them as further instructions.
pub fn to_messages(history: &[Turn]) -> Vec<Message> {
    history
        .iter()
        .map(|turn| match turn {
            Turn::User { content, .. } | Turn::Steering { content, .. } => {
                Message::user_text(content.clone())
            }
            Turn::System { content, .. } => Message::user_text(format!("[system] {content}")),
            Turn::Assistant { message, .. } => message.clone(),
            Turn::ToolResults { results, .. } => Message {
                role: Role::User,
                parts: results
                    .iter()
                    .map(|r| ContentPart::ToolResult {
                        tool_call_id: r.tool_call_id.clone(),
                        content: r.content.clone(),
                        is_error: r.is_error,
                        images: r.images.clone(),
                    })
                    .collect(),
            },
        })
        .collect()
}
