//! Section 3.3 of the spec: read_file returns an image file as image content for
//! multimodal models, and each wire protocol carries it the way its API expects.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests may panic

mod common;

use agent_core::llm::{
    ContentPart, ImageData, Message, MessageView, Request, Role, anthropic, chat_completions, gemini,
    openai_responses,
};
use agent_core::{EventKind, SessionConfig};
use agent_test_support::fakes::FakeEnv;
use base64::Engine;
use common::{Harness, text_reply, tool_reply};
use serde_json::{Value, json};

/// A 1x1 PNG (signature, IHDR, IDAT, IEND).
const PIXEL_PNG: &[u8] = &[
    0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0x00, 0x00, 0x00, 0x0D, 0x49, 0x48, 0x44, 0x52, 0x00,
    0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01, 0x08, 0x06, 0x00, 0x00, 0x00, 0x1F, 0x15, 0xC4, 0x89, 0x00,
    0x00, 0x00, 0x0D, 0x49, 0x44, 0x41, 0x54, 0x78, 0x9C, 0x63, 0x00, 0x01, 0x00, 0x00, 0x05, 0x00, 0x01,
    0x0D, 0x0A, 0x2D, 0xB4, 0x00, 0x00, 0x00, 0x00, 0x49, 0x45, 0x4E, 0x44, 0xAE, 0x42, 0x60, 0x82,
];

fn b64(bytes: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

fn read_image_session(config: SessionConfig, env: FakeEnv, path: &str) -> Harness {
    let mut h = Harness::with(
        env,
        config,
        vec![
            tool_reply(&[("t1", "read_file", json!({"file_path": path}))]),
            text_reply("It is a single pixel."),
        ],
    );
    h.session.submit("What is in the picture?").unwrap();
    h
}

#[test]
fn an_image_reaches_an_anthropic_model_as_an_image_block_inside_the_tool_result() {
    let env = FakeEnv::default();
    env.put_bytes("shot.png", PIXEL_PNG);
    let h = read_image_session(
        SessionConfig::new("anthropic", "claude-sonnet-4-5"),
        env,
        "shot.png",
    );
    let result = &h.tool_results(1)[0];
    assert_eq!(result["is_error"], false);
    let blocks = result["content"].as_array().expect("content blocks");
    assert_eq!(blocks[0]["type"], "text");
    assert!(blocks[0]["text"].as_str().unwrap().contains("image/png"));
    assert_eq!(
        blocks[1],
        json!({"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": b64(PIXEL_PNG)}})
    );
    // Hosts see what was shown without the pixels.
    let end = &h.events_of(EventKind::ToolCallEnd)[0];
    assert_eq!(end["images"][0]["media_type"], "image/png");
    assert_eq!(end["images"][0]["base64_chars"], b64(PIXEL_PNG).len());
}

#[test]
fn jpeg_gif_and_webp_are_recognised_by_their_signatures_not_their_names() {
    // 1 x 1 pictures written by Pillow.
    let decoded = |b: &str| base64::engine::general_purpose::STANDARD.decode(b).unwrap();
    for (bytes, media_type) in [
        (decoded(JPEG_PIXEL), "image/jpeg"),
        (
            decoded("R0lGODdhAQABAIEAAMgeHgAAAAAAAAAAACwAAAAAAQABAAAIBAABBAQAOw=="),
            "image/gif",
        ),
        (
            decoded(
                "UklGRjoAAABXRUJQVlA4IC4AAACwAQCdASoBAAEAAUAmJaACdLoABDAAAP7x3I/4DdfFtMv/vYL/3YL/3YL/WwAA",
            ),
            "image/webp",
        ),
    ] {
        let env = FakeEnv::default();
        env.put_bytes("picture.dat", &bytes);
        let h = read_image_session(SessionConfig::new("anthropic", "m"), env, "picture.dat");
        let blocks = h.tool_results(1)[0]["content"].clone();
        assert_eq!(blocks[1]["source"]["media_type"], media_type, "{blocks}");
    }
}

const JPEG_PIXEL: &str = "/9j/4AAQSkZJRgABAQAAAQABAAD/2wBDAAgGBgcGBQgHBwcJCQgKDBQNDAsLDBkSEw8UHRofHh0aHBwgJC4nICIsIxwcKDcpLDAxNDQ0Hyc5PTgyPC4zNDL/2wBDAQkJCQwLDBgNDRgyIRwhMjIyMjIyMjIyMjIyMjIyMjIyMjIyMjIyMjIyMjIyMjIyMjIyMjIyMjIyMjIyMjIyMjL/wAARCAABAAEDASIAAhEBAxEB/8QAHwAAAQUBAQEBAQEAAAAAAAAAAAECAwQFBgcICQoL/8QAtRAAAgEDAwIEAwUFBAQAAAF9AQIDAAQRBRIhMUEGE1FhByJxFDKBkaEII0KxwRVS0fAkM2JyggkKFhcYGRolJicoKSo0NTY3ODk6Q0RFRkdISUpTVFVWV1hZWmNkZWZnaGlqc3R1dnd4eXqDhIWGh4iJipKTlJWWl5iZmqKjpKWmp6ipqrKztLW2t7i5usLDxMXGx8jJytLT1NXW19jZ2uHi4+Tl5ufo6erx8vP09fb3+Pn6/8QAHwEAAwEBAQEBAQEBAQAAAAAAAAECAwQFBgcICQoL/8QAtREAAgECBAQDBAcFBAQAAQJ3AAECAxEEBSExBhJBUQdhcRMiMoEIFEKRobHBCSMzUvAVYnLRChYkNOEl8RcYGRomJygpKjU2Nzg5OkNERUZHSElKU1RVVldYWVpjZGVmZ2hpanN0dXZ3eHl6goOEhYaHiImKkpOUlZaXmJmaoqOkpaanqKmqsrO0tba3uLm6wsPExcbHyMnK0tPU1dbX2Nna4uPk5ebn6Onq8vP09fb3+Pn6/9oADAMBAAIRAxEAPwDkKKKK8U/TD//Z";

#[test]
fn a_picture_cut_short_is_refused_with_the_reason() {
    let env = FakeEnv::default();
    env.put_bytes("cut.png", &PIXEL_PNG[..PIXEL_PNG.len() - 4]);
    let h = read_image_session(SessionConfig::new("anthropic", "m"), env, "cut.png");
    let result = &h.tool_results(1)[0];
    assert_eq!(result["is_error"], true);
    assert_eq!(
        result["content"],
        "Tool error (read_file): cut.png is an image (image/png) that cannot be sent to the model: it is cut short (the end of the image/png data is missing)"
    );
}

#[test]
fn a_model_without_image_input_gets_a_clear_error_instead() {
    let env = FakeEnv::default();
    env.put_bytes("shot.png", PIXEL_PNG);
    let mut config = SessionConfig::new("anthropic", "m");
    config.image_input = Some(false);
    let h = read_image_session(config, env, "shot.png");
    let result = &h.tool_results(1)[0];
    assert_eq!(result["is_error"], true);
    let text = result["content"].as_str().unwrap();
    assert!(
        text.contains("shot.png is an image (image/png") && text.contains("does not accept images"),
        "{text}"
    );
}

#[test]
fn an_image_too_large_to_send_is_refused_with_its_size() {
    let env = FakeEnv::default();
    let mut big = PIXEL_PNG.to_vec();
    big.resize(4_000_000, 0);
    env.put_bytes("huge.png", &big);
    let h = read_image_session(SessionConfig::new("anthropic", "m"), env, "huge.png");
    let result = &h.tool_results(1)[0];
    assert_eq!(result["is_error"], true);
    assert!(result["content"].as_str().unwrap().contains("of 4000000 bytes"));
}

/// A conversation whose last message carries a tool result with an image.
fn conversation_with_image() -> Vec<Message> {
    vec![
        Message::user_text("look"),
        Message {
            role: Role::Assistant,
            parts: vec![ContentPart::ToolCall {
                id: "call_1".into(),
                name: "read_file".into(),
                arguments: json!({"file_path": "shot.png"}),
                signature: None,
            }],
        },
        Message {
            role: Role::User,
            parts: vec![ContentPart::ToolResult {
                tool_call_id: "call_1".into(),
                content: "Image shot.png (image/png, 70 bytes) is attached.".into(),
                is_error: false,
                images: vec![ImageData {
                    media_type: "image/png".into(),
                    data_base64: b64(PIXEL_PNG),
                }],
            }],
        },
    ]
}

fn request_of(messages: &[Message]) -> Request<'_> {
    Request {
        cache_key: None,
        model: "m",
        system: "s",
        messages: messages.iter().map(MessageView::from).collect(),
        tools: Vec::new(),
        max_tokens: 100,
        reasoning_effort: None,
        provider_options: None,
        output_schema: None,
        cache: None,
    }
}

/// A request body as JSON.
fn json_of(body: Result<Vec<u8>, serde_json::Error>) -> Value {
    serde_json::from_slice(&body.unwrap()).unwrap()
}

#[test]
fn openai_responses_sends_the_image_as_an_input_image_of_the_function_call_output() {
    let messages = conversation_with_image();
    let body = json_of(openai_responses::request_body(&request_of(&messages)));
    let output = body["input"]
        .as_array()
        .unwrap()
        .iter()
        .find(|item| item["type"] == "function_call_output")
        .unwrap();
    assert_eq!(output["call_id"], "call_1");
    assert_eq!(output["output"][0]["type"], "input_text");
    assert_eq!(
        output["output"][1],
        json!({"type": "input_image", "image_url": format!("data:image/png;base64,{}", b64(PIXEL_PNG))})
    );
}

#[test]
fn chat_completions_follows_the_text_only_tool_message_with_a_user_message_holding_the_image() {
    let messages = conversation_with_image();
    let body = json_of(chat_completions::request_body(&request_of(&messages)));
    let messages = body["messages"].as_array().unwrap();
    let tool_at = messages.iter().position(|m| m["role"] == "tool").unwrap();
    assert!(messages[tool_at]["content"].is_string());
    let after = &messages[tool_at + 1];
    assert_eq!(after["role"], "user");
    assert!(after["content"][0]["text"].as_str().unwrap().contains("call_1"));
    assert_eq!(
        after["content"][1]["image_url"]["url"],
        Value::String(format!("data:image/png;base64,{}", b64(PIXEL_PNG)))
    );
}

#[test]
fn gemini_sends_inline_data_after_the_function_response() {
    let messages = conversation_with_image();
    let body = json_of(gemini::request_body(&request_of(&messages)));
    let last = body["contents"].as_array().unwrap().last().unwrap().clone();
    assert_eq!(last["role"], "user");
    assert!(last["parts"][0]["functionResponse"].is_object());
    assert_eq!(
        last["parts"][1],
        json!({"inlineData": {"mimeType": "image/png", "data": b64(PIXEL_PNG)}})
    );
}

#[test]
fn anthropic_request_body_keeps_plain_text_results_as_a_string() {
    let mut messages = conversation_with_image();
    if let ContentPart::ToolResult { images, .. } = &mut messages[2].parts[0] {
        images.clear();
    }
    let body = json_of(anthropic::request_body(&request_of(&messages)));
    let result = &body["messages"][2]["content"][0];
    assert!(result["content"].is_string(), "{result}");
}
