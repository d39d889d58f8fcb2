//! Extensions users bring from other agents as Markdown files: custom commands
//! (`.agent/commands/NAME.md`, Claude Code's slash-command format) and skills
//! (`.agent/skills/NAME/SKILL.md`, the open skills format), each from the project and from
//! the user's configuration folder.

pub mod commands;
mod markdown;
pub mod skills;

pub use commands::CustomCommand;
pub use skills::Skill;

use std::path::{Path, PathBuf};

/// Where the user's own extensions live: the folder of the user's `config.toml`
/// (`$AGENT_HOST_CONFIG_DIR`, else `~/.config/agent-host`).
pub fn user_dir() -> Option<PathBuf> {
    let lookup = |name: &str| std::env::var(name).ok();
    crate::config::user_config_file(&lookup).and_then(|file| file.parent().map(Path::to_path_buf))
}

/// Whose an extension is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    User,
    Project,
}

impl Scope {
    pub fn as_str(self) -> &'static str {
        match self {
            Scope::User => "user",
            Scope::Project => "project",
        }
    }
}
