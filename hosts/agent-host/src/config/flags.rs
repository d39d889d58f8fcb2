//! What the command line says about settings.

use crate::approval::ApprovalMode;
use crate::config::file::parse_effort;
use crate::environments::env_vars::EnvPolicy;
use crate::environments::options::EnvOptions;
use crate::sandbox::{NetworkAccess, SandboxMode};
use agent_protocol::ReasoningEffort;

/// What the command line says (`None`: not given).
#[derive(Debug, Clone, Default)]
pub struct Overrides {
    pub provider: Option<String>,
    pub model: Option<String>,
    pub reasoning_effort: Option<ReasoningEffort>,
    pub approval: Option<ApprovalMode>,
    pub max_turns: Option<u32>,
    /// `--max-tokens`.
    pub max_session_tokens: Option<u64>,
    /// `--max-cost`, in cents.
    pub max_cost_cents: Option<f64>,
    pub env_policy: Option<EnvPolicy>,
    /// `--read-only`: the approval mode becomes read-only.
    pub read_only: bool,
    pub sandbox: Option<SandboxMode>,
    /// `--sandbox-network[=off|allow-list|on]`.
    pub sandbox_network: Option<NetworkAccess>,
    /// `--network-allow HOST`, each.
    pub network_allow: Vec<String>,
}

/// The flags `run` (and `config show`) add for layered settings.
#[derive(clap::Args, Debug, Clone, Default)]
#[command(next_help_heading = "Approvals and budgets")]
pub struct SettingsFlags {
    /// Reasoning effort: low, medium or high (default: the configuration, else the model's).
    #[arg(long, value_name = "LEVEL", value_parser = parse_effort, help_heading = "Model")]
    pub effort: Option<ReasoningEffort>,
    /// auto (run every tool call), ask (ask before writes and commands) or read-only.
    #[arg(short = 'a', long, value_name = "MODE")]
    pub approval: Option<ApprovalMode>,
    /// Stop once the session has used this many tokens, prompt and output summed over its
    /// requests (not the output cap of one reply); 0: no budget.
    #[arg(long = "max-session-tokens", alias = "max-tokens", value_name = "N")]
    pub max_tokens: Option<u64>,
    /// Stop once the session has cost this many US dollars at the model catalog's prices
    /// (e.g. 2.50, or 0.004: fractions of a cent are kept); 0: no budget.
    #[arg(long = "max-cost", value_name = "USD", value_parser = parse_dollars)]
    pub max_cost_cents: Option<f64>,
}

/// `2.50` as 250 cents, `0.004` as 0.4 cents.
fn parse_dollars(value: &str) -> Result<f64, String> {
    let dollars: f64 = value
        .trim()
        .trim_start_matches('$')
        .parse()
        .map_err(|_| format!("{value:?} is not an amount of US dollars (e.g. 2.50)"))?;
    if !dollars.is_finite() || !(0.0..=1_000_000.0).contains(&dollars) {
        return Err(format!(
            "{value:?}: give an amount between 0 and 1000000 US dollars"
        ));
    }
    // Binary fractions would show 0.07 as 7.000000000000001 cents; a millionth of a cent is
    // finer than any price.
    Ok((dollars * 100.0 * 1e6).round() / 1e6)
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
            max_session_tokens: self.max_tokens,
            max_cost_cents: self.max_cost_cents,
            env_policy: env.env_policy.map(|p| p.0),
            read_only: env.read_only,
            sandbox: env.sandbox,
            sandbox_network: env.sandbox_network,
            network_allow: env.network_allow.clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::parse_dollars;

    #[test]
    fn dollars_become_cents_and_nonsense_is_named() {
        let cents = |text: &str| parse_dollars(text).map(|c| (c * 1000.0).round() / 1000.0);
        assert_eq!(cents("2.50"), Ok(250.0));
        assert_eq!(cents("$0.015"), Ok(1.5));
        // A budget under a cent is kept, not rounded away to "no budget".
        assert_eq!(cents("0.004"), Ok(0.4));
        assert_eq!(cents("0"), Ok(0.0));
        assert!(parse_dollars("two").unwrap_err().contains("not an amount"));
        assert!(parse_dollars("-1").is_err());
    }
}
