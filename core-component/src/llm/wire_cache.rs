//! What a session's requests repeat, serialised once. Each request sends the whole history
//! again, and escaping it into JSON was most of a turn's cost (BENCHMARKS.md section 1),
//! growing with the conversation. A history item never changes once appended, so its part of
//! the body (its fragment: the JSON values it adds to the protocol's list) is written once
//! and copied into every later request; so are the system prompt's and the tools' fields,
//! kept with the prompt text they were written for (a new day's prompt writes them again, and
//! so do host tools that change mid-session; provider options do not change). The session's
//! history owns the cache and empties it whenever the history changes in another way than by
//! appending (compaction, a restore).

use super::WireProtocol;
use super::body::Result;
use std::rc::Rc;

#[derive(Debug, Default)]
pub struct WireCache {
    protocol: Option<WireProtocol>,
    /// By message index: that message's fragment (maybe empty).
    fragments: Vec<Vec<u8>>,
    /// The prompt's fields (system prompt, tools) by name: their JSON values, written for
    /// the system prompt `prompt_source`.
    prompt_fields: Vec<(&'static str, Vec<u8>)>,
    /// Shared with the session that builds the prompt ([`WireCache::keep_prompt`]), so a
    /// request's prompt is recognised by its address instead of comparing its text, twice a
    /// request (a byte loop in wasm, where that comparison was 7 % of a round).
    prompt_source: Rc<str>,
    /// The last body's buffer, given back after it was sent, for the next body.
    buffer: Vec<u8>,
}

impl WireCache {
    pub fn clear(&mut self) {
        let buffer = std::mem::take(&mut self.buffer);
        *self = Self {
            buffer,
            ..Self::default()
        };
    }

    /// Bytes kept.
    pub fn len_bytes(&self) -> usize {
        let fields: usize = self.prompt_fields.iter().map(|(_, json)| json.len()).sum();
        self.fragments.iter().map(Vec::len).sum::<usize>() + fields
    }

    /// Starts over when asked for another protocol than the one kept.
    fn for_protocol(&mut self, protocol: WireProtocol) {
        if self.protocol != Some(protocol) {
            self.clear();
            self.protocol = Some(protocol);
        }
    }

    /// The JSON value of the prompt's field `name` for the system prompt `system`, written
    /// (and kept) by `write` when not kept yet.
    pub(crate) fn prompt_field(
        &mut self,
        protocol: WireProtocol,
        system: &str,
        name: &'static str,
        write: impl FnOnce(&mut Vec<u8>) -> Result<()>,
    ) -> Result<&[u8]> {
        self.for_protocol(protocol);
        if !same_text(&self.prompt_source, system) {
            self.prompt_fields.clear();
            self.prompt_source = Rc::from(system);
        }
        let at = match self.prompt_fields.iter().position(|(kept, _)| *kept == name) {
            Some(at) => at,
            None => {
                let mut json = Vec::new();
                write(&mut json)?;
                self.prompt_fields.push((name, json));
                self.prompt_fields.len() - 1
            }
        };
        Ok(&self.prompt_fields[at].1)
    }

    /// The system prompt the next requests send, as the session keeps it: a prompt the
    /// fields were written for (the same text) is kept, another one empties them.
    pub fn keep_prompt(&mut self, system: &Rc<str>) {
        if !same_text(&self.prompt_source, system) {
            self.prompt_fields.clear();
        }
        self.prompt_source = system.clone();
    }

    /// Writes the prompt's fields again for the next request (the tools changed).
    pub fn forget_prompt_fields(&mut self) {
        self.prompt_fields.clear();
    }

    /// A buffer for a body, empty, with the room of the last one.
    pub(crate) fn take_buffer(&mut self) -> Vec<u8> {
        let mut buffer = std::mem::take(&mut self.buffer);
        buffer.clear();
        buffer
    }

    /// Keeps a sent body's buffer for the next body.
    pub fn give_back(&mut self, buffer: Vec<u8>) {
        if buffer.capacity() > self.buffer.capacity() {
            self.buffer = buffer;
        }
    }

    /// The fragments of messages `0..count` in `protocol`, writing (and keeping) those not
    /// kept yet with `write(index)`. A cache kept for another protocol, or for more messages
    /// than the request has, starts over.
    pub(crate) fn fragments(
        &mut self,
        protocol: WireProtocol,
        count: usize,
        write: impl Fn(usize) -> Result<Vec<u8>>,
    ) -> Result<Vec<&[u8]>> {
        self.for_protocol(protocol);
        if self.fragments.len() > count {
            self.fragments.clear();
        }
        while self.fragments.len() < count {
            let fragment = write(self.fragments.len())?;
            self.fragments.push(fragment);
        }
        Ok(self.fragments.iter().map(Vec::as_slice).collect())
    }
}

/// `kept` and `text` hold the same characters. The same address and length mean the same
/// text: `kept` holds its allocation, so no other string can have taken that address.
fn same_text(kept: &Rc<str>, text: &str) -> bool {
    (std::ptr::eq(kept.as_ptr(), text.as_ptr()) && kept.len() == text.len()) || **kept == *text
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::llm::types::*;
    use crate::llm::{anthropic, chat_completions, gemini, openai_responses};
    use serde_json::json;
    use std::cell::RefCell;

    /// A conversation with every kind of part, turn by turn.
    fn conversation() -> Vec<Message> {
        let call = |id: &str, path: &str| ContentPart::ToolCall {
            id: id.into(),
            name: "read_file".into(),
            arguments: json!({"file_path": path}),
            signature: Some("sig-call".into()),
        };
        let result = |id: &str, text: &str, images: Vec<ImageData>| ContentPart::ToolResult {
            tool_call_id: id.into(),
            content: text.into(),
            is_error: false,
            images,
        };
        vec![
            Message::user_text("Read a.txt and b.png, \"quoted\"\n\ttabbed"),
            Message {
                role: Role::Assistant,
                parts: vec![
                    ContentPart::Thinking {
                        text: "plan".into(),
                        signature: Some("enc".into()),
                        id: Some("rs_1".into()),
                    },
                    ContentPart::Text {
                        text: String::new(),
                        signature: None,
                    },
                    ContentPart::Text {
                        text: "Reading.".into(),
                        signature: None,
                    },
                    call("c1", "a.txt"),
                    call("c2", "b.png"),
                ],
            },
            Message {
                role: Role::User,
                parts: vec![
                    result("c1", "line one\nline two", Vec::new()),
                    result(
                        "c2",
                        "an image",
                        vec![ImageData {
                            media_type: "image/png".into(),
                            data_base64: "iVBORw0KGgo=".into(),
                        }],
                    ),
                ],
            },
            Message::user_text("[system] a steering note right after the results"),
            Message {
                role: Role::Assistant,
                parts: vec![ContentPart::ToolCall {
                    id: "c3".into(),
                    name: "shell".into(),
                    arguments: json!("not an object"),
                    signature: None,
                }],
            },
            Message {
                role: Role::User,
                parts: vec![ContentPart::ToolResult {
                    tool_call_id: "c3".into(),
                    content: "error: bad arguments".into(),
                    is_error: true,
                    images: Vec::new(),
                }],
            },
            Message {
                role: Role::Assistant,
                parts: vec![ContentPart::Text {
                    text: "Done.".into(),
                    signature: Some("sig-text".into()),
                }],
            },
            Message::user_text("Thanks"),
        ]
    }

    fn tools() -> Vec<ToolDefinition> {
        ["read_file", "shell"]
            .map(|name| ToolDefinition {
                name: name.into(),
                description: format!("The {name} tool, \"quoted\"."),
                parameters: json!({"type": "object", "properties": {"path": {"type": "string"}}}),
            })
            .to_vec()
    }

    fn request<'a>(messages: &'a [Message], cache: Option<&'a RefCell<WireCache>>) -> Request<'a> {
        Request {
            model: "m",
            system: "You are a coding agent.",
            messages: messages.iter().map(MessageView::from).collect(),
            tools: Vec::new(),
            max_tokens: 100,
            reasoning_effort: None,
            provider_options: None,
            output_schema: None,
            cache_key: None,
            cache,
        }
    }

    type BodyOf = fn(&Request) -> crate::llm::body::Result<Vec<u8>>;

    const PROTOCOLS: [(WireProtocol, BodyOf); 4] = [
        (WireProtocol::AnthropicMessages, anthropic::request_body),
        (WireProtocol::ChatCompletions, chat_completions::request_body),
        (WireProtocol::OpenaiResponses, openai_responses::request_body),
        (WireProtocol::Gemini, gemini::request_body),
    ];

    #[test]
    fn a_growing_conversation_serialises_the_same_with_the_cache_as_without() {
        let all = conversation();
        let tools = tools();
        for (protocol, body_of) in PROTOCOLS {
            let cache = RefCell::new(WireCache::default());
            for turns in 1..=all.len() {
                let with_tools = |cache| Request {
                    tools: tools.iter().collect(),
                    ..request(&all[..turns], cache)
                };
                let fresh = body_of(&with_tools(None)).unwrap();
                let cached = body_of(&with_tools(Some(&cache))).unwrap();
                assert_eq!(
                    String::from_utf8_lossy(&cached),
                    String::from_utf8_lossy(&fresh),
                    "{protocol:?} after {turns} turns"
                );
                serde_json::from_slice::<serde_json::Value>(&cached).unwrap();
            }
            assert!(cache.borrow().len_bytes() > 0);
        }
    }

    #[test]
    fn a_cache_for_another_protocol_or_a_longer_history_starts_over() {
        let all = conversation();
        let cache = RefCell::new(WireCache::default());
        anthropic::request_body(&request(&all, Some(&cache))).unwrap();
        // The same cache asked for Gemini, then for a shorter history (a compaction that
        // did not go through the history's `change` would be caught here too).
        for (messages, (_, body_of)) in [(&all[..], PROTOCOLS[3]), (&all[..3], PROTOCOLS[0])] {
            let fresh = body_of(&request(messages, None)).unwrap();
            let cached = body_of(&request(messages, Some(&cache))).unwrap();
            assert_eq!(cached, fresh);
        }
    }

    #[test]
    fn a_prompt_built_again_is_serialised_again() {
        let all = conversation();
        for (protocol, body_of) in PROTOCOLS {
            let cache = RefCell::new(WireCache::default());
            body_of(&request(&all, Some(&cache))).unwrap();
            let next_day = |cache| Request {
                system: "You are a coding agent. Today is another day.",
                ..request(&all, cache)
            };
            let cached = body_of(&next_day(Some(&cache))).unwrap();
            assert_eq!(cached, body_of(&next_day(None)).unwrap(), "{protocol:?}");
            assert!(String::from_utf8_lossy(&cached).contains("another day"));
        }
    }

    #[test]
    fn a_prompt_kept_by_the_session_is_recognised_and_another_one_written_again() {
        let all = conversation();
        let cache = RefCell::new(WireCache::default());
        let first: Rc<str> = Rc::from("You are a coding agent.");
        cache.borrow_mut().keep_prompt(&first);
        let body = |system: &str, cache| {
            anthropic::request_body(&Request {
                system,
                ..request(&all, cache)
            })
        };
        let sent = body(&first, Some(&cache)).unwrap();
        assert_eq!(sent, body(&first, None).unwrap());
        // The same text in another allocation keeps what was written; other text does not.
        let copy: Rc<str> = Rc::from(first.to_string());
        cache.borrow_mut().keep_prompt(&copy);
        assert_eq!(body(&copy, Some(&cache)).unwrap(), sent);
        let next: Rc<str> = Rc::from("You are a coding agent. Another day.");
        cache.borrow_mut().keep_prompt(&next);
        let again = body(&next, Some(&cache)).unwrap();
        assert_eq!(again, body(&next, None).unwrap());
        assert!(String::from_utf8_lossy(&again).contains("Another day."));
        // A request with a prompt the session did not keep is still written for its text.
        assert_eq!(
            body("Other.", Some(&cache)).unwrap(),
            body("Other.", None).unwrap()
        );
    }
}
