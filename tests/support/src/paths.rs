//! Where the build puts what the integration tests run: the core component and the tool
//! plugins. Missing is a failure, not a skip: `make test` builds them first.

use std::path::PathBuf;

/// The checkout's root.
pub fn workspace_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The built core component: `$AGENT_CORE_COMPONENT` (set by `make test`), else
/// `target/agent-core.wasm`.
pub fn component() -> PathBuf {
    let path = std::env::var_os("AGENT_CORE_COMPONENT")
        .map(PathBuf::from)
        .unwrap_or_else(|| workspace_root().join("target/agent-core.wasm"));
    assert!(
        path.is_file(),
        "the core component {} is missing: run `make component` (make test does it)",
        path.display()
    );
    path
}

/// A tool plugin built by `make plugins` (`target/plugins/NAME.wasm`).
pub fn plugin(name: &str) -> PathBuf {
    let path = workspace_root().join(format!("target/plugins/{name}.wasm"));
    assert!(
        path.is_file(),
        "the plugin {} is missing: run `make plugins` (make test does it)",
        path.display()
    );
    path
}

/// A component with plain exports built by `make plugins` (`target/components/NAME.wasm`).
pub fn plain_component(name: &str) -> PathBuf {
    let path = workspace_root().join(format!("target/components/{name}.wasm"));
    assert!(
        path.is_file(),
        "the component {} is missing: run `make plugins` (make test does it)",
        path.display()
    );
    path
}

/// The Python of the venv with the MCP SDK (`scripts/ensure-mcp-test-servers.sh`).
pub fn mcp_python() -> PathBuf {
    let path = workspace_root().join(".toolchain/mcp-py-venv/bin/python");
    assert!(
        path.is_file(),
        "{} is missing: run scripts/ensure-mcp-test-servers.sh (make test does it)",
        path.display()
    );
    path
}

/// A file of `tests/mcp-servers` (e.g. `py_server.py`), or the entry point of one of the
/// npm servers installed there (`server-everything`: its `dist/index.js`).
pub fn mcp_server(name: &str) -> PathBuf {
    let dir = workspace_root().join("tests/mcp-servers");
    let path = if name.contains('.') {
        dir.join(name)
    } else {
        dir.join(format!("node_modules/@modelcontextprotocol/{name}/dist/index.js"))
    };
    assert!(
        path.is_file(),
        "{} is missing: run scripts/ensure-mcp-test-servers.sh (make test does it)",
        path.display()
    );
    path
}

/// The Python with the official ACP SDK (agent-client-protocol on PyPI), and the client the
/// `agent-host acp` tests drive it with.
pub fn acp_client() -> (PathBuf, PathBuf) {
    let python = workspace_root().join(".toolchain/acp-py-venv/bin/python");
    assert!(
        python.is_file(),
        "{} is missing: run scripts/ensure-acp-test-client.sh (make test does it)",
        python.display()
    );
    (python, workspace_root().join("tests/acp-client/client.py"))
}
