//! The advisory model catalog (section 2.9 of the unified LLM spec): what is known about a
//! model id, kept as a data file so it can be updated without touching code. A model that is
//! not in the catalog still works; its profile's defaults apply.

use serde::{Deserialize, Serialize};
use std::sync::LazyLock;

const CATALOG_JSON: &str = include_str!("../data/models.json");

/// One known model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ModelInfo {
    pub id: String,
    pub provider: String,
    pub display_name: String,
    /// Input plus output tokens.
    pub context_window: u64,
    pub max_output: Option<u64>,
    pub supports_vision: bool,
    pub supports_reasoning: bool,
    /// `YYYY-MM` or `YYYY-MM-DD`, where the provider published one.
    pub knowledge_cutoff: Option<String>,
    #[serde(default)]
    pub aliases: Vec<String>,
    /// List prices, where we could confirm them (see [`prices_as_of`]).
    #[serde(default)]
    pub price: Option<Price>,
}

/// US dollars per million tokens.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Price {
    pub input: f64,
    pub output: f64,
    /// `None`: not listed; cached tokens are billed as input (an upper bound).
    pub cache_read: Option<f64>,
    /// `None`: not listed (or not billed apart); written tokens are billed as input.
    pub cache_write: Option<f64>,
}

#[derive(Deserialize)]
struct Catalog {
    #[serde(default)]
    prices_as_of: String,
    models: Vec<ModelInfo>,
}

static PRICES_AS_OF: LazyLock<String> = LazyLock::new(|| {
    serde_json::from_str::<Catalog>(CATALOG_JSON)
        .map(|c| c.prices_as_of)
        .unwrap_or_default()
});

/// When the catalog's prices were the providers' list prices (`YYYY-MM`).
pub fn prices_as_of() -> &'static str {
    &PRICES_AS_OF
}

/// The catalog, parsed once. The file is part of the build and checked by the tests, so a
/// parse failure cannot reach a user; an empty catalog would only make every model unknown.
static CATALOG: LazyLock<Vec<ModelInfo>> = LazyLock::new(|| {
    serde_json::from_str::<Catalog>(CATALOG_JSON)
        .map(|c| c.models)
        .unwrap_or_default()
});

/// Every model of the catalog, newest first within each provider.
pub fn list_models(provider: Option<&str>) -> Vec<ModelInfo> {
    CATALOG
        .iter()
        .filter(|m| provider.is_none_or(|p| m.provider == p))
        .cloned()
        .collect()
}

/// The entry of a model id: an exact id or alias, else the longest catalog id that the
/// model id extends with a dated or tagged suffix (`claude-sonnet-4-5-20250929`,
/// `gemini-2.5-pro@001`).
pub fn get_model_info(model: &str) -> Option<ModelInfo> {
    if let Some(exact) = CATALOG
        .iter()
        .find(|m| m.id == model || m.aliases.iter().any(|a| a == model))
    {
        return Some(exact.clone());
    }
    CATALOG
        .iter()
        .filter(|m| {
            model
                .strip_prefix(m.id.as_str())
                .is_some_and(|rest| rest.starts_with('-') || rest.starts_with('@'))
        })
        .max_by_key(|m| m.id.len())
        .cloned()
}

/// The catalog's price for `model`: only for its own id, an alias, or the id with a date
/// (`-20250929`, `-2025-08-07`) or a version (`@001`) after it. `gpt-5-pro` is not
/// `gpt-5` at `gpt-5`'s price.
pub fn price_of(model: &str) -> Option<Price> {
    let info = get_model_info(model)?;
    let exact = model == info.id || info.aliases.iter().any(|a| a == model);
    let dated_or_versioned = model.strip_prefix(info.id.as_str()).is_some_and(|rest| {
        rest.starts_with('@')
            || rest
                .strip_prefix('-')
                .is_some_and(|date| !date.is_empty() && date.chars().all(|c| c.is_ascii_digit() || c == '-'))
    });
    (exact || dated_or_versioned).then_some(info.price).flatten()
}

/// The first (newest) model of a provider with a capability (`vision`, `reasoning`), if any.
pub fn get_latest_model(provider: &str, capability: Option<&str>) -> Option<ModelInfo> {
    list_models(Some(provider))
        .into_iter()
        .find(|m| match capability {
            Some("vision") => m.supports_vision,
            Some("reasoning") => m.supports_reasoning,
            _ => true,
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn catalog_parses_and_covers_every_profile() {
        for provider in agent_protocol::ProviderFamily::ALL.map(agent_protocol::ProviderFamily::as_str) {
            assert!(
                !list_models(Some(provider)).is_empty(),
                "no models for {provider}"
            );
        }
    }

    #[test]
    fn lookup_by_id_alias_and_dated_suffix() {
        assert_eq!(get_model_info("gpt-5.2").map(|m| m.id), Some("gpt-5.2".into()));
        assert_eq!(
            get_model_info("sonnet").map(|m| m.id),
            Some("claude-sonnet-4-5".into())
        );
        assert_eq!(
            get_model_info("claude-sonnet-4-5-20250929").map(|m| m.id),
            Some("claude-sonnet-4-5".into())
        );
        // The longest id wins: gpt-5-codex-x is GPT-5 Codex, not GPT-5.
        assert_eq!(
            get_model_info("gpt-5-codex-2025").map(|m| m.id),
            Some("gpt-5-codex".into())
        );
        // A dot is not a suffix separator: gpt-5.3 is not gpt-5.
        assert_eq!(get_model_info("gpt-5.3"), None);
        assert_eq!(get_model_info("my-local-model"), None);
    }

    #[test]
    fn a_price_is_only_for_the_model_itself_or_a_dated_or_versioned_one() {
        assert!(price_of("claude-sonnet-4-5").is_some());
        assert!(price_of("sonnet").is_some());
        assert!(price_of("claude-sonnet-4-5-20250929").is_some());
        assert!(price_of("gpt-5-2025-08-07").is_some());
        assert!(price_of("gemini-2.5-pro@001").is_some());
        assert_eq!(price_of("gpt-5-pro"), None, "another model, another price");
        assert_eq!(price_of("gemini-2.5-flash-lite"), None);
        assert_eq!(price_of("claude-opus-4-6"), None, "no confirmed price");
    }

    #[test]
    fn latest_model_by_capability() {
        assert_eq!(
            get_latest_model("gemini", Some("vision")).map(|m| m.id),
            Some("gemini-3.1-pro-preview".into())
        );
    }
}
