//! Session configuration (section 2.2 of the spec); mirrors the WIT `agent.session-config`.

use crate::history::ToolDefinition;
use crate::provider::{Profile, ProviderFamily, ReasoningEffort, WireProtocol};
use serde::{Deserialize, Serialize};

/// Session limits; 0 means unlimited where it applies.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Limits {
    pub max_turns: u32,
    pub max_tool_rounds_per_input: u32,
    /// Timeout of a shell command that names none; `None` = the provider family's default
    /// (120 s for Anthropic, 10 s for the others).
    pub default_command_timeout_ms: Option<u64>,
    pub max_command_timeout_ms: u64,
    pub enable_loop_detection: bool,
    pub loop_detection_window: u32,
    pub max_subagent_depth: u32,
    /// Whether write_file, edit_file and apply_patch refuse to change a file that changed
    /// since the session last read or wrote it, and write_file to overwrite one it never
    /// read (on unless turned off; sessions saved before it existed get it on).
    #[serde(default = "guard_on")]
    pub stale_read_guard: bool,
    /// Budget of the session's tokens (prompt and output, summed over its requests); the
    /// input that reaches it stops before its next request. 0: none.
    #[serde(default)]
    pub max_session_tokens: u64,
    /// Budget of the session's cost in US cents, at the model catalog's prices, fractions of
    /// a cent included (`0.4` is $0.004); a model without a price cannot have one. 0: none.
    #[serde(default)]
    pub max_cost_cents: f64,
}

fn guard_on() -> bool {
    true
}

impl Limits {
    /// A cost budget in cents is a finite amount, 0 or more (0: no budget); every place that
    /// reads one (flags, configuration files, batch tasks, the session) checks it here.
    pub fn check_cost_cents(cents: f64) -> Result<(), String> {
        match cents.is_finite() && cents >= 0.0 {
            true => Ok(()),
            false => Err(format!(
                "max_cost_cents: {cents} is not an amount of US cents (0 or more; 0: no budget)"
            )),
        }
    }
}

/// How a failed LLM request is tried again: after a network error, a rate limit,
/// an overloaded or failing server, with exponential backoff (doubling, with jitter) from
/// `base_delay_ms` up to `max_delay_ms`; a provider's `Retry-After` is followed up to
/// `max_delay_ms`, a longer one ends the input at once.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct RetrySettings {
    /// Retries after the first attempt (0: none).
    pub max_retries: u32,
    pub base_delay_ms: u64,
    pub max_delay_ms: u64,
}

impl RetrySettings {
    /// Most retries a configuration may ask for.
    pub const MAX_RETRIES: u32 = 20;
    /// Longest wait a configuration may allow between two attempts (10 minutes).
    pub const MAX_DELAY_MS: u64 = 600_000;

    /// The WIT's names of the fields, for [`Self::validate`].
    pub const WIT_NAMES: [&'static str; 3] =
        ["retry.max-retries", "retry.base-delay-ms", "retry.max-delay-ms"];

    /// Checks the bounds; the error names the field as `names` (max retries, base delay,
    /// maximum delay) call them where the settings came from.
    pub fn validate(&self, names: [&str; 3]) -> Result<(), String> {
        let [retries, base, cap] = names;
        if self.max_retries > Self::MAX_RETRIES {
            return Err(format!(
                "{retries}: {} is more than {}",
                self.max_retries,
                Self::MAX_RETRIES
            ));
        }
        if self.max_delay_ms > Self::MAX_DELAY_MS {
            return Err(format!(
                "{cap}: {} is more than {} (10 minutes)",
                self.max_delay_ms,
                Self::MAX_DELAY_MS
            ));
        }
        if self.base_delay_ms > self.max_delay_ms {
            return Err(format!(
                "{base}: {} is more than {cap} ({})",
                self.base_delay_ms, self.max_delay_ms
            ));
        }
        Ok(())
    }
}

/// A per-tool override of the truncation limits.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolOutputLimit {
    pub tool: String,
    pub max_chars: Option<u32>,
    pub max_lines: Option<u32>,
}

/// Everything a session needs to start.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SessionConfig {
    /// The tool profile's id (`anthropic`, `openai`, `gemini`, `compact`); checked by
    /// `validate`.
    pub provider: String,
    pub model: String,
    pub endpoint: String,
    pub protocol: WireProtocol,
    pub reasoning_effort: Option<ReasoningEffort>,
    pub max_output_tokens: Option<u32>,
    pub limits: Limits,
    pub tool_output_limits: Vec<ToolOutputLimit>,
    pub enabled_tools: Option<Vec<String>>,
    pub disabled_tools: Vec<String>,
    pub host_tools: Vec<ToolDefinition>,
    pub user_instructions: Option<String>,
    pub provider_options: Option<serde_json::Value>,
    /// A JSON Schema the final answer must match: each request asks for it through its
    /// protocol's structured output (the host checks the answer).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_schema: Option<serde_json::Value>,
    pub depth: u32,
    pub session_id: Option<String>,
    /// Overrides the profile's context window (tokens).
    #[serde(default)]
    pub context_window_size: Option<u64>,
    /// Overrides the profile's choice of running tool calls concurrently.
    #[serde(default)]
    pub parallel_tool_calls: Option<bool>,
    /// Overrides the catalog's answer to "does the model accept images".
    #[serde(default)]
    pub image_input: Option<bool>,
    /// Overrides the catalog's knowledge cutoff shown in the environment block.
    #[serde(default)]
    pub knowledge_cutoff: Option<String>,
    /// How failed LLM requests are retried; `None`: [`RetrySettings::default`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry: Option<RetrySettings>,
    /// Error-recovery reminders after a failed tool call; `None`: the profile's choice.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system_reminders: Option<bool>,
}

impl SessionConfig {
    /// A configuration with the defaults for a profile and model: its family's own endpoint
    /// and protocol, and the default limits. An unknown profile is kept as given (with
    /// Anthropic's endpoint) so that `validate` can name it.
    pub fn new(provider: &str, model: &str) -> Self {
        let family = Profile::parse(provider).map_or(ProviderFamily::Anthropic, Profile::family);
        Self {
            provider: provider.to_string(),
            model: model.to_string(),
            endpoint: family.as_str().to_string(),
            protocol: family.protocol(),
            reasoning_effort: None,
            max_output_tokens: None,
            limits: Limits::default(),
            tool_output_limits: Vec::new(),
            enabled_tools: None,
            disabled_tools: Vec::new(),
            host_tools: Vec::new(),
            user_instructions: None,
            provider_options: None,
            output_schema: None,
            depth: 0,
            session_id: None,
            context_window_size: None,
            parallel_tool_calls: None,
            image_input: None,
            knowledge_cutoff: None,
            retry: None,
            system_reminders: None,
        }
    }

    /// The tool profile, once `validate` has passed.
    pub fn profile(&self) -> Option<Profile> {
        Profile::parse(&self.provider)
    }

    /// Checks what the loop relies on; the error names the offending field.
    pub fn validate(&self) -> Result<(), String> {
        if self.profile().is_none() {
            return Err(format!(
                "provider: unknown profile {:?} (expected one of {})",
                self.provider,
                Profile::names()
            ));
        }
        if self.model.trim().is_empty() {
            return Err("model: must not be empty".to_string());
        }
        if self.endpoint.trim().is_empty() {
            return Err("endpoint: must not be empty".to_string());
        }
        Limits::check_cost_cents(self.limits.max_cost_cents).map_err(|e| format!("limits.{e}"))?;
        if self.limits.max_command_timeout_ms == 0 {
            return Err("limits.max-command-timeout-ms: must be greater than 0".to_string());
        }
        if self.context_window_size == Some(0) {
            return Err(
                "context-window-tokens: must be greater than 0 (leave it unset for the model's own)"
                    .to_string(),
            );
        }
        if let Some(retry) = &self.retry {
            retry.validate(RetrySettings::WIT_NAMES)?;
        }
        Ok(())
    }

    /// The timeout of a command that names none: the configured one, else the family's.
    pub fn default_command_timeout_ms(&self) -> u64 {
        self.limits.default_command_timeout_ms.unwrap_or_else(|| {
            self.profile()
                .map_or(ProviderFamily::Anthropic, Profile::family)
                .default_command_timeout_ms()
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_configured_command_timeout_wins_over_the_family_default() {
        let mut config = SessionConfig::new("anthropic", "m");
        assert_eq!(config.default_command_timeout_ms(), 120_000);
        config.limits.default_command_timeout_ms = Some(30_000);
        assert_eq!(config.default_command_timeout_ms(), 30_000);
        assert_eq!(
            SessionConfig::new("openai", "m").default_command_timeout_ms(),
            10_000
        );
    }

    #[test]
    fn validation_names_the_field() {
        assert_eq!(SessionConfig::new("gemini", "m").validate(), Ok(()));
        let unknown = SessionConfig::new("mistral", "m").validate().unwrap_err();
        assert!(
            unknown.starts_with("provider: unknown profile \"mistral\""),
            "{unknown}"
        );
        assert!(
            SessionConfig::new("openai", " ")
                .validate()
                .unwrap_err()
                .starts_with("model:")
        );
    }

    #[test]
    fn defaults_come_from_the_shared_file() {
        let limits = Limits::default();
        assert_eq!(limits.max_command_timeout_ms, 600_000);
        assert_eq!(limits.loop_detection_window, 10);
        assert_eq!(limits.default_command_timeout_ms, None);
        let config = SessionConfig::new("gemini", "m");
        assert_eq!(
            (config.endpoint.as_str(), config.protocol),
            ("gemini", WireProtocol::Gemini)
        );
    }
}
