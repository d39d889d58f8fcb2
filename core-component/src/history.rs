//! Conversation turns (section 2.4 of the spec) and their conversion to LLM messages.

use crate::llm::{ContentPart, Message, Role};

pub use agent_protocol::{HistoryEntry, ResumeRequest, ToolResult, Turn};

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
