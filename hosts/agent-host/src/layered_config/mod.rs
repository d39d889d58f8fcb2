//! Layered settings: what a run uses and where each value comes from.
//!
//! Precedence, highest first: command-line flags, environment variables, the project file
//! (`.agent/config.toml` in the workspace, or the file given with `--config`), the user file
//! (`$AGENT_HOST_CONFIG_DIR/config.toml`, else `<config dir>/agent-host/config.toml`, e.g.
//! `~/.config/agent-host/config.toml`), then built-in defaults.
//!
//! ```toml
//! provider = "anthropic"            # or openai, gemini, or a name under [endpoints]
//! model = "claude-sonnet-4-5"       # used only with this file's provider, if it names one
//! reasoning_effort = "high"         # low | medium | high
//! approval = "ask"                  # auto | ask | read-only
//! env_policy = "core"               # inherit-all | core | none
//!
//! [endpoints.ollama]                # an endpoint; built-in names (anthropic, ...) adjust theirs
//! base_url = "http://127.0.0.1:11434/v1"
//! protocol = "chat-completions"     # anthropic | openai-responses | chat-completions | gemini
//! api_key_env = "OLLAMA_API_KEY"    # the variable holding the key (never the key itself)
//!
//! [limits]
//! max_turns = 50                    # and max_tool_rounds_per_input, default_command_timeout_ms,
//!                                   # max_command_timeout_ms, enable_loop_detection,
//!                                   # loop_detection_window, max_subagent_depth, max_output_tokens
//! [plugins]                         # the project file's [plugins] replaces the user file's
//! [[tools]]                         # project file only
//! ```
//!
//! Environment: `AGENT_PROVIDER`, `AGENT_MODEL`, `AGENT_REASONING_EFFORT`, `AGENT_APPROVAL`,
//! `<PROVIDER>_MODEL`, and the endpoints' `*_BASE_URL`, `*_API_KEY`,
//! `OPENAI_COMPATIBLE_ENDPOINTS` (see [`crate::endpoints`]).

pub mod file;
mod merge;
mod run;
pub mod show;

use crate::approval::ApprovalMode;
use crate::bindings::api::ReasoningEffort;
use crate::env::{EnvOptions, EnvPolicy};
use crate::settings::{AgentConfig, CONFIG_FILE};
use file::FileLayer;
use std::fmt;
use std::path::{Path, PathBuf};

pub use merge::{EndpointSources, LimitSettings, Settings};
pub use run::{RunTarget, profile_of};

/// The variable naming the user's configuration folder.
pub const CONFIG_DIR_VAR: &str = "AGENT_HOST_CONFIG_DIR";

/// Which configuration file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LayerKind {
    User,
    Project,
}

/// Where a value comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    Default,
    UserFile {
        path: PathBuf,
        line: usize,
    },
    ProjectFile {
        path: PathBuf,
        line: usize,
    },
    /// An environment variable, by name.
    Env(String),
    /// A command-line flag, e.g. `--model`.
    Flag(String),
}

impl Source {
    pub fn file(kind: LayerKind, path: &Path, line: usize) -> Self {
        let path = path.to_path_buf();
        match kind {
            LayerKind::User => Source::UserFile { path, line },
            LayerKind::Project => Source::ProjectFile { path, line },
        }
    }

    pub fn env(name: &str) -> Self {
        Source::Env(name.to_string())
    }

    pub fn flag(name: &str) -> Self {
        Source::Flag(name.to_string())
    }
}

impl fmt::Display for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Source::Default => f.write_str("default"),
            Source::UserFile { path, line } => write!(f, "user file {}:{line}", path.display()),
            Source::ProjectFile { path, line } => write!(f, "project file {}:{line}", path.display()),
            Source::Env(name) => write!(f, "env {name}"),
            Source::Flag(name) => write!(f, "flag {name}"),
        }
    }
}

/// A value and where it comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sourced<T> {
    pub value: T,
    pub source: Source,
}

impl<T> Sourced<T> {
    pub fn new(value: T, source: Source) -> Self {
        Self { value, source }
    }

    pub fn default_value(value: T) -> Self {
        Self::new(value, Source::Default)
    }
}

/// What the command line says (`None`: not given).
#[derive(Debug, Clone, Default)]
pub struct Overrides {
    pub provider: Option<String>,
    pub model: Option<String>,
    pub reasoning_effort: Option<ReasoningEffort>,
    pub approval: Option<ApprovalMode>,
    pub max_turns: Option<u32>,
    pub env_policy: Option<EnvPolicy>,
    /// `--read-only`: the approval mode becomes read-only.
    pub read_only: bool,
}

/// The flags `run` (and `config show`) add for layered settings.
#[derive(clap::Args, Debug, Clone, Default)]
pub struct SettingsFlags {
    /// Reasoning effort: low, medium or high (default: the configuration, else the model's).
    #[arg(long, value_name = "LEVEL", value_parser = file::parse_effort)]
    pub effort: Option<ReasoningEffort>,
    /// auto (run every tool call), ask (ask before writes and commands) or read-only.
    #[arg(long, value_name = "MODE")]
    pub approval: Option<ApprovalMode>,
}

impl SettingsFlags {
    /// These flags with the other ones that override settings.
    pub fn overrides(
        &self,
        provider: Option<String>,
        model: Option<String>,
        max_turns: Option<u32>,
        env: &EnvOptions,
    ) -> Overrides {
        Overrides {
            provider,
            model,
            reasoning_effort: self.effort,
            approval: self.approval,
            max_turns,
            env_policy: env.env_policy.map(|p| p.0),
            read_only: env.read_only,
        }
    }
}

/// Where the configuration files are for one command.
#[derive(Debug, Clone, Default)]
pub struct FileLocations {
    /// The user file (it may not exist).
    pub user: Option<PathBuf>,
    /// The project file: `--config`'s, else `.agent/config.toml` in the workspace (it may
    /// not exist; `None` for a remote workspace).
    pub project: Option<PathBuf>,
    /// Whether the project file was named explicitly (then it must exist).
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
        let project = match &self.project {
            Some(path) if self.project_explicit || path.is_file() => {
                Some(FileLayer::load(path, LayerKind::Project)?)
            }
            _ => None,
        };
        Ok((user, project))
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

/// The command tools and plugins for a session: `[[tools]]` of the project file, and the
/// `[plugins]` of the project file, else of the user file.
pub fn host_tool_config(workspace: Option<&Path>, config_file: Option<&Path>) -> Result<AgentConfig, String> {
    let (user, project) = FileLocations::new(workspace, config_file).load()?;
    Ok(merge::host_tool_config(user.as_ref(), project.as_ref()))
}

#[cfg(test)]
mod tests;
