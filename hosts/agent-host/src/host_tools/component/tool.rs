//! A loaded plain-export component and its tools. Every call gets a store and an instance
//! of its own, under the component's policy and limits, so nothing one call does (a trap,
//! memory it filled, a file it left open) is seen by the next.

use super::convert;
use super::folders::FolderRules;
use super::http::PolicyHttp;
use super::policy::ComponentPolicy;
use super::shape::ExportedFunction;
use crate::approval::ToolCategory;
use crate::host_tools::ToolOutput;
use crate::host_tools::plugin::limits::{Usage, cap_output, explain_failure, limit_store};
use crate::host_tools::registry::HostTool;
use agent_protocol::ToolDefinition;
use async_trait::async_trait;
use std::path::PathBuf;
use std::sync::Arc;
use wasmtime::component::{InstancePre, ResourceTable, Val};
use wasmtime::{Engine, Store};
use wasmtime_wasi::p2::pipe::{MemoryOutputPipe, SinkOutputStream};
use wasmtime_wasi::{WasiCtx, WasiCtxView, WasiView};
use wasmtime_wasi_http::{WasiHttpCtx, WasiHttpCtxView, WasiHttpView};

/// What a component's stderr may hold per call (shown when it fails).
const STDERR_BYTES: usize = 64 << 10;
/// Handles (files, streams, HTTP fields and bodies) one call may hold at once, and the bytes
/// of one HTTP field: memory agent-host keeps for the component, outside its own limit,
/// stays within 2048 x 16 KiB.
const MAX_HANDLES: usize = 2048;
const HTTP_FIELD_BYTES: usize = 16 << 10;

/// A component store's data.
pub struct ComponentState {
    wasi: WasiCtx,
    table: ResourceTable,
    usage: Usage,
    stderr: MemoryOutputPipe,
    http: WasiHttpCtx,
    http_policy: PolicyHttp,
}

impl WasiHttpView for ComponentState {
    fn http(&mut self) -> WasiHttpCtxView<'_> {
        WasiHttpCtxView {
            ctx: &mut self.http,
            table: &mut self.table,
            hooks: &mut self.http_policy,
        }
    }
}

impl WasiView for ComponentState {
    fn ctx(&mut self) -> WasiCtxView<'_> {
        WasiCtxView {
            ctx: &mut self.wasi,
            table: &mut self.table,
        }
    }
}

/// One function of a component, offered as a tool.
pub struct FunctionTool {
    pub definition: ToolDefinition,
    pub function: ExportedFunction,
}

/// A component with plain exports, loaded.
pub struct PlainComponent {
    pub name: String,
    pub path: PathBuf,
    pub policy: ComponentPolicy,
    pub functions: Vec<FunctionTool>,
    /// Exported functions no tool can call, each with the reason.
    pub left_out: Vec<String>,
    /// Where its descriptions came from (its WIT), or why there are none.
    pub docs_origin: String,
    pub(super) engine: Engine,
    pub(super) pre: InstancePre<ComponentState>,
    pub(super) folders: FolderRules,
    pub(super) http_allow: Arc<egress_proxy::AllowList>,
    pub(super) resolver: Arc<dyn egress_proxy::Resolve>,
}

impl PlainComponent {
    pub fn name(&self) -> &str {
        &self.name
    }

    pub fn definitions(&self) -> impl Iterator<Item = &ToolDefinition> {
        self.functions.iter().map(|f| &f.definition)
    }

    pub fn origin(&self) -> String {
        format!("component {} ({})", self.name, self.path.display())
    }

    /// Its tools, to offer the model.
    pub fn tools(self: &Arc<Self>) -> Vec<Arc<dyn HostTool>> {
        (0..self.functions.len())
            .map(|index| {
                Arc::new(ComponentTool {
                    component: self.clone(),
                    index,
                }) as Arc<dyn HostTool>
            })
            .collect()
    }

    /// Calls the tool at `index` with JSON arguments: its result as text (JSON unless a
    /// string), `Err` with the reason when the arguments do not fit, the component returned
    /// a `result`'s error, or it failed or hit a limit.
    pub async fn call(&self, index: usize, arguments_json: &str) -> Result<String, String> {
        let Some(tool) = self.functions.get(index) else {
            return Err(format!("component {} has no tool number {index}", self.name));
        };
        let function = &tool.function;
        let arguments = convert::arguments(&function.params, arguments_json)?;
        let limits = self.policy.limits;
        let mut store = self.store()?;
        let outcome = tokio::time::timeout(limits.wall, async {
            let instance = self.pre.instantiate_async(&mut store).await?;
            let func = instance
                .get_func(&mut store, function.index)
                .ok_or_else(|| wasmtime::Error::msg(format!("{} is not exported", function.display())))?;
            let mut results = vec![Val::Bool(false); usize::from(function.result.is_some())];
            func.call_async(&mut store, &arguments, &mut results).await?;
            Ok::<_, wasmtime::Error>(results.pop())
        })
        .await;
        // What the policy refused is said whatever the component made of it.
        let refusals = store.data().http_policy.refusals();
        let with_refusals = |text: String| {
            let text = match refusals.is_empty() {
                true => text,
                false => format!("{text}\n[{}]", refusals.join("; ")),
            };
            crate::secrets::redact_known(&text)
        };
        let result = match outcome {
            Ok(Ok(result)) => result,
            Ok(Err(trap)) => {
                let state = store.data();
                let why = explain_failure(&trap, state.usage.hit.as_deref(), &state.stderr.contents());
                let text = format!("component {}: {} failed: {why}", self.name, function.display());
                return Err(with_refusals(text));
            }
            Err(_) => {
                return Err(with_refusals(format!(
                    "component {}: {} ran past its wall-clock limit of {} ms",
                    self.name,
                    function.display(),
                    limits.wall.as_millis()
                )));
            }
        };
        let limit = limits.output_bytes;
        match result {
            None => Ok(with_refusals("done (the function returns nothing)".to_string())),
            Some(Val::Result(Ok(value))) => Ok(with_refusals(cap_output(text_of(value.as_deref()), limit))),
            Some(Val::Result(Err(value))) => Err(with_refusals(cap_output(text_of(value.as_deref()), limit))),
            Some(value) => Ok(with_refusals(cap_output(text_of(Some(&value)), limit))),
        }
    }

    /// A fresh store: WASI with only the policy's folders and variables, no sockets, the
    /// limits counted from zero.
    fn store(&self) -> Result<Store<ComponentState>, String> {
        let stderr = MemoryOutputPipe::new(STDERR_BYTES);
        let mut wasi = WasiCtx::builder();
        wasi.stdout(SinkOutputStream)
            .stderr(stderr.clone())
            .allow_tcp(false)
            .allow_udp(false)
            .allow_ip_name_lookup(false);
        for name in &self.policy.env_vars {
            if let Some(value) = crate::secrets::host_var(name) {
                // A credential given by name stays out of what the component's answers hand on.
                if crate::secrets::is_withheld(name) || crate::secrets::is_secret_name(name) {
                    crate::secrets::redact::remember(&value);
                }
                wasi.env(name, value);
            }
        }
        // Opened per call: a folder swapped for a link since the last call is seen as such.
        // Each stays open until WASI has opened it again through its /proc/self/fd path.
        let mut opened = Vec::new();
        for preopen in &self.policy.preopens {
            let folder = self
                .folders
                .open(preopen)
                .map_err(|e| format!("component {}: {e}", self.name))?;
            let perms = match folder.writable {
                true => wasmtime_wasi::FsPerms::ReadWrite,
                false => wasmtime_wasi::FsPerms::ReadOnly,
            };
            wasi.preopened_dir(folder.handle_path(), &folder.guest_name, perms)
                .map_err(|e| {
                    format!(
                        "component {}: cannot grant {:?}: {e:#}",
                        self.name, folder.guest_name
                    )
                })?;
            opened.push(folder);
        }
        drop(opened);
        let mut table = ResourceTable::new();
        table.set_max_capacity(MAX_HANDLES);
        let mut http = WasiHttpCtx::new();
        http.set_field_size_limit(HTTP_FIELD_BYTES);
        let state = ComponentState {
            wasi: wasi.build(),
            table,
            usage: Usage::new(self.policy.limits),
            stderr,
            http,
            http_policy: PolicyHttp::new(
                &self.name,
                self.http_allow.clone(),
                self.resolver.clone(),
                self.folders.changes_refused.clone(),
            ),
        };
        let mut store = Store::new(&self.engine, state);
        limit_store(&mut store, |state| &mut state.usage);
        Ok(store)
    }
}

/// A result for the model: a string as it is, anything else as JSON.
fn text_of(value: Option<&Val>) -> String {
    match value {
        None => "done".to_string(),
        Some(Val::String(text)) => text.clone(),
        Some(value) => convert::to_json(value).to_string(),
    }
}

/// One function of a component, as the session sees it.
pub struct ComponentTool {
    component: Arc<PlainComponent>,
    index: usize,
}

#[async_trait]
impl HostTool for ComponentTool {
    fn definition(&self) -> ToolDefinition {
        self.component.functions[self.index].definition.clone()
    }

    fn category(&self) -> ToolCategory {
        match self.component.policy.writes() {
            true => ToolCategory::Write,
            false => ToolCategory::Read,
        }
    }

    fn origin(&self) -> String {
        self.component.origin()
    }

    async fn call(&self, arguments_json: &str) -> Result<ToolOutput, String> {
        self.component
            .call(self.index, arguments_json)
            .await
            .map(ToolOutput::from)
    }
}
