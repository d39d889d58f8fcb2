//! Shared helpers of the agent-host integration tests.
#![allow(dead_code)]

use std::path::PathBuf;
use std::process::Output;

/// The built core component: `$AGENT_CORE_COMPONENT` (set by `make test`), else
/// `target/agent-core.wasm` of the workspace. Missing is a failure, not a skip: `make test`
/// always builds it first.
pub fn component() -> PathBuf {
    let path = std::env::var_os("AGENT_CORE_COMPONENT")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../target/agent-core.wasm"));
    assert!(
        path.is_file(),
        "the core component {} is missing: run `make component` (make test does it)",
        path.display()
    );
    path
}

/// A cache directory shared by the tests of one run, so only the first compiles.
pub fn cache_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("component-cache")
}

pub fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

pub fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// A tool plugin built by `make plugins` (target/plugins/NAME.wasm). Missing is a failure:
/// `make test` builds them first.
pub fn plugin(name: &str) -> PathBuf {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(format!("../../target/plugins/{name}.wasm"));
    assert!(
        path.is_file(),
        "the plugin {} is missing: run `make plugins` (make test does it)",
        path.display()
    );
    path
}
