//! The defaults of a run: a session configuration, the model, and where the core component is.

use agent_protocol::{ProviderFamily, SessionConfig};
use std::path::PathBuf;

/// The model used when none is given, per provider profile.
pub fn default_model(provider: &str) -> &'static str {
    ProviderFamily::parse(provider)
        .unwrap_or(ProviderFamily::Anthropic)
        .default_model()
}

/// A session configuration with the defaults: the provider family's endpoint and protocol,
/// the shared default limits (`SessionConfig::new`).
pub fn session_config(provider: &str, model: &str) -> SessionConfig {
    SessionConfig::new(provider, model)
}

/// Where the core component is: `explicit`, else `$AGENT_CORE_COMPONENT`, else
/// `agent-core.wasm` beside the executable, one folder up (`target/` in a checkout), or in
/// `../share/agent-host/` (an installed binary).
pub fn locate_component(explicit: Option<PathBuf>) -> Result<PathBuf, String> {
    if let Some(path) = explicit.or_else(|| std::env::var_os("AGENT_CORE_COMPONENT").map(PathBuf::from)) {
        return match path.is_file() {
            true => Ok(path),
            false => Err(format!("the core component {} does not exist", path.display())),
        };
    }
    let exe_dir = std::env::current_exe()
        .ok()
        .and_then(|p| p.parent().map(PathBuf::from))
        .unwrap_or_default();
    // Beside the binary (target/debug/), one folder up (target/), and where `make install`
    // puts it: PREFIX/share/agent-host/ for PREFIX/bin/agent-host.
    let candidates = [
        exe_dir.join("agent-core.wasm"),
        exe_dir.join("../agent-core.wasm"),
        exe_dir.join("../share/agent-host/agent-core.wasm"),
    ];
    candidates.iter().find(|p| p.is_file()).cloned().ok_or_else(|| {
        format!(
            "cannot find agent-core.wasm (looked in {}); build it with `make component`, install both with `make install`, or pass --component",
            candidates
                .iter()
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        )
    })
}
