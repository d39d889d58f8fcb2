//! The recorded Gemini and Vertex AI streams and bodies of
//! `../shared/conformance/wire/gemini`, decoded by our SSE decoder and adapter and compared
//! with the expected result of each `.meta.json`: thought parts, thought signatures on the
//! part that carried them, calls without ids, streamed `partialArgs`, blocked answers, and
//! google.rpc errors. Skipped, saying so, when the folder is absent.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests may panic

mod common;

use agent_core::llm::gemini::{StreamFold, error_from_body, parse_response};
use agent_core::llm::{ContentPart, ErrorKind, LlmError, Response};
use common::conformance::{check_all, sse_events};
use serde_json::Value;

fn decode_stream(bytes: &[u8], piece: usize) -> Result<(Response, bool), LlmError> {
    let mut fold = StreamFold::new();
    for event in sse_events(bytes, piece) {
        fold.handle(&event.data, &mut |_| {})?;
    }
    let finished = fold.finished();
    Ok((fold.into_response(&mut |_| {}), finished))
}

fn check(name: &str, response: &Response, expected: &Value) {
    assert_eq!(
        response.message.text(),
        expected["text"].as_str().unwrap_or_default(),
        "{name}: text"
    );
    assert_eq!(
        response.message.reasoning().unwrap_or_default(),
        expected["thought_text"].as_str().unwrap_or_default(),
        "{name}: thought text"
    );
    let calls = expected["tool_calls"].as_array().cloned().unwrap_or_default();
    let ours = response.message.tool_calls();
    assert_eq!(ours.len(), calls.len(), "{name}: number of tool calls");
    for (n, (call, want)) in ours.iter().zip(&calls).enumerate() {
        assert_eq!(call.id, format!("call_{n}"), "{name}: made-up id");
        assert_eq!(call.name, want["name"].as_str().unwrap(), "{name}: tool name");
        assert_eq!(call.arguments, want["arguments"], "{name}: arguments");
    }
    // Each signature stays on the kind of part it came with, whole.
    let mut signatures: Vec<(&str, &str)> = Vec::new();
    for part in &response.message.parts {
        match part {
            ContentPart::Text {
                signature: Some(s), ..
            } => signatures.push(("text", s)),
            ContentPart::ToolCall {
                signature: Some(s), ..
            } => signatures.push(("functionCall", s)),
            _ => {}
        }
    }
    let wanted = expected["thought_signatures"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    assert_eq!(signatures.len(), wanted.len(), "{name}: thought signatures");
    for ((kind, signature), want) in signatures.iter().zip(&wanted) {
        assert_eq!(want["attached_to"][0], *kind, "{name}: signature attached to");
        assert!(
            signature.starts_with(want["signature_prefix"].as_str().unwrap()),
            "{name}: signature"
        );
        assert_eq!(
            signature.len() as u64,
            want["length"].as_u64().unwrap(),
            "{name}: signature length"
        );
    }
    assert_eq!(
        response.raw_finish_reason.as_deref(),
        expected["finish_reason"].as_str(),
        "{name}: finish reason"
    );
    if let Some(usage) = expected["usage"].as_object() {
        let n = |f: &str| usage.get(f).and_then(Value::as_u64).unwrap_or(0);
        assert_eq!(
            response.usage.input_tokens,
            n("promptTokenCount"),
            "{name}: prompt tokens"
        );
        assert_eq!(
            response.usage.output_tokens,
            n("candidatesTokenCount"),
            "{name}: output tokens (the answer's)"
        );
        assert_eq!(
            response.usage.reasoning_tokens,
            n("thoughtsTokenCount"),
            "{name}: reasoning tokens (thoughts, apart from the answer's)"
        );
        assert_eq!(
            response.usage.cache_read_tokens,
            n("cachedContentTokenCount"),
            "{name}: cached prompt tokens"
        );
    }
    let ids = expected["response_ids"].as_array().cloned().unwrap_or_default();
    if let Some(last) = ids.last() {
        assert_eq!(response.id.as_deref(), last.as_str(), "{name}: response id");
    }
    if expected["prompt_feedback"]["blockReason"].is_string() {
        assert_eq!(
            response.finish_reason,
            agent_core::llm::FinishReason::ContentFilter,
            "{name}"
        );
    }
}

#[test]
fn recorded_gemini_fixtures_decode_to_their_expected_results() {
    check_all("gemini", |fixture| {
        let (name, bytes, expected) = (&fixture.name, &fixture.bytes, &fixture.expected);
        let status = fixture.http_status;
        if status != 200 {
            let body: Value = serde_json::from_slice(bytes).unwrap();
            let error = error_from_body(Some(status), &body, None);
            assert_eq!(
                error.message,
                expected["error"]["error"]["message"].as_str().unwrap(),
                "{name}"
            );
            match status {
                404 => assert_eq!(error.kind, ErrorKind::NotFound, "{name}"),
                429 => {
                    assert_eq!(error.kind, ErrorKind::RateLimit, "{name}");
                    let seconds = expected["retry_after_seconds"].as_f64().unwrap();
                    assert_eq!(error.retry_after_ms, Some((seconds * 1_000.0) as u64), "{name}");
                }
                other => panic!("{name}: no expectation for HTTP {other}"),
            }
            return;
        }
        let response = if name.ends_with(".sse") {
            let whole = decode_stream(bytes, bytes.len()).unwrap_or_else(|e| panic!("{name}: {e}"));
            let pieces = decode_stream(bytes, 5).unwrap_or_else(|e| panic!("{name}: {e}"));
            assert_eq!(whole, pieces, "{name}: chunking changed the result");
            assert!(whole.1, "{name}: end of answer not recognised");
            whole.0
        } else {
            let body: Value = serde_json::from_slice(bytes).unwrap();
            parse_response(&body).unwrap_or_else(|e| panic!("{name}: {e}"))
        };
        check(name, &response, expected);
    });
}
