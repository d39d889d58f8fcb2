//! MCP servers as host tools: each `[mcp_servers.NAME]` of the configuration is
//! started over stdio with the official Rust SDK (`rmcp`; a trusted project's in the
//! session's command sandbox) or reached over streamable HTTP, and its tools are offered as
//! `NAME__tool`, behind the same approvals as every host tool. A server that does not start
//! is reported and left out; the run goes on without its tools. The servers' tools are a
//! [`ToolSource`]: a list a server announces as changed is offered to running sessions from
//! their next request.

mod notices;
mod result;
mod sandboxed;
mod server;
pub mod spec;
mod tool;
mod transport;

pub use server::McpServer;
pub use spec::McpServerSpec;
pub use tool::{McpTool, SEPARATOR};

use crate::host_tools::registry::{HostTool, ToolSource};
use crate::sandbox::Sandbox;
use async_trait::async_trait;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The most tools, and bytes of their definitions, one server offers the model (as for a
/// plugin).
const MAX_TOOLS: usize = 64;
const MAX_DEFINITION_BYTES: usize = 256 * 1024;

/// What starting the configured servers gave.
#[derive(Default)]
pub struct StartedServers {
    pub running: Vec<Arc<McpServer>>,
    /// Servers that did not start, with why.
    pub failed: Vec<(String, String)>,
    /// Servers configured with `enabled = false`.
    pub disabled: Vec<String>,
}

impl StartedServers {
    /// The running servers' tools, as they change.
    pub fn tool_source(&self) -> Arc<dyn ToolSource> {
        Arc::new(McpTools {
            servers: self.running.clone(),
        })
    }

    /// Stops every running server.
    pub async fn stop(&self) {
        futures_util::future::join_all(self.running.iter().map(|s| s.stop())).await;
    }
}

/// The running servers' tools as a [`ToolSource`]; its generation is the sum of theirs.
struct McpTools {
    servers: Vec<Arc<McpServer>>,
}

#[async_trait]
impl ToolSource for McpTools {
    async fn tools_since(&self, known: u64) -> Option<(u64, Vec<Arc<dyn HostTool>>)> {
        for server in &self.servers {
            server.refresh_if_announced().await;
        }
        let generation = self.servers.iter().map(|s| s.generation()).sum();
        if generation == known {
            return None;
        }
        Some((generation, offered_tools(&self.servers).await))
    }
}

/// The servers' offered tools as host tools. A tool whose name cannot be offered as it is,
/// or past a server's limits, is left out with a warning.
async fn offered_tools(servers: &[Arc<McpServer>]) -> Vec<Arc<dyn HostTool>> {
    let mut tools: Vec<Arc<dyn HostTool>> = Vec::new();
    for server in servers {
        let (mut count, mut bytes) = (0, 0);
        for tool in server.tools().await {
            if !server.spec().offers(&tool.name) {
                continue;
            }
            // The plugins' limits: a server cannot fill every request with definitions.
            let size = tool.name.len()
                + tool.description.as_deref().map_or(0, str::len)
                + serde_json::to_string(&tool.input_schema).map_or(0, |s| s.len());
            if count == MAX_TOOLS || bytes + size > MAX_DEFINITION_BYTES {
                tracing::warn!(
                    "MCP server {}: its tool {:?} and any after it are left out: a server offers at most \
                     {MAX_TOOLS} tools and {} KiB of definitions (enabled_tools chooses which)",
                    server.name(),
                    tool.name,
                    MAX_DEFINITION_BYTES / 1024
                );
                break;
            }
            count += 1;
            bytes += size;
            match McpTool::new(server.clone(), &tool) {
                Some(host_tool) => tools.push(Arc::new(host_tool)),
                None => tracing::warn!(
                    "MCP server {}: its tool {:?} is left out: {}{SEPARATOR}{} is not a name providers \
                     accept (at most 64 letters, digits, '_' and '-')",
                    server.name(),
                    tool.name,
                    server.name(),
                    tool.name
                ),
            }
        }
    }
    tools
}

/// Where the servers' standard error goes: `mcp-logs/NAME.log` in the state folder.
pub fn log_dir() -> Option<PathBuf> {
    crate::persist::default_state_dir().map(|dir| dir.join("mcp-logs"))
}

/// Starts the enabled servers of `specs` at once, each within its own start-up timeout, their
/// standard error in `logs` (see [`log_dir`]; discarded when `None`). A trusted project's
/// stdio servers run in `project_sandbox`, the session's command sandbox (`None`: with the
/// user's rights, as the session's commands in `danger-full-access`).
pub async fn start_servers(
    specs: &BTreeMap<String, McpServerSpec>,
    workspace: &Path,
    logs: Option<&Path>,
    project_sandbox: Option<Arc<Sandbox>>,
) -> StartedServers {
    let mut started = StartedServers::default();
    let starting = specs.iter().filter(|(name, spec)| {
        if !spec.enabled {
            started.disabled.push((*name).clone());
        }
        spec.enabled
    });
    let starts: Vec<_> = starting
        .map(|(name, spec)| async {
            let result = McpServer::start(name, spec.clone(), workspace, logs, project_sandbox.clone()).await;
            (name.clone(), result)
        })
        .collect();
    for (name, result) in futures_util::future::join_all(starts).await {
        match result {
            Ok(server) => started.running.push(server),
            Err(why) => started.failed.push((name, why)),
        }
    }
    started
}
