//! The session defaults and provider facts of `data/defaults.json`: the one home of these
//! values, which the browser host reads too (a copy in `hosts/web/gen/`).

use crate::config::{Limits, RetrySettings};
use crate::provider::{AuthStyle, ProviderFamily, WireProtocol};
use serde::Deserialize;
use std::sync::LazyLock;

/// What is known about a provider family before any model is chosen.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct FamilyDefaults {
    pub id: ProviderFamily,
    pub default_model: String,
    pub protocol: WireProtocol,
    pub base_url: String,
    /// `ANTHROPIC` for `ANTHROPIC_API_KEY`, `ANTHROPIC_BASE_URL`, `ANTHROPIC_MODEL`.
    pub variable_prefix: String,
    /// The project instruction file the family reads besides [`SHARED_INSTRUCTION_FILE`]
    /// (spec 6.5), relative to each folder from the repository root down.
    pub instruction_file: String,
    /// Tokens, for models the catalog does not know.
    pub context_window: u64,
    /// Timeout of a shell command that names none, unless the session's limits set one
    /// (Claude Code waits 120 s, codex 10 s).
    pub default_command_timeout_ms: u64,
}

#[derive(Debug, Clone, Deserialize)]
struct ProtocolDefaults {
    id: WireProtocol,
    auth: AuthStyle,
}

#[derive(Debug, Deserialize)]
struct Defaults {
    limits: Limits,
    retry: RetrySettings,
    providers: Vec<FamilyDefaults>,
    protocols: Vec<ProtocolDefaults>,
}

/// The project instruction file every family reads (spec 6.5).
pub const SHARED_INSTRUCTION_FILE: &str = "AGENTS.md";

const DEFAULTS_JSON: &str = include_str!("../data/defaults.json");

/// Parsed once. The file is part of the build and a test parses it, so `None` cannot reach a
/// user; the accessors' fallbacks (empty, zero) exist only to avoid a panic path.
static DEFAULTS: LazyLock<Option<Defaults>> = LazyLock::new(|| serde_json::from_str(DEFAULTS_JSON).ok());

impl ProviderFamily {
    /// The family's defaults from `data/defaults.json`.
    pub fn defaults(self) -> Option<&'static FamilyDefaults> {
        DEFAULTS.as_ref()?.providers.iter().find(|p| p.id == self)
    }

    pub fn default_model(self) -> &'static str {
        self.defaults().map_or("", |d| d.default_model.as_str())
    }

    /// The protocol the family's own API speaks.
    pub fn protocol(self) -> WireProtocol {
        self.defaults()
            .map_or(WireProtocol::AnthropicMessages, |d| d.protocol)
    }

    pub fn context_window(self) -> u64 {
        self.defaults().map_or(0, |d| d.context_window)
    }

    pub fn default_command_timeout_ms(self) -> u64 {
        self.defaults().map_or(0, |d| d.default_command_timeout_ms)
    }

    /// The instruction files the family reads in each folder: AGENTS.md, then its own.
    pub fn instruction_files(self) -> [&'static str; 2] {
        [
            SHARED_INSTRUCTION_FILE,
            self.defaults().map_or("", |d| d.instruction_file.as_str()),
        ]
    }

    /// Every instruction file any family reads, once each.
    pub fn all_instruction_files() -> Vec<&'static str> {
        let mut names = vec![SHARED_INSTRUCTION_FILE];
        for family in Self::ALL {
            let own = family.instruction_files()[1];
            if !own.is_empty() && !names.contains(&own) {
                names.push(own);
            }
        }
        names
    }
}

impl WireProtocol {
    /// How the protocol's servers take a key.
    pub fn auth(self) -> AuthStyle {
        DEFAULTS
            .as_ref()
            .and_then(|d| d.protocols.iter().find(|p| p.id == self))
            .map_or(AuthStyle::Bearer, |p| p.auth)
    }
}

impl Default for Limits {
    /// The values of `data/defaults.json`. (Were the file unreadable, which its test rules
    /// out, every limit would be 0 and `validate` would refuse the session.)
    fn default() -> Self {
        DEFAULTS.as_ref().map_or_else(
            || Self {
                max_turns: 0,
                max_tool_rounds_per_input: 0,
                default_command_timeout_ms: None,
                max_command_timeout_ms: 0,
                enable_loop_detection: false,
                loop_detection_window: 0,
                max_subagent_depth: 0,
                stale_read_guard: false,
                max_session_tokens: 0,
                max_cost_cents: 0.0,
            },
            |defaults| defaults.limits.clone(),
        )
    }
}

impl Default for RetrySettings {
    /// The values of `data/defaults.json` (no retry, were it unreadable).
    fn default() -> Self {
        DEFAULTS.as_ref().map_or(
            Self {
                max_retries: 0,
                base_delay_ms: 0,
                max_delay_ms: 0,
            },
            |defaults| defaults.retry,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_defaults_file_parses_and_names_every_family_and_protocol_once() {
        let defaults = DEFAULTS.as_ref().expect("data/defaults.json parses");
        for family in ProviderFamily::ALL {
            assert_eq!(
                defaults.providers.iter().filter(|p| p.id == family).count(),
                1,
                "{family:?}"
            );
            assert!(!family.default_model().is_empty());
        }
        for protocol in WireProtocol::ALL {
            assert_eq!(
                defaults.protocols.iter().filter(|p| p.id == protocol).count(),
                1,
                "{protocol:?}"
            );
        }
        assert_eq!(ProviderFamily::Anthropic.default_command_timeout_ms(), 120_000);
        assert_eq!(ProviderFamily::Openai.protocol(), WireProtocol::OpenaiResponses);
        assert_eq!(WireProtocol::Gemini.auth(), AuthStyle::XGoogApiKey);
        assert_eq!(
            ProviderFamily::all_instruction_files(),
            ["AGENTS.md", "CLAUDE.md", ".codex/instructions.md", "GEMINI.md"]
        );
    }
}
