//! The command-line side of host tools: which plugins to load, what they are granted, their
//! limits. The configuration file's `[plugins]` section adds to the flags.

use crate::config::agent_file::{AgentConfig, PluginsConfig};
use crate::config::merge::host_tool_config;
use crate::environments::environment::Environment;
use crate::host_tools::component::{ComponentPolicy, FolderRules, PolicyFile, PolicySource};
use crate::host_tools::plugin::manifest::parse_capabilities;
use crate::host_tools::plugin::{Capability, Grants, Loaded, PluginHost, PluginLimits};
use crate::host_tools::registry::HostTool;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

#[derive(clap::Args, Debug, Clone, Default)]
#[command(next_help_heading = "Configuration and plugins")]
pub struct PluginOptions {
    /// The project configuration file, instead of .agent/config.toml in the working
    /// directory: settings, command tools, plugins and grants (`agent-host config show`).
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Load a WebAssembly component as tools: of world tool-plugin, or any component with
    /// plain exports (its policy: [plugins.policy.NAME]); repeatable.
    #[arg(long = "plugin", value_name = "FILE")]
    pub plugins: Vec<PathBuf>,
    /// Load every .wasm file in this folder as --plugin does.
    #[arg(long, value_name = "DIR")]
    pub plugins_dir: Option<PathBuf>,
    /// Grant a plugin capabilities it asks for: NAME=read,write,run; repeatable.
    #[arg(long = "grant", value_name = "NAME=CAPS")]
    pub grants: Vec<String>,
    /// CPU time a plugin may use per call, in milliseconds.
    #[arg(long, value_name = "MS", default_value_t = 5_000)]
    pub plugin_cpu_ms: u64,
    /// Wall-clock time a plugin call may take, in milliseconds.
    #[arg(long, value_name = "MS", default_value_t = 30_000)]
    pub plugin_timeout_ms: u64,
    /// Linear memory a plugin may use, in MiB.
    #[arg(long, value_name = "MIB", default_value_t = 256)]
    pub plugin_memory_mib: usize,
}

/// Plugins to load and grants, from the configuration file, merged with the flags.
#[derive(Debug, Clone, Default)]
pub struct PluginSources {
    pub files: Vec<PathBuf>,
    pub grants: Grants,
    /// Policies of components with plain exports, by name, and where each was written.
    pub policies: BTreeMap<String, (PolicyFile, PolicySource)>,
}

impl PluginSources {
    /// The `[plugins]` section of a configuration file.
    pub fn from_config(config: &PluginsConfig) -> Result<Self, String> {
        let mut files = Vec::new();
        if let Some(dir) = &config.dir {
            files.extend(wasm_files(dir)?);
        }
        files.extend(config.paths.iter().cloned());
        let mut grants = Grants::new();
        for (name, capabilities) in &config.grants {
            let parsed = capabilities
                .iter()
                .map(|c| Capability::parse(c))
                .collect::<Result<_, _>>()?;
            grants.insert(name.clone(), parsed);
        }
        let file = config
            .file
            .as_deref()
            .map(|f| f.display().to_string())
            .unwrap_or_default();
        let policies = config
            .policy
            .iter()
            .map(|(name, policy)| {
                let source = match config.from_user_file {
                    true => PolicySource::UserConfig(file.clone()),
                    false => PolicySource::ProjectConfig(file.clone()),
                };
                (name.clone(), (policy.clone(), source))
            })
            .collect();
        Ok(Self {
            files,
            grants,
            policies,
        })
    }
}

impl PluginOptions {
    /// The configuration file named by `--config`, else the workspace's own, if any.
    /// `[plugins]` comes from the user's configuration file when the project's has none
    /// (see [`crate::layered_config`]).
    pub fn load_config(&self, workspace: Option<&Path>) -> Result<AgentConfig, String> {
        host_tool_config(workspace, self.config.as_deref())
    }

    pub fn limits(&self) -> PluginLimits {
        PluginLimits {
            memory_bytes: self.plugin_memory_mib.saturating_mul(1 << 20),
            cpu: Duration::from_millis(self.plugin_cpu_ms),
            wall: Duration::from_millis(self.plugin_timeout_ms),
            ..PluginLimits::default()
        }
    }

    /// The plugin files and grants of the flags added to `configured`.
    pub fn sources(&self, mut configured: PluginSources) -> Result<PluginSources, String> {
        configured.files.extend(self.plugins.iter().cloned());
        if let Some(dir) = &self.plugins_dir {
            configured.files.extend(wasm_files(dir)?);
        }
        for grant in &self.grants {
            let (name, capabilities) = grant
                .split_once('=')
                .ok_or_else(|| format!("--grant {grant}: expected NAME=CAPS, e.g. data-query=read"))?;
            let capabilities =
                parse_capabilities(capabilities).map_err(|e| format!("--grant {grant}: {e}"))?;
            configured
                .grants
                .entry(name.trim().to_string())
                .or_default()
                .extend(capabilities);
        }
        Ok(configured)
    }
}

/// The `.wasm` files of a folder, sorted.
pub fn wasm_files(dir: &Path) -> Result<Vec<PathBuf>, String> {
    let entries = std::fs::read_dir(dir)
        .map_err(|e| format!("cannot read the plugins folder {}: {e}", dir.display()))?;
    let mut files: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "wasm") && p.is_file())
        .collect();
    files.sort();
    Ok(files)
}

/// Loads every plugin of `sources` over `env` and returns their tools: `tool-plugin`
/// components with their grants, components with plain exports under their policies. A
/// grant or policy naming no loaded component is an error (most likely a typo that would
/// silently grant nothing).
pub async fn load_plugins(
    sources: &PluginSources,
    limits: PluginLimits,
    cache_dir: Option<&Path>,
    env: Arc<dyn Environment>,
    folders: &FolderRules,
) -> Result<(Vec<Loaded>, Vec<Arc<dyn HostTool>>), String> {
    if sources.files.is_empty() {
        if let Some(name) = sources.grants.keys().next() {
            return Err(format!(
                "a grant names the plugin {name}, but no plugin is loaded"
            ));
        }
        if let Some(name) = sources.policies.keys().next() {
            return Err(format!(
                "[plugins.policy.{name}] names a component, but none is loaded"
            ));
        }
        return Ok((Vec::new(), Vec::new()));
    }
    let host =
        PluginHost::new(cache_dir, limits).map_err(|e| format!("cannot start the plugin engine: {e:#}"))?;
    let mut loaded: Vec<Loaded> = Vec::new();
    let mut tools = Vec::new();
    for file in &sources.files {
        let policy = |name: &str| policy_for(name, file, sources, limits);
        let (component, _) = host
            .load_any(file, &sources.grants, policy, folders, env.clone())
            .await?;
        if loaded.iter().any(|l| l.name() == component.name()) {
            return Err(format!(
                "two plugins are named {}: rename one (its manifest, or its file)",
                component.name()
            ));
        }
        match &component {
            Loaded::Plugin(plugin) => {
                for missing in plugin.requested().difference(plugin.granted()) {
                    tracing::warn!(
                        "plugin {name} asks for `{cap}`, which was not granted: its calls that need it will fail \
                         (grant it with --grant {name}={cap})",
                        name = plugin.name(),
                        cap = missing.as_str()
                    );
                }
            }
            Loaded::Plain(plain) => {
                if let Some(name) = sources.grants.keys().find(|n| n.as_str() == plain.name()) {
                    return Err(format!(
                        "a grant names {name}, a component with plain exports: what it may reach is set by a \
                         policy ([plugins.policy.{name}] in the configuration), not by grants"
                    ));
                }
            }
        }
        tools.extend(component.tools());
        loaded.push(component);
    }
    let loaded_names = || loaded.iter().map(|l| l.name()).collect::<Vec<_>>().join(", ");
    if let Some(name) = sources
        .grants
        .keys()
        .find(|n| !loaded.iter().any(|l| l.name() == n.as_str()))
    {
        return Err(format!(
            "a grant names the plugin {name}, which is not loaded (loaded: {})",
            loaded_names()
        ));
    }
    if let Some(name) = sources
        .policies
        .keys()
        .find(|n| !loaded.iter().any(|l| l.name() == n.as_str()))
    {
        return Err(format!(
            "[plugins.policy.{name}] names a component that is not loaded (loaded: {})",
            loaded_names()
        ));
    }
    Ok((loaded, tools))
}

/// The policy of the component `name` at `file`: the configuration's, else nothing granted
/// (a `NAME.policy.toml` beside it only asks, and is named in a warning).
pub fn policy_for(
    name: &str,
    file: &Path,
    sources: &PluginSources,
    limits: PluginLimits,
) -> Result<ComponentPolicy, String> {
    if let Some((written, source)) = sources.policies.get(name) {
        return ComponentPolicy::from_file(written, source.clone(), limits);
    }
    if let Some(asked) = ComponentPolicy::asked_for(file) {
        tracing::warn!(
            "component {name} asks for access in {}, which grants nothing: copy what you agree to into \
             [plugins.policy.{name}] of your configuration",
            asked.display()
        );
    }
    Ok(ComponentPolicy::deny_all(limits))
}
