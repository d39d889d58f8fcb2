//! The MCP servers a client passes in `session/new` or `session/load`, as the configuration's
//! `[mcp_servers.NAME]` entries of the user: the editor's settings are the user's, so they
//! start outside the sandbox, in the user's home folder (never in the workspace, whose files
//! a repository controls). Stdio and streamable HTTP servers are taken; SSE is refused.

use agent_client_protocol::v1::schema::McpServer;
use agent_host::host_tools::mcp::McpServerSpec;
use std::collections::BTreeMap;
use std::path::PathBuf;

/// The servers as configuration entries, and a sentence for each one that is left out.
pub fn from_client(servers: &[McpServer]) -> (BTreeMap<String, McpServerSpec>, Vec<String>) {
    let mut specs = BTreeMap::new();
    let mut left_out = Vec::new();
    let home = std::env::var_os("HOME").map_or_else(|| PathBuf::from("/"), PathBuf::from);
    for server in servers {
        let (name, entry) = match server {
            McpServer::Stdio(stdio) => (
                &stdio.name,
                serde_json::json!({
                    "command": stdio.command.to_string_lossy(),
                    "args": stdio.args,
                    "env": stdio.env.iter().map(|v| (v.name.clone(), v.value.clone())).collect::<BTreeMap<_, _>>(),
                }),
            ),
            McpServer::Http(http) => (
                &http.name,
                serde_json::json!({
                    "url": http.url,
                    "http_headers": http.headers.iter().map(|h| (h.name.clone(), h.value.clone())).collect::<BTreeMap<_, _>>(),
                }),
            ),
            McpServer::Sse(sse) => {
                left_out.push(format!(
                    "MCP server {:?} is left out: agent-host speaks streamable HTTP and stdio to MCP servers, not SSE",
                    sse.name
                ));
                continue;
            }
            _ => {
                left_out
                    .push("an MCP server of a transport agent-host does not know is left out".to_string());
                continue;
            }
        };
        let key = server_name(name);
        let spec = serde_json::from_value::<McpServerSpec>(entry)
            .map_err(|e| e.to_string())
            .and_then(|mut spec| {
                spec.base_dir = Some(home.clone());
                spec.check(&key).map(|()| spec)
            });
        match spec {
            Ok(_) if specs.contains_key(&key) => {
                left_out.push(format!(
                    "MCP server {name:?} is left out: another one is named {key}"
                ));
            }
            Ok(spec) => {
                specs.insert(key, spec);
            }
            Err(why) => left_out.push(format!("MCP server {name:?} is left out: {why}")),
        }
    }
    (specs, left_out)
}

/// A client's server name as a configuration key: its tools are offered as `NAME__tool`, so
/// letters, digits, `_` and `-`, at most 32, no `__` and no `_` at the end.
fn server_name(name: &str) -> String {
    let mut key = String::new();
    for c in name.chars() {
        let c = if c.is_ascii_alphanumeric() || c == '-' {
            c
        } else {
            '_'
        };
        if !(c == '_' && key.ends_with('_')) && key.len() < 32 {
            key.push(c);
        }
    }
    let key = key.trim_end_matches('_').to_string();
    if key.is_empty() { "editor".to_string() } else { key }
}

#[cfg(test)]
mod tests {
    use super::*;
    use agent_client_protocol::v1::schema::{EnvVariable, McpServerSse, McpServerStdio};

    #[test]
    fn names_become_keys_and_sse_is_named_as_left_out() {
        assert_eq!(server_name("My docs server!"), "My_docs_server");
        assert_eq!(server_name("__"), "editor");
        let servers = [
            McpServer::Stdio(
                McpServerStdio::new("notes", "/usr/bin/notes-mcp")
                    .args(vec!["--fast".to_string()])
                    .env(vec![EnvVariable::new("TOKEN", "x")]),
            ),
            McpServer::Sse(McpServerSse::new("old", "http://127.0.0.1:1/sse")),
        ];
        let (specs, left_out) = from_client(&servers);
        let notes = &specs["notes"];
        assert_eq!(notes.command.as_deref(), Some("/usr/bin/notes-mcp"));
        assert_eq!(notes.args, ["--fast"]);
        assert_eq!(notes.env["TOKEN"], "x");
        assert!(notes.base_dir.is_some());
        assert_eq!(left_out.len(), 1);
        assert!(left_out[0].contains("not SSE"), "{left_out:?}");
    }
}
