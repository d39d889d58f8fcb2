//! Third-party tools as sandboxed components of world `tool-plugin`: one engine with epoch
//! interruption for all plugins, one store per plugin, compiled code cached by content
//! hash. A plugin reaches the workspace only through `execution-environment`, wrapped in
//! the capabilities its user granted; WASI is linked with nothing granted (no directories,
//! no variables, no network) so language runtimes start but see nothing.

pub mod granted;
mod instance;
pub mod limits;
pub mod manifest;

pub use instance::{Plugin, PluginTool};
pub use limits::PluginLimits;
pub use manifest::{Capability, Manifest};

use crate::compile_cache::{CacheOutcome, compile_cached};
use crate::environments::environment::Environment;
use crate::environments::policy::scoped::Scoped;
use crate::host_tools::component::{self, ComponentPolicy, ComponentState, FolderRules, PlainComponent};
use crate::host_tools::registry::HostTool;
use crate::wit::plugin::ToolPluginPre;
use granted::Granted;
use instance::PluginState;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use wasmtime::component::Linker;
use wasmtime::{Config, Engine};

/// Capabilities granted, by plugin name.
pub type Grants = BTreeMap<String, BTreeSet<Capability>>;

/// Loads plugins; keep it alive as long as their tools are in use (it drives their clock).
pub struct PluginHost {
    engine: Engine,
    linker: Arc<Linker<PluginState>>,
    /// For components with plain exports: WASI only.
    plain_linker: Linker<ComponentState>,
    cache_dir: Option<PathBuf>,
    limits: PluginLimits,
}

impl PluginHost {
    pub fn new(cache_dir: Option<&Path>, limits: PluginLimits) -> anyhow::Result<Self> {
        let mut config = Config::new();
        config.epoch_interruption(true);
        let engine = Engine::new(&config)?;
        start_epoch_ticker(&engine)?;
        let mut linker = Linker::<PluginState>::new(&engine);
        wasmtime_wasi::p2::add_to_linker_async(&mut linker)?;
        crate::wit::environment::add_to_linker(&mut linker)?;
        let mut plain_linker = Linker::<ComponentState>::new(&engine);
        wasmtime_wasi::p2::add_to_linker_async(&mut plain_linker)?;
        wasmtime_wasi_http::p2::add_only_http_to_linker_async(&mut plain_linker)?;
        component::refuse_links(&mut plain_linker)?;
        Ok(Self {
            engine,
            linker: Arc::new(linker),
            plain_linker,
            cache_dir: cache_dir.map(Path::to_path_buf),
            limits,
        })
    }

    /// Loads the plugin at `path` over `env`, scoped to its working directory, with the
    /// capabilities it asks for that `grants` (by plugin name) allow, and asks it for its tools.
    pub async fn load(
        &self,
        path: &Path,
        grants: &Grants,
        env: Arc<dyn Environment>,
    ) -> Result<Arc<Plugin>, String> {
        let (plugin, _) = self.load_with_outcome(path, grants, env).await?;
        Ok(plugin)
    }

    /// [`PluginHost::load`], also telling whether the compiled code came from the cache.
    pub async fn load_with_outcome(
        &self,
        path: &Path,
        grants: &Grants,
        env: Arc<dyn Environment>,
    ) -> Result<(Arc<Plugin>, CacheOutcome), String> {
        let bytes = read_component(path)?;
        let (component, outcome) = self.compile(path, &bytes)?;
        let plugin = self
            .load_tool_plugin(path, &bytes, &component, grants, env)
            .await?;
        Ok((plugin, outcome))
    }

    /// Loads the component at `path` as whichever kind it is: a `tool-plugin` (with
    /// `grants`) or a component with plain exports (under `policy`, given its name).
    pub async fn load_any(
        &self,
        path: &Path,
        grants: &Grants,
        policy: impl FnOnce(&str) -> Result<ComponentPolicy, String>,
        folders: &FolderRules,
        env: Arc<dyn Environment>,
    ) -> Result<(Loaded, CacheOutcome), String> {
        let bytes = read_component(path)?;
        let (component, outcome) = self.compile(path, &bytes)?;
        if component::shape::is_tool_plugin(&self.engine, &component) {
            let plugin = self
                .load_tool_plugin(path, &bytes, &component, grants, env)
                .await?;
            return Ok((Loaded::Plugin(plugin), outcome));
        }
        let name = plugin_name_from_path(path)?;
        let policy = policy(&name)?;
        let plain = component::load(component::LoadParts {
            engine: &self.engine,
            linker: &self.plain_linker,
            name,
            path,
            bytes: &bytes,
            component: &component,
            policy,
            folders: folders.clone(),
        })?;
        Ok((Loaded::Plain(Arc::new(plain)), outcome))
    }

    fn compile(
        &self,
        path: &Path,
        bytes: &[u8],
    ) -> Result<(wasmtime::component::Component, CacheOutcome), String> {
        compile_cached(&self.engine, bytes, self.cache_dir.as_deref())
            .map_err(|e| format!("{} is not a valid WebAssembly component: {e:#}", path.display()))
    }

    async fn load_tool_plugin(
        &self,
        path: &Path,
        bytes: &[u8],
        component: &wasmtime::component::Component,
        grants: &Grants,
        env: Arc<dyn Environment>,
    ) -> Result<Arc<Plugin>, String> {
        let shown = path.display();
        let manifest = Manifest::find(path, bytes)?;
        let name = match &manifest.name {
            Some(name) => name.clone(),
            None => plugin_name_from_path(path)?,
        };
        let pre = self
            .linker
            .instantiate_pre(component)
            .map_err(|e| format!("plugin {name} ({shown}) cannot be linked: {e:#}"))?;
        let pre = ToolPluginPre::new(pre)
            .map_err(|e| format!("plugin {name} ({shown}) is not a tool-plugin component: {e:#}"))?;
        let no_grants = BTreeSet::new();
        let granted = grants.get(&name).unwrap_or(&no_grants);
        // What it asked for and the user allowed; the rest is refused call by call.
        let effective: BTreeSet<Capability> = manifest.capabilities.intersection(granted).copied().collect();
        let workspace = Scoped::new(env, ".")
            .await
            .map_err(|e| format!("cannot scope plugin {name} to the workspace: {e:?}"))?;
        let env: Arc<dyn Environment> = Arc::new(Granted::new(Arc::new(workspace), &name, effective.clone()));
        let plugin = Plugin::start(instance::Parts {
            name,
            path: path.to_path_buf(),
            manifest,
            granted: effective,
            engine: self.engine.clone(),
            pre,
            env,
            limits: self.limits,
        })
        .await?;
        Ok(Arc::new(plugin))
    }

    /// The limits given at start, a policy's defaults.
    pub fn limits(&self) -> PluginLimits {
        self.limits
    }
}

/// A loaded component of either kind.
#[derive(Clone)]
pub enum Loaded {
    Plugin(Arc<Plugin>),
    Plain(Arc<PlainComponent>),
}

impl Loaded {
    pub fn name(&self) -> &str {
        match self {
            Loaded::Plugin(plugin) => plugin.name(),
            Loaded::Plain(plain) => plain.name(),
        }
    }

    pub fn tools(&self) -> Vec<Arc<dyn HostTool>> {
        match self {
            Loaded::Plugin(plugin) => plugin.tools(),
            Loaded::Plain(plain) => plain.tools(),
        }
    }
}

fn read_component(path: &Path) -> Result<Vec<u8>, String> {
    std::fs::read(path).map_err(|e| format!("cannot read the plugin {}: {e}", path.display()))
}

/// A plugin's default name: its file stem, e.g. `json-query` for `json-query.wasm`.
fn plugin_name_from_path(path: &Path) -> Result<String, String> {
    let stem = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    if manifest::valid_name(&stem) {
        Ok(stem)
    } else {
        Err(format!(
            "cannot name the plugin {} after its file: give it a name in its manifest",
            path.display()
        ))
    }
}

/// Advances the engine's epoch every tick for as long as the engine lives.
fn start_epoch_ticker(engine: &Engine) -> std::io::Result<()> {
    let weak = engine.weak();
    std::thread::Builder::new()
        .name("plugin-epoch".into())
        .spawn(move || {
            loop {
                std::thread::sleep(limits::TICK);
                match weak.upgrade() {
                    Some(engine) => engine.increment_epoch(),
                    None => break,
                }
            }
        })
        .map(drop)
}
