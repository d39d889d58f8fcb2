//! Write an agent-core tool plugin in a few lines: implement [`Plugin`], then
//! `export_plugin!(MyPlugin, manifest = "capabilities = [\"read\"]")`. Build for
//! `wasm32-unknown-unknown` with `linker = "wasm-component-ld"` and the result is a
//! component of world `tool-plugin` that `agent-host run --plugin` loads.
//!
//! ```ignore
//! use agent_tool_sdk::{Plugin, ToolSpec, export_plugin, serde_json::{json, Value}};
//!
//! struct Hello;
//! impl Plugin for Hello {
//!     fn tools() -> Vec<ToolSpec> {
//!         vec![ToolSpec::new("hello", "Greets someone", json!({
//!             "type": "object",
//!             "properties": {"name": {"type": "string"}},
//!             "required": ["name"],
//!         }))]
//!     }
//!     fn call(_tool: &str, arguments: Value) -> Result<String, String> {
//!         Ok(format!("Hello, {}!", arguments["name"].as_str().unwrap_or("you")))
//!     }
//! }
//! export_plugin!(Hello, manifest = "capabilities = []");
//! ```
//!
//! The manifest (TOML: optional `name`, `capabilities` among `read`, `write`, `run`) goes
//! into the component's `agent-tool-plugin` custom section; the host grants at most what it
//! asks for, and only what its user allows.

pub mod workspace;

pub use serde_json;

#[doc(hidden)]
pub mod bindings {
    wit_bindgen::generate!({
        path: "../../wit",
        world: "tool-plugin",
        pub_export_macro: true,
        default_bindings_module: "agent_tool_sdk::bindings",
    });
}

use bindings::agent::core::types::ToolDefinition;

/// One tool a plugin offers.
pub struct ToolSpec {
    pub name: String,
    pub description: String,
    /// The JSON schema (an object schema) of the tool's arguments.
    pub parameters: serde_json::Value,
}

impl ToolSpec {
    pub fn new(name: &str, description: &str, parameters: serde_json::Value) -> Self {
        Self {
            name: name.to_string(),
            description: description.to_string(),
            parameters,
        }
    }
}

/// A plugin: its tools and how to run them. The host validates arguments against each
/// tool's schema before `call`, so `call` can rely on their shape.
pub trait Plugin {
    fn tools() -> Vec<ToolSpec>;

    /// Runs `tool`; `Err` reaches the model as an error it can recover from.
    fn call(tool: &str, arguments: serde_json::Value) -> Result<String, String>;
}

#[doc(hidden)]
pub fn definitions<P: Plugin>() -> Vec<ToolDefinition> {
    P::tools()
        .into_iter()
        .map(|spec| ToolDefinition {
            name: spec.name,
            description: spec.description,
            parameters_json: spec.parameters.to_string(),
        })
        .collect()
}

#[doc(hidden)]
pub fn execute<P: Plugin>(tool: &str, arguments_json: &str) -> Result<String, String> {
    let arguments = serde_json::from_str(arguments_json)
        .map_err(|e| format!("the arguments of {tool} are not valid JSON: {e}"))?;
    P::call(tool, arguments)
}

/// The manifest text as a fixed-size array, so it can be a custom section's contents.
#[doc(hidden)]
pub const fn manifest_bytes<const N: usize>(text: &str) -> [u8; N] {
    let bytes = text.as_bytes();
    let mut out = [0u8; N];
    let mut i = 0;
    while i < N {
        out[i] = bytes[i];
        i += 1;
    }
    out
}

/// Exports a [`Plugin`] as the component's `tool` interface and embeds its manifest.
#[macro_export]
macro_rules! export_plugin {
    ($plugin:ty, manifest = $manifest:expr) => {
        const _: () = {
            const MANIFEST: &str = $manifest;
            #[used]
            #[unsafe(link_section = "agent-tool-plugin")]
            static SECTION: [u8; MANIFEST.len()] = $crate::manifest_bytes::<{ MANIFEST.len() }>(MANIFEST);

            struct Export;

            impl $crate::bindings::exports::agent::core::tool::Guest for Export {
                fn definitions() -> ::std::vec::Vec<$crate::bindings::agent::core::types::ToolDefinition> {
                    $crate::definitions::<$plugin>()
                }

                fn execute(
                    name: ::std::string::String,
                    arguments_json: ::std::string::String,
                ) -> ::std::result::Result<::std::string::String, ::std::string::String> {
                    $crate::execute::<$plugin>(&name, &arguments_json)
                }
            }

    $crate::bindings::export!(Export with_types_in $crate::bindings);
        };
    };
}
