//! agent-host as an MCP server (as `codex mcp-server` is): one tool, `agent_host`,
//! that runs a coding task in a new session over the host's environment and returns the
//! model's final answer, so other agents and IDEs can hand tasks to this one. Served over
//! stdio; each call is its own session, closed when it ends.

use super::{Host, SessionOptions};
use crate::Environment;
use agent_protocol::SessionConfig;
use rmcp::handler::server::ServerHandler;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation, InitializeResult,
    ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServiceExt};
use serde_json::json;
use std::sync::Arc;

/// The one tool's name.
pub const TOOL: &str = "agent_host";

pub struct AgentServer {
    host: Host,
    config: SessionConfig,
    env: Arc<dyn Environment>,
}

impl AgentServer {
    /// Runs tasks with `config` over `env`, through `host` (its approvals and tools).
    pub fn new(host: Host, config: SessionConfig, env: Arc<dyn Environment>) -> Self {
        Self { host, config, env }
    }

    /// Serves MCP on this process's standard input and output until the client leaves.
    pub async fn serve_stdio(self) -> Result<(), String> {
        let service = self
            .serve(rmcp::transport::stdio())
            .await
            .map_err(|e| format!("the MCP client did not initialize: {e}"))?;
        service
            .waiting()
            .await
            .map(|_| ())
            .map_err(|e| format!("the MCP server stopped: {e}"))
    }

    /// One task in its own session; the final answer, or why there is none.
    async fn run_task(&self, prompt: &str) -> Result<String, String> {
        let session = self
            .host
            .open_session(SessionOptions {
                config: Some(self.config.clone()),
                environment: Some(self.env.clone()),
                ..SessionOptions::default()
            })
            .await
            .map_err(|e| format!("the session did not start: {e}"))?;
        let outcome = session.submit(prompt).await;
        let _ = session.close().await;
        let outcome = outcome.map_err(|e| format!("the task failed: {e}"))?;
        Ok(outcome.final_text)
    }
}

fn tool() -> Tool {
    let schema = json!({
        "type": "object",
        "properties": {
            "prompt": {"type": "string", "description": "The task, as you would give it to a coding agent."}
        },
        "required": ["prompt"],
        "additionalProperties": false
    });
    let schema = match schema {
        serde_json::Value::Object(object) => object,
        _ => serde_json::Map::new(),
    };
    Tool::new(
        TOOL,
        "Runs a coding task with agent-host in its workspace (reading, editing files and running \
         commands under its approvals and sandbox) and returns the agent's final answer.",
        schema,
    )
}

impl ServerHandler for AgentServer {
    fn get_info(&self) -> ServerConfig {
        let mut info = InitializeResult::new(ServerCapabilities::builder().enable_tools().build());
        info.server_info = Implementation::new("agent-host", env!("CARGO_PKG_VERSION"));
        info.with_instructions(
            "Call agent_host with a task; it runs to completion and answers with its result.",
        )
    }

    async fn list_tools(
        &self,
        _: Option<PaginatedRequestParams>,
        _: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult {
            tools: vec![tool()],
            ..ListToolsResult::default()
        })
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        if request.name != TOOL {
            return Err(ErrorData::invalid_params(
                format!("there is no tool {:?}; the tool is {TOOL}", request.name),
                None,
            ));
        }
        let prompt = request
            .arguments
            .as_ref()
            .and_then(|a| a.get("prompt"))
            .and_then(|p| p.as_str())
            .filter(|p| !p.trim().is_empty())
            .ok_or_else(|| ErrorData::invalid_params("prompt (a non-empty string) is required", None))?;
        let result = match self.run_task(prompt).await {
            Ok(answer) => CallToolResult::success(vec![ContentBlock::text(answer)]),
            Err(error) => CallToolResult::error(vec![ContentBlock::text(error)]),
        };
        Ok(CallToolResponse::Complete(result))
    }
}
