//! Session configuration (section 2.2 of the spec); mirrors `agent.session-config`.

use crate::llm::{ReasoningEffort, ToolDefinition, WireProtocol};
use serde::{Deserialize, Serialize};

/// Session limits; 0 means unlimited where it applies.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Limits {
    pub max_turns: u32,
    pub max_tool_rounds_per_input: u32,
    pub default_command_timeout_ms: u64,
    pub max_command_timeout_ms: u64,
    pub enable_loop_detection: bool,
    pub loop_detection_window: u32,
    pub max_subagent_depth: u32,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            max_turns: 0,
            max_tool_rounds_per_input: 0,
            default_command_timeout_ms: 10_000,
            max_command_timeout_ms: 600_000,
            enable_loop_detection: true,
            loop_detection_window: 10,
            max_subagent_depth: 1,
        }
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
}

impl SessionConfig {
    /// A configuration with the spec's defaults for a provider profile and model.
    pub fn new(provider: &str, model: &str) -> Self {
        let (endpoint, protocol) = match provider {
            "openai" => ("openai", WireProtocol::OpenaiResponses),
            "gemini" => ("gemini", WireProtocol::Gemini),
            _ => ("anthropic", WireProtocol::AnthropicMessages),
        };
        Self {
            provider: provider.to_string(),
            model: model.to_string(),
            endpoint: endpoint.to_string(),
            protocol,
            reasoning_effort: None,
            max_output_tokens: None,
            limits: Limits::default(),
            tool_output_limits: Vec::new(),
            enabled_tools: None,
            disabled_tools: Vec::new(),
            host_tools: Vec::new(),
            user_instructions: None,
            provider_options: None,
            depth: 0,
            session_id: None,
            context_window_size: None,
            parallel_tool_calls: None,
            image_input: None,
            knowledge_cutoff: None,
        }
    }

    /// Checks what the loop relies on; the error names the offending field.
    pub fn validate(&self) -> Result<(), String> {
        if !crate::profile::PROVIDERS.contains(&self.provider.as_str()) {
            return Err(format!(
                "provider: unknown profile {:?} (expected one of {})",
                self.provider,
                crate::profile::PROVIDERS.join(", ")
            ));
        }
        if self.model.trim().is_empty() {
            return Err("model: must not be empty".to_string());
        }
        if self.endpoint.trim().is_empty() {
            return Err("endpoint: must not be empty".to_string());
        }
        if self.limits.max_command_timeout_ms == 0 {
            return Err("limits.max-command-timeout-ms: must be greater than 0".to_string());
        }
        Ok(())
    }

    /// The character and line limits for a tool's output, after overrides.
    pub fn output_limits(&self, tool: &str) -> (usize, Option<usize>) {
        let (chars, lines) = crate::truncation::default_limits(tool);
        match self.tool_output_limits.iter().find(|l| l.tool == tool) {
            Some(o) => (
                o.max_chars.map(|c| c as usize).unwrap_or(chars),
                o.max_lines.map(|l| l as usize).or(lines),
            ),
            None => (chars, lines),
        }
    }
}
