//! Provider families and wire protocols. What hosts need to know about each (default model,
//! base URL, key variables, context window, command timeout) is in `defaults`; the core's
//! profiles add each family's tools and prompt (`agent-core`'s `profile.rs`).

use serde::{Deserialize, Serialize};

/// A provider profile: which tools and system prompt a model family gets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ProviderFamily {
    Anthropic,
    Openai,
    Gemini,
}

/// The wire protocol an endpoint speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum WireProtocol {
    AnthropicMessages,
    OpenaiResponses,
    Gemini,
    ChatCompletions,
}

/// How much the model should reason.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ReasoningEffort {
    Low,
    Medium,
    High,
}

/// How an endpoint's key is sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum AuthStyle {
    /// `x-api-key: KEY` (Anthropic).
    XApiKey,
    /// `authorization: Bearer KEY` (OpenAI and compatible servers).
    Bearer,
    /// `x-goog-api-key: KEY` (Gemini).
    XGoogApiKey,
}

impl ProviderFamily {
    pub const ALL: [Self; 3] = [Self::Anthropic, Self::Openai, Self::Gemini];

    /// The profile id, e.g. `anthropic`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Anthropic => "anthropic",
            Self::Openai => "openai",
            Self::Gemini => "gemini",
        }
    }

    /// The family a profile id names.
    pub fn parse(id: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|family| family.as_str() == id)
    }

    /// The ids, for error messages (`anthropic, openai, gemini`).
    pub fn names() -> String {
        Self::ALL.map(Self::as_str).join(", ")
    }
}

/// A tool profile: which tools and system prompt a session gets. Each provider family has its
/// own, aligned with its reference agent; `Compact` is for small and local models whatever
/// protocol they speak (few tools, a short prompt, no subagents).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Profile {
    Anthropic,
    Openai,
    Gemini,
    Compact,
}

impl Profile {
    pub const ALL: [Self; 4] = [Self::Anthropic, Self::Openai, Self::Gemini, Self::Compact];

    /// The profile id, e.g. `compact`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Anthropic => "anthropic",
            Self::Openai => "openai",
            Self::Gemini => "gemini",
            Self::Compact => "compact",
        }
    }

    pub fn parse(id: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|profile| profile.as_str() == id)
    }

    /// The ids, for error messages (`anthropic, openai, gemini, compact`).
    pub fn names() -> String {
        Self::ALL.map(Self::as_str).join(", ")
    }

    /// The provider family whose defaults the profile takes where it has none of its own:
    /// the compact profile reads the instruction files and waits for commands as Claude Code
    /// does (its tools are Claude Code's, fewer).
    pub fn family(self) -> ProviderFamily {
        match self {
            Self::Anthropic | Self::Compact => ProviderFamily::Anthropic,
            Self::Openai => ProviderFamily::Openai,
            Self::Gemini => ProviderFamily::Gemini,
        }
    }

    /// Tokens, for models the catalog does not know. A compact session mostly talks to a local
    /// server, whose window is far below a hosted model's (llama.cpp's default is the model's
    /// training context, 32k for Qwen2.5-Coder).
    pub fn context_window(self) -> u64 {
        match self {
            Self::Compact => 32_768,
            other => other.family().context_window(),
        }
    }
}

impl From<ProviderFamily> for Profile {
    fn from(family: ProviderFamily) -> Self {
        match family {
            ProviderFamily::Anthropic => Self::Anthropic,
            ProviderFamily::Openai => Self::Openai,
            ProviderFamily::Gemini => Self::Gemini,
        }
    }
}

impl WireProtocol {
    pub const ALL: [Self; 4] = [
        Self::AnthropicMessages,
        Self::OpenaiResponses,
        Self::Gemini,
        Self::ChatCompletions,
    ];

    /// The name used in configuration files and recordings, e.g. `anthropic-messages`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::AnthropicMessages => "anthropic-messages",
            Self::OpenaiResponses => "openai-responses",
            Self::Gemini => "gemini",
            Self::ChatCompletions => "chat-completions",
        }
    }

    pub fn parse(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|p| p.as_str() == name)
    }

    /// The tool profile a session on an endpoint of this protocol gets when the endpoint's
    /// configuration names none. Chat Completions is what local and self-hosted servers
    /// (llama.cpp, Ollama, vLLM) speak, mostly for open models, many of them small: they get
    /// the compact profile, which a 1.5B model handles (EVAL.md); the others get their
    /// family's.
    pub fn default_profile(self) -> Profile {
        match self {
            Self::ChatCompletions => Profile::Compact,
            other => other.family().into(),
        }
    }

    /// The provider family whose defaults suit the protocol's models (Chat Completions
    /// servers mostly host OpenAI-style models).
    pub fn family(self) -> ProviderFamily {
        match self {
            Self::AnthropicMessages => ProviderFamily::Anthropic,
            Self::OpenaiResponses | Self::ChatCompletions => ProviderFamily::Openai,
            Self::Gemini => ProviderFamily::Gemini,
        }
    }
}

impl ReasoningEffort {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Low => "low",
            Self::Medium => "medium",
            Self::High => "high",
        }
    }

    pub fn parse(name: &str) -> Option<Self> {
        [Self::Low, Self::Medium, Self::High]
            .into_iter()
            .find(|e| e.as_str() == name)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn names_round_trip() {
        for family in ProviderFamily::ALL {
            assert_eq!(ProviderFamily::parse(family.as_str()), Some(family));
            assert_eq!(serde_json::to_value(family).unwrap(), family.as_str());
        }
        for protocol in WireProtocol::ALL {
            assert_eq!(WireProtocol::parse(protocol.as_str()), Some(protocol));
            assert_eq!(serde_json::to_value(protocol).unwrap(), protocol.as_str());
        }
        assert_eq!(ProviderFamily::parse("mistral"), None);
        assert_eq!(ProviderFamily::names(), "anthropic, openai, gemini");
        for profile in Profile::ALL {
            assert_eq!(Profile::parse(profile.as_str()), Some(profile));
            assert_eq!(serde_json::to_value(profile).unwrap(), profile.as_str());
        }
        for family in ProviderFamily::ALL {
            assert_eq!(Profile::from(family).family(), family);
            assert_eq!(Profile::from(family).as_str(), family.as_str());
        }
    }
}
