//! `session/load`'s replay: a saved session's conversation as the updates the editor saw
//! while it ran (the user's inputs, the answers and reasoning, each tool call with its
//! result), sent before the load is answered.

use agent_client_protocol::v1::schema::{
    ContentBlock, SessionUpdate, ToolCall, ToolCallContent, ToolCallStatus, ToolCallUpdate,
    ToolCallUpdateFields,
};
use agent_protocol::{ContentPart, Turn};
use serde_json::Value;

/// How much of a replayed call's output is sent (its end): the editor shows the
/// conversation, the model keeps the whole of it.
const REPLAYED_OUTPUT: usize = 16 * 1024;

/// The updates that show `turns` again.
pub fn updates(turns: &[Turn]) -> Vec<SessionUpdate> {
    let mut updates = Vec::new();
    for turn in turns {
        match turn {
            Turn::User { content, .. } | Turn::Steering { content, .. } => {
                updates.push(SessionUpdate::UserMessageChunk(super::updates::chunk(content)));
            }
            Turn::Assistant { message, .. } => {
                for part in &message.parts {
                    match part {
                        ContentPart::Text { text, .. } if !text.is_empty() => {
                            updates.push(SessionUpdate::AgentMessageChunk(super::updates::chunk(text)));
                        }
                        ContentPart::Thinking { text, .. } if !text.is_empty() => {
                            updates.push(SessionUpdate::AgentThoughtChunk(super::updates::chunk(text)));
                        }
                        ContentPart::ToolCall {
                            id, name, arguments, ..
                        } => {
                            let title =
                                format!("{name} {}", crate::chat::tool_lines::summary(arguments, &[]));
                            updates.push(SessionUpdate::ToolCall(
                                ToolCall::new(id.clone(), title.trim_end())
                                    .status(ToolCallStatus::InProgress)
                                    .raw_input(arguments.clone()),
                            ));
                        }
                        _ => {}
                    }
                }
            }
            Turn::ToolResults { results, .. } => {
                for result in results {
                    let status = match result.is_error {
                        true => ToolCallStatus::Failed,
                        false => ToolCallStatus::Completed,
                    };
                    let shown = super::updates::tail(&result.content, REPLAYED_OUTPUT);
                    updates.push(SessionUpdate::ToolCallUpdate(ToolCallUpdate::new(
                        result.tool_call_id.clone(),
                        ToolCallUpdateFields::new()
                            .status(status)
                            .content(vec![ToolCallContent::from(ContentBlock::from(shown.to_string()))])
                            .raw_output(Value::String(shown.to_string())),
                    )));
                }
            }
            Turn::System { .. } => {}
        }
    }
    updates
}

#[cfg(test)]
mod tests {
    use super::*;
    use agent_protocol::{Message, Role, ToolResult, Usage};
    use serde_json::json;

    #[test]
    fn a_conversation_replays_as_inputs_answers_and_finished_calls() {
        let turns = vec![
            Turn::User {
                content: "list it".into(),
                timestamp_ms: 0,
            },
            Turn::Assistant {
                message: Message {
                    role: Role::Assistant,
                    parts: vec![
                        ContentPart::Text {
                            text: "Looking.".into(),
                            signature: None,
                        },
                        ContentPart::ToolCall {
                            id: "c1".into(),
                            name: "shell".into(),
                            arguments: json!({"command": "ls"}),
                            signature: None,
                        },
                    ],
                },
                usage: Usage::default(),
                response_id: None,
                timestamp_ms: 0,
            },
            Turn::ToolResults {
                results: vec![ToolResult {
                    tool_call_id: "c1".into(),
                    content: "a.txt".into(),
                    is_error: false,
                    images: Vec::new(),
                }],
                timestamp_ms: 0,
            },
        ];
        let kinds: Vec<Value> = updates(&turns)
            .iter()
            .map(|u| serde_json::to_value(u).unwrap())
            .collect();
        let names: Vec<&str> = kinds
            .iter()
            .map(|u| u["sessionUpdate"].as_str().unwrap())
            .collect();
        assert_eq!(
            names,
            [
                "user_message_chunk",
                "agent_message_chunk",
                "tool_call",
                "tool_call_update"
            ]
        );
        assert_eq!(kinds[0]["content"]["text"], "list it");
        assert_eq!(kinds[2]["title"], "shell ls");
        assert_eq!(kinds[3]["status"], "completed");
        assert_eq!(kinds[3]["content"][0]["content"]["text"], "a.txt");
    }
}
