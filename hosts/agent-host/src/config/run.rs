//! What a run takes from the settings: provider, model, session configuration,
//! environment options and approvals.

use crate::approval::{ApprovalMode, ApprovalPolicy, ApprovalPrompt};
use crate::config::merge::Settings;
use crate::config::source::{Source, Sourced};
use crate::environments::options::{EnvOptions, EnvPolicyArg};
use crate::transport::endpoints::{COMPATIBLE_VAR, variable_prefix};
use agent_protocol::{Limits, SessionConfig, WireProtocol};
use std::sync::Arc;

/// The provider, its protocol and profile, and the model of a run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunTarget {
    pub provider: String,
    pub protocol: WireProtocol,
    /// The profile whose tools and prompt the session uses.
    pub profile: &'static str,
    pub model: String,
}

impl Settings {
    /// Why no provider can be reached for want of a key or an endpoint (`None`: one is
    /// configured, or the problem is another): for clients that offer their user a way to
    /// set one up (ACP's `auth_required`).
    pub fn missing_credentials(&self) -> Option<String> {
        let missing = match &self.provider {
            None => self.endpoints.others_configured().len() <= 1,
            Some(provider) => self.endpoints.get(&provider.value).is_some_and(|e| !e.configured),
        };
        missing.then(|| self.target().err()).flatten()
    }

    /// The provider and model a run uses, or why there is none (a usage error).
    pub fn target(&self) -> Result<RunTarget, String> {
        let Some(provider) = &self.provider else {
            let others: Vec<&str> = self
                .endpoints
                .others_configured()
                .iter()
                .map(|e| e.name.as_str())
                .collect();
            if others.len() > 1 {
                return Err(format!(
                    "several endpoints are configured ({}): say which with --provider NAME (or provider in the \
                     configuration, or AGENT_PROVIDER)",
                    others.join(", ")
                ));
            }
            return Err(
                "no LLM provider is configured: set ANTHROPIC_API_KEY (or OPENAI_API_KEY, \
                        GEMINI_API_KEY), or ANTHROPIC_BASE_URL for an Anthropic-compatible server that \
                        needs no key, or OPENAI_COMPATIBLE_ENDPOINTS=local=http://127.0.0.1:11434/v1 (with \
                        --model) for a local server, or [endpoints.NAME] in the configuration"
                    .to_string(),
            );
        };
        let provider = &provider.value;
        let endpoint = match self.endpoints.get(provider) {
            None => {
                return Err(format!(
                    "unknown provider {provider:?}: use anthropic, openai, gemini, an endpoint named in \
                     {COMPATIBLE_VAR} (name=url,...) or one under [endpoints] in the configuration"
                ));
            }
            Some(endpoint) if !endpoint.configured => {
                return Err(format!(
                    "provider {provider} is not configured: set {} (or its base URL)",
                    endpoint.key_var
                ));
            }
            Some(endpoint) => endpoint,
        };
        endpoint.check_base_url()?;
        let Some(model) = &self.model else {
            return Err(format!(
                "which model should {provider} run? Pass --model or set {}_MODEL (or model in the \
                 configuration)",
                variable_prefix(provider)
            ));
        };
        Ok(RunTarget {
            provider: provider.clone(),
            protocol: endpoint.protocol,
            profile: self.profile_of(provider).value.as_str(),
            model: model.value.clone(),
        })
    }

    /// A session configuration for `target` with these settings' effort and limits.
    pub fn session_config(&self, target: &RunTarget) -> SessionConfig {
        let mut config = SessionConfig::new(target.profile, &target.model);
        config.endpoint = target.provider.clone();
        config.protocol = target.protocol;
        config.system_reminders = self.endpoint_reminders.get(&target.provider).map(|r| r.value);
        config.retry = self
            .endpoint_retry
            .get(&target.provider)
            .map(|retry| retry.settings());
        self.apply(&mut config);
        config
    }

    /// Sets the reasoning effort and the limits of `config`.
    pub fn apply(&self, config: &mut SessionConfig) {
        let limits = &self.limits;
        config.reasoning_effort = self.reasoning_effort.value;
        config.max_output_tokens = limits.max_output_tokens.value;
        config.limits = Limits {
            max_turns: limits.max_turns.value,
            max_tool_rounds_per_input: limits.max_tool_rounds_per_input.value,
            default_command_timeout_ms: limits.default_command_timeout_ms.value,
            max_command_timeout_ms: limits.max_command_timeout_ms.value,
            enable_loop_detection: limits.enable_loop_detection.value,
            stale_read_guard: limits.stale_read_guard.value,
            loop_detection_window: limits.loop_detection_window.value,
            max_subagent_depth: limits.max_subagent_depth.value,
            max_session_tokens: limits.max_session_tokens.value,
            max_cost_cents: limits.max_cost_cents.value,
        };
    }

    /// `options` with the variable policy, the sandbox and, in read-only mode, the
    /// read-only wrapper.
    pub fn env_options(&self, mut options: EnvOptions) -> EnvOptions {
        options.env_policy = Some(EnvPolicyArg(self.env_policy.value));
        options.sandbox = Some(self.sandbox.value);
        options.sandbox_network = Some(self.sandbox_network.value);
        options.network_allow = self
            .network_allow
            .value
            .entries()
            .iter()
            .map(ToString::to_string)
            .collect();
        // agent-host's own configuration and state folders are on the sandbox's default list
        // (`sandbox::denied`), for every entry point: only the user's additions go here.
        options.sandbox_deny_read = self.sandbox_deny_read.clone();
        options.read_only |= self.approval.value == ApprovalMode::ReadOnly;
        options
    }

    /// The approval policy of a run: its mode, `prompt` if someone can answer, and
    /// whether dangerous commands may run when nobody can be asked.
    pub fn approval_policy(
        &self,
        prompt: Option<Arc<dyn ApprovalPrompt>>,
        allow_dangerous_commands: bool,
    ) -> ApprovalPolicy {
        // An untrusted project may choose `ask` (it is stricter than the user's `auto`), but
        // not the reruns without the sandbox that `ask` offers.
        let untrusted_choice =
            self.untrusted_project.is_some() && matches!(self.approval.source, Source::ProjectFile { .. });
        let policy = ApprovalPolicy::new(self.approval.value)
            .allow_dangerous_commands(allow_dangerous_commands)
            .offer_unsandboxed_reruns(!untrusted_choice)
            .with_hooks(crate::hooks::Hooks::new(self.agent.hooks.clone()));
        match prompt {
            Some(prompt) => policy.with_prompt(prompt),
            None => policy,
        }
    }

    /// Replaces the provider and model (a replay uses the recorded ones).
    pub fn set_target(&mut self, provider: String, model: String, source: Source) {
        self.provider = Some(Sourced::new(provider, source.clone()));
        self.model = Some(Sourced::new(model, source));
    }
}
