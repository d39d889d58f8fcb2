//! One loaded plugin: its store (created lazily, dropped after any trap or limit hit so the
//! next call starts clean), the limits around each call, and its tools.

use super::limits::{PluginLimits, Usage, cap_output};
use super::manifest::{self, Capability, Manifest};
use crate::approval::ToolCategory;
use crate::environments::environment::Environment;
use crate::host_tools::ToolOutput;
use crate::host_tools::registry::HostTool;
use crate::wit::environment::{EnvView, EnvironmentHost};
use crate::wit::plugin::{self as guest, DeclaredTool, GuestCall, ToolPlugin, ToolPluginPre};
use agent_protocol::ToolDefinition;
use async_trait::async_trait;
use std::collections::BTreeSet;
use std::path::PathBuf;
use std::sync::Arc;
use tokio::sync::Mutex;
use wasmtime::component::ResourceTable;
use wasmtime::{Engine, Store};
use wasmtime_wasi::p2::pipe::{MemoryOutputPipe, SinkOutputStream};
use wasmtime_wasi::{WasiCtx, WasiCtxView, WasiView};

/// The most tools one plugin may define, and the most bytes of definitions.
const MAX_TOOLS: usize = 64;
const MAX_DEFINITIONS_BYTES: usize = 256 << 10;
/// What a plugin's stderr may hold per instance (shown when it fails).
const STDERR_BYTES: usize = 64 << 10;

/// A plugin store's data.
pub struct PluginState {
    wasi: WasiCtx,
    table: ResourceTable,
    env: Arc<dyn Environment>,
    usage: Usage,
    stderr: MemoryOutputPipe,
}

impl WasiView for PluginState {
    fn ctx(&mut self) -> WasiCtxView<'_> {
        WasiCtxView {
            ctx: &mut self.wasi,
            table: &mut self.table,
        }
    }
}

impl EnvironmentHost for PluginState {
    fn env_view(&mut self) -> EnvView<'_> {
        EnvView {
            env: &self.env,
            table: &mut self.table,
            control: None,
            rerun: None,
            events: None,
        }
    }
}

struct Live {
    store: Store<PluginState>,
    bindings: ToolPlugin,
}

/// What [`Plugin::start`] needs.
pub(super) struct Parts {
    pub name: String,
    pub path: PathBuf,
    pub manifest: Manifest,
    pub granted: BTreeSet<Capability>,
    pub engine: Engine,
    pub pre: ToolPluginPre<PluginState>,
    pub env: Arc<dyn Environment>,
    pub limits: PluginLimits,
}

pub struct Plugin {
    parts: Parts,
    definitions: Vec<ToolDefinition>,
    live: Mutex<Option<Live>>,
}

impl Plugin {
    /// Instantiates the plugin and asks for its tools (under the same limits as a call).
    pub(super) async fn start(parts: Parts) -> Result<Self, String> {
        let mut plugin = Self {
            parts,
            definitions: Vec::new(),
            live: Mutex::new(None),
        };
        let definitions = plugin
            .call("definitions()", |plugin, store| guest::definitions(plugin, store))
            .await?;
        plugin.definitions = plugin.check_definitions(definitions)?;
        Ok(plugin)
    }

    pub fn name(&self) -> &str {
        &self.parts.name
    }

    /// The capabilities the plugin asks for.
    pub fn requested(&self) -> &BTreeSet<Capability> {
        &self.parts.manifest.capabilities
    }

    /// The capabilities it asked for and was granted.
    pub fn granted(&self) -> &BTreeSet<Capability> {
        &self.parts.granted
    }

    pub fn definitions(&self) -> &[ToolDefinition] {
        &self.definitions
    }

    /// Its tools, to offer the model.
    pub fn tools(self: &Arc<Self>) -> Vec<Arc<dyn HostTool>> {
        self.definitions
            .iter()
            .map(|definition| {
                Arc::new(PluginTool {
                    plugin: self.clone(),
                    definition: definition.clone(),
                }) as Arc<dyn HostTool>
            })
            .collect()
    }

    pub async fn execute(&self, tool: &str, arguments_json: &str) -> Result<String, String> {
        let (name, arguments) = (tool.to_string(), arguments_json.to_string());
        let result = self
            .call(tool, move |plugin, store| {
                guest::execute(plugin, store, name, arguments)
            })
            .await?;
        let limit = self.parts.limits.output_bytes;
        result
            .map(|text| cap_output(text, limit))
            .map_err(|text| cap_output(text, limit))
    }

    fn origin(&self) -> String {
        format!("plugin {} ({})", self.name(), self.parts.path.display())
    }

    async fn instantiate(&self) -> Result<Live, String> {
        let stderr = MemoryOutputPipe::new(STDERR_BYTES);
        let wasi = WasiCtx::builder()
            .stdout(SinkOutputStream)
            .stderr(stderr.clone())
            .build();
        let state = PluginState {
            wasi,
            table: ResourceTable::new(),
            env: self.parts.env.clone(),
            usage: Usage::new(self.parts.limits),
            stderr,
        };
        let mut store = Store::new(&self.parts.engine, state);
        super::limits::limit_store(&mut store, |state| &mut state.usage);
        let started = tokio::time::timeout(
            self.parts.limits.wall,
            self.parts.pre.instantiate_async(&mut store),
        )
        .await;
        match started {
            Ok(Ok(bindings)) => Ok(Live { store, bindings }),
            Ok(Err(trap)) => Err(format!(
                "plugin {} could not start: {}",
                self.name(),
                explain(&trap, &store)
            )),
            Err(_) => Err(format!(
                "plugin {} could not start within {} ms",
                self.name(),
                self.parts.limits.wall.as_millis()
            )),
        }
    }

    /// Runs one call under the limits; after a trap, a limit hit or a timeout the store is
    /// dropped, so the next call gets a fresh instance.
    async fn call<R>(
        &self,
        what: &str,
        run: impl for<'a> FnOnce(&'a ToolPlugin, &'a mut Store<PluginState>) -> GuestCall<'a, R>,
    ) -> Result<R, String> {
        let mut slot = self.live.lock().await;
        let live = match slot.take() {
            Some(live) => live,
            None => self.instantiate().await?,
        };
        let Live { mut store, bindings } = live;
        store.data_mut().usage.start_call();
        store.set_epoch_deadline(1);
        let limits = self.parts.limits;
        let outcome = tokio::time::timeout(limits.wall, run(&bindings, &mut store)).await;
        let failure = match outcome {
            Ok(Ok(outcome)) => {
                *slot = Some(Live { store, bindings });
                return Ok(outcome);
            }
            Ok(Err(trap)) => explain(&trap, &store),
            Err(_) => format!(
                "it ran past its wall-clock limit of {} ms",
                limits.wall.as_millis()
            ),
        };
        tracing::warn!(plugin = %self.name(), %what, %failure, "plugin call failed; restarting it");
        Err(format!(
            "plugin {}: {what} failed: {failure}. The plugin was restarted; its next call starts fresh",
            self.name()
        ))
    }

    fn check_definitions(&self, definitions: Vec<DeclaredTool>) -> Result<Vec<ToolDefinition>, String> {
        let name = self.name();
        if definitions.len() > MAX_TOOLS {
            return Err(format!(
                "plugin {name} defines {} tools; at most {MAX_TOOLS} are allowed",
                definitions.len()
            ));
        }
        let size: usize = definitions
            .iter()
            .map(|d| d.name.len() + d.description.len() + d.parameters_json.len())
            .sum();
        if size > MAX_DEFINITIONS_BYTES {
            return Err(format!(
                "plugin {name}'s tool definitions take {size} bytes; at most {MAX_DEFINITIONS_BYTES} are allowed"
            ));
        }
        let mut seen = BTreeSet::new();
        let mut checked = Vec::with_capacity(definitions.len());
        for definition in &definitions {
            let tool = &definition.name;
            if !manifest::valid_name(tool) {
                return Err(format!(
                    "plugin {name} defines a tool named {tool:?}: use 1-64 letters, digits, - and _"
                ));
            }
            if !seen.insert(tool.clone()) {
                return Err(format!("plugin {name} defines the tool {tool:?} twice"));
            }
            let schema: serde_json::Value = serde_json::from_str(&definition.parameters_json)
                .map_err(|e| format!("plugin {name}'s tool {tool} has parameters that are not JSON: {e}"))?;
            if schema.get("type").and_then(|t| t.as_str()) != Some("object") {
                return Err(format!(
                    "plugin {name}'s tool {tool} must take an object schema (\"type\": \"object\")"
                ));
            }
            checked.push(definition.definition(schema));
        }
        Ok(checked)
    }
}

/// Why a call trapped, in words (see [`super::limits::explain_failure`]).
fn explain(trap: &wasmtime::Error, store: &Store<PluginState>) -> String {
    let state = store.data();
    super::limits::explain_failure(trap, state.usage.hit.as_deref(), &state.stderr.contents())
}

/// One of a plugin's tools, as the session sees it.
pub struct PluginTool {
    plugin: Arc<Plugin>,
    definition: ToolDefinition,
}

#[async_trait]
impl HostTool for PluginTool {
    fn definition(&self) -> ToolDefinition {
        self.definition.clone()
    }

    fn category(&self) -> ToolCategory {
        let granted = self.plugin.granted();
        if granted.contains(&Capability::Write) || granted.contains(&Capability::Run) {
            ToolCategory::Write
        } else {
            ToolCategory::Read
        }
    }

    fn origin(&self) -> String {
        self.plugin.origin()
    }

    async fn call(&self, arguments_json: &str) -> Result<ToolOutput, String> {
        self.plugin
            .execute(&self.definition.name, arguments_json)
            .await
            .map(ToolOutput::from)
    }
}
