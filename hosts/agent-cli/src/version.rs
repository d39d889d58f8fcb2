//! `agent-host --version`: the binary's version and the component it would run, by path and
//! content hash, so a bug report names exactly what ran.

use agent_host::compile_cache::component_sha256;
use agent_host::config::locate_component;
use std::path::PathBuf;

/// The lines `--version` prints.
pub fn describe(component: Option<PathBuf>) -> String {
    let binary = concat!("agent-host ", env!("CARGO_PKG_VERSION"));
    let component = match locate_component(component) {
        Err(why) => format!("component: not found ({why})"),
        Ok(path) => match component_sha256(&path) {
            Ok(hash) => format!("component: {} (sha256 {hash})", path.display()),
            Err(e) => format!("component: {} (unreadable: {e})", path.display()),
        },
    };
    format!("{binary}\n{component}")
}
