//! How agent-host reaches an MCP server: a child process over stdio, with its variables and
//! its standard error chosen here (a trusted project's in the sandbox, see `sandboxed`), or
//! a streamable HTTP address with its headers, whose secret values come from variables
//! named in the configuration.

use super::spec::McpServerSpec;
use crate::environments::env_vars::EnvPolicy;
use crate::secrets;
use rmcp::transport::TokioChildProcess;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use std::collections::HashMap;
use std::path::Path;
use std::process::Stdio;

/// Starts the server's program in `cwd` with only its variables, its standard error to
/// `stderr`, with the user's rights: the user's own servers (and, in `danger-full-access`,
/// a trusted project's).
pub fn stdio(spec: &McpServerSpec, cwd: &Path, stderr: Stdio) -> Result<TokioChildProcess, String> {
    if !cwd.is_dir() {
        return Err(format!("its working directory {} is not a folder", cwd.display()));
    }
    let program = spec.command.clone().unwrap_or_default();
    let mut command = tokio::process::Command::new(&program);
    command
        .args(&spec.args)
        .current_dir(cwd)
        .env_clear()
        .envs(variables(spec));
    TokioChildProcess::builder(command)
        .stderr(stderr)
        .spawn()
        .map(|(transport, _)| transport)
        .map_err(|e| format!("cannot run {program:?}: {e}"))
}

/// The server's variables: the core ones every command gets (PATH, HOME, ...), those it
/// names in `env_vars` (credentials too), then its literal `env`.
pub fn variables(spec: &McpServerSpec) -> Vec<(String, String)> {
    let host = std::env::vars_os().filter_map(|(k, v)| Some((k.into_string().ok()?, v.into_string().ok()?)));
    let mut vars = EnvPolicy::CoreOnly.filter(host, &spec.env_vars);
    // What the entry passes by name, and its literal secrets, are kept out of what the
    // server's answers hand on (see the call's redaction).
    for (name, value) in &vars {
        if spec.env_vars.contains(name) && (secrets::is_withheld(name) || secrets::is_secret_name(name)) {
            secrets::redact::remember(value);
        }
    }
    for (name, value) in &spec.env {
        if secrets::is_secret_name(name) {
            secrets::redact::remember(value);
        }
        vars.retain(|(kept, _)| kept != name);
        vars.push((name.clone(), value.clone()));
    }
    vars
}

/// The HTTP transport's settings: the address, the bearer token from its variable, and the
/// headers (values from `http_headers`, or from the variables `env_http_headers` names).
/// A named variable that is not set is an error naming it; secret values are kept out of
/// logs.
pub fn http(spec: &McpServerSpec, url: &str) -> Result<StreamableHttpClientTransportConfig, String> {
    http_with(spec, url, &secrets::host_var)
}

/// [`http`] with the variables read by `lookup`.
fn http_with(
    spec: &McpServerSpec,
    url: &str,
    lookup: &dyn Fn(&str) -> Option<String>,
) -> Result<StreamableHttpClientTransportConfig, String> {
    // rmcp's reqwest is built without a TLS provider of its own: rustls' ring, as agent-host's.
    let _ = rustls::crypto::ring::default_provider().install_default();
    let variable = |name: &str, what: &str| {
        let value =
            lookup(name).ok_or_else(|| format!("{what} names the variable {name}, which is not set"))?;
        secrets::redact::remember(&value);
        Ok::<_, String>(value)
    };
    let mut headers = HashMap::new();
    let literal = spec.http_headers.iter().map(|(h, v)| {
        let credential = secrets::is_secret_name(h)
            || ["authorization", "cookie"].contains(&h.to_ascii_lowercase().as_str());
        if credential {
            secrets::redact::remember(v);
        }
        Ok((h, v.clone()))
    });
    let from_variables = spec
        .env_http_headers
        .iter()
        .map(|(h, var)| variable(var, &format!("env_http_headers.{h}")).map(|v| (h, v)));
    for entry in literal.chain(from_variables) {
        let (header, value) = entry?;
        let name = http::HeaderName::from_bytes(header.as_bytes())
            .map_err(|_| format!("{header:?} is not a header name"))?;
        let value = http::HeaderValue::from_str(&value)
            .map_err(|_| format!("the value of header {header:?} is not valid in a header"))?;
        headers.insert(name, value);
    }
    let mut config = StreamableHttpClientTransportConfig::with_uri(url).custom_headers(headers);
    if let Some(var) = &spec.bearer_token_env_var {
        config = config.auth_header(variable(var, "bearer_token_env_var")?);
    }
    Ok(config)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn http_headers_come_from_the_entry_and_from_named_variables() {
        let spec: McpServerSpec = toml::from_str(
            "url = \"http://127.0.0.1:1/mcp\"\nbearer_token_env_var = \"MCP_TOKEN\"\n\
             http_headers = { \"X-Team\" = \"core\" }\nenv_http_headers = { \"X-Key\" = \"MCP_KEY\" }\n",
        )
        .unwrap();
        let vars = |name: &str| match name {
            "MCP_TOKEN" => Some("token-from-the-variable-3141".to_string()),
            "MCP_KEY" => Some("key-from-the-variable-2718".to_string()),
            _ => None,
        };
        let config = http_with(&spec, "http://127.0.0.1:1/mcp", &vars).unwrap();
        assert_eq!(
            config.auth_header.as_deref(),
            Some("token-from-the-variable-3141")
        );
        assert_eq!(
            config.custom_headers[&http::HeaderName::from_static("x-team")],
            "core"
        );
        assert_eq!(
            config.custom_headers[&http::HeaderName::from_static("x-key")],
            "key-from-the-variable-2718"
        );
        assert_eq!(&*config.uri, "http://127.0.0.1:1/mcp");
        // The values read from variables are redacted wherever agent-host logs text.
        assert!(!secrets::redact_known("sent key-from-the-variable-2718").contains("2718"));
        let unset = |_: &str| None;
        let error = http_with(&spec, "http://127.0.0.1:1/mcp", &unset).unwrap_err();
        assert_eq!(
            error,
            "env_http_headers.X-Key names the variable MCP_KEY, which is not set"
        );
    }

    #[test]
    fn a_stdio_server_gets_the_core_variables_the_named_ones_and_its_own() {
        let spec: McpServerSpec = toml::from_str(
            "command = \"x\"\nenv_vars = [\"PATH\"]\nenv = { HOME = \"/srv\", MODE = \"t\" }\n",
        )
        .unwrap();
        let vars = variables(&spec);
        let get = |name: &str| {
            vars.iter()
                .filter(|(n, _)| n == name)
                .map(|(_, v)| v.as_str())
                .collect::<Vec<_>>()
        };
        assert_eq!(
            get("HOME"),
            ["/srv"],
            "the entry's own value replaces the inherited one"
        );
        assert_eq!(get("MODE"), ["t"]);
        assert_eq!(get("PATH").len(), 1);
    }
}
