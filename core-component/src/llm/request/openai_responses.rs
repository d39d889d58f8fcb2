//! OpenAI Responses: the request (path, headers and body), written from the borrowed request
//! without a `Value` tree (see `body.rs`).

use super::chat_completions::DataUrl;
use crate::llm::body::{self, Arguments, BodyWriter, Seq};
use crate::llm::types::*;
use serde::Serialize;
use serde::ser::{SerializeMap, Serializer};
use serde_json::json;

pub const PATH: &str = "/v1/responses";

pub fn headers() -> Vec<(String, String)> {
    crate::llm::json_stream_headers()
}

/// The JSON body of a streaming request.
pub fn request_body(request: &Request) -> body::Result<Vec<u8>> {
    let mut body = BodyWriter::new(request, WireProtocol::OpenaiResponses, "openai", &[]);
    body.field("model", request.model)?;
    if !request.system.is_empty() {
        body.prompt_field(request, "instructions", |out| {
            serde_json::to_writer(out, request.system)
        })?;
    }
    body.raw_field("input", |out| {
        let items_of = |index: usize, out: &mut Vec<u8>| {
            let message = &request.messages[index];
            message
                .parts()
                .filter_map(|part| input_item(message.role, part))
                .try_for_each(|item| body::push_value(out, &item))
        };
        body::message_fragments(request, WireProtocol::OpenaiResponses, items_of, |fragments| {
            body::write_list(out, fragments);
            Ok(())
        })
    })?;
    if !request.tools.is_empty() {
        let tools = Seq(|| request.tools.iter().copied().map(Function));
        body.prompt_field(request, "tools", |out| serde_json::to_writer(out, &tools))?;
        body.field("tool_choice", "auto")?;
        body.field("parallel_tool_calls", &true)?;
    }
    body.field("max_output_tokens", &request.max_tokens)?;
    if let Some(effort) = request.reasoning_effort {
        body.field("reasoning", &json!({"effort": effort, "summary": "auto"}))?;
        // Nothing is stored server-side, so reasoning comes back encrypted to be replayed.
        body.field("include", &["reasoning.encrypted_content"])?;
    }
    if let Some(schema) = request.output_schema {
        let format =
            json!({"type": "json_schema", "name": "final_answer", "schema": schema, "strict": false});
        body.field("text", &json!({"format": format}))?;
    }
    body.field("store", &false)?;
    if let Some(key) = request.cache_key {
        // Requests with the same key go to the same cache, so a session's prefix hits.
        body.field("prompt_cache_key", key)?;
    }
    body.field("stream", &true)?;
    body.finish()
}

/// A tool as Responses offers it (flat, not strict).
struct Function<'a>(&'a ToolDefinition);

impl Serialize for Function<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(5))?;
        map.serialize_entry("type", "function")?;
        map.serialize_entry("name", &self.0.name)?;
        map.serialize_entry("description", &self.0.description)?;
        map.serialize_entry("parameters", &self.0.parameters)?;
        map.serialize_entry("strict", &false)?;
        map.end()
    }
}

/// A Responses input item, borrowing from the request.
enum InputItem<'a> {
    Message {
        role: Role,
        text: std::borrow::Cow<'a, str>,
    },
    Reasoning {
        id: &'a str,
        text: &'a str,
        encrypted: &'a str,
    },
    FunctionCall {
        id: &'a str,
        name: &'a str,
        arguments: String,
    },
    FunctionCallOutput {
        tool_call_id: &'a str,
        content: &'a str,
        images: &'a [ImageData],
    },
}

/// A part of one of our messages as an input item, if it has one.
fn input_item(role: Role, part: PartView<'_>) -> Option<InputItem<'_>> {
    match part {
        PartView::Text { text, .. } if !text.is_empty() => Some(InputItem::Message { role, text }),
        PartView::Text { .. } => None,
        // Without its encrypted content a reasoning item cannot be replayed statelessly.
        PartView::Thinking {
            text,
            signature: Some(encrypted),
            id: Some(id),
        } => Some(InputItem::Reasoning { id, text, encrypted }),
        PartView::Thinking { .. } | PartView::RedactedThinking { .. } => None,
        PartView::ToolCall {
            id, name, arguments, ..
        } => Some(InputItem::FunctionCall {
            id,
            name,
            arguments: Arguments::of(arguments).to_json(),
        }),
        PartView::ToolResult {
            tool_call_id,
            content,
            images,
            ..
        } => Some(InputItem::FunctionCallOutput {
            tool_call_id,
            content,
            images,
        }),
    }
}

impl Serialize for InputItem<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(None)?;
        match self {
            Self::Message { role, text } => {
                let kind = match role {
                    Role::User => "input_text",
                    Role::Assistant => "output_text",
                };
                map.serialize_entry("type", "message")?;
                map.serialize_entry("role", role)?;
                map.serialize_entry("content", &[TypedText { kind, text }])?;
            }
            Self::Reasoning { id, text, encrypted } => {
                let summary = (!text.is_empty()).then_some(TypedText {
                    kind: "summary_text",
                    text,
                });
                map.serialize_entry("type", "reasoning")?;
                map.serialize_entry("id", id)?;
                map.serialize_entry("summary", summary.as_slice())?;
                map.serialize_entry("encrypted_content", encrypted)?;
            }
            Self::FunctionCall { id, name, arguments } => {
                map.serialize_entry("type", "function_call")?;
                map.serialize_entry("call_id", id)?;
                map.serialize_entry("name", name)?;
                map.serialize_entry("arguments", arguments)?;
            }
            Self::FunctionCallOutput {
                tool_call_id,
                content,
                images,
            } => {
                map.serialize_entry("type", "function_call_output")?;
                map.serialize_entry("call_id", tool_call_id)?;
                if images.is_empty() {
                    map.serialize_entry("output", content)?;
                } else {
                    let output = Seq(|| {
                        std::iter::once(OutputPart::Text(content)).chain(images.iter().map(OutputPart::Image))
                    });
                    map.serialize_entry("output", &output)?;
                }
            }
        }
        map.end()
    }
}

#[derive(Serialize)]
struct TypedText<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    text: &'a str,
}

/// A part of a tool's output that carries images.
enum OutputPart<'a> {
    Text(&'a str),
    Image(&'a ImageData),
}

impl Serialize for OutputPart<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(2))?;
        match self {
            Self::Text(text) => {
                map.serialize_entry("type", "input_text")?;
                map.serialize_entry("text", text)?;
            }
            Self::Image(image) => {
                map.serialize_entry("type", "input_image")?;
                map.serialize_entry("image_url", &DataUrl(image))?;
            }
        }
        map.end()
    }
}
