//! Host-side bindings of the `tool-plugin` world, which shares `types` and
//! `execution-environment` with `agent-core` (one implementation serves both), and the typed
//! calls of a plugin's `tool` export.

use agent_protocol::ToolDefinition;
use std::future::Future;
use std::pin::Pin;
use wasmtime::Store;

mod bindings {
    wasmtime::component::bindgen!({
        path: "../../wit",
        world: "tool-plugin",
        imports: { default: async | trappable },
        exports: { default: async },
        with: {
            "agent:core/execution-environment": crate::wit::core::execution_environment,
            "agent:core/types": crate::wit::core::types,
        },
    });
}

pub use bindings::{ToolPlugin, ToolPluginPre};

/// A call of a plugin's export, in flight.
pub type GuestCall<'a, R> = Pin<Box<dyn Future<Output = wasmtime::Result<R>> + Send + 'a>>;

/// A tool as the plugin declared it, before the host checked its schema.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeclaredTool {
    pub name: String,
    pub description: String,
    pub parameters_json: String,
}

impl DeclaredTool {
    /// The definition offered to the model, once `parameters` was checked to be a schema.
    pub fn definition(&self, parameters: serde_json::Value) -> ToolDefinition {
        ToolDefinition {
            name: self.name.clone(),
            description: self.description.clone(),
            parameters,
        }
    }
}

/// The plugin's tool definitions.
pub fn definitions<'a, T: Send>(
    plugin: &'a ToolPlugin,
    store: &'a mut Store<T>,
) -> GuestCall<'a, Vec<DeclaredTool>> {
    Box::pin(async move {
        let declared = plugin.agent_core_tool().call_definitions(store).await?;
        Ok(declared
            .into_iter()
            .map(|d| DeclaredTool {
                name: d.name,
                description: d.description,
                parameters_json: d.parameters_json,
            })
            .collect())
    })
}

/// Runs one of the plugin's tools; `Err` is the tool's own error.
pub fn execute<'a, T: Send>(
    plugin: &'a ToolPlugin,
    store: &'a mut Store<T>,
    name: String,
    arguments: String,
) -> GuestCall<'a, Result<String, String>> {
    Box::pin(async move {
        plugin
            .agent_core_tool()
            .call_execute(store, &name, &arguments)
            .await
    })
}
