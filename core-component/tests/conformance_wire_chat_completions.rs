//! The recorded Chat Completions streams and bodies of
//! `../shared/conformance/wire/chat_completions` (OpenAI, vLLM, Ollama, OpenRouter, Groq,
//! DeepSeek, xAI, Novita and the Anthropic and Gemini compatibility endpoints), decoded by
//! our SSE decoder and adapter and compared with the expected result of each `.meta.json`.
//! Skipped, saying so, when the folder is absent.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests may panic

mod common;

use common::conformance::{check_all, sse_events};

use agent_core::llm::chat_completions::{StreamFold, error_from_body, parse_response};
use agent_core::llm::{LlmError, Response};
use serde_json::Value;

/// Decodes a stream fed in pieces of `piece` bytes.
fn decode_stream(bytes: &[u8], piece: usize) -> Result<(Response, bool), LlmError> {
    let mut fold = StreamFold::new();
    for event in sse_events(bytes, piece) {
        fold.handle(&event.event, &event.data, &mut |_| {})?;
    }
    let finished = fold.finished();
    Ok((fold.into_response(&mut |_| {}), finished))
}

fn check(name: &str, response: &Response, expected: &Value) {
    let text = expected["text"].as_str().unwrap_or_default();
    assert_eq!(response.message.text(), text, "{name}: text");
    let reasoning = expected["reasoning"].as_str().unwrap_or_default();
    assert_eq!(
        response.message.reasoning().unwrap_or_default(),
        reasoning,
        "{name}: reasoning"
    );
    let calls = expected["tool_calls"].as_array().cloned().unwrap_or_default();
    let ours = response.message.tool_calls();
    assert_eq!(ours.len(), calls.len(), "{name}: number of tool calls");
    for (n, (call, want)) in ours.iter().zip(&calls).enumerate() {
        match want["id"].as_str().unwrap_or_default() {
            // No id from the server: we make one up, unique within the response.
            "" => assert_eq!(call.id, format!("call_{n}"), "{name}: made-up id"),
            id => assert_eq!(call.id, id, "{name}: tool id"),
        }
        assert_eq!(
            call.name,
            want["name"].as_str().unwrap_or_default(),
            "{name}: tool name"
        );
        assert_eq!(call.arguments, want["arguments"], "{name}: arguments");
    }
    if let Some(reason) = expected["finish_reason"].as_str() {
        assert_eq!(
            response.raw_finish_reason.as_deref(),
            Some(reason),
            "{name}: finish reason"
        );
    }
    if let Some(usage) = expected["usage"].as_object() {
        let n = |field: &str| usage.get(field).and_then(Value::as_u64).unwrap_or(0);
        assert_eq!(
            response.usage.input_tokens,
            n("prompt_tokens"),
            "{name}: prompt tokens"
        );
        assert_eq!(
            response.usage.output_tokens,
            n("completion_tokens"),
            "{name}: completion tokens"
        );
        let detail = |group: &str, field: &str| usage.get(group).and_then(|g| g[field].as_u64()).unwrap_or(0);
        assert_eq!(
            response.usage.reasoning_tokens,
            detail("completion_tokens_details", "reasoning_tokens"),
            "{name}: reasoning tokens"
        );
        assert_eq!(
            response.usage.cache_read_tokens,
            detail("prompt_tokens_details", "cached_tokens"),
            "{name}: cached tokens"
        );
    }
    let id = expected["id"].as_str().or_else(|| expected["ids"][0].as_str());
    if let Some(id) = id {
        assert_eq!(response.id.as_deref(), Some(id), "{name}: response id");
    }
    if let Some(model) = expected["model"].as_str() {
        assert_eq!(response.model.as_deref(), Some(model), "{name}: model");
    }
}

#[test]
fn recorded_chat_completions_fixtures_decode_to_their_expected_results() {
    check_all("chat_completions", |fixture| {
        let (name, bytes, expected) = (&fixture.name, &fixture.bytes, &fixture.expected);
        let status = fixture.http_status;
        if status != 200 {
            let body: Value = serde_json::from_slice(bytes).unwrap();
            let error = error_from_body(Some(status), &body, None);
            let want = expected["error"]["error"]["message"].as_str().unwrap();
            assert_eq!(error.message, want, "{name}: error message");
            assert_eq!(error.kind.retryable(), status == 429, "{name}: retryable");
            return;
        }
        let errors = expected["errors"].as_array().cloned().unwrap_or_default();
        if name.ends_with(".sse") {
            let whole = decode_stream(bytes, bytes.len());
            let pieces = decode_stream(bytes, 5);
            assert_eq!(whole, pieces, "{name}: chunking changed the result");
            match (whole, errors.first()) {
                (Err(error), Some(want)) => {
                    let message = want["message"].as_str().unwrap();
                    assert_eq!(error.message, message, "{name}: in-stream error");
                    assert!(!error.kind.retryable(), "{name}: {error}");
                }
                (Ok(_), Some(want)) => panic!("{name}: the in-stream error {want} was not reported"),
                (Err(error), None) => panic!("{name}: {error}"),
                (Ok((response, finished)), None) => {
                    assert!(finished, "{name}: end of stream not recognised");
                    check(name, &response, expected);
                }
            }
        } else {
            let body: Value = serde_json::from_slice(bytes).unwrap();
            let response = parse_response(&body).unwrap_or_else(|e| panic!("{name}: {e}"));
            check(name, &response, expected);
        }
    });
}
