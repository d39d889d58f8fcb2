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
//! sandbox = "workspace-write"       # read-only | workspace-write | danger-full-access
//! sandbox_network = "allow-list"    # off (default) | allow-list | on (true/false: on/off)
//! network_allow = ["@python", "example.com", "*.example.org:8443", "10.0.0.0/8:*"]
//!                                   # hosts commands reach through agent-host's proxy (with
//!                                   # allow-list; a list alone turns it on); @NAME: a preset
//! sandbox_deny_read = ["~/secrets"] # more paths commands may not read (absolute or ~/)
//! request_timeout_secs = 1800       # one LLM request, sent to the end of its answer (default
//!                                   # 1800; 0: no limit; AGENT_HOST_REQUEST_TIMEOUT_SECS wins)
//!
//! [endpoints.ollama]                # an endpoint; built-in names (anthropic, ...) adjust theirs
//! base_url = "http://127.0.0.1:11434/v1"
//! protocol = "chat-completions"     # anthropic | openai-responses | chat-completions | gemini
//! api_key_env = "OLLAMA_API_KEY"    # the variable holding the key (never the key itself)
//! profile = "compact"               # tools and prompt: anthropic | openai | gemini | compact
//!                                   # (default: compact for chat-completions, else the family's)
//! reminders = true                  # error-recovery reminders (default: on for compact only)
//! max_retries = 4                  # failed requests tried again (default 2, at most 20),
//! retry_base_delay_ms = 500         # after doubling waits with jitter from this (default
//! retry_max_delay_ms = 30000        # 1000) up to this (default 60000, at most 600000)
//!
//! [limits]
//! max_turns = 50                    # and max_tool_rounds_per_input, default_command_timeout_ms,
//!                                   # max_command_timeout_ms, enable_loop_detection,
//!                                   # loop_detection_window, max_subagent_depth, max_output_tokens,
//!                                   # stale_read_guard (true: refuse edits of files changed
//!                                   # since read), max_session_tokens and max_cost_cents
//!                                   # (budgets; 0: none)
//! [plugins]                         # the project file's [plugins] replaces the user file's
//! [[tools]]                         # project file only
//! ```
//!
//! Environment: `AGENT_PROVIDER`, `AGENT_MODEL`, `AGENT_REASONING_EFFORT`, `AGENT_APPROVAL`,
//! `<PROVIDER>_MODEL`, `AGENT_HOST_REQUEST_TIMEOUT_SECS`, and the endpoints' `*_BASE_URL`,
//! `*_API_KEY`, `OPENAI_COMPATIBLE_ENDPOINTS` (see [`crate::transport::endpoints`]).

pub mod agent_file;
pub mod defaults;
pub mod file;
pub mod flags;
pub mod locations;
pub mod merge;
pub mod plugins;
pub mod reading;
mod run;
pub mod show;
pub mod source;
pub mod trust;

pub use agent_file::{AgentConfig, CONFIG_FILE, PluginsConfig};
pub use defaults::{default_model, locate_component, session_config};
pub use flags::{Overrides, SettingsFlags};
pub use locations::{CONFIG_DIR_VAR, FileLocations, user_config_file};
pub use merge::{EndpointSources, LimitSettings, Settings, host_tool_config};
pub use plugins::{PluginOptions, PluginSources, load_plugins, policy_for, wasm_files};
pub use run::RunTarget;
pub use source::{LayerKind, Source, Sourced};
pub use trust::{TrustStore, UntrustedProject};

#[cfg(test)]
mod tests;
