//! The effective settings as a list of `key = value  # source` entries, for `agent-host
//! config show`. Keys are never shown: only whether one is set and from which variable.
//! A base URL's password, if it has one, is hidden too.

use crate::config::file::{effort_name, protocol_name};
use crate::config::merge::Settings;
use crate::config::source::{Source, Sourced};
use crate::environments::env_vars::EnvPolicy;
use serde_json::{Value, json};

/// One effective value.
#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    /// Dotted key, as in the file: `model`, `limits.max_turns`, `endpoints.ollama.base_url`.
    pub key: String,
    pub value: Value,
    pub source: Source,
}

fn entry<T: Into<Value>>(key: &str, value: T, source: &Source) -> Entry {
    Entry {
        key: key.to_string(),
        value: value.into(),
        source: source.clone(),
    }
}

fn sourced<T: Clone + Into<Value>>(key: &str, value: &Sourced<T>) -> Entry {
    entry(key, value.value.clone(), &value.source)
}

impl Settings {
    /// The provider family the configured provider's endpoint speaks for.
    fn family(&self) -> agent_protocol::ProviderFamily {
        self.provider
            .as_ref()
            .and_then(|p| self.endpoints.get(&p.value))
            .map_or(agent_protocol::ProviderFamily::Anthropic, |e| e.protocol.family())
    }

    /// Every effective value with its source, in the order of the file format.
    pub fn entries(&self) -> Vec<Entry> {
        let mut entries = vec![
            match &self.provider {
                Some(provider) => sourced("provider", provider),
                None => entry("provider", Value::Null, &Source::Default),
            },
            match &self.model {
                Some(model) => sourced("model", model),
                None => entry("model", Value::Null, &Source::Default),
            },
            entry(
                "reasoning_effort",
                self.reasoning_effort.value.map(effort_name),
                &self.reasoning_effort.source,
            ),
            entry("approval", self.approval.value.as_str(), &self.approval.source),
            entry(
                "env_policy",
                env_policy_name(self.env_policy.value),
                &self.env_policy.source,
            ),
            entry("sandbox", self.sandbox.value.name(), &self.sandbox.source),
            entry(
                "sandbox_network",
                self.sandbox_network.value.name(),
                &self.sandbox_network.source,
            ),
            // Presets expanded: exactly what the proxy lets through.
            entry(
                "network_allow",
                self.network_allow
                    .value
                    .entries()
                    .iter()
                    .map(ToString::to_string)
                    .collect::<Vec<_>>(),
                &self.network_allow.source,
            ),
            // What this kernel can enforce: the sandbox refuses commands when it cannot.
            entry(
                "sandbox_support",
                crate::sandbox::probe::summary(),
                &Source::Default,
            ),
        ];
        let limits = &self.limits;
        entries.extend([
            // One LLM request, head to end of stream (0: no limit).
            sourced("request_timeout_secs", &self.request_timeout_secs),
            sourced("limits.max_turns", &limits.max_turns),
            sourced("limits.max_session_tokens", &limits.max_session_tokens),
            sourced("limits.max_cost_cents", &limits.max_cost_cents),
            sourced(
                "limits.max_tool_rounds_per_input",
                &limits.max_tool_rounds_per_input,
            ),
            match limits.default_command_timeout_ms.value {
                Some(ms) => entry(
                    "limits.default_command_timeout_ms",
                    ms,
                    &limits.default_command_timeout_ms.source,
                ),
                // What the session will use: its provider family's default.
                None => entry(
                    "limits.default_command_timeout_ms",
                    self.family().default_command_timeout_ms(),
                    &Source::Default,
                ),
            },
            sourced("limits.max_command_timeout_ms", &limits.max_command_timeout_ms),
            sourced("limits.enable_loop_detection", &limits.enable_loop_detection),
            sourced("limits.stale_read_guard", &limits.stale_read_guard),
            sourced("limits.loop_detection_window", &limits.loop_detection_window),
            sourced("limits.max_subagent_depth", &limits.max_subagent_depth),
            sourced("limits.max_output_tokens", &limits.max_output_tokens),
        ]);
        for name in self.endpoints.names() {
            let (Some(endpoint), Some(sources)) =
                (self.endpoints.get(&name), self.endpoint_sources.get(&name))
            else {
                continue;
            };
            let key = |part: &str| format!("endpoints.{name}.{part}");
            let retry = self.endpoint_retry.get(&name).cloned().unwrap_or_default();
            let key_source = match &endpoint.api_key {
                Some(_) => Source::env(&endpoint.key_var),
                None => Source::Default,
            };
            entries.extend([
                entry(
                    &key("base_url"),
                    redact_url(&endpoint.base_url),
                    &sources.base_url,
                ),
                entry(
                    &key("protocol"),
                    protocol_name(endpoint.protocol),
                    &sources.protocol,
                ),
                sourced(&key("profile"), &self.profile_of(&name).map(|p| p.as_str())),
                entry(&key("api_key_env"), endpoint.key_var.as_str(), &sources.key_var),
                sourced(&key("max_retries"), &retry.max_retries),
                sourced(&key("retry_base_delay_ms"), &retry.base_delay_ms),
                sourced(&key("retry_max_delay_ms"), &retry.max_delay_ms),
                entry(
                    &key("api_key"),
                    json!(if endpoint.api_key.is_some() {
                        "<set>"
                    } else {
                        "<not set>"
                    }),
                    &key_source,
                ),
            ]);
            // Unset, the profile decides (the component's profile table).
            if let Some(reminders) = self.endpoint_reminders.get(&name) {
                entries.push(sourced(&key("reminders"), reminders));
            }
        }
        let plugins = &self.agent.plugins;
        let path = |p: &std::path::Path| p.display().to_string();
        entries.extend([
            entry(
                "plugins.dir",
                plugins.dir.as_deref().map(path),
                &self.plugins_source,
            ),
            entry(
                "plugins.paths",
                plugins.paths.iter().map(|p| path(p)).collect::<Vec<_>>(),
                &self.plugins_source,
            ),
            entry("plugins.grants", json!(plugins.grants), &self.plugins_source),
            entry(
                "tools",
                self.agent
                    .tools
                    .iter()
                    .map(|t| t.name.clone())
                    .collect::<Vec<_>>(),
                &self.tools_source,
            ),
        ]);
        // Each server's program and arguments; never its env values.
        for (name, spec) in &self.agent.mcp_servers {
            let source = self
                .mcp_server_sources
                .get(name)
                .cloned()
                .unwrap_or(Source::Default);
            let mut command = vec![spec.command.clone().unwrap_or_default()];
            command.extend(spec.args.iter().cloned());
            let value = if spec.enabled {
                json!(command)
            } else {
                json!("disabled")
            };
            entries.push(entry(&format!("mcp_servers.{name}"), value, &source));
        }
        entries
    }

    /// The files and the entries as one JSON object:
    /// `{"files": {"user": {"path", "found"}, "project": ...}, "settings": {KEY: {"value", "source"}}}`.
    pub fn to_json(&self) -> Value {
        let file = |f: &Option<(std::path::PathBuf, bool)>| match f {
            Some((path, found)) => json!({"path": path.display().to_string(), "found": found}),
            None => Value::Null,
        };
        let settings: serde_json::Map<String, Value> = self
            .entries()
            .into_iter()
            .map(|e| (e.key, json!({"value": e.value, "source": e.source.to_string()})))
            .collect();
        let untrusted = self
            .untrusted_project
            .as_ref()
            .map(|p| json!({"file": p.file.display().to_string(), "ignored": p.ignored}));
        json!({
            "files": {"user": file(&self.user_file), "project": file(&self.project_file)},
            "untrusted_project": untrusted,
            "settings": settings,
        })
    }

    /// The files and the entries as aligned `key = value  # source` lines.
    pub fn render(&self) -> String {
        let file = |label: &str, f: &Option<(std::path::PathBuf, bool)>| match f {
            Some((path, true)) => format!("# {label} file: {}\n", path.display()),
            Some((path, false)) => format!("# {label} file: {} (not found)\n", path.display()),
            None => format!("# {label} file: none\n"),
        };
        let mut out = file("user", &self.user_file) + &file("project", &self.project_file);
        if let Some(untrusted) = &self.untrusted_project {
            out.push_str(&match untrusted.warning() {
                Some(warning) => format!("# {warning}\n"),
                None => "# the project file is not trusted (it sets nothing that needs trust)\n".to_string(),
            });
        }
        let lines: Vec<(String, String)> = self
            .entries()
            .into_iter()
            .map(|e| {
                let value = match e.value {
                    Value::Null => "(none)".to_string(),
                    value => value.to_string(),
                };
                (format!("{} = {value}", e.key), e.source.to_string())
            })
            .collect();
        let width = lines
            .iter()
            .map(|(l, _)| l.chars().count())
            .max()
            .unwrap_or(0)
            .min(60);
        for (line, source) in lines {
            out.push_str(&format!("{line:<width$}  # {source}\n"));
        }
        out
    }
}

fn env_policy_name(policy: EnvPolicy) -> &'static str {
    match policy {
        EnvPolicy::InheritAll => "inherit-all",
        EnvPolicy::CoreOnly => "core",
        EnvPolicy::None => "none",
    }
}

pub use crate::secrets::redact::redact_url;
