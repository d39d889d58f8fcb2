//! What a plugin asks for: a manifest in the component's `agent-tool-plugin` custom section
//! (the Rust SDK embeds it) or in `NAME.plugin.toml` beside `NAME.wasm` (for plugins built
//! by tools that cannot add custom sections). The section wins when both exist.

use serde::Deserialize;
use std::collections::BTreeSet;
use std::path::Path;

/// The custom section a plugin's manifest lives in.
pub const SECTION: &str = "agent-tool-plugin";

/// A kind of access a plugin may ask for and a user may grant.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Capability {
    /// Read files in the workspace: read, stat, list, grep, glob.
    Read,
    /// Create, change, move and delete files in the workspace.
    Write,
    /// Run commands in the workspace.
    Run,
}

impl Capability {
    pub const ALL: [Capability; 3] = [Capability::Read, Capability::Write, Capability::Run];

    pub fn as_str(self) -> &'static str {
        match self {
            Capability::Read => "read",
            Capability::Write => "write",
            Capability::Run => "run",
        }
    }

    pub fn parse(text: &str) -> Result<Self, String> {
        Self::ALL
            .into_iter()
            .find(|c| c.as_str() == text.trim())
            .ok_or_else(|| format!("unknown capability {text:?} (expected read, write or run)"))
    }
}

/// Parses a comma-separated capability list, e.g. `read,write`.
pub fn parse_capabilities(text: &str) -> Result<BTreeSet<Capability>, String> {
    text.split(',')
        .filter(|part| !part.trim().is_empty())
        .map(Capability::parse)
        .collect()
}

pub fn describe(capabilities: &BTreeSet<Capability>) -> String {
    if capabilities.is_empty() {
        return "nothing".to_string();
    }
    capabilities
        .iter()
        .map(|c| c.as_str())
        .collect::<Vec<_>>()
        .join(", ")
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Manifest {
    /// The plugin's name (default: the file stem).
    pub name: Option<String>,
    /// What the plugin needs; nothing when absent.
    #[serde(default)]
    pub capabilities: BTreeSet<Capability>,
}

impl Manifest {
    pub fn parse(text: &str, origin: &str) -> Result<Self, String> {
        let manifest: Manifest =
            toml::from_str(text).map_err(|e| format!("the plugin manifest in {origin} is invalid: {e}"))?;
        if let Some(name) = &manifest.name
            && !valid_name(name)
        {
            return Err(format!(
                "the plugin manifest in {origin} names the plugin {name:?}: use letters, digits, - and _"
            ));
        }
        Ok(manifest)
    }

    /// The manifest of the component at `path` whose bytes are `wasm`: its custom section,
    /// else the file beside it, else an empty one (the plugin asks for nothing).
    pub fn find(path: &Path, wasm: &[u8]) -> Result<Self, String> {
        let section = custom_section(wasm)
            .map_err(|e| format!("{} is not a valid WebAssembly component: {e}", path.display()))?;
        if let Some(text) = section {
            return Self::parse(&text, &format!("{}'s {SECTION} section", path.display()));
        }
        let beside = path.with_extension("plugin.toml");
        match std::fs::read_to_string(&beside) {
            Ok(text) => Self::parse(&text, &beside.display().to_string()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Self::default()),
            Err(e) => Err(format!("cannot read {}: {e}", beside.display())),
        }
    }
}

pub fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 64
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
}

/// The text of the first `agent-tool-plugin` custom section anywhere in the component,
/// including inside its core modules (where a linker puts sections from the source).
fn custom_section(wasm: &[u8]) -> Result<Option<String>, String> {
    for payload in wasmparser::Parser::new(0).parse_all(wasm) {
        let payload = payload.map_err(|e| e.message().to_string())?;
        if let wasmparser::Payload::CustomSection(section) = payload
            && section.name() == SECTION
        {
            let text = std::str::from_utf8(section.data())
                .map_err(|_| format!("the {SECTION} section is not UTF-8 text"))?;
            return Ok(Some(text.to_string()));
        }
    }
    Ok(None)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn manifests_parse_and_reject_what_they_do_not_know() {
        let manifest = Manifest::parse("name = \"jq\"\ncapabilities = [\"read\", \"run\"]", "t").unwrap();
        assert_eq!(manifest.name.as_deref(), Some("jq"));
        assert_eq!(
            manifest.capabilities,
            BTreeSet::from([Capability::Read, Capability::Run])
        );
        assert!(Manifest::parse("capabilities = [\"network\"]", "t").is_err());
        assert!(Manifest::parse("colour = 1", "t").unwrap_err().contains("colour"));
        assert!(
            Manifest::parse("name = \"a b\"", "t")
                .unwrap_err()
                .contains("letters")
        );
        assert_eq!(Manifest::parse("", "t").unwrap(), Manifest::default());
    }

    #[test]
    fn capability_lists_parse_with_clear_errors() {
        assert_eq!(
            parse_capabilities("read, write").unwrap(),
            BTreeSet::from([Capability::Read, Capability::Write])
        );
        assert!(parse_capabilities("read,fly").unwrap_err().contains("\"fly\""));
        assert!(parse_capabilities("").unwrap().is_empty());
    }
}
