//! Chat Completions: the request (path, headers and body), written from the borrowed request
//! without a `Value` tree (see `body.rs`).

use crate::llm::body::{self, Arguments, BodyWriter, Seq};
use crate::llm::types::*;
use serde::Serialize;
use serde::ser::{SerializeMap, Serializer};
use serde_json::{Value, json};
use std::borrow::Cow;

pub const PATH: &str = "/v1/chat/completions";

pub fn headers() -> Vec<(String, String)> {
    crate::llm::json_stream_headers()
}

/// The JSON body of a streaming request.
pub fn request_body(request: &Request) -> body::Result<Vec<u8>> {
    let mut body = BodyWriter::new(request, WireProtocol::ChatCompletions, "chat_completions", &[]);
    body.field("model", request.model)?;
    // The system prompt is the first message; its JSON is kept with the prompt's.
    let system = match request.system.is_empty() {
        true => Vec::new(),
        false => body::prompt_json(request, WireProtocol::ChatCompletions, "system", |out| {
            body::push_value(out, &ChatMessage::System(request.system))
        })?,
    };
    body.raw_field("messages", |out| {
        let messages_of = |index: usize, out: &mut Vec<u8>| {
            convert(&request.messages[index])
                .iter()
                .try_for_each(|message| body::push_value(out, message))
        };
        body::message_fragments(request, WireProtocol::ChatCompletions, messages_of, |fragments| {
            let all: Vec<&[u8]> = std::iter::once(system.as_slice())
                .chain(fragments.iter().copied())
                .collect();
            body::write_list(out, &all);
            Ok(())
        })
    })?;
    if !request.tools.is_empty() {
        let tools = Seq(|| request.tools.iter().copied().map(Function));
        body.prompt_field(request, "tools", |out| serde_json::to_writer(out, &tools))?;
        body.field("tool_choice", "auto")?;
    }
    // `max_tokens` is what every compatible server accepts (OpenAI's own newer name,
    // `max_completion_tokens`, is not).
    body.field("max_tokens", &request.max_tokens)?;
    if let Some(effort) = request.reasoning_effort {
        body.field("reasoning_effort", &effort)?;
    }
    // Compatible servers (llama.cpp, vLLM, Ollama) turn response_format into a grammar that
    // leaves no room for tool calls: with tools the schema is in the instructions only.
    if let Some(schema) = request.output_schema.filter(|_| request.tools.is_empty()) {
        let format = json!({"name": "final_answer", "schema": schema, "strict": false});
        body.field(
            "response_format",
            &json!({"type": "json_schema", "json_schema": format}),
        )?;
    }
    body.field("stream", &true)?;
    body.field("stream_options", &json!({"include_usage": true}))?;
    body.finish()
}

/// A tool as Chat Completions offers it: `{"type": "function", "function": {...}}`.
struct Function<'a>(&'a ToolDefinition);

impl Serialize for Function<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        #[derive(Serialize)]
        struct Declaration<'a> {
            name: &'a str,
            description: &'a str,
            parameters: &'a Value,
        }
        let mut map = serializer.serialize_map(Some(2))?;
        map.serialize_entry("type", "function")?;
        map.serialize_entry(
            "function",
            &Declaration {
                name: &self.0.name,
                description: &self.0.description,
                parameters: &self.0.parameters,
            },
        )?;
        map.end()
    }
}

/// A Chat Completions message, borrowing from the request.
enum ChatMessage<'a> {
    System(&'a str),
    /// Tool calls ride on the assistant message with JSON-encoded arguments.
    Assistant {
        text: Cow<'a, str>,
        calls: Vec<(&'a str, &'a str, String)>,
    },
    Tool {
        tool_call_id: &'a str,
        content: &'a str,
    },
    /// A `tool` message holds text only, so a tool's images follow in a user message.
    Pictures(Vec<(&'a str, &'a [ImageData])>),
    User(Cow<'a, str>),
}

/// Concatenated text parts (borrowed when there is one).
fn text_of<'a>(parts: impl Iterator<Item = PartView<'a>>) -> Cow<'a, str> {
    let mut text: Option<Cow<'a, str>> = None;
    for part in parts {
        if let PartView::Text { text: t, .. } = part {
            match &mut text {
                None => text = Some(t),
                Some(all) => all.to_mut().push_str(&t),
            }
        }
    }
    text.unwrap_or_default()
}

/// One of our messages as Chat Completions messages: tool results become `tool` messages.
/// Reasoning is not replayed (servers reject or ignore it in input).
fn convert<'v>(message: &'v MessageView<'_>) -> Vec<ChatMessage<'v>> {
    let mut out = Vec::new();
    match message.role {
        Role::Assistant => {
            let text = text_of(message.parts());
            let calls: Vec<_> = message
                .tool_calls()
                .map(|(id, name, arguments)| (id, name, Arguments::of(arguments).to_json()))
                .collect();
            if !text.is_empty() || !calls.is_empty() {
                out.push(ChatMessage::Assistant { text, calls });
            }
        }
        Role::User => {
            let mut pictures = Vec::new();
            for part in message.parts() {
                if let PartView::ToolResult {
                    tool_call_id,
                    content,
                    images,
                    ..
                } = part
                {
                    out.push(ChatMessage::Tool {
                        tool_call_id,
                        content,
                    });
                    if !images.is_empty() {
                        pictures.push((tool_call_id, images));
                    }
                }
            }
            if !pictures.is_empty() {
                out.push(ChatMessage::Pictures(pictures));
            }
            let text = text_of(message.parts());
            if !text.is_empty() {
                out.push(ChatMessage::User(text));
            }
        }
    }
    out
}

impl Serialize for ChatMessage<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(None)?;
        match self {
            Self::System(text) => {
                map.serialize_entry("role", "system")?;
                map.serialize_entry("content", text)?;
            }
            Self::Assistant { text, calls } => {
                map.serialize_entry("role", "assistant")?;
                map.serialize_entry("content", &(!text.is_empty()).then_some(text))?;
                if !calls.is_empty() {
                    let calls = Seq(|| {
                        calls.iter().map(|(id, name, arguments)| CallOut {
                            id,
                            kind: "function",
                            function: FunctionCall { name, arguments },
                        })
                    });
                    map.serialize_entry("tool_calls", &calls)?;
                }
            }
            Self::Tool {
                tool_call_id,
                content,
            } => {
                map.serialize_entry("role", "tool")?;
                map.serialize_entry("tool_call_id", tool_call_id)?;
                map.serialize_entry("content", content)?;
            }
            Self::Pictures(pictures) => {
                map.serialize_entry("role", "user")?;
                let parts = Seq(|| pictures.iter().flat_map(|(id, images)| picture_parts(id, images)));
                map.serialize_entry("content", &parts)?;
            }
            Self::User(text) => {
                map.serialize_entry("role", "user")?;
                map.serialize_entry("content", text)?;
            }
        }
        map.end()
    }
}

#[derive(Serialize)]
struct CallOut<'a> {
    id: &'a str,
    #[serde(rename = "type")]
    kind: &'static str,
    function: FunctionCall<'a>,
}

#[derive(Serialize)]
struct FunctionCall<'a> {
    name: &'a str,
    arguments: &'a str,
}

/// A tool call's images as content parts, after a line that names the call.
fn picture_parts<'a>(
    tool_call_id: &'a str,
    images: &'a [ImageData],
) -> impl Iterator<Item = PicturePart<'a>> {
    std::iter::once(PicturePart::Caption(tool_call_id)).chain(images.iter().map(PicturePart::Image))
}

enum PicturePart<'a> {
    Caption(&'a str),
    Image(&'a ImageData),
}

impl Serialize for PicturePart<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(2))?;
        match self {
            Self::Caption(id) => {
                map.serialize_entry("type", "text")?;
                map.serialize_entry("text", &format_args!("Images returned by tool call {id}:"))?;
            }
            Self::Image(image) => {
                map.serialize_entry("type", "image_url")?;
                map.serialize_entry("image_url", &ImageUrl { url: DataUrl(image) })?;
            }
        }
        map.end()
    }
}

#[derive(Serialize)]
struct ImageUrl<'a> {
    url: DataUrl<'a>,
}

/// An image as a `data:` URL, written without building the string.
pub(crate) struct DataUrl<'a>(pub(crate) &'a ImageData);

impl Serialize for DataUrl<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(&format_args!(
            "data:{};base64,{}",
            self.0.media_type, self.0.data_base64
        ))
    }
}
