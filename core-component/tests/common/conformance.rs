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

/// One recorded response and what parsing it must give.
pub struct Fixture {
    /// The recording's file name, for messages.
    pub name: String,
    pub bytes: Vec<u8>,
    /// The `expected` block of its `.meta.json`.
    pub expected: serde_json::Value,
    pub http_status: u16,
}

/// Runs `check` on every fixture of a provider, or prints "skipped" when `../shared` is
/// absent; an empty folder is a failure.
pub fn check_all(provider: &str, mut check: impl FnMut(&Fixture)) {
    let Some(dir) = fixture_dir(provider) else {
        println!("skipped: ../shared/conformance/wire/{provider} is not present");
        return;
    };
    let metas = meta_files(&dir);
    assert!(!metas.is_empty(), "no fixtures in {}", dir.display());
    for meta_path in &metas {
        let text = std::fs::read_to_string(meta_path).unwrap_or_default();
        let meta: serde_json::Value =
            serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", meta_path.display()));
        let name = meta["file"].as_str().unwrap_or_default().to_string();
        let bytes = std::fs::read(dir.join(&name)).unwrap_or_else(|e| panic!("{name}: {e}"));
        check(&Fixture {
            name,
            bytes,
            expected: meta["expected"].clone(),
            http_status: meta["http_status"].as_u64().unwrap_or(200) as u16,
        });
    }
    println!("checked {} {provider} fixtures", metas.len());
}
