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
