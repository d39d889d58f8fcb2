//! LLM endpoints as the host resolves them: base URL and credentials, read from the
//! environment (`ANTHROPIC_API_KEY`, `ANTHROPIC_BASE_URL`, and the same for `OPENAI_*` and
//! `GEMINI_*`), plus any number of named OpenAI-compatible servers listed in
//! `OPENAI_COMPATIBLE_ENDPOINTS` (`name=url,...`, key in `<NAME>_API_KEY` if any). The
//! component names an endpoint; it never sees a URL or a key.

use crate::transport::response::{REQUEST_TIMEOUT_SECS, REQUEST_TIMEOUT_VAR};
pub use agent_protocol::AuthStyle;
use agent_protocol::{ProviderFamily, WireProtocol};
use std::collections::BTreeMap;
use std::time::Duration;

/// The variable listing named OpenAI-compatible (Chat Completions) endpoints.
pub const COMPATIBLE_VAR: &str = "OPENAI_COMPATIBLE_ENDPOINTS";

/// How a replayed recording's endpoint's base URL starts: it is served by no server.
pub const REPLAY_SCHEME: &str = "replay:";

/// A configured endpoint.
#[derive(Clone, PartialEq, Eq)]
pub struct Endpoint {
    pub name: String,
    pub base_url: String,
    pub api_key: Option<String>,
    pub auth: AuthStyle,
    /// The environment variable the key comes from, for messages.
    pub key_var: String,
    /// Whether the user set anything for it (a key or a base URL).
    pub configured: bool,
    /// The wire protocol the server speaks.
    pub protocol: WireProtocol,
    /// The setting the base URL came from (`ANTHROPIC_BASE_URL`, `endpoints.NAME.base_url
    /// (user file ...:3)`), for messages; `None`: the built-in default.
    pub base_url_setting: Option<String>,
}

impl std::fmt::Debug for Endpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Endpoint")
            .field("name", &self.name)
            .field("base_url", &self.base_url)
            .field("api_key", &self.api_key.as_ref().map(|_| "<redacted>"))
            .field("configured", &self.configured)
            .finish()
    }
}

impl Endpoint {
    /// Headers that authenticate a request.
    pub fn auth_headers(&self) -> Vec<(String, String)> {
        let Some(key) = &self.api_key else {
            return Vec::new();
        };
        match self.auth {
            AuthStyle::XApiKey => vec![("x-api-key".to_string(), key.clone())],
            AuthStyle::Bearer => vec![("authorization".to_string(), format!("Bearer {key}"))],
            AuthStyle::XGoogApiKey => vec![("x-goog-api-key".to_string(), key.clone())],
        }
    }

    /// What to change when the server cannot be reached or its URL is wrong.
    pub fn base_url_hint(&self) -> String {
        match &self.base_url_setting {
            Some(setting) => setting.clone(),
            None => format!(
                "{}_BASE_URL (unset: the default {})",
                variable_prefix(&self.name),
                self.base_url
            ),
        }
    }

    /// Refuses a base URL requests could not be sent to (no `http://` or `https://`, no host),
    /// at start rather than after the retries of the first request.
    pub fn check_base_url(&self) -> Result<(), String> {
        if self.base_url.starts_with(REPLAY_SCHEME) {
            return Ok(());
        }
        let problem = match reqwest::Url::parse(&self.base_url) {
            Err(e) => Some(e.to_string()),
            Ok(url) if !matches!(url.scheme(), "http" | "https") => {
                Some(format!("its scheme is {:?}, not http or https", url.scheme()))
            }
            Ok(url) if url.host_str().is_none_or(str::is_empty) => Some("it names no host".to_string()),
            Ok(_) => None,
        };
        match problem {
            None => Ok(()),
            Some(problem) => Err(format!(
                "the {} endpoint's base URL ({}) is not usable: {problem}; give a full URL such as \
                 http://127.0.0.1:8080 or https://api.example.com/v1",
                self.name,
                // The value is not shown: without a scheme neither a user:password@ part nor a
                // ?token= can be told apart from the rest, and batch results keep this message.
                self.base_url_setting.as_deref().unwrap_or("the default"),
            )),
        }
    }

    /// The full URL of a path. A base URL that already ends in `/v1` (the OpenAI SDK
    /// convention) is not doubled by a path starting with `/v1/`.
    pub fn url(&self, path: &str) -> String {
        let base = self.base_url.trim_end_matches('/');
        let path = if base.ends_with("/v1") {
            path.strip_prefix("/v1").unwrap_or(path)
        } else {
            path
        };
        format!("{base}{path}")
    }
}

/// The prefix of a named endpoint's variables: `my-vllm` -> `MY_VLLM`.
pub fn variable_prefix(name: &str) -> String {
    name.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_uppercase()
            } else {
                '_'
            }
        })
        .collect()
}

/// All endpoints, by name, and how long one request to any of them may take.
#[derive(Debug, Clone, Default)]
pub struct Endpoints {
    by_name: BTreeMap<String, Endpoint>,
    /// The overall limit of one request in seconds (0: none); `None`: the default,
    /// [`REQUEST_TIMEOUT_SECS`].
    request_timeout_secs: Option<u64>,
}

/// `AGENT_HOST_REQUEST_TIMEOUT_SECS` as a number of seconds.
pub fn parse_request_timeout(value: &str) -> Result<u64, String> {
    value.trim().parse().map_err(|_| {
        format!("{value:?} is not a number of seconds (e.g. 1800 for half an hour; 0 for no limit)")
    })
}

impl Endpoints {
    /// Reads the endpoints from a variable lookup (the process environment in the CLI).
    pub fn from_lookup(lookup: impl Fn(&str) -> Option<String>) -> Self {
        let non_empty = |name: &str| lookup(name).filter(|v| !v.trim().is_empty());
        let mut by_name = BTreeMap::new();
        // Each provider family's own API, from the shared defaults.
        for defaults in ProviderFamily::ALL.iter().filter_map(|f| f.defaults()) {
            let prefix = &defaults.variable_prefix;
            let key_var = format!("{prefix}_API_KEY");
            let api_key = non_empty(&key_var);
            let base_var = format!("{prefix}_BASE_URL");
            let base_url = non_empty(&base_var);
            let base_url_setting = base_url.is_some().then_some(base_var);
            let configured = api_key.is_some() || base_url.is_some();
            if let Some(key) = &api_key {
                crate::secrets::redact::remember(key);
            }
            let name = defaults.id.as_str();
            by_name.insert(
                name.to_string(),
                Endpoint {
                    name: name.to_string(),
                    base_url: base_url.unwrap_or_else(|| defaults.base_url.clone()),
                    api_key,
                    auth: defaults.protocol.auth(),
                    key_var,
                    configured,
                    protocol: defaults.protocol,
                    base_url_setting,
                },
            );
        }
        let listed = non_empty(COMPATIBLE_VAR).unwrap_or_default();
        for entry in listed.split(',').map(str::trim).filter(|e| !e.is_empty()) {
            let Some((name, url)) = entry.split_once('=') else {
                tracing::warn!("{COMPATIBLE_VAR}: ignoring {entry:?}, expected name=url");
                continue;
            };
            let (name, url) = (name.trim(), url.trim());
            if name.is_empty() || url.is_empty() || by_name.contains_key(name) {
                tracing::warn!("{COMPATIBLE_VAR}: ignoring {entry:?}: empty or reserved name");
                continue;
            }
            let key_var = format!("{}_API_KEY", variable_prefix(name));
            let api_key = non_empty(&key_var);
            if let Some(key) = &api_key {
                crate::secrets::redact::remember(key);
            }
            by_name.insert(
                name.to_string(),
                Endpoint {
                    name: name.to_string(),
                    base_url: url.to_string(),
                    api_key,
                    auth: AuthStyle::Bearer,
                    key_var,
                    configured: true,
                    protocol: WireProtocol::ChatCompletions,
                    base_url_setting: Some(format!("{name}= in {COMPATIBLE_VAR}")),
                },
            );
        }
        let request_timeout_secs =
            non_empty(REQUEST_TIMEOUT_VAR).and_then(|value| match parse_request_timeout(&value) {
                Ok(seconds) => Some(seconds),
                Err(e) => {
                    tracing::warn!("{REQUEST_TIMEOUT_VAR}: {e}; using {REQUEST_TIMEOUT_SECS} s");
                    None
                }
            });
        Self {
            by_name,
            request_timeout_secs,
        }
    }

    /// Sets the overall limit of one request, in seconds (0: none).
    pub fn set_request_timeout_secs(&mut self, seconds: u64) {
        self.request_timeout_secs = Some(seconds);
    }

    /// The overall limit of one request, head to end of stream; `None`: no limit.
    pub fn request_timeout(&self) -> Option<Duration> {
        match self.request_timeout_secs.unwrap_or(REQUEST_TIMEOUT_SECS) {
            0 => None,
            seconds => Some(Duration::from_secs(seconds)),
        }
    }

    /// The names of every endpoint, for messages.
    pub fn names(&self) -> Vec<String> {
        self.by_name.keys().cloned().collect()
    }

    /// The endpoints of the host's environment as it started (credentials withheld from the
    /// process at start-up included).
    pub fn from_env() -> Self {
        Self::from_lookup(crate::secrets::host_var)
    }

    /// Keeps every endpoint's key variable from commands and its key out of logs.
    pub fn withhold_keys(&self) {
        for endpoint in self.by_name.values() {
            crate::secrets::withhold(&endpoint.key_var);
            if let Some(key) = &endpoint.api_key {
                crate::secrets::redact::remember(key);
            }
        }
    }

    pub fn get(&self, name: &str) -> Option<&Endpoint> {
        self.by_name.get(name)
    }

    /// Adds or replaces an endpoint; its key is hidden from then on wherever this process
    /// redacts what it knows (a server repeating it in an error, say).
    pub fn insert(&mut self, endpoint: Endpoint) {
        if let Some(key) = &endpoint.api_key {
            crate::secrets::redact::remember(key);
        }
        self.by_name.insert(endpoint.name.clone(), endpoint);
    }

    /// The endpoint a session uses when none is named: the first configured built-in one,
    /// in the order anthropic, openai, gemini; else the only other one configured (a local
    /// server named in the configuration or in `OPENAI_COMPATIBLE_ENDPOINTS`).
    pub fn first_configured(&self) -> Option<&Endpoint> {
        let built_in = ProviderFamily::ALL
            .iter()
            .filter_map(|family| self.by_name.get(family.as_str()))
            .find(|e| e.configured);
        built_in.or_else(|| match self.others_configured().as_slice() {
            [only] => Some(*only),
            _ => None,
        })
    }

    /// The configured endpoints that are not built in, by name.
    pub fn others_configured(&self) -> Vec<&Endpoint> {
        self.by_name
            .values()
            .filter(|e| e.configured && !ProviderFamily::ALL.iter().any(|f| f.as_str() == e.name))
            .filter(|e| !e.base_url.starts_with(REPLAY_SCHEME))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base_url_and_key_come_from_the_environment() {
        let endpoints = Endpoints::from_lookup(|name| match name {
            "ANTHROPIC_API_KEY" => Some("k".to_string()),
            "OPENAI_BASE_URL" => Some("http://127.0.0.1:9/v1/".to_string()),
            _ => None,
        });
        let anthropic = endpoints.get("anthropic").unwrap();
        assert_eq!(
            anthropic.url("/v1/messages"),
            "https://api.anthropic.com/v1/messages"
        );
        assert_eq!(
            anthropic.auth_headers(),
            vec![("x-api-key".to_string(), "k".to_string())]
        );
        let openai = endpoints.get("openai").unwrap();
        assert!(openai.configured && openai.api_key.is_none());
        assert_eq!(openai.url("/v1/responses"), "http://127.0.0.1:9/v1/responses");
        assert!(!endpoints.get("gemini").unwrap().configured);
        assert_eq!(endpoints.first_configured().unwrap().name, "anthropic");
    }

    #[test]
    fn named_openai_compatible_endpoints_speak_chat_completions() {
        let endpoints = Endpoints::from_lookup(|name| match name {
            "OPENAI_COMPATIBLE_ENDPOINTS" => Some(
                "ollama=http://127.0.0.1:11434/v1, my-vllm=http://10.0.0.2:8000,bad,anthropic=x".to_string(),
            ),
            "MY_VLLM_API_KEY" => Some("tok".to_string()),
            _ => None,
        });
        let ollama = endpoints.get("ollama").unwrap();
        assert_eq!(ollama.protocol, WireProtocol::ChatCompletions);
        assert!(ollama.configured && ollama.api_key.is_none());
        assert_eq!(
            ollama.url("/v1/chat/completions"),
            "http://127.0.0.1:11434/v1/chat/completions"
        );
        let vllm = endpoints.get("my-vllm").unwrap();
        assert_eq!(vllm.key_var, "MY_VLLM_API_KEY");
        assert_eq!(
            vllm.auth_headers(),
            vec![("authorization".to_string(), "Bearer tok".to_string())]
        );
        assert_eq!(
            endpoints.get("anthropic").unwrap().protocol,
            WireProtocol::AnthropicMessages,
            "a built-in name is not overridden"
        );
        assert_eq!(endpoints.names().len(), 5);
    }

    #[test]
    fn debug_output_redacts_the_key() {
        let endpoints =
            Endpoints::from_lookup(|n| (n == "ANTHROPIC_API_KEY").then(|| "sk-secret".to_string()));
        assert!(!format!("{endpoints:?}").contains("sk-secret"));
    }
}
