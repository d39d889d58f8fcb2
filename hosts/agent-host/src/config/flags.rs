//! What the command line says about settings.

use crate::approval::ApprovalMode;
use crate::config::file::parse_effort;
use crate::environments::env_vars::EnvPolicy;
use crate::environments::options::EnvOptions;
use crate::sandbox::SandboxMode;
use agent_protocol::ReasoningEffort;

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
    pub sandbox: Option<SandboxMode>,
    /// `--sandbox-network`.
    pub sandbox_network: bool,
}

/// The flags `run` (and `config show`) add for layered settings.
#[derive(clap::Args, Debug, Clone, Default)]
pub struct SettingsFlags {
    /// Reasoning effort: low, medium or high (default: the configuration, else the model's).
    #[arg(long, value_name = "LEVEL", value_parser = parse_effort)]
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
            sandbox: env.sandbox,
            sandbox_network: env.sandbox_network,
        }
    }
}
