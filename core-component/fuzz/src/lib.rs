//! What every stream-fold target does, written once: the input as an SSE body through the
//! decoder and a protocol's fold (a response or an error, never a panic), and the same bytes
//! as a JSON body through its non-streaming parser and its error classifier.

/// Expands to the fuzz target of one protocol module of `agent_core::llm`; `$handle` calls
/// the fold on an `SseEvent` (folds differ in whether they need the event's name).
#[macro_export]
macro_rules! fold_target {
    ($protocol:ident, |$fold:ident, $event:ident| $handle:expr) => {
        use agent_core::llm::sse::SseDecoder;
        use agent_core::llm::$protocol::{StreamFold, error_from_body, parse_response};

        libfuzzer_sys::fuzz_target!(|body: &[u8]| {
            if let Ok(value) = serde_json::from_slice::<serde_json::Value>(body) {
                let _ = parse_response(&value);
                let _ = error_from_body(Some(400), &value, None);
            }
            let mut decoder = SseDecoder::new();
            let mut events = decoder.feed(body);
            events.extend(decoder.finish());
            let mut $fold = StreamFold::new();
            for $event in events {
                if $handle.is_err() {
                    return;
                }
            }
            let _ = $fold.finished();
            let _ = $fold.into_response(&mut |_| {});
        });
    };
}
