//! LLM endpoints as the host resolves them: base URL and credentials, read from the
//! environment (`ANTHROPIC_API_KEY`, `ANTHROPIC_BASE_URL`, and the same for `OPENAI_*` and
//! `GEMINI_*`). The component names an endpoint; it never sees a URL's key.

use std::collections::BTreeMap;

/// How an endpoint expects its key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AuthStyle {
    /// `x-api-key: KEY` (Anthropic).
    XApiKey,
    /// `authorization: Bearer KEY` (OpenAI and compatibles).
    Bearer,
    /// `x-goog-api-key: KEY` (Gemini).
    GoogApiKey,
}

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
            AuthStyle::GoogApiKey => vec![("x-goog-api-key".to_string(), key.clone())],
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

/// The provider defaults: (endpoint, variable prefix, default base URL, auth).
const PROVIDERS: [(&str, &str, &str, AuthStyle); 3] = [
    (
        "anthropic",
        "ANTHROPIC",
        "https://api.anthropic.com",
        AuthStyle::XApiKey,
    ),
    ("openai", "OPENAI", "https://api.openai.com/v1", AuthStyle::Bearer),
    (
        "gemini",
        "GEMINI",
        "https://generativelanguage.googleapis.com",
        AuthStyle::GoogApiKey,
    ),
];

/// All endpoints, by name.
#[derive(Debug, Clone, Default)]
pub struct Endpoints {
    by_name: BTreeMap<String, Endpoint>,
}

impl Endpoints {
    /// Reads the endpoints from a variable lookup (the process environment in the CLI).
    pub fn from_lookup(lookup: impl Fn(&str) -> Option<String>) -> Self {
        let non_empty = |name: &str| lookup(name).filter(|v| !v.trim().is_empty());
        let mut by_name = BTreeMap::new();
        for (name, prefix, default_url, auth) in PROVIDERS {
            let key_var = format!("{prefix}_API_KEY");
            let api_key = non_empty(&key_var);
            let base_url = non_empty(&format!("{prefix}_BASE_URL"));
            let configured = api_key.is_some() || base_url.is_some();
            by_name.insert(
                name.to_string(),
                Endpoint {
                    name: name.to_string(),
                    base_url: base_url.unwrap_or_else(|| default_url.to_string()),
                    api_key,
                    auth,
                    key_var,
                    configured,
                },
            );
        }
        Self { by_name }
    }

    pub fn from_env() -> Self {
        Self::from_lookup(|name| std::env::var(name).ok())
    }

    pub fn get(&self, name: &str) -> Option<&Endpoint> {
        self.by_name.get(name)
    }

    pub fn insert(&mut self, endpoint: Endpoint) {
        self.by_name.insert(endpoint.name.clone(), endpoint);
    }

    /// The first configured provider endpoint, in the order anthropic, openai, gemini.
    pub fn first_configured(&self) -> Option<&Endpoint> {
        PROVIDERS
            .iter()
            .filter_map(|(name, ..)| self.by_name.get(*name))
            .find(|e| e.configured)
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
    fn debug_output_redacts_the_key() {
        let endpoints =
            Endpoints::from_lookup(|n| (n == "ANTHROPIC_API_KEY").then(|| "sk-secret".to_string()));
        assert!(!format!("{endpoints:?}").contains("sk-secret"));
    }
}
