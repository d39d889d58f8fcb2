//! Anthropic Messages: the request (path, headers and body), written from the borrowed request
//! without a `Value` tree (see `body.rs`).

use crate::llm::body::{self, Arguments, BodyWriter};
use crate::llm::types::*;
use serde::Serialize;
use serde::ser::{SerializeMap, Serializer};
use serde_json::{Value, json};

pub const PATH: &str = "/v1/messages";
const API_VERSION: &str = "2023-06-01";

/// Thinking budget per reasoning effort, in tokens.
fn thinking_budget(effort: ReasoningEffort) -> u32 {
    match effort {
        ReasoningEffort::Low => 2_048,
        ReasoningEffort::Medium => 8_192,
        ReasoningEffort::High => 24_576,
    }
}

/// Headers of a request (credentials are the host's business).
pub fn headers(request: &Request) -> Vec<(String, String)> {
    let mut headers = vec![
        ("content-type".to_string(), "application/json".to_string()),
        ("anthropic-version".to_string(), API_VERSION.to_string()),
        ("accept".to_string(), "text/event-stream".to_string()),
    ];
    let betas = body::provider_options(request, "anthropic")
        .and_then(|o| o.get("beta_headers"))
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(Value::as_str).collect::<Vec<_>>().join(","))
        .filter(|s| !s.is_empty());
    if let Some(betas) = betas {
        headers.push(("anthropic-beta".to_string(), betas));
    }
    headers
}

/// The JSON body of a streaming request.
///
/// Anthropic caches a prompt's prefix only up to blocks marked `cache_control` (at most four
/// per request). Marked: the last tool (the tools come first in the prefix), the system
/// prompt, and the last block of each of the last two user messages. The newest mark writes
/// this turn's prefix; the one before it sits where the previous request ended, so this
/// request reads that prefix back even after a long tool round (the API looks back only 20
/// blocks from a mark). The marks do not change the prefix's bytes, so a request hits what
/// the one before it wrote. `provider_options.anthropic.auto_cache = false` turns this off.
pub fn request_body(request: &Request) -> body::Result<Vec<u8>> {
    let cache = body::provider_options(request, "anthropic")
        .and_then(|o| o.get("auto_cache"))
        .and_then(Value::as_bool)
        .unwrap_or(true);
    let mut body = BodyWriter::new(
        request,
        WireProtocol::AnthropicMessages,
        "anthropic",
        &["beta_headers", "auto_cache"],
    );
    body.field("model", request.model)?;
    let mut max_tokens = request.max_tokens;
    if let Some(effort) = request.reasoning_effort {
        let budget = thinking_budget(effort);
        // The API requires max_tokens > budget_tokens; leave room for the answer itself.
        max_tokens = max_tokens.max(budget + 4_096);
        body.field("thinking", &json!({"type": "enabled", "budget_tokens": budget}))?;
    }
    body.field("max_tokens", &max_tokens)?;
    if !request.system.is_empty() {
        let system = [TextBlock {
            kind: "text",
            text: request.system,
        }];
        body.prompt_field(request, "system", |out| marked_if(cache, out, &system))?;
    }
    body.raw_field("messages", |out| write_messages(out, request, cache))?;
    if !request.tools.is_empty() {
        let tools: Vec<Tool> = request.tools.iter().map(|tool| Tool(tool)).collect();
        body.prompt_field(request, "tools", |out| marked_if(cache, out, &tools))?;
        body.field("tool_choice", &json!({"type": "auto"}))?;
    }
    if let Some(schema) = request.output_schema {
        body.field(
            "output_config",
            &json!({"format": {"type": "json_schema", "schema": schema}}),
        )?;
    }
    body.field("stream", &true)?;
    body.finish()
}

/// Writes a list of objects, its last one with the cache mark when `cache`.
fn marked_if<T: Serialize>(cache: bool, out: &mut Vec<u8>, list: &[T]) -> body::Result<()> {
    let mut bytes = serde_json::to_vec(list)?;
    if cache && bytes.ends_with(b"}]") {
        bytes.pop();
        write_marked(out, &bytes);
        out.push(b']');
    } else {
        out.extend_from_slice(&bytes);
    }
    Ok(())
}

/// Writes JSON ending with an object, with the cache mark added to that object.
fn write_marked(out: &mut Vec<u8>, json: &[u8]) {
    match json.split_last() {
        Some((b'}', head)) => {
            out.extend_from_slice(head);
            out.extend_from_slice(br#","cache_control":{"type":"ephemeral"}}"#);
        }
        _ => out.extend_from_slice(json),
    }
}

/// The messages, consecutive same-role ones merged (the API requires alternation; tool
/// results and steering text share one user message), from each message's blocks.
fn write_messages(out: &mut Vec<u8>, request: &Request, cache: bool) -> body::Result<()> {
    let blocks_of = |index: usize, out: &mut Vec<u8>| blocks(&request.messages[index], out);
    body::message_fragments(request, WireProtocol::AnthropicMessages, blocks_of, |fragments| {
        // Each merged message: its role and the range of fragments it takes (non-empty ones).
        let mut merged: Vec<(Role, std::ops::Range<usize>)> = Vec::new();
        for (i, (message, fragment)) in request.messages.iter().zip(fragments).enumerate() {
            if fragment.is_empty() {
                continue;
            }
            match merged.last_mut() {
                Some((role, range)) if *role == message.role => range.end = i + 1,
                _ => merged.push((message.role, i..i + 1)),
            }
        }
        let mut users = merged
            .iter()
            .enumerate()
            .rev()
            .filter(|(_, (role, _))| *role == Role::User);
        let marked: [Option<usize>; 2] = match cache {
            true => [users.next().map(|u| u.0), users.next().map(|u| u.0)],
            false => [None, None],
        };
        out.push(b'[');
        for (i, (role, range)) in merged.iter().enumerate() {
            if i > 0 {
                out.push(b',');
            }
            out.extend_from_slice(br#"{"role":"#);
            serde_json::to_writer(&mut *out, role)?;
            out.extend_from_slice(br#","content":["#);
            // A range ends at a non-empty fragment: the message's last block is in it.
            let mut first = true;
            for k in range.clone().filter(|&k| !fragments[k].is_empty()) {
                if !first {
                    out.push(b',');
                }
                first = false;
                if k + 1 == range.end && marked.contains(&Some(i)) {
                    write_marked(out, fragments[k]);
                } else {
                    out.extend_from_slice(fragments[k]);
                }
            }
            out.extend_from_slice(b"]}");
        }
        out.push(b']');
        Ok(())
    })
}

/// A message's content blocks, comma-separated. The API rejects empty text blocks; a
/// response can contain one (an empty start with no deltas), so it is not replayed.
fn blocks(message: &MessageView, out: &mut Vec<u8>) -> body::Result<()> {
    for part in message.parts() {
        if !matches!(&part, PartView::Text { text, .. } if text.is_empty()) {
            body::push_value(out, &Block(&part))?;
        }
    }
    Ok(())
}

#[derive(Serialize)]
struct TextBlock<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    text: &'a str,
}

struct Tool<'a>(&'a ToolDefinition);

impl Serialize for Tool<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(3))?;
        map.serialize_entry("name", &self.0.name)?;
        map.serialize_entry("description", &self.0.description)?;
        map.serialize_entry("input_schema", &self.0.parameters)?;
        map.end()
    }
}

struct Block<'v, 'a>(&'v PartView<'a>);

impl Serialize for Block<'_, '_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(None)?;
        match self.0 {
            PartView::Text { text, .. } => {
                map.serialize_entry("type", "text")?;
                map.serialize_entry("text", text)?;
            }
            PartView::ToolCall {
                id, name, arguments, ..
            } => {
                map.serialize_entry("type", "tool_use")?;
                map.serialize_entry("id", id)?;
                map.serialize_entry("name", name)?;
                map.serialize_entry("input", &Arguments::of(arguments))?;
            }
            PartView::ToolResult {
                tool_call_id,
                content,
                is_error,
                images,
            } => {
                map.serialize_entry("type", "tool_result")?;
                map.serialize_entry("tool_use_id", tool_call_id)?;
                if images.is_empty() {
                    map.serialize_entry("content", content)?;
                } else {
                    map.serialize_entry(
                        "content",
                        &ResultWithImages {
                            text: content,
                            images,
                        },
                    )?;
                }
                map.serialize_entry("is_error", is_error)?;
            }
            PartView::Thinking { text, signature, .. } => {
                map.serialize_entry("type", "thinking")?;
                map.serialize_entry("thinking", text)?;
                map.serialize_entry("signature", signature.unwrap_or_default())?;
            }
            PartView::RedactedThinking { data } => {
                map.serialize_entry("type", "redacted_thinking")?;
                map.serialize_entry("data", data)?;
            }
        }
        map.end()
    }
}

/// A tool result's text followed by its images, as content blocks.
struct ResultWithImages<'a> {
    text: &'a str,
    images: &'a [ImageData],
}

impl Serialize for ResultWithImages<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeSeq;
        let mut seq = serializer.serialize_seq(Some(1 + self.images.len()))?;
        seq.serialize_element(&TextBlock {
            kind: "text",
            text: self.text,
        })?;
        for image in self.images {
            seq.serialize_element(&ImageBlock {
                kind: "image",
                source: ImageSource {
                    kind: "base64",
                    media_type: &image.media_type,
                    data: &image.data_base64,
                },
            })?;
        }
        seq.end()
    }
}

#[derive(Serialize)]
struct ImageBlock<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    source: ImageSource<'a>,
}

#[derive(Serialize)]
struct ImageSource<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    media_type: &'a str,
    data: &'a str,
}
