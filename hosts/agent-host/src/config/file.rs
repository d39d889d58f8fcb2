//! One configuration file (the user's or the project's) as written: every value with the
//! line it is on, checked before anything runs. Unknown keys and bad values are errors
//! naming the file and the line.

use crate::approval::ApprovalMode;
use crate::config::agent_file::{AgentConfig, CONFIG_FILE, PluginsConfig};
use crate::config::reading;
use crate::config::source::{LayerKind, Source, Sourced, line_of};
use crate::environments::env_vars::EnvPolicy;
use crate::hooks::HooksConfig;
use crate::host_tools::command::CommandToolSpec;
use crate::host_tools::command::names::is_variable_name;
use crate::host_tools::mcp::McpServerSpec;
use crate::sandbox::{NetworkAccess, SandboxMode};
use agent_protocol::{Profile, ReasoningEffort, WireProtocol};
use egress_proxy::AllowList;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use toml::Spanned;

/// The file's schema. `api_key` fields exist only to refuse them with a helpful message.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawFile {
    provider: Option<Spanned<String>>,
    model: Option<Spanned<String>>,
    reasoning_effort: Option<Spanned<String>>,
    approval: Option<Spanned<String>>,
    env_policy: Option<Spanned<String>>,
    sandbox: Option<Spanned<String>>,
    sandbox_network: Option<Spanned<RawNetwork>>,
    network_allow: Option<Spanned<Vec<String>>>,
    sandbox_deny_read: Option<Spanned<Vec<String>>>,
    request_timeout_secs: Option<Spanned<u64>>,
    api_key: Option<Spanned<toml::Value>>,
    #[serde(default)]
    endpoints: BTreeMap<String, Spanned<RawEndpoint>>,
    limits: Option<RawLimits>,
    plugins: Option<Spanned<PluginsConfig>>,
    #[serde(default)]
    tools: Vec<Spanned<CommandToolSpec>>,
    #[serde(default)]
    mcp_servers: BTreeMap<String, Spanned<McpServerSpec>>,
    hooks: Option<Spanned<HooksConfig>>,
}

/// `sandbox_network`: a setting's name, or true/false as before there were three.
#[derive(Deserialize)]
#[serde(untagged)]
enum RawNetwork {
    Switch(bool),
    Named(String),
}

impl RawNetwork {
    fn access(&self) -> Result<NetworkAccess, String> {
        match self {
            Self::Switch(true) => Ok(NetworkAccess::On),
            Self::Switch(false) => Ok(NetworkAccess::Off),
            Self::Named(name) => name.parse(),
        }
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawEndpoint {
    base_url: Option<Spanned<String>>,
    protocol: Option<Spanned<String>>,
    profile: Option<Spanned<String>>,
    reminders: Option<Spanned<bool>>,
    api_key_env: Option<Spanned<String>>,
    api_key: Option<Spanned<toml::Value>>,
    max_retries: Option<Spanned<u32>>,
    retry_base_delay_ms: Option<Spanned<u64>>,
    retry_max_delay_ms: Option<Spanned<u64>>,
}

/// `[limits]`: the session limits (spec 2.2) and the output-token cap.
#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct RawLimits {
    pub max_turns: Option<Spanned<u32>>,
    pub max_tool_rounds_per_input: Option<Spanned<u32>>,
    pub default_command_timeout_ms: Option<Spanned<u64>>,
    pub max_command_timeout_ms: Option<Spanned<u64>>,
    pub enable_loop_detection: Option<Spanned<bool>>,
    pub stale_read_guard: Option<Spanned<bool>>,
    pub loop_detection_window: Option<Spanned<u32>>,
    pub max_subagent_depth: Option<Spanned<u32>>,
    pub max_output_tokens: Option<Spanned<u32>>,
    pub max_session_tokens: Option<Spanned<u64>>,
    pub max_cost_cents: Option<Spanned<f64>>,
}

/// `[endpoints.<name>]` after checking.
#[derive(Debug, Clone)]
pub struct FileEndpoint {
    /// Where the section is.
    pub at: Source,
    pub base_url: Option<Sourced<String>>,
    pub protocol: Option<Sourced<WireProtocol>>,
    /// The tool profile its sessions get; `None`: the protocol's default.
    pub profile: Option<Sourced<Profile>>,
    /// Error-recovery reminders for its sessions; `None`: the profile's choice.
    pub reminders: Option<Sourced<bool>>,
    pub api_key_env: Option<Sourced<String>>,
    /// How its failed requests are retried, each part where it is set.
    pub max_retries: Option<Sourced<u32>>,
    pub retry_base_delay_ms: Option<Sourced<u64>>,
    pub retry_max_delay_ms: Option<Sourced<u64>>,
}

/// The limits a file sets, each with where.
#[derive(Debug, Clone, Default)]
pub struct FileLimits {
    pub max_turns: Option<Sourced<u32>>,
    pub max_tool_rounds_per_input: Option<Sourced<u32>>,
    pub default_command_timeout_ms: Option<Sourced<u64>>,
    pub max_command_timeout_ms: Option<Sourced<u64>>,
    pub enable_loop_detection: Option<Sourced<bool>>,
    pub stale_read_guard: Option<Sourced<bool>>,
    pub loop_detection_window: Option<Sourced<u32>>,
    pub max_subagent_depth: Option<Sourced<u32>>,
    pub max_output_tokens: Option<Sourced<u32>>,
    pub max_session_tokens: Option<Sourced<u64>>,
    pub max_cost_cents: Option<Sourced<f64>>,
}

/// One checked configuration file.
#[derive(Debug, Clone)]
pub struct FileLayer {
    pub kind: LayerKind,
    pub path: PathBuf,
    pub provider: Option<Sourced<String>>,
    pub model: Option<Sourced<String>>,
    pub reasoning_effort: Option<Sourced<ReasoningEffort>>,
    pub approval: Option<Sourced<ApprovalMode>>,
    pub env_policy: Option<Sourced<EnvPolicy>>,
    pub sandbox: Option<Sourced<SandboxMode>>,
    pub sandbox_network: Option<Sourced<NetworkAccess>>,
    /// The hosts sandboxed commands reach through the proxy, presets expanded.
    pub network_allow: Option<Sourced<AllowList>>,
    /// Paths sandboxed commands may not read (absolute; `~/` expanded).
    pub sandbox_deny_read: Vec<PathBuf>,
    /// How long one LLM request may take, head to end of stream (0: no limit).
    pub request_timeout_secs: Option<Sourced<u64>>,
    pub endpoints: BTreeMap<String, FileEndpoint>,
    pub limits: FileLimits,
    /// Where `[plugins]` is, if the file has it.
    pub plugins_at: Option<Source>,
    /// Where the first `[[tools]]` is, if any.
    pub tools_at: Option<Source>,
    /// Where each `[mcp_servers.NAME]` is.
    pub mcp_servers_at: BTreeMap<String, Source>,
    /// Where `[hooks]` is, if the file has it.
    pub hooks_at: Option<Source>,
    /// `[[tools]]` and `[plugins]` (plugin paths resolved against the file's folder).
    pub agent: AgentConfig,
    /// `None` for a trusted file; for a project file the user has not trusted, the
    /// settings ignored in it (see [`crate::config::trust`]).
    pub untrusted: Option<Vec<String>>,
}

/// A `sandbox_deny_read` entry: absolute, or `~/` for the home directory.
fn deny_read_path(path: &str) -> Result<PathBuf, String> {
    match path.strip_prefix("~/") {
        Some(rest) => dirs::home_dir()
            .map(|home| home.join(rest))
            .ok_or_else(|| format!("{path:?}: there is no home directory to expand ~ with")),
        None if Path::new(path).is_absolute() => Ok(PathBuf::from(path)),
        None => Err(format!("{path:?} must be absolute or start with ~/")),
    }
}

/// Parses a reasoning effort (`low`, `medium`, `high`).
pub fn parse_effort(value: &str) -> Result<ReasoningEffort, String> {
    match value {
        "low" => Ok(ReasoningEffort::Low),
        "medium" => Ok(ReasoningEffort::Medium),
        "high" => Ok(ReasoningEffort::High),
        other => Err(format!(
            "unknown reasoning effort {other:?}: use low, medium or high"
        )),
    }
}

pub fn effort_name(effort: ReasoningEffort) -> &'static str {
    match effort {
        ReasoningEffort::Low => "low",
        ReasoningEffort::Medium => "medium",
        ReasoningEffort::High => "high",
    }
}

/// Parses a tool profile's name as written in `[endpoints.<name>] profile`.
pub fn parse_profile(value: &str) -> Result<Profile, String> {
    Profile::parse(value).ok_or_else(|| format!("unknown profile {value:?}: use {}", Profile::names()))
}

/// Parses a wire protocol name as written in `[endpoints.<name>] protocol`.
pub fn parse_protocol(value: &str) -> Result<WireProtocol, String> {
    match value {
        "anthropic" | "anthropic-messages" => Ok(WireProtocol::AnthropicMessages),
        "openai" | "openai-responses" | "responses" => Ok(WireProtocol::OpenaiResponses),
        "chat-completions" | "openai-chat" => Ok(WireProtocol::ChatCompletions),
        "gemini" => Ok(WireProtocol::Gemini),
        other => Err(format!(
            "unknown protocol {other:?}: use anthropic, openai-responses, chat-completions or gemini"
        )),
    }
}

pub fn protocol_name(protocol: WireProtocol) -> &'static str {
    match protocol {
        WireProtocol::AnthropicMessages => "anthropic",
        WireProtocol::OpenaiResponses => "openai-responses",
        WireProtocol::ChatCompletions => "chat-completions",
        WireProtocol::Gemini => "gemini",
    }
}

impl FileLayer {
    /// Reads and checks the file at `path`: a project file without following links (see
    /// [`crate::config::reading`]), the user's own through them.
    pub fn load(path: &Path, kind: LayerKind) -> Result<Self, String> {
        let text = match kind {
            LayerKind::User => reading::named_file(path)?,
            LayerKind::Project => reading::project_file(path)?
                .ok_or_else(|| format!("cannot read {}: there is no such file", path.display()))?,
        };
        Self::parse(&text, path, kind)
    }

    /// Checks the text of a configuration file; `path` names it in messages and anchors
    /// relative plugin paths (it is not read).
    pub fn parse(text: &str, path: &Path, kind: LayerKind) -> Result<Self, String> {
        let raw: RawFile = toml::from_str(text).map_err(|e| toml_error(path, text, &e))?;
        let at = |offset: usize| Source::file(kind, path, line_of(text, offset));
        let place = |offset: usize, key: &str| format!("{}:{}: {key}", path.display(), line_of(text, offset));
        let sourced = |value: &Spanned<String>| Sourced::new(value.get_ref().clone(), at(value.span().start));
        // Each value parsed with its own parser; a mistake names the line.
        fn parsed<S, T>(
            value: &Option<Spanned<S>>,
            key: &str,
            parse: impl Fn(&S) -> Result<T, String>,
            place: &dyn Fn(usize, &str) -> String,
            at: &dyn Fn(usize) -> Source,
        ) -> Result<Option<Sourced<T>>, String> {
            value
                .as_ref()
                .map(|v| {
                    parse(v.get_ref())
                        .map(|parsed| Sourced::new(parsed, at(v.span().start)))
                        .map_err(|e| format!("{}: {e}", place(v.span().start, key)))
                })
                .transpose()
        }
        if let Some(key) = &raw.api_key {
            return Err(literal_key(&place(key.span().start, "api_key")));
        }
        let mut endpoints = BTreeMap::new();
        for (name, endpoint) in &raw.endpoints {
            let key = format!("endpoints.{name}");
            let endpoint_ref = endpoint.get_ref();
            if let Some(literal) = &endpoint_ref.api_key {
                return Err(literal_key(&place(
                    literal.span().start,
                    &format!("{key}.api_key"),
                )));
            }
            if let Some(var) = &endpoint_ref.api_key_env
                && !is_variable_name(var.get_ref())
            {
                return Err(format!(
                    "{}: {:?} is not an environment variable's name; api_key_env names the variable \
                     that holds the key (e.g. \"OLLAMA_API_KEY\"), never the key itself",
                    place(var.span().start, &format!("{key}.api_key_env")),
                    redact_value(var.get_ref())
                ));
            }
            endpoints.insert(
                name.clone(),
                FileEndpoint {
                    at: at(endpoint.span().start),
                    base_url: endpoint_ref.base_url.as_ref().map(sourced),
                    protocol: parsed(
                        &endpoint_ref.protocol,
                        &format!("{key}.protocol"),
                        |s: &String| parse_protocol(s),
                        &place,
                        &at,
                    )?,
                    profile: parsed(
                        &endpoint_ref.profile,
                        &format!("{key}.profile"),
                        |s: &String| parse_profile(s),
                        &place,
                        &at,
                    )?,
                    reminders: endpoint_ref
                        .reminders
                        .as_ref()
                        .map(|v| Sourced::new(*v.get_ref(), at(v.span().start))),
                    api_key_env: endpoint_ref.api_key_env.as_ref().map(sourced),
                    max_retries: endpoint_ref
                        .max_retries
                        .as_ref()
                        .map(|v| Sourced::new(*v.get_ref(), at(v.span().start))),
                    retry_base_delay_ms: endpoint_ref
                        .retry_base_delay_ms
                        .as_ref()
                        .map(|v| Sourced::new(*v.get_ref(), at(v.span().start))),
                    retry_max_delay_ms: endpoint_ref
                        .retry_max_delay_ms
                        .as_ref()
                        .map(|v| Sourced::new(*v.get_ref(), at(v.span().start))),
                },
            );
        }
        if kind == LayerKind::User
            && let Some(tool) = raw.tools.first()
        {
            return Err(format!(
                "{}: [[tools]] run commands in a project and belong in its .agent/config.toml, not in \
                 the user's configuration",
                place(tool.span().start, "tools")
            ));
        }
        let limit = |value: &Option<Spanned<u32>>| {
            value
                .as_ref()
                .map(|v| Sourced::new(*v.get_ref(), at(v.span().start)))
        };
        let raw_limits = raw.limits.unwrap_or_default();
        let limits = FileLimits {
            max_turns: limit(&raw_limits.max_turns),
            max_tool_rounds_per_input: limit(&raw_limits.max_tool_rounds_per_input),
            default_command_timeout_ms: raw_limits
                .default_command_timeout_ms
                .map(|v| Sourced::new(*v.get_ref(), at(v.span().start))),
            max_command_timeout_ms: raw_limits
                .max_command_timeout_ms
                .map(|v| Sourced::new(*v.get_ref(), at(v.span().start))),
            enable_loop_detection: raw_limits
                .enable_loop_detection
                .map(|v| Sourced::new(*v.get_ref(), at(v.span().start))),
            stale_read_guard: raw_limits
                .stale_read_guard
                .map(|v| Sourced::new(*v.get_ref(), at(v.span().start))),
            loop_detection_window: limit(&raw_limits.loop_detection_window),
            max_subagent_depth: limit(&raw_limits.max_subagent_depth),
            max_output_tokens: limit(&raw_limits.max_output_tokens),
            max_session_tokens: raw_limits
                .max_session_tokens
                .map(|v| Sourced::new(*v.get_ref(), at(v.span().start))),
            max_cost_cents: match &raw_limits.max_cost_cents {
                None => None,
                Some(v) => {
                    agent_protocol::Limits::check_cost_cents(*v.get_ref())
                        .map_err(|e| format!("{}: {e}", place(v.span().start, "limits.max_cost_cents")))?;
                    Some(Sourced::new(*v.get_ref(), at(v.span().start)))
                }
            },
        };
        let plugins_at = raw.plugins.as_ref().map(|p| at(p.span().start));
        let tools_at = raw.tools.first().map(|t| at(t.span().start));
        let mut mcp_servers_at = BTreeMap::new();
        let mut mcp_servers = BTreeMap::new();
        for (name, spec) in raw.mcp_servers {
            let key = format!("mcp_servers.{name}");
            spec.get_ref()
                .check(&name)
                .map_err(|e| format!("{}: {e}", place(spec.span().start, &key)))?;
            mcp_servers_at.insert(name.clone(), at(spec.span().start));
            let mut spec = spec.into_inner();
            if kind == LayerKind::User {
                spec.base_dir = path.parent().map(Path::to_path_buf);
            }
            mcp_servers.insert(name, spec);
        }
        let mut agent = AgentConfig::from_parts(
            raw.tools,
            raw.plugins.map(Spanned::into_inner).unwrap_or_default(),
            text,
            path,
        )?;
        agent.mcp_servers = mcp_servers;
        let hooks_at = raw.hooks.as_ref().map(|h| at(h.span().start));
        if let Some(hooks) = raw.hooks {
            let start = hooks.span().start;
            hooks
                .get_ref()
                .check()
                .map_err(|e| format!("{}: {e}", place(start, "hooks")))?;
            agent.hooks = hooks.into_inner();
            if kind == LayerKind::User
                && let Some(dir) = path.parent()
            {
                agent.hooks.from_user_file(dir);
            }
        }
        Ok(Self {
            kind,
            path: path.to_path_buf(),
            provider: raw.provider.as_ref().map(sourced),
            model: raw.model.as_ref().map(sourced),
            reasoning_effort: parsed(
                &raw.reasoning_effort,
                "reasoning_effort",
                |s: &String| parse_effort(s),
                &place,
                &at,
            )?,
            approval: parsed(&raw.approval, "approval", |s| s.parse(), &place, &at)?,
            env_policy: parsed(&raw.env_policy, "env_policy", |s| s.parse(), &place, &at)?,
            sandbox: parsed(&raw.sandbox, "sandbox", |s| s.parse(), &place, &at)?,
            sandbox_network: parsed(
                &raw.sandbox_network,
                "sandbox_network",
                RawNetwork::access,
                &place,
                &at,
            )?,
            network_allow: parsed(
                &raw.network_allow,
                "network_allow",
                |list| AllowList::parse(list).map_err(|e| e.to_string()),
                &place,
                &at,
            )?,
            sandbox_deny_read: match &raw.sandbox_deny_read {
                Some(list) => list
                    .get_ref()
                    .iter()
                    .map(|p| deny_read_path(p))
                    .collect::<Result<_, _>>()
                    .map_err(|e| format!("{}: {e}", place(list.span().start, "sandbox_deny_read")))?,
                None => Vec::new(),
            },
            request_timeout_secs: raw
                .request_timeout_secs
                .as_ref()
                .map(|v| Sourced::new(*v.get_ref(), at(v.span().start))),
            endpoints,
            limits,
            plugins_at,
            tools_at,
            mcp_servers_at,
            hooks_at,
            agent,
            untrusted: None,
        })
    }
}

fn literal_key(place: &str) -> String {
    format!(
        "{place}: a configuration file never holds an API key; keep the key in an environment \
         variable and name it with api_key_env = \"VARIABLE\" in the endpoint's section"
    )
}

/// A value that might be a key, shown only by its shape.
fn redact_value(value: &str) -> String {
    let chars: Vec<char> = value.chars().collect();
    if chars.len() <= 8 {
        return "…".to_string();
    }
    let head: String = chars[..3].iter().collect();
    format!("{head}…")
}
/// Reading a configuration file for its tools and plugins (the file is checked whole).
impl AgentConfig {
    /// Reads and checks the project file `path` (neither it nor its folder may be a link);
    /// relative plugin paths are resolved against its folder.
    pub fn load(path: &Path) -> Result<Self, String> {
        FileLayer::load(path, LayerKind::Project).map(|layer| layer.agent)
    }

    /// Checks the text of a configuration file; `path` names it in messages and anchors
    /// relative plugin paths (it is not read). The whole file is checked (model, limits,
    /// endpoints, ... too: see [`crate::config`]); this keeps its tools and plugins.
    pub fn parse(text: &str, path: &Path) -> Result<Self, String> {
        FileLayer::parse(text, path, LayerKind::Project).map(|layer| layer.agent)
    }

    /// Reads `<workspace>/.agent/config.toml` if there is one (neither it nor `.agent` may be
    /// a link).
    pub fn discover(workspace: &Path) -> Result<Option<(PathBuf, Self)>, String> {
        let path = workspace.join(CONFIG_FILE);
        match reading::project_file(&path)? {
            None => Ok(None),
            Some(text) => Self::parse(&text, &path).map(|config| Some((path, config))),
        }
    }
}

/// A TOML error as `FILE: line L, column C: MESSAGE`, without the line itself: the file may
/// be a repository's, read before it is trusted, and what stands on a line it cannot parse
/// is nobody's business (a credential, if the file is not what it claims to be). Anything
/// shaped like a key, or known as one, is hidden from the message too.
pub fn toml_error(path: &Path, text: &str, error: &toml::de::Error) -> String {
    let place = match error.span() {
        Some(span) => {
            let offset = span.start.min(text.len());
            let line = line_of(text, offset);
            let line_start = text
                .get(..offset)
                .and_then(|before| before.rfind('\n'))
                .map_or(0, |newline| newline + 1);
            let column = text.get(line_start..offset).map_or(1, |s| s.chars().count() + 1);
            format!("line {line}, column {column}: ")
        }
        None => String::new(),
    };
    let message: Vec<&str> = error
        .message()
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    let message = without_quoted_values(&message.join("; "));
    let message = crate::secrets::redact_known(&crate::secrets::redact(&message, &[]));
    format!("{}: {place}{message}", path.display())
}

/// `message` with every double-quoted value the parser copied from the file (`invalid
/// type: string "..."`) replaced by `"…"`: a value in a file is the file's, and is not
/// shown; the keys and expected types (in backticks) stay.
fn without_quoted_values(message: &str) -> String {
    message
        .split('"')
        .enumerate()
        .map(|(at, part)| if at % 2 == 1 { "…" } else { part })
        .collect::<Vec<_>>()
        .join("\"")
}
