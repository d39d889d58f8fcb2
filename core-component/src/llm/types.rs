//! Provider-neutral request, response and message types (after the unified LLM spec).

use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::borrow::Cow;

pub use agent_protocol::{
    ContentPart, FinishReason, ImageData, Message, ReasoningEffort, Role, ToolCall, ToolDefinition,
    ToolResult, Usage, WireProtocol,
};

/// One request to a model. It borrows what it sends (the history, the tools, the system
/// prompt), so a request costs no copy of the conversation: each wire protocol serialises
/// its body straight from these borrows.
#[derive(Debug, Clone)]
pub struct Request<'a> {
    pub model: &'a str,
    pub system: &'a str,
    pub messages: Vec<MessageView<'a>>,
    pub tools: Vec<&'a ToolDefinition>,
    pub max_tokens: u32,
    pub reasoning_effort: Option<ReasoningEffort>,
    /// Provider-specific options merged into the request body.
    pub provider_options: Option<&'a Value>,
    /// A JSON Schema the answer must match, asked for through the protocol's structured
    /// output (Responses `text.format`, Chat Completions `response_format`, Gemini
    /// `responseJsonSchema`, Anthropic `output_config.format`).
    pub output_schema: Option<&'a Value>,
    /// Names the requests that share a prefix (the session's id), for a provider that routes
    /// requests to its prompt cache by it (OpenAI's `prompt_cache_key`).
    pub cache_key: Option<&'a str>,
    /// The fragments of these messages already serialised, for a request whose messages are
    /// a session's history (see `wire_cache`): kept there, one per message index.
    pub cache: Option<&'a std::cell::RefCell<super::WireCache>>,
}

/// A message of a request, borrowed from where it is kept (the history). Its parts are made
/// as they are read ([`MessageView::parts`]), so a request allocates nothing per message.
#[derive(Debug, Clone, PartialEq)]
pub struct MessageView<'a> {
    pub role: Role,
    content: ViewContent<'a>,
}

#[derive(Debug, Clone, PartialEq)]
enum ViewContent<'a> {
    Parts(&'a [ContentPart]),
    /// One text (a user's input, a steering or system note).
    Text(Cow<'a, str>),
    ToolResults(&'a [ToolResult]),
}

/// A [`ContentPart`] borrowed. Text may be owned: a history item shown to the model with a
/// label (a system notice) has no borrowed form.
#[derive(Debug, Clone, PartialEq)]
pub enum PartView<'a> {
    Text {
        text: Cow<'a, str>,
        signature: Option<&'a str>,
    },
    ToolCall {
        id: &'a str,
        name: &'a str,
        arguments: &'a Value,
        signature: Option<&'a str>,
    },
    ToolResult {
        tool_call_id: &'a str,
        content: &'a str,
        is_error: bool,
        images: &'a [ImageData],
    },
    Thinking {
        text: &'a str,
        signature: Option<&'a str>,
        id: Option<&'a str>,
    },
    RedactedThinking {
        data: &'a str,
    },
}

impl<'a> From<&'a ContentPart> for PartView<'a> {
    fn from(part: &'a ContentPart) -> Self {
        match part {
            ContentPart::Text { text, signature } => Self::Text {
                text: Cow::Borrowed(text),
                signature: signature.as_deref(),
            },
            ContentPart::ToolCall {
                id,
                name,
                arguments,
                signature,
            } => Self::ToolCall {
                id,
                name,
                arguments,
                signature: signature.as_deref(),
            },
            ContentPart::ToolResult {
                tool_call_id,
                content,
                is_error,
                images,
            } => Self::ToolResult {
                tool_call_id,
                content,
                is_error: *is_error,
                images,
            },
            ContentPart::Thinking { text, signature, id } => Self::Thinking {
                text,
                signature: signature.as_deref(),
                id: id.as_deref(),
            },
            ContentPart::RedactedThinking { data } => Self::RedactedThinking { data },
        }
    }
}

impl<'a> From<&'a Message> for MessageView<'a> {
    fn from(message: &'a Message) -> Self {
        Self {
            role: message.role,
            content: ViewContent::Parts(&message.parts),
        }
    }
}

impl<'a> MessageView<'a> {
    /// A user message of one text.
    pub fn user_text(text: impl Into<Cow<'a, str>>) -> Self {
        Self {
            role: Role::User,
            content: ViewContent::Text(text.into()),
        }
    }

    /// A user message of tool results.
    pub fn tool_results(results: &'a [ToolResult]) -> Self {
        Self {
            role: Role::User,
            content: ViewContent::ToolResults(results),
        }
    }

    /// The parts, in order.
    pub fn parts(&self) -> impl Iterator<Item = PartView<'_>> + '_ {
        let (parts, text, results): (&[ContentPart], Option<&str>, &[ToolResult]) = match &self.content {
            ViewContent::Parts(parts) => (parts, None, &[]),
            ViewContent::Text(text) => (&[], Some(text), &[]),
            ViewContent::ToolResults(results) => (&[], None, results),
        };
        let text = text.map(|text| PartView::Text {
            text: Cow::Borrowed(text),
            signature: None,
        });
        let results = results.iter().map(|r| PartView::ToolResult {
            tool_call_id: &r.tool_call_id,
            content: &r.content,
            is_error: r.is_error,
            images: &r.images,
        });
        parts.iter().map(PartView::from).chain(text).chain(results)
    }

    /// The tool calls, in order: `(id, name, arguments)`.
    pub fn tool_calls(&self) -> impl Iterator<Item = (&str, &str, &Value)> + '_ {
        self.parts().filter_map(|part| match part {
            PartView::ToolCall {
                id, name, arguments, ..
            } => Some((id, name, arguments)),
            _ => None,
        })
    }
}

/// A complete response.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Response {
    pub id: Option<String>,
    pub model: Option<String>,
    pub message: Message,
    pub finish_reason: FinishReason,
    /// The provider's own stop reason string.
    pub raw_finish_reason: Option<String>,
    pub usage: Usage,
}

/// What a streaming response reports as it arrives.
#[derive(Debug, Clone, PartialEq)]
pub enum StreamEvent {
    TextStart,
    TextDelta(String),
    TextEnd,
    ReasoningStart,
    ReasoningDelta(String),
    ReasoningEnd,
    ToolCallStart { id: String, name: String },
    ToolCallEnd { id: String },
}
