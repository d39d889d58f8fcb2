//! agent-core: the whole coding agent (session, loop, LLM wire protocols, tools) as one
//! crate that compiles natively (for tests, over the in-memory fakes of `agent-test-support`) and to a
//! WebAssembly component whose only authority is its imports.

pub mod config;
pub mod edit_match;
pub mod events;
pub mod file_stamps;
pub mod history;
pub mod llm;
pub mod loop_detection;
pub mod model_catalog;
pub mod patch;
pub mod ports;
pub mod profile;
pub mod prompt_context;
pub mod session;
pub mod tools;
pub mod truncation;
pub mod usage;

#[cfg(target_arch = "wasm32")]
#[global_allocator]
static ALLOCATOR: talc::wasm::WasmDynamicTalc = talc::wasm::new_wasm_dynamic_allocator();

// Without the `component` feature the crate is a plain library on wasm32 too (see Cargo.toml).
#[cfg(all(target_arch = "wasm32", feature = "component"))]
mod wasm;

pub use agent_protocol::{self as protocol, ProviderFamily};
pub use config::{Limits, SessionConfig};
pub use events::{Event, EventKind};
pub use history::ResumeRequest;
pub use session::{AgentError, Session, SessionState, StopReason, SubmitOutcome};

/// Runs one tool of a profile outside any session (the `run-tool` export). The provider
/// `any` means the first profile that has the tool.
pub fn run_tool(
    provider: &str,
    name: &str,
    arguments_json: &str,
    ports: &ports::Ports,
) -> Result<String, String> {
    let provider = match provider {
        "any" => profile::PROFILES
            .iter()
            .map(|p| p.id)
            .find(|p| profile::builtin_registry(*p, 0).get(name).is_some())
            .map_or("anthropic", agent_protocol::Profile::as_str),
        other => other,
    };
    let mut config = SessionConfig::new(provider, "run-tool");
    config.validate()?;
    config.session_id = Some("run-tool".to_string());
    let profile = profile::Profile::for_config(&config);
    let tool = profile.registry.get(name).ok_or_else(|| {
        format!(
            "unknown tool {name:?}; the {provider} profile has: {}",
            profile.registry.names().join(", ")
        )
    })?;
    let arguments: serde_json::Value =
        serde_json::from_str(arguments_json).map_err(|e| format!("arguments are not valid JSON: {e}"))?;
    if !arguments.is_object() {
        return Err(format!("arguments must be a JSON object, got {arguments}"));
    }
    if let Err(problem) = profile.validator.validate(name, &arguments) {
        return Err(format!("invalid arguments for {name}: {problem}"));
    }
    let ctx = tools::ToolContext {
        env: ports.env.as_ref(),
        host_tools: ports.host_tools.as_ref(),
        session_id: "run-tool",
        default_timeout_ms: profile.default_command_timeout_ms,
        max_timeout_ms: config.limits.max_command_timeout_ms,
        // Outside a session there is no model to show an image to; the text says what it is.
        images_supported: true,
        host: ports.host.as_ref(),
        depth: config.depth,
        max_subagent_depth: config.limits.max_subagent_depth,
        // One call run by the user, not a model acting on what it read: nothing to guard.
        stamps: &crate::file_stamps::FileStamps::new(false),
    };
    tools::start(tool, &arguments, &ctx)
        .finish(&mut |_, _| {})
        .map(|output| output.text)
}
