//! The SSE decoder on arbitrary bytes: it never panics, and where the body is cut into
//! pieces never changes what it decodes.
#![no_main]

use agent_core::llm::sse::SseDecoder;
use libfuzzer_sys::fuzz_target;

fn decode(body: &[u8], piece: usize) -> Vec<(String, String, Option<String>)> {
    let mut decoder = SseDecoder::new();
    let mut events = Vec::new();
    for chunk in body.chunks(piece.max(1)) {
        events.extend(decoder.feed(chunk));
    }
    events.extend(decoder.finish());
    events.into_iter().map(|e| (e.event, e.data, e.id)).collect()
}

fuzz_target!(|input: &[u8]| {
    let Some((&split, body)) = input.split_first() else {
        return;
    };
    let whole = decode(body, body.len());
    let pieces = decode(body, usize::from(split % 17) + 1);
    assert_eq!(whole, pieces, "chunking changed the decoded events");
});
