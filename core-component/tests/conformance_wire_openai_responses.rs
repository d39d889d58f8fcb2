//! The recorded OpenAI Responses streams and bodies of
//! `../shared/conformance/wire/openai_responses`, decoded by our SSE decoder and adapter and
//! compared with the expected result of each `.meta.json`, failures inside HTTP 200 streams
//! included. Skipped, saying so, when the folder is absent.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests may panic

mod common;

use agent_core::llm::openai_responses::{StreamFold, error_from_body, parse_response};
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
    let calls = expected["tool_calls"].as_array().cloned().unwrap_or_default();
    let ours = response.message.tool_calls();
    assert_eq!(ours.len(), calls.len(), "{name}: number of tool calls");
    for (call, want) in ours.iter().zip(&calls) {
        // The call is identified by call_id: function_call_output must name it.
        assert_eq!(call.id, want["call_id"].as_str().unwrap(), "{name}: call id");
        assert_eq!(call.name, want["name"].as_str().unwrap(), "{name}: tool name");
        assert_eq!(call.arguments, want["arguments"], "{name}: arguments");
    }
    let reasoning: Vec<(Option<String>, String, bool)> = response
        .message
        .parts
        .iter()
        .filter_map(|p| match p {
            ContentPart::Thinking { text, signature, id } => {
                Some((id.clone(), text.clone(), signature.is_some()))
            }
            _ => None,
        })
        .collect();
    let wanted = expected["reasoning"].as_array().cloned().unwrap_or_default();
    assert_eq!(reasoning.len(), wanted.len(), "{name}: reasoning items");
    for ((id, text, encrypted), want) in reasoning.iter().zip(&wanted) {
        assert_eq!(id.as_deref(), want["id"].as_str(), "{name}: reasoning id");
        assert_eq!(
            *encrypted,
            want["has_encrypted_content"] == true,
            "{name}: encrypted content kept"
        );
        for summary in want["summary"].as_array().into_iter().flatten() {
            assert!(
                text.contains(summary.as_str().unwrap()),
                "{name}: reasoning summary"
            );
        }
    }
    if let Some(usage) = expected["usage"].as_object() {
        let n = |f: &str| usage.get(f).and_then(Value::as_u64).unwrap_or(0);
        assert_eq!(
            response.usage.input_tokens,
            n("input_tokens"),
            "{name}: input tokens"
        );
        assert_eq!(
            response.usage.output_tokens,
            n("output_tokens"),
            "{name}: output tokens"
        );
        let cached = usage["input_tokens_details"]["cached_tokens"]
            .as_u64()
            .unwrap_or(0);
        assert_eq!(response.usage.cache_read_tokens, cached, "{name}: cached tokens");
        let reasoning = usage["output_tokens_details"]["reasoning_tokens"]
            .as_u64()
            .unwrap_or(0);
        assert_eq!(
            response.usage.reasoning_tokens, reasoning,
            "{name}: reasoning tokens"
        );
    }
    assert_eq!(
        response.id.as_deref(),
        expected["response_id"].as_str(),
        "{name}: response id"
    );
    assert_eq!(
        response.raw_finish_reason.as_deref(),
        expected["status"].as_str(),
        "{name}: status"
    );
}

fn expected_kind(code: &str) -> ErrorKind {
    match code {
        "context_length_exceeded" => ErrorKind::ContextLength,
        "rate_limit_exceeded" => ErrorKind::RateLimit,
        "insufficient_quota" => ErrorKind::PermissionDenied,
        other => panic!("no expectation for error code {other}"),
    }
}

#[test]
fn recorded_openai_responses_fixtures_decode_to_their_expected_results() {
    check_all("openai_responses", |fixture| {
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
            assert_eq!(error.kind, ErrorKind::InvalidRequest, "{name}");
            return;
        }
        if name.ends_with(".sse") {
            let whole = decode_stream(bytes, bytes.len());
            assert_eq!(
                whole,
                decode_stream(bytes, 5),
                "{name}: chunking changed the result"
            );
            match (whole, expected["error"].as_object()) {
                (Err(error), Some(want)) => {
                    assert_eq!(error.message, want["message"].as_str().unwrap(), "{name}");
                    assert_eq!(
                        error.kind,
                        expected_kind(want["code"].as_str().unwrap()),
                        "{name}"
                    );
                    if error.kind == ErrorKind::RateLimit {
                        assert_eq!(error.retry_after_ms, Some(11_054), "{name}: retry hint");
                    }
                }
                (Ok(_), Some(want)) => panic!("{name}: the failure {want:?} was not reported"),
                (Err(error), None) => panic!("{name}: {error}"),
                (Ok((response, finished)), None) => {
                    assert!(finished, "{name}: terminal event not seen");
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
