//! What the model saw: the conversation history (section 2.4 of the spec), its messages and
//! their parts, and the journal entries a session hands its host as the history grows.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Who wrote a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    User,
    Assistant,
}

/// One piece of a message, in the order the model produced or will read it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ContentPart {
    /// `signature`: an opaque token the provider attached to this part and wants back on it
    /// (Gemini's `thoughtSignature`).
    Text {
        text: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        signature: Option<String>,
    },
    ToolCall {
        id: String,
        name: String,
        arguments: Value,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        signature: Option<String>,
    },
    /// `images`: pictures the tool returned (read_file on an image), for multimodal models.
    ToolResult {
        tool_call_id: String,
        content: String,
        is_error: bool,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        images: Vec<ImageData>,
    },
    /// Visible reasoning. `signature` must be sent back verbatim: Anthropic's signature, or
    /// OpenAI's `encrypted_content` of the reasoning item `id`.
    Thinking {
        text: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        signature: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        id: Option<String>,
    },
    /// Reasoning the provider encrypted; round-tripped as is.
    RedactedThinking { data: String },
}

/// An image sent to the model: its MIME type and its bytes in standard base64.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ImageData {
    pub media_type: String,
    pub data_base64: String,
}

impl ImageData {
    /// The image as a `data:` URL (OpenAI's form).
    pub fn data_url(&self) -> String {
        format!("data:{};base64,{}", self.media_type, self.data_base64)
    }
}

/// A message of the conversation sent to the model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Message {
    pub role: Role,
    pub parts: Vec<ContentPart>,
}

impl Message {
    pub fn user_text(text: impl Into<String>) -> Self {
        Self {
            role: Role::User,
            parts: vec![ContentPart::Text {
                text: text.into(),
                signature: None,
            }],
        }
    }

    /// Concatenated text parts.
    pub fn text(&self) -> String {
        self.parts
            .iter()
            .filter_map(|p| match p {
                ContentPart::Text { text, .. } => Some(text.as_str()),
                _ => None,
            })
            .collect()
    }

    /// Concatenated visible reasoning, if any.
    pub fn reasoning(&self) -> Option<String> {
        let parts: Vec<&str> = self
            .parts
            .iter()
            .filter_map(|p| match p {
                ContentPart::Thinking { text, .. } => Some(text.as_str()),
                _ => None,
            })
            .collect();
        (!parts.is_empty()).then(|| parts.concat())
    }

    pub fn tool_calls(&self) -> Vec<ToolCall> {
        self.parts
            .iter()
            .filter_map(|p| match p {
                ContentPart::ToolCall {
                    id, name, arguments, ..
                } => Some(ToolCall {
                    id: id.clone(),
                    name: name.clone(),
                    arguments: arguments.clone(),
                }),
                _ => None,
            })
            .collect()
    }
}

/// A tool invocation requested by the model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolCall {
    pub id: String,
    pub name: String,
    pub arguments: Value,
}

/// A tool offered to the model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolDefinition {
    pub name: String,
    pub description: String,
    pub parameters: Value,
}

/// Why the model stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FinishReason {
    Stop,
    Length,
    ToolCalls,
    ContentFilter,
    Other,
}

/// Token counts of one response: a snapshot, never a sum of deltas.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub cache_read_tokens: u64,
    pub cache_write_tokens: u64,
    /// Tokens the model spent reasoning, as each provider reports them (unified LLM spec
    /// 3.9): part of `output_tokens` for OpenAI, apart from it for Gemini (thoughts), and
    /// estimated from the thinking text for Anthropic. Absent from the JSON when zero.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub reasoning_tokens: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

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

/// What a session hands its host each time its history grows (`session-host.record-history`),
/// so that a host can journal exactly what the model saw and later `resume` from a snapshot
/// plus the entries recorded after it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum HistoryEntry {
    /// `turn` became the history's item number `index` (0-based).
    Append { index: u32, turn: Turn },
    /// One call of the tool round that will become item `index` finished; recorded as each
    /// call ends so that a session killed mid-round keeps the results it already had.
    ToolResult { index: u32, result: ToolResult },
    /// Compaction: the whole history is now `turns` (it had more items before).
    Replace { turns: Vec<Turn> },
}

impl HistoryEntry {
    /// The history position the entry belongs to.
    pub fn index(&self) -> u32 {
        match self {
            Self::Append { index, .. } | Self::ToolResult { index, .. } => *index,
            Self::Replace { turns } => turns.len() as u32,
        }
    }

    /// As JSON text (the WIT carries it as a string).
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }

    pub fn from_json(json: &str) -> Result<Self, crate::WireError> {
        serde_json::from_str(json).map_err(|e| crate::WireError::new("history entry", e))
    }
}

/// How to reopen a saved session (the core's `Session::resume`, the WIT's `session.resume`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ResumeRequest {
    /// The last `snapshot` taken.
    pub snapshot: String,
    /// The history entries recorded after it, as JSON, in order.
    pub journal: Vec<String>,
    /// A model to go on with instead of the saved one.
    pub model: Option<String>,
    /// How many more LLM turns the session may take from here (0: no limit); `None` keeps
    /// the saved limit.
    pub more_turns: Option<u32>,
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use serde_json::json;

    #[test]
    fn a_history_entry_keeps_reasoning_signatures_and_images() {
        let entry = HistoryEntry::Append {
            index: 1,
            turn: Turn::Assistant {
                message: Message {
                    role: Role::Assistant,
                    parts: vec![
                        ContentPart::Thinking {
                            text: "hm".into(),
                            signature: Some("sig".into()),
                            id: None,
                        },
                        ContentPart::Text {
                            text: "ok".into(),
                            signature: Some("gemini".into()),
                        },
                    ],
                },
                usage: Usage::default(),
                response_id: Some("resp_1".into()),
                timestamp_ms: 5,
            },
        };
        let json = entry.to_json();
        assert_eq!(HistoryEntry::from_json(&json).unwrap(), entry);
        let value: Value = serde_json::from_str(&json).unwrap();
        assert_eq!(value["op"], "append");
        assert_eq!(value["turn"]["message"]["parts"][0]["signature"], "sig");
        let result = HistoryEntry::ToolResult {
            index: 2,
            result: ToolResult {
                tool_call_id: "c".into(),
                content: "image".into(),
                is_error: false,
                images: vec![ImageData {
                    media_type: "image/png".into(),
                    data_base64: "AAAA".into(),
                }],
            },
        };
        assert_eq!(
            serde_json::to_value(&result).unwrap(),
            json!({"op": "tool_result", "index": 2, "result": {"tool_call_id": "c", "content": "image",
                "is_error": false, "images": [{"media_type": "image/png", "data_base64": "AAAA"}]}})
        );
        assert!(
            HistoryEntry::from_json("{\"op\":\"drop\"}")
                .unwrap_err()
                .to_string()
                .contains("history entry")
        );
    }
}
