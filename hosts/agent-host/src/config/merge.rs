//! Merging the layers into the effective settings.

use crate::approval::ApprovalMode;
use crate::config::agent_file::AgentConfig;
use crate::config::defaults::default_model;
use crate::config::file::{FileEndpoint, FileLayer, parse_effort, protocol_name};
use crate::config::flags::Overrides;
use crate::config::locations::FileLocations;
use crate::config::source::{Source, Sourced};
use crate::config::trust::{self, Baseline, UntrustedProject};
use crate::environments::env_vars::EnvPolicy;
use crate::environments::options::EnvOptions;
use crate::sandbox::{NetworkAccess, SandboxMode};
use crate::transport::endpoints::{
    COMPATIBLE_VAR, Endpoint, Endpoints, parse_request_timeout, variable_prefix,
};
use crate::transport::response::{REQUEST_TIMEOUT_SECS, REQUEST_TIMEOUT_VAR};
use agent_protocol::{Limits, Profile, ReasoningEffort, RetrySettings, WireProtocol};
use egress_proxy::AllowList;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

const BUILT_IN: [&str; 3] = ["anthropic", "openai", "gemini"];

/// The session limits in effect.
#[derive(Debug, Clone)]
pub struct LimitSettings {
    pub max_turns: Sourced<u32>,
    pub max_tool_rounds_per_input: Sourced<u32>,
    /// `None`: the provider family's own default.
    pub default_command_timeout_ms: Sourced<Option<u64>>,
    pub max_command_timeout_ms: Sourced<u64>,
    pub enable_loop_detection: Sourced<bool>,
    pub stale_read_guard: Sourced<bool>,
    pub loop_detection_window: Sourced<u32>,
    pub max_subagent_depth: Sourced<u32>,
    pub max_output_tokens: Sourced<Option<u32>>,
    pub max_session_tokens: Sourced<u64>,
    pub max_cost_cents: Sourced<f64>,
}

/// Where an endpoint's parts come from.
#[derive(Debug, Clone)]
pub struct EndpointSources {
    pub base_url: Source,
    pub protocol: Source,
    /// Where the key's variable name comes from (the key itself always comes from it).
    pub key_var: Source,
}

/// The effective settings of one command.
#[derive(Debug, Clone)]
pub struct Settings {
    /// The user file looked for, and whether it exists.
    pub user_file: Option<(PathBuf, bool)>,
    /// The project file looked for, and whether it exists.
    pub project_file: Option<(PathBuf, bool)>,
    /// `None` when no provider is named and none is configured.
    pub provider: Option<Sourced<String>>,
    /// `None` for an OpenAI-compatible endpoint nobody named a model for.
    pub model: Option<Sourced<String>>,
    pub reasoning_effort: Sourced<Option<ReasoningEffort>>,
    pub approval: Sourced<ApprovalMode>,
    pub env_policy: Sourced<EnvPolicy>,
    /// Where local commands may write, and whether they reach the network.
    pub sandbox: Sourced<SandboxMode>,
    pub sandbox_network: Sourced<NetworkAccess>,
    /// The hosts sandboxed commands reach through the proxy with `allow-list` (presets
    /// expanded): the last file's list that sets one, then `--network-allow`.
    pub network_allow: Sourced<AllowList>,
    /// Paths sandboxed commands may not read, from every file (the defaults aside).
    pub sandbox_deny_read: Vec<PathBuf>,
    /// How long one LLM request may take, head to end of stream, in seconds (0: no limit).
    pub request_timeout_secs: Sourced<u64>,
    pub limits: LimitSettings,
    /// Every endpoint: built-in ones, `OPENAI_COMPATIBLE_ENDPOINTS` and `[endpoints]`.
    pub endpoints: Endpoints,
    pub endpoint_sources: BTreeMap<String, EndpointSources>,
    /// The retry settings of endpoints whose `[endpoints.NAME]` sets any (the others
    /// retry as `RetrySettings::default`).
    pub endpoint_retry: BTreeMap<String, EndpointRetry>,
    /// The tool profile of endpoints whose `[endpoints.NAME]` names one (the others get
    /// their protocol's default, [`Settings::profile_of`]).
    pub endpoint_profile: BTreeMap<String, Sourced<Profile>>,
    /// Whether sessions on an endpoint get error-recovery reminders, where its section says.
    pub endpoint_reminders: BTreeMap<String, Sourced<bool>>,
    /// `[[tools]]` (project file) and `[plugins]` (project file, else user file).
    pub agent: AgentConfig,
    pub plugins_source: Source,
    pub tools_source: Source,
    /// Where each `[mcp_servers.NAME]` in `agent` comes from.
    pub mcp_server_sources: BTreeMap<String, Source>,
    /// The project file when the user has not trusted it, with what was ignored in it.
    pub untrusted_project: Option<UntrustedProject>,
}

/// A variable's value parsed, with the variable named in the error.
fn parsed_var<T>(
    lookup: &dyn Fn(&str) -> Option<String>,
    name: &str,
    parse: impl Fn(&str) -> Result<T, String>,
) -> Result<Option<Sourced<T>>, String> {
    lookup(name)
        .filter(|v| !v.trim().is_empty())
        .map(|v| {
            parse(v.trim())
                .map(|value| Sourced::new(value, Source::env(name)))
                .map_err(|e| format!("{name}: {e}"))
        })
        .transpose()
}

/// The last value given, lowest precedence first.
fn pick<T>(default: Sourced<T>, layers: impl IntoIterator<Item = Option<Sourced<T>>>) -> Sourced<T> {
    layers.into_iter().flatten().last().unwrap_or(default)
}

impl Settings {
    /// The settings for a command: its files, the process environment and `overrides`.
    pub fn for_command(
        env: &EnvOptions,
        config_file: Option<&Path>,
        overrides: Overrides,
    ) -> Result<Self, String> {
        let locations = FileLocations::for_env(env, config_file)?;
        Self::load(&locations, overrides, &crate::secrets::host_var)
    }

    /// The settings from the files at `locations`, variables through `lookup`, and
    /// `overrides`.
    pub fn load(
        locations: &FileLocations,
        overrides: Overrides,
        lookup: &dyn Fn(&str) -> Option<String>,
    ) -> Result<Self, String> {
        let (user, mut project) = locations.load()?;
        let untrusted_project = project.as_mut().and_then(|p| {
            let mut ignored = p.untrusted.take()?;
            let base = Baseline {
                network_from_flags: overrides.sandbox_network.is_some()
                    || !overrides.network_allow.is_empty(),
                ..Baseline::of(user.as_ref())
            };
            ignored.extend(trust::keep_only_stricter(p, &base));
            Some(UntrustedProject {
                file: p.path.clone(),
                ignored,
            })
        });
        let files = [user.as_ref(), project.as_ref()];
        let var = |name: &str| {
            lookup(name)
                .filter(|v| !v.trim().is_empty())
                .map(|v| Sourced::new(v, Source::env(name)))
        };
        let flag = |name: &str| Source::flag(name);
        let request_timeout_secs = pick(
            Sourced::default_value(REQUEST_TIMEOUT_SECS),
            files
                .iter()
                .map(|f| f.and_then(|f| f.request_timeout_secs.clone()))
                .chain([parsed_var(lookup, REQUEST_TIMEOUT_VAR, parse_request_timeout)?]),
        );
        let (mut endpoints, endpoint_sources) = merge_endpoints(lookup, &files)?;
        endpoints.set_request_timeout_secs(request_timeout_secs.value);
        let endpoint_retry = merge_retry(&files)?;
        let endpoint_profile = per_endpoint(&files, |s| s.profile.clone());
        let endpoint_reminders = per_endpoint(&files, |s| s.reminders.clone());

        let provider = files
            .iter()
            .map(|f| f.and_then(|f| f.provider.clone()))
            .chain([
                var("AGENT_PROVIDER"),
                overrides.provider.map(|p| Sourced::new(p, flag("--provider"))),
            ])
            .flatten()
            .last()
            .or_else(|| {
                endpoints
                    .first_configured()
                    .map(|e| Sourced::default_value(e.name.clone()))
            });
        let model = provider.as_ref().and_then(|provider| {
            // A file's model goes with that file's provider, if it names one: switching
            // provider elsewhere does not send it a model of another vendor.
            let file_model = |file: Option<&FileLayer>| {
                file.filter(|f| f.provider.as_ref().is_none_or(|p| p.value == provider.value))
                    .and_then(|f| f.model.clone())
            };
            let default = endpoints
                .get(&provider.value)
                .filter(|e| e.protocol != WireProtocol::ChatCompletions)
                .map(|e| Sourced::default_value(default_model(e.protocol.family().as_str()).to_string()));
            [
                default,
                file_model(user.as_ref()),
                file_model(project.as_ref()),
                var(&format!("{}_MODEL", variable_prefix(&provider.value))),
                var("AGENT_MODEL"),
                overrides.model.map(|m| Sourced::new(m, flag("--model"))),
            ]
            .into_iter()
            .flatten()
            .last()
        });
        let some = |s: Option<Sourced<ReasoningEffort>>| s.map(|s| Sourced::new(Some(s.value), s.source));
        let reasoning_effort = pick(
            Sourced::default_value(None),
            files
                .iter()
                .map(|f| some(f.and_then(|f| f.reasoning_effort.clone())))
                .chain([
                    some(parsed_var(lookup, "AGENT_REASONING_EFFORT", parse_effort)?),
                    overrides
                        .reasoning_effort
                        .map(|e| Sourced::new(Some(e), flag("--effort"))),
                ]),
        );
        let approval = pick(
            Sourced::default_value(ApprovalMode::Auto),
            files.iter().map(|f| f.and_then(|f| f.approval.clone())).chain([
                parsed_var(lookup, "AGENT_APPROVAL", str::parse)?,
                overrides.approval.map(|a| Sourced::new(a, flag("--approval"))),
                overrides
                    .read_only
                    .then(|| Sourced::new(ApprovalMode::ReadOnly, flag("--read-only"))),
            ]),
        );
        let env_policy = pick(
            Sourced::default_value(EnvPolicy::default()),
            files
                .iter()
                .map(|f| f.and_then(|f| f.env_policy.clone()))
                .chain([overrides.env_policy.map(|p| Sourced::new(p, flag("--vars")))]),
        );
        let sandbox = pick(
            Sourced::default_value(SandboxMode::default()),
            files
                .iter()
                .map(|f| f.and_then(|f| f.sandbox.clone()))
                .chain([overrides.sandbox.map(|m| Sourced::new(m, flag("--sandbox")))]),
        );
        let mut network_allow = pick(
            Sourced::default_value(AllowList::default()),
            files.iter().map(|f| f.and_then(|f| f.network_allow.clone())),
        );
        if !overrides.network_allow.is_empty() {
            let entries: Vec<String> = network_allow
                .value
                .entries()
                .iter()
                .map(ToString::to_string)
                .chain(overrides.network_allow.iter().cloned())
                .collect();
            let both = AllowList::parse(&entries).map_err(|e| format!("--network-allow: {e}"))?;
            // Both places named when the flag adds to a file's list.
            let source = match &network_allow.source {
                Source::Default => flag("--network-allow"),
                file => flag(&format!("--network-allow, added to {file}")),
            };
            network_allow = Sourced::new(both, source);
        }
        let mut sandbox_network = pick(
            Sourced::default_value(NetworkAccess::Off),
            files
                .iter()
                .map(|f| f.and_then(|f| f.sandbox_network.clone()))
                .chain([overrides
                    .sandbox_network
                    .map(|n| Sourced::new(n, flag("--sandbox-network")))]),
        );
        // A list alone asks for it; so does --network-allow, unless --sandbox-network says
        // otherwise on the same command line.
        let listed_by_flag = !overrides.network_allow.is_empty() && overrides.sandbox_network.is_none();
        if (sandbox_network.source == Source::Default && !network_allow.value.is_empty()) || listed_by_flag {
            sandbox_network = Sourced::new(NetworkAccess::AllowList, network_allow.source.clone());
        }
        let sandbox_deny_read = files
            .iter()
            .flatten()
            .flat_map(|f| f.sandbox_deny_read.iter().cloned())
            .collect();
        let limits = merge_limits(
            &files,
            overrides.max_turns,
            overrides.max_session_tokens,
            overrides.max_cost_cents,
        );
        let agent = file_tool_config(user.as_ref(), project.as_ref());
        let plugins_source = files
            .iter()
            .rev()
            .find_map(|f| f.and_then(|f| f.plugins_at.clone()))
            .unwrap_or(Source::Default);
        let tools_source = project
            .as_ref()
            .and_then(|p| p.tools_at.clone())
            .unwrap_or(Source::Default);
        // The project's entry of a name replaces the user's, as in `file_tool_config`.
        let mut mcp_server_sources = BTreeMap::new();
        for file in files.iter().flatten() {
            mcp_server_sources.extend(file.mcp_servers_at.clone());
        }
        Ok(Self {
            user_file: locations.user.clone().map(|p| (p, user.is_some())),
            project_file: locations.project.clone().map(|p| (p, project.is_some())),
            provider,
            model,
            reasoning_effort,
            approval,
            env_policy,
            sandbox,
            sandbox_network,
            network_allow,
            sandbox_deny_read,
            request_timeout_secs,
            limits,
            endpoints,
            endpoint_sources,
            endpoint_retry,
            endpoint_profile,
            endpoint_reminders,
            agent,
            plugins_source,
            tools_source,
            mcp_server_sources,
            untrusted_project,
        })
    }
}

/// The files' limits under the flags `--max-turns`, `--max-session-tokens` and `--max-cost`.
fn merge_limits(
    files: &[Option<&FileLayer>; 2],
    max_turns: Option<u32>,
    max_session_tokens: Option<u64>,
    max_cost_cents: Option<f64>,
) -> LimitSettings {
    let defaults = Limits::default();
    macro_rules! layered {
        ($field:ident, $default:expr) => {
            pick(
                Sourced::default_value($default),
                files
                    .iter()
                    .map(|f| f.and_then(|f| f.limits.$field.clone())),
            )
        };
    }
    let mut limits = LimitSettings {
        max_turns: layered!(max_turns, defaults.max_turns),
        max_tool_rounds_per_input: layered!(max_tool_rounds_per_input, defaults.max_tool_rounds_per_input),
        default_command_timeout_ms: pick(
            Sourced::default_value(None),
            files.iter().map(|f| {
                f.and_then(|f| f.limits.default_command_timeout_ms.clone())
                    .map(|s| Sourced::new(Some(s.value), s.source))
            }),
        ),
        max_command_timeout_ms: layered!(max_command_timeout_ms, defaults.max_command_timeout_ms),
        enable_loop_detection: layered!(enable_loop_detection, defaults.enable_loop_detection),
        stale_read_guard: layered!(stale_read_guard, defaults.stale_read_guard),
        loop_detection_window: layered!(loop_detection_window, defaults.loop_detection_window),
        max_subagent_depth: layered!(max_subagent_depth, defaults.max_subagent_depth),
        max_session_tokens: layered!(max_session_tokens, defaults.max_session_tokens),
        max_cost_cents: layered!(max_cost_cents, defaults.max_cost_cents),
        max_output_tokens: pick(
            Sourced::default_value(None),
            files.iter().map(|f| {
                f.and_then(|f| f.limits.max_output_tokens.clone())
                    .map(|s| Sourced::new(Some(s.value), s.source))
            }),
        ),
    };
    if let Some(turns) = max_turns {
        limits.max_turns = Sourced::new(turns, Source::flag("--max-turns"));
    }
    if let Some(tokens) = max_session_tokens {
        limits.max_session_tokens = Sourced::new(tokens, Source::flag("--max-session-tokens"));
    }
    if let Some(cents) = max_cost_cents {
        limits.max_cost_cents = Sourced::new(cents, Source::flag("--max-cost"));
    }
    limits
}

/// `[[tools]]` of the project file; `[plugins]` of the project file, else the user file's.
fn file_tool_config(user: Option<&FileLayer>, project: Option<&FileLayer>) -> AgentConfig {
    let mut config = project.map(|p| p.agent.clone()).unwrap_or_default();
    if project.is_none_or(|p| p.plugins_at.is_none())
        && let Some(user) = user.filter(|u| u.plugins_at.is_some())
    {
        config.plugins = user.agent.plugins.clone();
        config.plugins.from_user_file = true;
    }
    // The user's servers, and the project's: a project's entry replaces the user's of the
    // same name.
    let mut servers = user.map(|u| u.agent.mcp_servers.clone()).unwrap_or_default();
    servers.append(&mut config.mcp_servers);
    config.mcp_servers = servers;
    // Every file's hooks run: the user's first.
    let mut hooks = user.map(|u| u.agent.hooks.clone()).unwrap_or_default();
    hooks.extend(&config.hooks);
    config.hooks = hooks;
    config
}

impl Settings {
    /// The tool profile of sessions on endpoint `name`: the one its section names, else its
    /// protocol's default (compact for Chat Completions, the family's for the others).
    pub fn profile_of(&self, name: &str) -> Sourced<Profile> {
        self.endpoint_profile.get(name).cloned().unwrap_or_else(|| {
            let protocol = self
                .endpoints
                .get(name)
                .map_or(WireProtocol::AnthropicMessages, |e| e.protocol);
            Sourced::default_value(protocol.default_profile())
        })
    }
}

/// The endpoints of the environment with the files' `[endpoints]` under them: a variable
/// (`ANTHROPIC_BASE_URL`, an `OPENAI_COMPATIBLE_ENDPOINTS` entry) wins over a file.
fn merge_endpoints(
    lookup: &dyn Fn(&str) -> Option<String>,
    files: &[Option<&FileLayer>; 2],
) -> Result<(Endpoints, BTreeMap<String, EndpointSources>), String> {
    let non_empty = |name: &str| lookup(name).filter(|v| !v.trim().is_empty());
    let mut endpoints = Endpoints::from_lookup(non_empty);
    let mut sources = BTreeMap::new();
    for name in endpoints.names() {
        let built_in = BUILT_IN.contains(&name.as_str());
        let base_var = format!("{}_BASE_URL", variable_prefix(&name));
        let base_url = match (built_in, non_empty(&base_var)) {
            (true, Some(_)) => Source::env(&base_var),
            (true, None) => Source::Default,
            (false, _) => Source::env(COMPATIBLE_VAR),
        };
        let protocol = if built_in {
            Source::Default
        } else {
            Source::env(COMPATIBLE_VAR)
        };
        let key_var = Source::Default;
        sources.insert(
            name,
            EndpointSources {
                base_url,
                protocol,
                key_var,
            },
        );
    }
    for (name, sections) in endpoint_sections(files) {
        let base_url = sections.iter().find_map(|s| s.base_url.clone());
        let protocol = sections.iter().find_map(|s| s.protocol.clone());
        let api_key_env = sections.iter().find_map(|s| s.api_key_env.clone());
        let Some(at) = sections.first().map(|s| s.at.clone()) else {
            continue;
        };
        let (mut endpoint, mut from) = match (endpoints.get(name), sources.get(name)) {
            (Some(endpoint), Some(from)) => {
                let built_in = BUILT_IN.contains(&name.as_str());
                if let Some(protocol) = &protocol
                    && built_in
                    && protocol.value != endpoint.protocol
                {
                    return Err(format!(
                        "{}: endpoints.{name}.protocol: the built-in {name} endpoint speaks {}; name \
                         another endpoint for a server speaking {}",
                        protocol.source,
                        protocol_name(endpoint.protocol),
                        protocol_name(protocol.value)
                    ));
                }
                (endpoint.clone(), from.clone())
            }
            _ => {
                let Some(url) = &base_url else {
                    return Err(format!(
                        "{at}: endpoints.{name}: base_url is required for an endpoint that is not built in \
                         (anthropic, openai, gemini)"
                    ));
                };
                let protocol = protocol
                    .clone()
                    .unwrap_or(Sourced::default_value(WireProtocol::ChatCompletions));
                let endpoint = Endpoint {
                    name: name.clone(),
                    base_url: url.value.clone(),
                    api_key: None,
                    auth: WireProtocol::auth(protocol.value),
                    key_var: format!("{}_API_KEY", variable_prefix(name)),
                    configured: true,
                    protocol: protocol.value,
                    base_url_setting: Some(format!("endpoints.{name}.base_url ({})", url.source)),
                };
                let from = EndpointSources {
                    base_url: url.source.clone(),
                    protocol: protocol.source,
                    key_var: Source::Default,
                };
                (endpoint, from)
            }
        };
        if let Some(url) = base_url
            && from.base_url == Source::Default
        {
            endpoint.base_url_setting = Some(format!("endpoints.{name}.base_url ({})", url.source));
            endpoint.base_url = url.value;
            from.base_url = url.source;
        }
        if let Some(var) = api_key_env {
            endpoint.key_var = var.value;
            from.key_var = var.source;
        }
        endpoint.api_key = non_empty(&endpoint.key_var);
        endpoint.configured = endpoint.api_key.is_some() || from.base_url != Source::Default;
        sources.insert(name.clone(), from);
        endpoints.insert(endpoint);
    }
    Ok((endpoints, sources))
}

/// What `field` says for each endpoint whose sections set it (the project file's first).
fn per_endpoint<T>(
    files: &[Option<&FileLayer>; 2],
    field: impl Fn(&FileEndpoint) -> Option<T>,
) -> BTreeMap<String, T> {
    endpoint_sections(files)
        .into_iter()
        .filter_map(|(name, sections)| Some((name.clone(), sections.into_iter().find_map(&field)?)))
        .collect()
}

/// Each endpoint the files name, with its sections: the project file's first (its fields
/// win), then the user file's.
fn endpoint_sections<'a>(files: &[Option<&'a FileLayer>; 2]) -> Vec<(&'a String, Vec<&'a FileEndpoint>)> {
    let names: BTreeSet<&String> = files.iter().flatten().flat_map(|f| f.endpoints.keys()).collect();
    names
        .into_iter()
        .map(|name| {
            let sections = files
                .iter()
                .rev()
                .flatten()
                .filter_map(|f| f.endpoints.get(name))
                .collect();
            (name, sections)
        })
        .collect()
}

/// An endpoint's retry settings, each part with where it comes from.
#[derive(Debug, Clone)]
pub struct EndpointRetry {
    pub max_retries: Sourced<u32>,
    pub base_delay_ms: Sourced<u64>,
    pub max_delay_ms: Sourced<u64>,
}

impl EndpointRetry {
    pub fn settings(&self) -> RetrySettings {
        RetrySettings {
            max_retries: self.max_retries.value,
            base_delay_ms: self.base_delay_ms.value,
            max_delay_ms: self.max_delay_ms.value,
        }
    }
}

impl Default for EndpointRetry {
    fn default() -> Self {
        let defaults = RetrySettings::default();
        Self {
            max_retries: Sourced::default_value(defaults.max_retries),
            base_delay_ms: Sourced::default_value(defaults.base_delay_ms),
            max_delay_ms: Sourced::default_value(defaults.max_delay_ms),
        }
    }
}

/// The retry settings of each endpoint a file's `[endpoints.NAME]` gives any of
/// `max_retries`, `retry_base_delay_ms` and `retry_max_delay_ms`: each part from the project
/// file, else the user file, else the default; checked against the bounds.
fn merge_retry(files: &[Option<&FileLayer>; 2]) -> Result<BTreeMap<String, EndpointRetry>, String> {
    let mut retry = BTreeMap::new();
    for (name, sections) in endpoint_sections(files) {
        let max_retries = sections.iter().find_map(|s| s.max_retries.clone());
        let base = sections.iter().find_map(|s| s.retry_base_delay_ms.clone());
        let cap = sections.iter().find_map(|s| s.retry_max_delay_ms.clone());
        if max_retries.is_none() && base.is_none() && cap.is_none() {
            continue;
        }
        let defaults = EndpointRetry::default();
        let merged = EndpointRetry {
            max_retries: max_retries.unwrap_or(defaults.max_retries),
            base_delay_ms: base.unwrap_or(defaults.base_delay_ms),
            max_delay_ms: cap.unwrap_or(defaults.max_delay_ms),
        };
        let key = |part: &str| format!("endpoints.{name}.{part}");
        let names = [
            key("max_retries"),
            key("retry_base_delay_ms"),
            key("retry_max_delay_ms"),
        ];
        merged
            .settings()
            .validate([&names[0], &names[1], &names[2]])
            .map_err(|e| match sections.first() {
                Some(section) => format!("{}: {e}", section.at),
                None => e,
            })?;
        retry.insert(name.clone(), merged);
    }
    Ok(retry)
}

/// The command tools and plugins for a session: `[[tools]]` of the project file, and the
/// `[plugins]` of the project file, else of the user file.
pub fn host_tool_config(workspace: Option<&Path>, config_file: Option<&Path>) -> Result<AgentConfig, String> {
    let (user, project) = FileLocations::new(workspace, config_file).load()?;
    Ok(file_tool_config(user.as_ref(), project.as_ref()))
}
