//! Compiled components cached on disk by content hash, so the second start skips Cranelift.

use sha2::{Digest, Sha256};
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use wasmtime::Engine;
use wasmtime::component::Component;

/// Where compiled components are cached unless told otherwise.
pub fn default_cache_dir() -> Option<PathBuf> {
    std::env::var_os("AGENT_HOST_CACHE_DIR")
        .map(PathBuf::from)
        .or_else(|| dirs::cache_dir().map(|d| d.join("agent-host").join("components")))
}

/// How the component was obtained, for diagnostics and benchmarks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CacheOutcome {
    /// Compiled now (and stored, if a cache directory was given).
    Compiled,
    /// Loaded precompiled code from the cache.
    Hit,
}

/// The SHA-256 of a component file in hex, as `agent-host --version` names the component.
pub fn component_sha256(path: &Path) -> std::io::Result<String> {
    let mut digest = Sha256::new();
    std::io::copy(&mut std::fs::File::open(path)?, &mut digest)?;
    Ok(digest.finalize().iter().map(|b| format!("{b:02x}")).collect())
}

/// Compiles a component, or loads its precompiled code from `cache_dir`, keyed by the
/// SHA-256 of the component and of the engine's compatibility fingerprint (so engines
/// configured differently, e.g. with epoch interruption for plugins, never share code).
pub fn compile_cached(
    engine: &Engine,
    bytes: &[u8],
    cache_dir: Option<&Path>,
) -> anyhow::Result<(Component, CacheOutcome)> {
    let mut fingerprint = std::collections::hash_map::DefaultHasher::new();
    engine.precompile_compatibility_hash().hash(&mut fingerprint);
    let mut digest = Sha256::new();
    digest.update(bytes);
    digest.update(fingerprint.finish().to_le_bytes());
    let key: String = digest.finalize().iter().map(|b| format!("{b:02x}")).collect();
    let cached = cache_dir.map(|dir| dir.join(format!("{key}.cwasm")));
    if let Some(file) = cached.as_ref().filter(|f| f.is_file()) {
        // SAFETY: the file was written by `precompile_component` of an engine with the same
        // compatibility hash (it is part of the file name) and is only ever replaced whole.
        match unsafe { Component::deserialize_file(engine, file) } {
            Ok(component) => return Ok((component, CacheOutcome::Hit)),
            Err(error) => {
                tracing::warn!(file = %file.display(), %error, "ignoring unusable cached component")
            }
        }
    }
    let compiled = engine.precompile_component(bytes).map_err(anyhow::Error::from)?;
    if let (Some(file), Some(dir)) = (cached.as_ref(), cache_dir) {
        let tmp = dir.join(format!("{key}.{}.tmp", std::process::id()));
        let stored = std::fs::create_dir_all(dir)
            .and_then(|()| std::fs::write(&tmp, &compiled))
            .and_then(|()| std::fs::rename(&tmp, file));
        if let Err(error) = stored {
            tracing::warn!(dir = %dir.display(), %error, "could not cache the compiled component");
            let _ = std::fs::remove_file(&tmp);
        }
    }
    // SAFETY: `compiled` was produced just above by this very engine.
    let component = unsafe { Component::deserialize(engine, &compiled) }?;
    Ok((component, CacheOutcome::Compiled))
}
