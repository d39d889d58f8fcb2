//! An MCP server's tool as a host tool: offered as `SERVER__tool` with the server's schema,
//! called on the server under its own name.

use super::server::McpServer;
use crate::approval::ToolCategory;
use crate::host_tools::ToolOutput;
use crate::host_tools::registry::HostTool;
use agent_protocol::ToolDefinition;
use async_trait::async_trait;
use rmcp::model::Tool;
use serde_json::Value;
use std::sync::Arc;

/// Between the server's name and the tool's, as codex and Claude Code join them.
pub const SEPARATOR: &str = "__";
/// The longest tool name every provider accepts.
const MAX_NAME: usize = 64;

pub struct McpTool {
    server: Arc<McpServer>,
    /// The tool's name on the server.
    name: String,
    definition: ToolDefinition,
    category: ToolCategory,
}

impl McpTool {
    /// `None` for a tool whose name cannot be offered as it is (too long, or with characters
    /// providers refuse): renaming it would make a name the server does not know.
    pub fn new(server: Arc<McpServer>, tool: &Tool) -> Option<Self> {
        let qualified = format!("{}{SEPARATOR}{}", server.name(), tool.name);
        if qualified.len() > MAX_NAME
            || !qualified
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
        {
            return None;
        }
        let mut parameters = Value::Object((*tool.input_schema).clone());
        // Providers want an object schema with properties, which some servers leave out.
        if let Some(schema) = parameters.as_object_mut() {
            schema.entry("type").or_insert_with(|| "object".into());
            schema
                .entry("properties")
                .or_insert_with(|| Value::Object(Default::default()));
        }
        // A tool that says it only reads runs as a read; every other one as a write
        // (approvals ask for it, read-only mode refuses it).
        let read_only = tool.annotations.as_ref().and_then(|a| a.read_only_hint) == Some(true);
        Some(Self {
            definition: ToolDefinition {
                name: qualified,
                description: tool
                    .description
                    .as_deref()
                    .unwrap_or("(no description)")
                    .to_string(),
                parameters,
            },
            category: if read_only {
                ToolCategory::Read
            } else {
                ToolCategory::Write
            },
            name: tool.name.to_string(),
            server,
        })
    }
}

#[async_trait]
impl HostTool for McpTool {
    fn definition(&self) -> ToolDefinition {
        self.definition.clone()
    }

    fn category(&self) -> ToolCategory {
        self.category
    }

    fn origin(&self) -> String {
        format!("MCP server {}", self.server.name())
    }

    async fn call(&self, arguments_json: &str) -> Result<ToolOutput, String> {
        self.server.call(&self.name, arguments_json).await
    }
}
