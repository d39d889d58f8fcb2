//! Where the configuration files are: the user's, the project's (or `--config`'s).

use crate::config::agent_file::CONFIG_FILE;
use crate::config::file::FileLayer;
use crate::config::reading;
use crate::config::source::LayerKind;
use crate::config::trust::{self, TrustStore};
use crate::environments::options::EnvOptions;
use std::path::{Path, PathBuf};

/// The variable naming the user's configuration folder.
pub const CONFIG_DIR_VAR: &str = "AGENT_HOST_CONFIG_DIR";

/// Where the configuration files are for one command.
#[derive(Debug, Clone, Default)]
pub struct FileLocations {
    /// The user file (it may not exist).
    pub user: Option<PathBuf>,
    /// The project file: `--config`'s, else `.agent/config.toml` in the workspace (it may
    /// not exist; `None` for a remote workspace).
    pub project: Option<PathBuf>,
    /// Whether the project file was named explicitly (then it must exist, and it is the
    /// user's own choice: trusted).
    pub project_explicit: bool,
}

impl FileLocations {
    /// The files for a workspace (`None`: remote, no project file) and `--config`.
    pub fn new(workspace: Option<&Path>, config_file: Option<&Path>) -> Self {
        Self {
            user: user_config_file(&|name| std::env::var(name).ok()),
            project: config_file
                .map(Path::to_path_buf)
                .or_else(|| workspace.map(|w| w.join(CONFIG_FILE))),
            project_explicit: config_file.is_some(),
        }
    }

    /// The files for a command's environment options: the project file is looked for in
    /// `--cwd` (or the current directory) when the environment is local.
    pub fn for_env(env: &EnvOptions, config_file: Option<&Path>) -> Result<Self, String> {
        let workspace = match env.env.as_deref() {
            None | Some("local") => Some(match &env.cwd {
                Some(dir) => std::path::absolute(dir).unwrap_or_else(|_| dir.clone()),
                None => {
                    std::env::current_dir().map_err(|e| format!("cannot read the current directory: {e}"))?
                }
            }),
            Some(_) => None,
        };
        Ok(Self::new(workspace.as_deref(), config_file))
    }

    /// The user file and the project file that exist, checked.
    pub fn load(&self) -> Result<(Option<FileLayer>, Option<FileLayer>), String> {
        let user = match &self.user {
            Some(path) if path.is_file() => Some(FileLayer::load(path, LayerKind::User)?),
            _ => None,
        };
        // A workspace's file comes with the repository: it is read without following links
        // (a link could lead to the user's credentials); one named with --config is the
        // user's choice.
        let project_text = match &self.project {
            Some(path) if self.project_explicit => Some((path, reading::named_file(path)?)),
            Some(path) => reading::project_file(path)?.map(|text| (path, text)),
            None => None,
        };
        let project = match project_text {
            Some((path, text)) => {
                let mut layer = FileLayer::parse(&text, path, LayerKind::Project)?;
                if !self.project_explicit && !self.trusts(path, text.as_bytes()) {
                    layer.untrusted = Some(trust::drop_authority(&mut layer));
                }
                // A file named with --config is the user's own: its servers and hooks start
                // in its folder, as the user file's do, never in the workspace.
                if self.project_explicit {
                    let folder = std::path::absolute(path)
                        .ok()
                        .and_then(|p| p.parent().map(Path::to_path_buf));
                    if let Some(folder) = folder {
                        layer.agent.hooks.from_user_file(&folder);
                        for spec in layer.agent.mcp_servers.values_mut() {
                            spec.base_dir = Some(folder.clone());
                        }
                    }
                }
                Some(layer)
            }
            None => None,
        };
        Ok((user, project))
    }

    /// The user's list of trusted project files (next to the user file).
    pub fn trust_store(&self) -> Option<TrustStore> {
        TrustStore::next_to(self.user.as_deref())
    }

    /// Whether the user trusts the project file at `path` with these bytes.
    fn trusts(&self, path: &Path, contents: &[u8]) -> bool {
        self.trust_store()
            .is_some_and(|store| store.is_trusted(path, contents))
    }
}

/// The user's configuration file: `$AGENT_HOST_CONFIG_DIR/config.toml`, else
/// `<config dir>/agent-host/config.toml`.
pub fn user_config_file(lookup: &dyn Fn(&str) -> Option<String>) -> Option<PathBuf> {
    match lookup(CONFIG_DIR_VAR).filter(|v| !v.trim().is_empty()) {
        Some(dir) => Some(PathBuf::from(dir).join("config.toml")),
        None => dirs::config_dir().map(|dir| dir.join("agent-host").join("config.toml")),
    }
}
