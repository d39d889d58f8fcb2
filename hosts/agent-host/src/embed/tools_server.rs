//! Host tools served over MCP (`agent-host plugin serve`): the tools of the loaded
//! components, for any MCP client (codex, Claude Code, gemini-cli, an IDE) to list and
//! call. Each call runs as it would in a session: a component with plain exports in a fresh
//! instance under its policy, a tool-plugin under its grants. Nobody is asked for
//! approval here: the client asks its own user, and a component can reach only what its
//! policy or grants give it. Served on stdio or as streamable HTTP on a loopback address.

use crate::host_tools::ToolCategory;
use crate::host_tools::registry::HostTool;
use rmcp::handler::server::ServerHandler;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation, InitializeResult,
    ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool, ToolAnnotations,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServiceExt};
use std::net::SocketAddr;
use std::sync::Arc;

#[derive(Clone)]
pub struct ToolsServer {
    tools: Arc<Vec<Arc<dyn HostTool>>>,
}

impl ToolsServer {
    /// Serves `tools`; two of one name are an error naming both origins.
    pub fn new(tools: Vec<Arc<dyn HostTool>>) -> Result<Self, String> {
        crate::host_tools::HostTools::new(tools.clone(), &[])?;
        Ok(Self {
            tools: Arc::new(tools),
        })
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

    /// Serves streamable HTTP at `http://ADDRESS/mcp` until the process ends. `ready` is
    /// called with the address bound (port 0 picks one). Only loopback addresses: the tools
    /// reach the user's files, and nothing here authenticates a caller.
    pub async fn serve_http(self, address: SocketAddr, ready: impl FnOnce(SocketAddr)) -> Result<(), String> {
        use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
        use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
        if !address.ip().is_loopback() {
            return Err(format!(
                "{address} is not a loopback address: serve the tools on 127.0.0.1 or [::1] (anyone who \
                 reaches the port can call them)"
            ));
        }
        let listener = tokio::net::TcpListener::bind(address)
            .await
            .map_err(|e| format!("cannot listen on {address}: {e}"))?;
        let bound = listener
            .local_addr()
            .map_err(|e| format!("cannot tell the address listened on: {e}"))?;
        // The Host header must name the address served (no DNS rebinding from a web page).
        let mut config = StreamableHttpServerConfig::default();
        config.allowed_hosts = vec![
            bound.ip().to_string(),
            bound.to_string(),
            format!("[{}]", bound.ip()),
        ];
        if bound.ip().is_loopback() {
            config.allowed_hosts.push("localhost".into());
            config.allowed_hosts.push(format!("localhost:{}", bound.port()));
        }
        let service = StreamableHttpService::new(
            move || Ok(self.clone()),
            Arc::new(LocalSessionManager::default()),
            config,
        );
        let router = axum::Router::new().nest_service("/mcp", service);
        ready(bound);
        axum::serve(listener, router)
            .await
            .map_err(|e| format!("the MCP HTTP server stopped: {e}"))
    }

    fn find(&self, name: &str) -> Option<&Arc<dyn HostTool>> {
        self.tools.iter().find(|t| t.definition().name == name)
    }
}

fn mcp_tool(tool: &dyn HostTool) -> Tool {
    let definition = tool.definition();
    let schema = match definition.parameters {
        serde_json::Value::Object(object) => object,
        _ => serde_json::Map::new(),
    };
    let mut annotations = ToolAnnotations::default();
    annotations.read_only_hint = Some(matches!(tool.category(), ToolCategory::Read));
    Tool::new(definition.name, definition.description, schema).annotate(annotations)
}

impl ServerHandler for ToolsServer {
    fn get_info(&self) -> ServerConfig {
        let mut info = InitializeResult::new(ServerCapabilities::builder().enable_tools().build());
        info.server_info = Implementation::new("agent-host-tools", env!("CARGO_PKG_VERSION"));
        info.with_instructions(
            "Tools of sandboxed WebAssembly components; each reaches only what its policy grants.",
        )
    }

    async fn list_tools(
        &self,
        _: Option<PaginatedRequestParams>,
        _: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult {
            tools: self.tools.iter().map(|t| mcp_tool(t.as_ref())).collect(),
            ..ListToolsResult::default()
        })
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let Some(tool) = self.find(&request.name) else {
            let names: Vec<String> = self.tools.iter().map(|t| t.definition().name).collect();
            return Err(ErrorData::invalid_params(
                format!(
                    "there is no tool {:?} (the tools: {})",
                    request.name,
                    names.join(", ")
                ),
                None,
            ));
        };
        let arguments = request
            .arguments
            .map(serde_json::Value::Object)
            .unwrap_or_else(|| serde_json::json!({}));
        let result = match tool.call(&arguments.to_string()).await {
            Ok(output) => CallToolResult::success(vec![ContentBlock::text(output.text)]),
            Err(error) => CallToolResult::error(vec![ContentBlock::text(error)]),
        };
        Ok(CallToolResponse::Complete(result))
    }
}
