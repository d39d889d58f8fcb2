//! The registry of host tools: each [`HostTool`] by name, checked against clashes, and
//! what the session host asks of them ([`ToolHost`]).

use crate::approval::ToolCategory;
use crate::session_host::state::ToolHost;
use agent_protocol::ToolDefinition;
use async_trait::async_trait;
use std::collections::BTreeMap;
use std::sync::Arc;

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

#[async_trait]
impl ToolHost for HostTools {
    fn category(&self, name: &str) -> Option<ToolCategory> {
        self.get(name).map(|tool| tool.category())
    }

    async fn call(&self, name: &str, arguments_json: &str) -> Result<String, String> {
        HostTools::call(self, name, arguments_json).await
    }
}
