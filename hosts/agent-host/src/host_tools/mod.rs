//! Tools the host implements and offers to the model next to the profile's own: sandboxed
//! plugin components and declarative command tools from the configuration. The core sees
//! only their definitions (in the session config) and calls them through `host-tools`.

pub mod command;
pub mod plugin;

use crate::bindings::types::ToolDefinition;
use async_trait::async_trait;
use std::collections::BTreeMap;
use std::sync::Arc;

/// What a tool may do, for approvals: a read-only session runs only `Read` tools.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Deserialize, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ToolCategory {
    /// Looks at things and changes nothing.
    Read,
    /// Changes files or state in the workspace.
    Write,
    /// Changes things beyond the workspace (deployments, clusters, accounts).
    Admin,
}

impl ToolCategory {
    pub fn as_str(self) -> &'static str {
        match self {
            ToolCategory::Read => "read",
            ToolCategory::Write => "write",
            ToolCategory::Admin => "admin",
        }
    }
}

/// One tool implemented by the host.
#[async_trait]
pub trait HostTool: Send + Sync {
    /// The definition offered to the model (name, description, JSON-schema parameters).
    fn definition(&self) -> ToolDefinition;

    fn category(&self) -> ToolCategory;

    /// Where the tool comes from, for messages (e.g. `plugin json-query (tools/jq.wasm)`).
    fn origin(&self) -> String;

    /// Runs the tool. `Err` reaches the model as an error tool result it can recover from.
    async fn call(&self, arguments_json: &str) -> Result<String, String>;
}

/// The host tools of a session, by name. Cheap to clone.
#[derive(Clone, Default)]
pub struct HostTools {
    tools: Arc<BTreeMap<String, Arc<dyn HostTool>>>,
}

impl HostTools {
    /// Collects `tools`; a name defined twice, or a name the profile already has
    /// (`reserved`), is an error naming both origins, never a silent override.
    pub fn new(tools: Vec<Arc<dyn HostTool>>, reserved: &[String]) -> Result<Self, String> {
        let mut by_name: BTreeMap<String, Arc<dyn HostTool>> = BTreeMap::new();
        for tool in tools {
            let name = tool.definition().name;
            if reserved.contains(&name) {
                return Err(format!(
                    "{} defines the tool {name:?}, which the profile already has; rename it",
                    tool.origin()
                ));
            }
            if let Some(first) = by_name.get(&name) {
                return Err(format!(
                    "two tools are named {name:?}: one from {}, one from {}; rename one",
                    first.origin(),
                    tool.origin()
                ));
            }
            by_name.insert(name, tool);
        }
        Ok(Self {
            tools: Arc::new(by_name),
        })
    }

    pub fn definitions(&self) -> Vec<ToolDefinition> {
        self.tools.values().map(|t| t.definition()).collect()
    }

    pub fn get(&self, name: &str) -> Option<&Arc<dyn HostTool>> {
        self.tools.get(name)
    }

    pub async fn call(&self, name: &str, arguments_json: &str) -> Result<String, String> {
        match self.tools.get(name) {
            Some(tool) => tool.call(arguments_json).await,
            None => Err(format!("no host tool named {name:?} is configured in this host")),
        }
    }
}
