//! `[mcp_servers.NAME]`: one MCP server in the configuration, in the shape codex reads (so an
//! entry copied from `~/.codex/config.toml` works), checked before anything starts.

use crate::host_tools::command::names::is_variable_name;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// codex's defaults: ten seconds to start and list tools, a minute per call.
pub const DEFAULT_STARTUP_TIMEOUT: Duration = Duration::from_secs(10);
pub const DEFAULT_TOOL_TIMEOUT: Duration = Duration::from_secs(60);
/// Longest timeout accepted (a day): longer is a typo, not a plan.
const MAX_TIMEOUT_SECS: f64 = 86_400.0;

/// One `[mcp_servers.NAME]` table.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct McpServerSpec {
    /// The program that serves MCP on its standard input and output.
    pub command: Option<String>,
    #[serde(default)]
    pub args: Vec<String>,
    /// Variables set for the server, with their values.
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    /// Variables of this process passed through by name (credentials included: naming one is
    /// the user's grant).
    #[serde(default)]
    pub env_vars: Vec<String>,
    /// The server's working directory; the workspace when absent.
    pub cwd: Option<PathBuf>,
    /// A streamable HTTP server's address (`http://` or `https://`).
    pub url: Option<String>,
    /// The variable holding a bearer token for an HTTP server (never the token itself).
    pub bearer_token_env_var: Option<String>,
    /// Headers sent to an HTTP server, with their values.
    #[serde(default)]
    pub http_headers: BTreeMap<String, String>,
    /// Headers sent to an HTTP server, each with the variable that holds its value.
    #[serde(default)]
    pub env_http_headers: BTreeMap<String, String>,
    pub startup_timeout_sec: Option<f64>,
    pub tool_timeout_sec: Option<f64>,
    #[serde(default = "enabled_by_default")]
    pub enabled: bool,
    /// Only these of its tools are offered (when given).
    pub enabled_tools: Option<Vec<String>>,
    /// These of its tools are never offered.
    #[serde(default)]
    pub disabled_tools: Vec<String>,
    /// For an entry of the user's own file, that file's folder: the server starts there
    /// (and `cwd` is relative to it), never in the workspace, whose files a repository
    /// controls (`./server.js`, a committed `node_modules`, `.npmrc`). `None`: a trusted
    /// project's entry, started in the workspace, in the session's command sandbox (those
    /// files are the repository's, which commands can rewrite).
    #[serde(skip)]
    pub base_dir: Option<PathBuf>,
}

fn enabled_by_default() -> bool {
    true
}

impl McpServerSpec {
    /// Every mistake a server entry can have, named; `name` is the table's key.
    pub fn check(&self, name: &str) -> Result<(), String> {
        if !is_server_name(name) {
            return Err(format!(
                "{name:?} is not a usable server name: its tools are offered as NAME__tool, so it \
                 takes letters, digits, '_' and '-' (at most 32), no \"__\" and no '_' at its end"
            ));
        }
        match (&self.command, &self.url) {
            (Some(_), Some(_)) => {
                return Err(
                    "give command (a stdio server) or url (a streamable HTTP one), not both".to_string(),
                );
            }
            (None, None) => {
                return Err("command (a stdio server) or url (a streamable HTTP one) is missing".to_string());
            }
            (Some(command), None) => self.check_stdio(command)?,
            (None, Some(url)) => self.check_http(url)?,
        }
        let variables = self.env.keys().chain(&self.env_vars);
        let header_variables = self.env_http_headers.values().chain(&self.bearer_token_env_var);
        for var in variables.chain(header_variables) {
            if !is_variable_name(var) {
                return Err(format!("{var:?} is not an environment variable's name"));
            }
        }
        for (key, value) in [
            ("startup_timeout_sec", self.startup_timeout_sec),
            ("tool_timeout_sec", self.tool_timeout_sec),
        ] {
            if let Some(secs) = value
                && !(secs > 0.0 && secs <= MAX_TIMEOUT_SECS)
            {
                return Err(format!(
                    "{key} = {secs}: give a number of seconds above 0 and at most a day"
                ));
            }
        }
        Ok(())
    }

    fn check_stdio(&self, command: &str) -> Result<(), String> {
        if command.trim().is_empty() {
            return Err("command is empty".to_string());
        }
        if self.bearer_token_env_var.is_some()
            || !self.http_headers.is_empty()
            || !self.env_http_headers.is_empty()
        {
            return Err(
                "bearer_token_env_var, http_headers and env_http_headers are for url servers, not command ones"
                    .to_string(),
            );
        }
        Ok(())
    }

    fn check_http(&self, url: &str) -> Result<(), String> {
        if !(url.starts_with("http://") || url.starts_with("https://")) {
            return Err(format!("url {url:?} must start with http:// or https://"));
        }
        if !self.args.is_empty() || !self.env.is_empty() || !self.env_vars.is_empty() || self.cwd.is_some() {
            return Err("args, env, env_vars and cwd are for command servers, not url ones".to_string());
        }
        for header in self.http_headers.keys().chain(self.env_http_headers.keys()) {
            if http::HeaderName::from_bytes(header.as_bytes()).is_err() {
                return Err(format!("{header:?} is not an HTTP header's name"));
            }
        }
        if self
            .http_headers
            .values()
            .any(|v| http::HeaderValue::from_str(v).is_err())
        {
            return Err("a value in http_headers is not a valid header value".to_string());
        }
        Ok(())
    }

    /// Whether it is a trusted project's stdio server: a program that runs in the session's
    /// command sandbox.
    pub fn is_project_program(&self) -> bool {
        self.base_dir.is_none() && self.command.is_some()
    }

    /// The folder a stdio server starts in, for a session in `workspace`.
    pub fn start_dir(&self, workspace: &Path) -> PathBuf {
        let base = self.base_dir.as_deref().unwrap_or(workspace);
        match &self.cwd {
            Some(dir) => base.join(dir),
            None => base.to_path_buf(),
        }
    }

    pub fn startup_timeout(&self) -> Duration {
        self.startup_timeout_sec
            .map_or(DEFAULT_STARTUP_TIMEOUT, Duration::from_secs_f64)
    }

    pub fn tool_timeout(&self) -> Duration {
        self.tool_timeout_sec
            .map_or(DEFAULT_TOOL_TIMEOUT, Duration::from_secs_f64)
    }

    /// Whether the server's tool `tool` is offered.
    pub fn offers(&self, tool: &str) -> bool {
        self.enabled_tools
            .as_ref()
            .is_none_or(|enabled| enabled.iter().any(|t| t == tool))
            && !self.disabled_tools.iter().any(|t| t == tool)
    }
}

/// A server name: short enough that NAME__tool fits the providers' 64 characters with most
/// tool names, and without the separator.
fn is_server_name(name: &str) -> bool {
    (1..=32).contains(&name.len())
        && !name.contains("__")
        && !name.ends_with('_')
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn spec(toml_text: &str) -> McpServerSpec {
        toml::from_str(toml_text).unwrap()
    }

    #[test]
    fn a_codex_stdio_entry_is_read_and_checked() {
        let s = spec(
            "command = \"npx\"\nargs = [\"-y\", \"@modelcontextprotocol/server-everything\"]\n\
             env = { LOG = \"1\" }\nenv_vars = [\"GITHUB_TOKEN\"]\nstartup_timeout_sec = 20\n\
             tool_timeout_sec = 2.5\ndisabled_tools = [\"get-env\"]\n",
        );
        s.check("everything").unwrap();
        assert_eq!(s.startup_timeout(), Duration::from_secs(20));
        assert_eq!(s.tool_timeout(), Duration::from_millis(2500));
        assert!(s.enabled && s.offers("echo") && !s.offers("get-env"));
        let only = spec("command = \"x\"\nenabled_tools = [\"echo\"]\n");
        assert!(only.offers("echo") && !only.offers("get-sum"));
    }

    #[test]
    fn each_mistake_is_named() {
        let cases = [
            ("command = \"x\"\nurl = \"http://127.0.0.1/mcp\"", "s", "not both"),
            ("url = \"ftp://127.0.0.1/mcp\"", "s", "must start with http"),
            (
                "url = \"http://h/mcp\"\nargs = [\"x\"]",
                "s",
                "for command servers",
            ),
            (
                "command = \"x\"\nbearer_token_env_var = \"T\"",
                "s",
                "for url servers",
            ),
            (
                "url = \"http://h/mcp\"\nbearer_token_env_var = \"sk-123\"",
                "s",
                "\"sk-123\" is not an environment",
            ),
            (
                "url = \"http://h/mcp\"\nhttp_headers = { \"X Y\" = \"1\" }",
                "s",
                "not an HTTP header's name",
            ),
            ("args = []", "s", "is missing"),
            ("command = \" \"", "s", "empty"),
            (
                "command = \"x\"\nenv_vars = [\"A-B\"]",
                "s",
                "\"A-B\" is not an environment",
            ),
            (
                "command = \"x\"\ntool_timeout_sec = 0",
                "s",
                "tool_timeout_sec = 0",
            ),
            ("command = \"x\"", "a__b", "no \"__\""),
            ("command = \"x\"", "a.b", "not a usable server name"),
        ];
        for (text, name, expected) in cases {
            let error = spec(text).check(name).unwrap_err();
            assert!(error.contains(expected), "{text}: {error}");
        }
        assert!(toml::from_str::<McpServerSpec>("command = \"x\"\nbearer = 1").is_err());
    }
}
