//! The agent's configuration file (`.agent/config.toml` in the workspace): declarative
//! command tools and tool plugins. Read once at start; every mistake is an error naming the
//! file and where in it, before a session starts.

use crate::config::source::line_of;
use crate::environments::options::EnvOptions;
use crate::hooks::HooksConfig;
use crate::host_tools::command::{CommandTool, CommandToolContext, CommandToolSpec, load_command_tools};
use crate::host_tools::component::PolicyFile;
use crate::host_tools::mcp::McpServerSpec;
use crate::host_tools::plugin::Capability;
use crate::host_tools::registry::HostTool;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Where [`AgentConfig::discover`] looks, relative to the workspace.
pub const CONFIG_FILE: &str = ".agent/config.toml";

/// The whole configuration file.
#[derive(Debug, Default, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AgentConfig {
    /// `[[tools]]`: commands offered to the model as tools.
    #[serde(default)]
    pub tools: Vec<CommandToolSpec>,
    #[serde(default)]
    pub plugins: PluginsConfig,
    /// `[mcp_servers.NAME]`: MCP servers whose tools are offered as `NAME__tool`.
    #[serde(default)]
    pub mcp_servers: BTreeMap<String, McpServerSpec>,
    /// `[hooks]`: commands run on the sessions' events.
    #[serde(default)]
    pub hooks: HooksConfig,
    /// The file this was read from, if any (set by [`AgentConfig::load`]).
    #[serde(skip)]
    pub source: Option<PathBuf>,
}

/// `[plugins]`: WebAssembly tool components and what each may do.
#[derive(Debug, Default, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PluginsConfig {
    /// A folder whose `*.wasm` files are all loaded (relative to the config file).
    pub dir: Option<PathBuf>,
    /// Individual plugin files (relative to the config file).
    #[serde(default)]
    pub paths: Vec<PathBuf>,
    /// Capabilities granted per plugin name: "read", "write", "run".
    #[serde(default)]
    pub grants: BTreeMap<String, Vec<String>>,
    /// What each component with plain exports may reach, by name (deny by default).
    #[serde(default)]
    pub policy: BTreeMap<String, PolicyFile>,
    /// The file this section was read from.
    #[serde(skip)]
    pub file: Option<PathBuf>,
    /// Whether that is the user's own configuration file (whose policies may grant
    /// folders outside the workspace).
    #[serde(skip)]
    pub from_user_file: bool,
}

impl AgentConfig {
    /// The tools and plugins of a parsed file: each tool checked (errors name its line),
    /// plugin paths resolved against the file's folder.
    pub(crate) fn from_parts(
        tools: Vec<toml::Spanned<CommandToolSpec>>,
        plugins: PluginsConfig,
        text: &str,
        path: &Path,
    ) -> Result<Self, String> {
        let mut names: BTreeMap<&str, usize> = BTreeMap::new();
        for spanned in &tools {
            let spec = spanned.get_ref();
            let line = line_of(text, spanned.span().start);
            let at = format!("{}:{line}", path.display());
            CommandTool::check(spec).map_err(|e| format!("{at}: {e}"))?;
            if let Some(first) = names.insert(&spec.name, line) {
                return Err(format!(
                    "{at}: a second tool is named {:?} (the first is at line {first}); rename one",
                    spec.name
                ));
            }
        }
        for (plugin, capabilities) in &plugins.grants {
            for capability in capabilities {
                Capability::parse(capability)
                    .map_err(|e| format!("{}: plugins.grants.{plugin}: {e}", path.display()))?;
            }
        }
        let base = path.parent().unwrap_or(Path::new("."));
        let mut plugins = plugins;
        plugins.dir = plugins.dir.map(|dir| base.join(dir));
        plugins.paths = plugins.paths.into_iter().map(|p| base.join(p)).collect();
        plugins.file = Some(path.to_path_buf());
        Ok(Self {
            tools: tools.into_iter().map(toml::Spanned::into_inner).collect(),
            plugins,
            mcp_servers: BTreeMap::new(),
            hooks: HooksConfig::default(),
            source: Some(path.to_path_buf()),
        })
    }

    /// The `[[tools]]` as host tools for a session built from `options`: they run in its
    /// working directory under its variable policy. A remote (`ssh://`) environment is an
    /// error when tools are configured, since they would run here, not there.
    pub fn command_tools(&self, options: &EnvOptions) -> Result<Vec<Arc<dyn HostTool>>, String> {
        if self.tools.is_empty() {
            return Ok(Vec::new());
        }
        let at = self
            .source
            .as_ref()
            .map_or_else(|| "the configuration".to_string(), |p| p.display().to_string());
        let mut context = CommandToolContext::from_options(options).map_err(|e| format!("{at}: {e}"))?;
        context.source = self.source.clone();
        load_command_tools(&self.tools, &context).map_err(|e| format!("{at}: {e}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const CONFIG: &str = r#"
[[tools]]
name = "greet"
description = "Say hello"
category = "read"
cmd = "echo"
args = ["hello", "{{who}}"]
[tools.parameters.who]
type = "string"

[plugins]
dir = "plugins"
paths = ["extra/jq.wasm", "/abs/x.wasm"]
grants = { jq = ["read"], fmt = ["read", "write"] }
"#;

    #[test]
    fn a_config_loads_with_plugin_paths_beside_it() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join(".agent")).unwrap();
        let file = dir.path().join(CONFIG_FILE);
        std::fs::write(&file, CONFIG).unwrap();
        let (found, config) = AgentConfig::discover(dir.path()).unwrap().unwrap();
        assert_eq!(found, file);
        assert_eq!(config.tools[0].name, "greet");
        let agent_dir = dir.path().join(".agent");
        assert_eq!(config.plugins.dir, Some(agent_dir.join("plugins")));
        assert_eq!(
            config.plugins.paths,
            [agent_dir.join("extra/jq.wasm"), PathBuf::from("/abs/x.wasm")]
        );
        assert_eq!(config.plugins.grants["fmt"], ["read", "write"]);
        let tools = config
            .command_tools(&EnvOptions {
                cwd: Some(dir.path().to_path_buf()),
                ..EnvOptions::default()
            })
            .unwrap();
        assert_eq!(tools[0].definition().name, "greet");
        assert!(tools[0].origin().contains(".agent/config.toml"));
        assert!(
            AgentConfig::discover(&dir.path().join("nowhere"))
                .unwrap()
                .is_none()
        );
    }

    #[test]
    fn errors_name_the_file_and_the_place() {
        let path = Path::new("/w/.agent/config.toml");
        let syntax = AgentConfig::parse("[[tools]]\nname = \"x\"\ncategory = read\n", path).unwrap_err();
        assert!(
            syntax.contains("/w/.agent/config.toml") && syntax.contains("line 3"),
            "{syntax}"
        );
        let unknown = AgentConfig::parse("[plugin]\ndir = \"p\"\n", path).unwrap_err();
        assert!(
            unknown.contains("unknown field `plugin`") && unknown.contains("line 1"),
            "{unknown}"
        );
        let bad_tool = CONFIG.replace("{{who}}", "{{whom}}");
        let error = AgentConfig::parse(&bad_tool, path).unwrap_err();
        assert!(
            error.starts_with("/w/.agent/config.toml:2: command tool \"greet\": args[1]:"),
            "{error}"
        );
        let twice = format!("{CONFIG}\n{}", &CONFIG[..CONFIG.find("[plugins]").unwrap()]);
        let error = AgentConfig::parse(&twice, path).unwrap_err();
        assert!(
            error.contains("second tool is named \"greet\"") && error.contains("line 2"),
            "{error}"
        );
        let grant = CONFIG.replace("[\"read\"]", "[\"net\"]");
        let error = AgentConfig::parse(&grant, path).unwrap_err();
        assert!(
            error.contains("plugins.grants.jq") && error.contains("\"net\""),
            "{error}"
        );
    }

    #[test]
    fn tools_cannot_be_used_with_a_remote_environment() {
        let config = AgentConfig::parse(CONFIG, Path::new("/w/c.toml")).unwrap();
        let error = config
            .command_tools(&EnvOptions {
                env: Some("ssh://u@h/w".to_string()),
                ..EnvOptions::default()
            })
            .err()
            .unwrap();
        assert!(
            error.contains("/w/c.toml") && error.contains("this machine only"),
            "{error}"
        );
        // Without tools there is nothing to refuse.
        let empty = AgentConfig::parse("[plugins]\npaths = []\n", Path::new("/w/c.toml")).unwrap();
        assert!(empty.command_tools(&EnvOptions::default()).unwrap().is_empty());
    }
}
