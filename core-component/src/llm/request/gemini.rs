//! Gemini: the request (path, headers and body), written from the borrowed request
//! without a `Value` tree (see `body.rs`).

use crate::llm::body::{self, Arguments, BodyWriter, Seq};
use crate::llm::types::*;
use serde::Serialize;
use serde::ser::{SerializeMap, Serializer};
use serde_json::{Map, Value, json};

/// The path of a streaming request for `model`.
pub fn path(model: &str) -> String {
    let model = model.strip_prefix("models/").unwrap_or(model);
    format!("/v1beta/models/{model}:streamGenerateContent?alt=sse")
}

pub fn headers() -> Vec<(String, String)> {
    crate::llm::json_stream_headers()
}

/// The JSON body of a request.
pub fn request_body(request: &Request) -> body::Result<Vec<u8>> {
    let mut body = BodyWriter::new(request, WireProtocol::Gemini, "gemini", &[]);
    body.raw_field("contents", |out| {
        let content_of = |index: usize, out: &mut Vec<u8>| {
            let message = &request.messages[index];
            if !message.parts().any(|part| has_part(&part)) {
                return Ok(());
            }
            let content = Content {
                message,
                earlier: body::earlier(request, index),
            };
            body::push_value(out, &content)
        };
        body::message_fragments(request, WireProtocol::Gemini, content_of, |fragments| {
            body::write_list(out, fragments);
            Ok(())
        })
    })?;
    if !request.system.is_empty() {
        let system = json!({"parts": [{"text": request.system}]});
        body.prompt_field(request, "systemInstruction", |out| {
            serde_json::to_writer(out, &system)
        })?;
    }
    if !request.tools.is_empty() {
        let declarations = Seq(|| request.tools.iter().copied().map(Declaration));
        let tools = [FunctionDeclarations { declarations }];
        body.prompt_field(request, "tools", |out| serde_json::to_writer(out, &tools))?;
        body.field("toolConfig", &json!({"functionCallingConfig": {"mode": "AUTO"}}))?;
    }
    let mut generation = Map::new();
    generation.insert("maxOutputTokens".into(), json!(request.max_tokens));
    if let Some(effort) = request.reasoning_effort {
        generation.insert("thinkingConfig".into(), thinking_config(request.model, effort));
    }
    // Gemini 2.5 refuses a JSON answer format together with function calling (Gemini 3 takes
    // both); with tools it has the schema in its instructions only.
    if let Some(schema) = request
        .output_schema
        .filter(|_| request.tools.is_empty() || request.model.contains("gemini-3"))
    {
        generation.insert("responseMimeType".into(), json!("application/json"));
        generation.insert("responseJsonSchema".into(), schema.clone());
    }
    body.field("generationConfig", &generation)?;
    body.finish()
}

/// The name of the call `id` among `messages` (functionResponse names its function; the
/// history only has the call id). Searched from the end: the call is usually just before.
fn call_name<'v>(messages: &'v [MessageView<'_>], id: &str) -> &'v str {
    messages
        .iter()
        .rev()
        .flat_map(MessageView::tool_calls)
        .find(|(call, _, _)| *call == id)
        .map_or("", |(_, name, _)| name)
}

/// Gemini 3 takes a thinking level, earlier models a token budget.
fn thinking_config(model: &str, effort: ReasoningEffort) -> Value {
    if model.contains("gemini-3") {
        let level = match effort {
            ReasoningEffort::Low => "low",
            ReasoningEffort::Medium | ReasoningEffort::High => "high",
        };
        json!({"thinkingLevel": level, "includeThoughts": true})
    } else {
        let budget = match effort {
            ReasoningEffort::Low => 1_024,
            ReasoningEffort::Medium => 8_192,
            ReasoningEffort::High => 24_576,
        };
        json!({"thinkingBudget": budget, "includeThoughts": true})
    }
}

struct Declaration<'a>(&'a ToolDefinition);

impl Serialize for Declaration<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(3))?;
        map.serialize_entry("name", &self.0.name)?;
        map.serialize_entry("description", &self.0.description)?;
        map.serialize_entry("parametersJsonSchema", &self.0.parameters)?;
        map.end()
    }
}

#[derive(Serialize)]
struct FunctionDeclarations<D> {
    #[serde(rename = "functionDeclarations")]
    declarations: D,
}

/// Whether a part is sent (empty text without a signature and redacted reasoning are not).
fn has_part(part: &PartView) -> bool {
    match part {
        PartView::Text { text, signature } => !text.is_empty() || signature.is_some(),
        PartView::RedactedThinking { .. } => false,
        PartView::ToolResult { .. } | PartView::ToolCall { .. } | PartView::Thinking { .. } => true,
    }
}

/// One of our messages as a Gemini `Content`.
struct Content<'v, 'a> {
    message: &'v MessageView<'a>,
    /// The messages before it, where its tool results' calls are.
    earlier: &'v [MessageView<'a>],
}

impl Serialize for Content<'_, '_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let role = match self.message.role {
            Role::User => "user",
            Role::Assistant => "model",
        };
        let parts = Seq(|| {
            let sent = self.message.parts().filter(has_part);
            // A tool's images travel as inline data after the function responses, as
            // gemini-cli sends them (older models take no media inside a functionResponse).
            let images = self
                .message
                .parts()
                .filter_map(|part| match part {
                    PartView::ToolResult { images, .. } => Some(images),
                    _ => None,
                })
                .flatten();
            sent.map(|part| GeminiPart::Part(part, self.earlier))
                .chain(images.map(GeminiPart::Image))
        });
        let mut map = serializer.serialize_map(Some(2))?;
        map.serialize_entry("role", role)?;
        map.serialize_entry("parts", &parts)?;
        map.end()
    }
}

enum GeminiPart<'v, 'a> {
    Part(PartView<'v>, &'v [MessageView<'a>]),
    Image(&'a ImageData),
}

impl Serialize for GeminiPart<'_, '_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(None)?;
        let signature = match self {
            Self::Image(image) => {
                let data = InlineData {
                    mime_type: &image.media_type,
                    data: &image.data_base64,
                };
                map.serialize_entry("inlineData", &data)?;
                None
            }
            Self::Part(PartView::Text { text, signature }, _) => {
                map.serialize_entry("text", text)?;
                *signature
            }
            Self::Part(PartView::Thinking { text, signature, .. }, _) => {
                map.serialize_entry("text", text)?;
                map.serialize_entry("thought", &true)?;
                *signature
            }
            Self::Part(
                PartView::ToolCall {
                    id,
                    name,
                    arguments,
                    signature,
                },
                _,
            ) => {
                let call = FunctionCall {
                    id,
                    name,
                    args: Arguments::of(arguments),
                };
                map.serialize_entry("functionCall", &call)?;
                *signature
            }
            Self::Part(
                PartView::ToolResult {
                    tool_call_id,
                    content,
                    is_error,
                    ..
                },
                earlier,
            ) => {
                let response = FunctionResponse {
                    id: tool_call_id,
                    name: call_name(earlier, tool_call_id),
                    response: match is_error {
                        true => ResponseBody::Error { error: content },
                        false => ResponseBody::Output { output: content },
                    },
                };
                map.serialize_entry("functionResponse", &response)?;
                None
            }
            Self::Part(PartView::RedactedThinking { .. }, _) => None,
        };
        if let Some(signature) = signature {
            map.serialize_entry("thoughtSignature", signature)?;
        }
        map.end()
    }
}

#[derive(Serialize)]
struct InlineData<'a> {
    #[serde(rename = "mimeType")]
    mime_type: &'a str,
    data: &'a str,
}

#[derive(Serialize)]
struct FunctionCall<'a> {
    id: &'a str,
    name: &'a str,
    args: Arguments<'a>,
}

#[derive(Serialize)]
struct FunctionResponse<'a> {
    id: &'a str,
    name: &'a str,
    response: ResponseBody<'a>,
}

#[derive(Serialize)]
#[serde(untagged)]
enum ResponseBody<'a> {
    Error { error: &'a str },
    Output { output: &'a str },
}
