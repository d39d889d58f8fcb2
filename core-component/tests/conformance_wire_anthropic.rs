//! The recorded Anthropic streams and bodies of `../shared/conformance/wire/anthropic`
//! (beside the repository): each is decoded by our SSE decoder and adapter and compared
//! with the expected result in its `.meta.json`. Skipped, saying so, when the folder is absent.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests may panic

mod common;

use common::conformance::{check_all, sse_events};

use agent_core::llm::anthropic::{StreamFold, parse_response};
use agent_core::llm::{ContentPart, Response};
use serde_json::Value;

/// Decodes a stream fed in pieces of `piece` bytes.
fn decode_stream(bytes: &[u8], piece: usize) -> Result<(Response, bool), String> {
    let mut fold = StreamFold::new();
    for event in sse_events(bytes, piece) {
        fold.handle(&event.data, &mut |_| {}).map_err(|e| e.to_string())?;
    }
    let finished = fold.finished();
    Ok((fold.into_response(&mut |_| {}), finished))
}

fn check(name: &str, response: &Response, expected: &Value) {
    if let Some(text) = expected.get("text").and_then(Value::as_str) {
        assert_eq!(response.message.text(), text, "{name}: text");
    }
    if let Some(calls) = expected.get("tool_calls").and_then(Value::as_array) {
        let ours = response.message.tool_calls();
        assert_eq!(ours.len(), calls.len(), "{name}: number of tool calls");
        for (call, want) in ours.iter().zip(calls) {
            assert_eq!(
                call.id,
                want["id"].as_str().unwrap_or_default(),
                "{name}: tool id"
            );
            assert_eq!(
                call.name,
                want["name"].as_str().unwrap_or_default(),
                "{name}: tool name"
            );
            if let Some(args) = want.get("arguments") {
                assert_eq!(&call.arguments, args, "{name}: arguments");
            }
        }
    }
    if let Some(stop) = expected.get("stop_reason").and_then(Value::as_str) {
        assert_eq!(
            response.raw_finish_reason.as_deref(),
            Some(stop),
            "{name}: stop reason"
        );
    }
    if let Some(usage) = expected.get("usage") {
        if let Some(n) = usage.get("input_tokens").and_then(Value::as_u64) {
            assert_eq!(response.usage.input_tokens, n, "{name}: input tokens");
        }
        if let Some(n) = usage.get("output_tokens").and_then(Value::as_u64) {
            assert_eq!(response.usage.output_tokens, n, "{name}: output tokens");
        }
    }
    if let Some(id) = expected.get("message_id").and_then(Value::as_str) {
        assert_eq!(response.id.as_deref(), Some(id), "{name}: message id");
    }
    if let Some(thinking) = expected.get("thinking").and_then(Value::as_str) {
        assert_eq!(
            response.message.reasoning().as_deref(),
            Some(thinking),
            "{name}: thinking"
        );
    }
    let redacted = response
        .message
        .parts
        .iter()
        .filter(|p| matches!(p, ContentPart::RedactedThinking { .. }))
        .count();
    if let Some(n) = expected.get("redacted_thinking_blocks").and_then(Value::as_u64) {
        assert_eq!(redacted as u64, n, "{name}: redacted thinking blocks");
    }
}

#[test]
fn recorded_anthropic_wire_fixtures_decode_to_their_expected_results() {
    check_all("anthropic", |fixture| {
        let (name, bytes, expected) = (&fixture.name, &fixture.bytes, &fixture.expected);
        let status = fixture.http_status;
        if status != 200 {
            let body: Value = serde_json::from_slice(bytes).unwrap();
            let error = agent_core::llm::anthropic::error_from_body(Some(status), &body, None);
            assert!(!error.message.is_empty(), "{name}: error message");
            assert!(!error.kind.retryable(), "{name}: a {status} is not retryable");
            return;
        }
        if name.ends_with(".sse") {
            // Whole, and in awkward 5-byte pieces: the result must not depend on chunking.
            let (whole, finished) =
                decode_stream(bytes, bytes.len()).unwrap_or_else(|e| panic!("{name}: {e}"));
            let (pieces, _) = decode_stream(bytes, 5).unwrap_or_else(|e| panic!("{name}: {e}"));
            assert_eq!(whole, pieces, "{name}: chunking changed the result");
            assert!(finished, "{name}: message_stop not seen");
            check(name, &whole, expected);
        } else {
            let body: Value = serde_json::from_slice(bytes).unwrap();
            let response = parse_response(&body).unwrap_or_else(|e| panic!("{name}: {e}"));
            check(name, &response, expected);
        }
    });
}
