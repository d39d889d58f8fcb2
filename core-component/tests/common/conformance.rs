//! Finding the recorded provider fixtures of `../shared/conformance/wire/<provider>`.

use std::path::PathBuf;

/// The fixture folder of a provider (`$AGENT_SHARED_DIR`, else `../shared` beside the
/// repository), or `None` when it is absent and the test must say "skipped".
pub fn fixture_dir(provider: &str) -> Option<PathBuf> {
    let dir = std::env::var_os("AGENT_SHARED_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared"))
        .join("conformance/wire")
        .join(provider);
    dir.is_dir().then_some(dir)
}

/// Every `.meta.json` of a folder, sorted.
pub fn meta_files(dir: &std::path::Path) -> Vec<PathBuf> {
    let mut metas: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|entries| entries.flatten().map(|e| e.path()).collect())
        .unwrap_or_default();
    metas.retain(|p| p.to_string_lossy().ends_with(".meta.json"));
    metas.sort();
    metas
}

/// The SSE events of a recorded stream fed to the decoder in pieces of `piece` bytes (the
/// result must not depend on where the network cut the body).
pub fn sse_events(bytes: &[u8], piece: usize) -> Vec<agent_core::llm::sse::SseEvent> {
    let mut decoder = agent_core::llm::sse::SseDecoder::new();
    let mut events = Vec::new();
    for chunk in bytes.chunks(piece.max(1)) {
        events.extend(decoder.feed(chunk));
    }
    events.extend(decoder.finish());
    events
}
