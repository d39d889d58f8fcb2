//! Building a session configuration and finding the core component.

use crate::bindings::api;
use std::path::PathBuf;

/// The model used when none is given, per provider profile.
pub fn default_model(provider: &str) -> &'static str {
    match provider {
        "openai" => "gpt-5",
        "gemini" => "gemini-2.5-pro",
        _ => "claude-sonnet-4-5",
    }
}

/// The wire protocol of a provider's own endpoint.
pub fn protocol_of(provider: &str) -> api::WireProtocol {
    match provider {
        "openai" => api::WireProtocol::OpenaiResponses,
        "gemini" => api::WireProtocol::Gemini,
        _ => api::WireProtocol::AnthropicMessages,
    }
}

/// A session configuration with the spec's defaults (section 2.2; the core's
/// `Limits::default` holds the same values for native use, across the WIT boundary).
pub fn session_config(provider: &str, model: &str) -> api::SessionConfig {
    api::SessionConfig {
        provider: provider.to_string(),
        model: model.to_string(),
        endpoint: provider.to_string(),
        protocol: protocol_of(provider),
        reasoning_effort: None,
        max_output_tokens: None,
        limits: api::Limits {
            max_turns: 0,
            max_tool_rounds_per_input: 0,
            default_command_timeout_ms: 10_000,
            max_command_timeout_ms: 600_000,
            enable_loop_detection: true,
            loop_detection_window: 10,
            max_subagent_depth: 1,
        },
        tool_output_limits: Vec::new(),
        enabled_tools: None,
        disabled_tools: Vec::new(),
        host_tools: Vec::new(),
        user_instructions: None,
        provider_options_json: None,
        depth: 0,
        session_id: None,
        context_window_tokens: None,
        parallel_tool_calls: None,
        image_input: None,
        knowledge_cutoff: None,
    }
}

/// Where the core component is: `explicit`, else `$AGENT_CORE_COMPONENT`, else
/// `agent-core.wasm` beside the executable or one folder up (`target/` in a checkout).
pub fn locate_component(explicit: Option<PathBuf>) -> Result<PathBuf, String> {
    if let Some(path) = explicit.or_else(|| std::env::var_os("AGENT_CORE_COMPONENT").map(PathBuf::from)) {
        return match path.is_file() {
            true => Ok(path),
            false => Err(format!("the core component {} does not exist", path.display())),
        };
    }
    let exe_dir = std::env::current_exe()
        .ok()
        .and_then(|p| p.parent().map(PathBuf::from))
        .unwrap_or_default();
    let candidates = [
        exe_dir.join("agent-core.wasm"),
        exe_dir.join("../agent-core.wasm"),
    ];
    candidates.iter().find(|p| p.is_file()).cloned().ok_or_else(|| {
        format!(
            "cannot find agent-core.wasm (looked in {}); build it with `make component` or pass --component",
            candidates
                .iter()
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        )
    })
}
