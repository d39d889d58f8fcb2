//! Conversions between the generated bindings and the host's own types (for now, the
//! protocol's; the rest of the host will speak only these).

use crate::bindings::{api, session_host as sh, types};
use agent_protocol::{EventKind, ReasoningEffort, SessionConfig, ToolCategory, WireProtocol};

pub fn event_kind(kind: sh::EventKind) -> EventKind {
    use sh::EventKind as K;
    match kind {
        K::SessionStart => EventKind::SessionStart,
        K::SessionEnd => EventKind::SessionEnd,
        K::UserInput => EventKind::UserInput,
        K::ProcessingEnd => EventKind::ProcessingEnd,
        K::AssistantTextStart => EventKind::AssistantTextStart,
        K::AssistantTextDelta => EventKind::AssistantTextDelta,
        K::AssistantTextEnd => EventKind::AssistantTextEnd,
        K::ReasoningStart => EventKind::ReasoningStart,
        K::ReasoningDelta => EventKind::ReasoningDelta,
        K::ReasoningEnd => EventKind::ReasoningEnd,
        K::ToolCallStart => EventKind::ToolCallStart,
        K::ToolCallOutputDelta => EventKind::ToolCallOutputDelta,
        K::ToolCallEnd => EventKind::ToolCallEnd,
        K::SteeringInjected => EventKind::SteeringInjected,
        K::TurnLimit => EventKind::TurnLimit,
        K::LoopDetection => EventKind::LoopDetection,
        K::Warning => EventKind::Warning,
        K::Error => EventKind::Error,
    }
}

pub fn tool_category(category: sh::ToolCategory) -> ToolCategory {
    use sh::ToolCategory as C;
    match category {
        C::Read => ToolCategory::Read,
        C::Search => ToolCategory::Search,
        C::Write => ToolCategory::Write,
        C::Command => ToolCategory::Command,
        C::Agent => ToolCategory::Agent,
        C::Host => ToolCategory::Host,
    }
}

pub fn wire_protocol(protocol: WireProtocol) -> api::WireProtocol {
    match protocol {
        WireProtocol::AnthropicMessages => api::WireProtocol::AnthropicMessages,
        WireProtocol::OpenaiResponses => api::WireProtocol::OpenaiResponses,
        WireProtocol::Gemini => api::WireProtocol::Gemini,
        WireProtocol::ChatCompletions => api::WireProtocol::ChatCompletions,
    }
}

pub fn protocol_of(protocol: api::WireProtocol) -> WireProtocol {
    match protocol {
        api::WireProtocol::AnthropicMessages => WireProtocol::AnthropicMessages,
        api::WireProtocol::OpenaiResponses => WireProtocol::OpenaiResponses,
        api::WireProtocol::Gemini => WireProtocol::Gemini,
        api::WireProtocol::ChatCompletions => WireProtocol::ChatCompletions,
    }
}

pub fn reasoning_effort(effort: ReasoningEffort) -> api::ReasoningEffort {
    match effort {
        ReasoningEffort::Low => api::ReasoningEffort::Low,
        ReasoningEffort::Medium => api::ReasoningEffort::Medium,
        ReasoningEffort::High => api::ReasoningEffort::High,
    }
}

/// The WIT record of a session configuration (a default command timeout left to the
/// provider family is 0 there).
pub fn session_config(c: &SessionConfig) -> api::SessionConfig {
    api::SessionConfig {
        provider: c.provider.clone(),
        model: c.model.clone(),
        endpoint: c.endpoint.clone(),
        protocol: wire_protocol(c.protocol),
        reasoning_effort: c.reasoning_effort.map(reasoning_effort),
        max_output_tokens: c.max_output_tokens,
        limits: api::Limits {
            max_turns: c.limits.max_turns,
            max_tool_rounds_per_input: c.limits.max_tool_rounds_per_input,
            default_command_timeout_ms: c.limits.default_command_timeout_ms.unwrap_or(0),
            max_command_timeout_ms: c.limits.max_command_timeout_ms,
            enable_loop_detection: c.limits.enable_loop_detection,
            loop_detection_window: c.limits.loop_detection_window,
            max_subagent_depth: c.limits.max_subagent_depth,
        },
        tool_output_limits: c
            .tool_output_limits
            .iter()
            .map(|l| api::ToolOutputLimit {
                tool: l.tool.clone(),
                max_chars: l.max_chars,
                max_lines: l.max_lines,
            })
            .collect(),
        enabled_tools: c.enabled_tools.clone(),
        disabled_tools: c.disabled_tools.clone(),
        host_tools: c
            .host_tools
            .iter()
            .map(|t| types::ToolDefinition {
                name: t.name.clone(),
                description: t.description.clone(),
                parameters_json: t.parameters.to_string(),
            })
            .collect(),
        user_instructions: c.user_instructions.clone(),
        provider_options_json: c.provider_options.as_ref().map(|o| o.to_string()),
        depth: c.depth,
        session_id: c.session_id.clone(),
        context_window_tokens: c.context_window_size,
        parallel_tool_calls: c.parallel_tool_calls,
        image_input: c.image_input,
        knowledge_cutoff: c.knowledge_cutoff.clone(),
    }
}
