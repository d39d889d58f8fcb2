//! [`Host`]: the loaded component, the endpoints, approvals and host tools; opens and
//! resumes [`Session`]s.

use super::error::Error;
use super::journaled::{Journaled, ResumeOverrides, SessionEnvironment};
use super::session::{Session, SessionOptions};
use crate::approval::ApprovalPolicy;
use crate::compile_cache::default_cache_dir;
use crate::config::defaults::{default_model, locate_component, session_config};
use crate::environments::environment::Environment;
use crate::environments::options::EnvOptions;
use crate::environments::policy::ReadOnly;
use crate::host_tools::registry::{HostTool, HostTools, ToolSource};
use crate::persist::store::StoredSession;
use crate::runtime::engine::AgentRuntime;
use crate::transport::endpoints::Endpoints;
use crate::transport::http::HttpTransport;
use crate::transport::recorder::{RecordingTransport, recorded_session};
use crate::transport::replay::{Recording, ReplayTransport};
use crate::transport::session_transport::LlmTransport;
use agent_protocol::{SessionConfig, WireProtocol};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Configures a [`Host`]; see [`Host::builder`].
#[derive(Default)]
pub struct HostBuilder {
    component: Option<PathBuf>,
    endpoints: Option<Endpoints>,
    cache_dir: Option<PathBuf>,
    tools: Vec<Arc<dyn HostTool>>,
    tool_sources: Vec<Arc<dyn ToolSource>>,
    approvals: Option<ApprovalPolicy>,
}

impl HostBuilder {
    /// The core component, `agent-core.wasm` (default: `$AGENT_CORE_COMPONENT`, else next to
    /// the executable or one folder up).
    pub fn component(mut self, path: impl Into<PathBuf>) -> Self {
        self.component = Some(path.into());
        self
    }

    /// The LLM endpoints and their keys (default: [`Endpoints::from_env`]).
    pub fn endpoints(mut self, endpoints: Endpoints) -> Self {
        endpoints.withhold_keys();
        self.endpoints = Some(endpoints);
        self
    }

    /// Where the compiled component is cached (default: `$AGENT_HOST_CACHE_DIR`, else
    /// `~/.cache/agent-host/components`).
    pub fn cache_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.cache_dir = Some(dir.into());
        self
    }

    /// Offers a tool implemented by the application to every session, e.g. a
    /// [`super::NativeTool`]. A name that clashes with the profile's own tools is an error
    /// when a session opens.
    pub fn tool(mut self, tool: impl HostTool + 'static) -> Self {
        self.tools.push(Arc::new(tool));
        self
    }

    /// Offers several tools at once (plugins, configured command tools, ...).
    pub fn tools(mut self, tools: impl IntoIterator<Item = Arc<dyn HostTool>>) -> Self {
        self.tools.extend(tools);
        self
    }

    /// Offers tools whose list changes while sessions run (MCP servers): a running session
    /// is offered the new list from its next request. A tool of theirs whose name is taken is
    /// left out with a warning.
    pub fn tool_source(mut self, source: Arc<dyn ToolSource>) -> Self {
        self.tool_sources.push(source);
        self
    }

    /// How tool calls are approved: `auto`, `ask` (through an
    /// [`ApprovalPrompt`](crate::approval::ApprovalPrompt)) or `read-only` (default: auto,
    /// dangerous commands refused). Each session remembers its own "always" answers.
    pub fn approvals(mut self, policy: ApprovalPolicy) -> Self {
        self.approvals = Some(policy);
        self
    }

    /// Loads the component (compiling it on a cache miss, off the async threads).
    pub async fn build(self) -> Result<Host, Error> {
        let component = locate_component(self.component).map_err(Error::Component)?;
        let http = HttpTransport::new(self.endpoints.unwrap_or_else(|| {
            let endpoints = Endpoints::from_env();
            endpoints.withhold_keys();
            endpoints
        }))
        .map_err(|e| Error::Options(format!("cannot create the HTTP client: {e:#}")))?;
        let cache_dir = self.cache_dir.or_else(default_cache_dir);
        let transport = http.clone();
        let mut runtime = tokio::task::spawn_blocking(move || {
            AgentRuntime::load(&component, cache_dir.as_deref(), transport)
        })
        .await
        .map_err(|e| Error::Component(e.to_string()))?
        .map_err(|e| Error::Component(format!("{e:#}")))?;
        if let Some(policy) = self.approvals {
            runtime.set_approval_policy(policy);
        }
        Ok(Host {
            runtime,
            http,
            tools: self.tools,
            tool_sources: self.tool_sources,
        })
    }
}

/// What a resumed session takes on.
#[derive(Clone, Default)]
pub struct ResumeOptions {
    /// Where its tools run (default: the local machine in the session's own workspace).
    pub environment: Option<Arc<dyn Environment>>,
    /// Another model of the same provider (default: the session's).
    pub model: Option<String>,
    /// How many more LLM turns it may take (`Some(0)`: no limit; `None`: as saved).
    pub more_turns: Option<u32>,
    /// The configuration its subagents start from (default: none, so no subagents).
    pub config: Option<SessionConfig>,
    /// Refuse file changes, commands, and host tools that are not `read` ones, as
    /// [`SessionOptions::read_only`] (also on when the host's approval policy is read-only).
    pub read_only: bool,
}

/// The loaded agent component, the endpoints, the approval policy and the application's
/// tools; opens sessions. Cheap to share behind an `Arc`.
pub struct Host {
    runtime: AgentRuntime,
    http: HttpTransport,
    tools: Vec<Arc<dyn HostTool>>,
    tool_sources: Vec<Arc<dyn ToolSource>>,
}

impl Host {
    pub fn builder() -> HostBuilder {
        HostBuilder::default()
    }

    /// The runtime underneath, for what the facade does not cover.
    pub fn runtime(&self) -> &AgentRuntime {
        &self.runtime
    }

    /// The endpoints requests go to (for messages: a key's variable, a base URL).
    pub fn endpoints(&self) -> &Endpoints {
        self.http.endpoints()
    }

    /// Starts a session in a fresh component instance; its events begin with
    /// `SESSION_START` (see [`Session::events`]).
    pub async fn open_session(&self, options: SessionOptions) -> Result<Session, Error> {
        let read_only = options.read_only || self.runtime.read_only();
        let base = environment_for(options.environment.clone(), &options.workspace).await?;
        let session_env = SessionEnvironment::new(base, read_only);
        let env = session_env.env.clone();
        let mut endpoints = self.http.endpoints().clone();
        let replay = match &options.replay {
            Some(path) => {
                let recording = Recording::open(path).map_err(Error::Options)?;
                let (provider, model) = match &options.config {
                    Some(config) => (Some(config.endpoint.as_str()), Some(config.model.as_str())),
                    None => (options.provider.as_deref(), options.model.as_deref()),
                };
                recording.check_choice(provider, model).map_err(Error::Options)?;
                endpoints.insert(recording.endpoint().map_err(Error::Options)?);
                Some(recording)
            }
            None => None,
        };
        let config = match &options.config {
            Some(config) => config.clone(),
            None => session_config_for(&options, &endpoints, replay.as_ref())?,
        };
        let mut runtime = self.runtime.clone();
        runtime.set_read_only(read_only);
        if let Some(recording) = replay {
            recording.check_config(&config).map_err(Error::Options)?;
            runtime.set_transport(ReplayTransport::new(recording));
        } else if let Some(path) = &options.record {
            let recording = RecordingTransport::create(
                self.http.clone(),
                path,
                recorded_session(&config),
                Some(env.working_directory()),
            )
            .map_err(Error::Options)?;
            runtime.set_transport(LlmTransport::Recording(recording));
        }
        self.offer_tools(&mut runtime, &config, env.clone()).await?;
        let (session, events) =
            Journaled::start(&runtime, config, session_env, options.store.as_ref()).await?;
        Ok(Session::new(session, events))
    }

    /// Continues a saved session in a fresh instance (see `persist` for what is saved):
    /// its last snapshot and the history journaled after it; new events and history go on
    /// in the same files.
    pub async fn resume_session(
        &self,
        stored: &StoredSession,
        options: ResumeOptions,
    ) -> Result<Session, Error> {
        let read_only = options.read_only || self.runtime.read_only();
        let workspace = PathBuf::from(&stored.meta.workspace);
        let session_env =
            SessionEnvironment::new(environment_for(options.environment, &workspace).await?, read_only);
        let mut runtime = self.runtime.clone();
        runtime.set_read_only(read_only);
        if let Some(config) = &options.config {
            self.offer_tools(&mut runtime, config, session_env.env.clone())
                .await?;
        }
        let overrides = ResumeOverrides {
            model: options.model,
            more_turns: options.more_turns,
        };
        let (session, events) =
            Journaled::resume(&runtime, stored, session_env, options.config, &overrides).await?;
        Ok(Session::new(session, events))
    }

    /// Runs one tool of a provider profile through the component, outside any session
    /// (`any`: the first profile that has it); the inner error is the tool's.
    pub async fn run_tool(
        &self,
        env: Arc<dyn Environment>,
        provider: &str,
        name: &str,
        arguments_json: &str,
    ) -> Result<Result<String, String>, Error> {
        let env = match self.runtime.read_only() {
            true => Arc::new(ReadOnly::new(env)),
            false => env,
        };
        self.runtime
            .run_tool(env, provider, name, arguments_json)
            .await
            .map_err(Error::trap)
    }

    /// A profile as a session with `config` would use it in `env` (capabilities, tools and
    /// system prompt); makes no LLM request.
    pub async fn describe(
        &self,
        config: SessionConfig,
        env: Arc<dyn Environment>,
    ) -> Result<serde_json::Value, Error> {
        let (mut session, _events) = self
            .runtime
            .start_session(config, env)
            .await
            .map_err(Error::trap)?;
        let text = session.describe().await.map_err(Error::trap)?;
        serde_json::from_str(&text)
            .map_err(|e| Error::Internal(format!("the component described its profile in bad JSON: {e}")))
    }

    /// Offers the host's tools to the sessions `runtime` starts; a name clash among them or
    /// with the profile's own tools is an error.
    async fn offer_tools(
        &self,
        runtime: &mut AgentRuntime,
        config: &SessionConfig,
        env: Arc<dyn Environment>,
    ) -> Result<(), Error> {
        if self.tools.is_empty() && self.tool_sources.is_empty() {
            return Ok(());
        }
        let reserved = profile_tool_names(&self.describe(config.clone(), env).await?);
        let tools = HostTools::new(self.tools.clone(), &reserved)
            .map_err(Error::Options)?
            .with_sources(self.tool_sources.clone())
            .await;
        runtime.set_host_tools(tools);
        Ok(())
    }
}

/// The component's session configuration for `options`: provider, profile, protocol and
/// model resolved the way `agent-host run` does (a replay's come from its recording).
fn session_config_for(
    options: &SessionOptions,
    endpoints: &Endpoints,
    replay: Option<&Recording>,
) -> Result<SessionConfig, Error> {
    let provider = match (replay, &options.provider) {
        (Some(recording), _) => recording.session().endpoint.clone(),
        (None, Some(provider)) => provider.clone(),
        (None, None) => endpoints
            .first_configured()
            .map(|e| e.name.clone())
            .ok_or_else(|| {
                Error::Options(
                "no LLM provider is configured: set ANTHROPIC_API_KEY (or OPENAI_API_KEY, GEMINI_API_KEY), \
                 a base URL such as ANTHROPIC_BASE_URL, or a local server in OPENAI_COMPATIBLE_ENDPOINTS"
                    .to_string(),
            )
            })?,
    };
    let endpoint = endpoints.get(&provider).ok_or_else(|| {
        let known = endpoints.names();
        Error::Options(match known.is_empty() {
            true => format!("unknown provider {provider:?}: the host has no endpoints"),
            false => format!("unknown provider {provider:?}: known are {}", known.join(", ")),
        })
    })?;
    if !endpoint.configured {
        return Err(Error::Options(format!(
            "provider {provider} is not configured: set {} (or its base URL)",
            endpoint.key_var
        )));
    }
    let compatible = endpoint.protocol == WireProtocol::ChatCompletions;
    let recorded = replay.and_then(|r| agent_protocol::Profile::parse(&r.session().provider));
    let profile = recorded
        .or(options.profile)
        .unwrap_or_else(|| endpoint.protocol.default_profile())
        .as_str();
    let model = match (replay, &options.model) {
        (Some(recording), _) => recording.session().model.clone(),
        (None, Some(model)) => model.clone(),
        (None, None) if compatible => {
            return Err(Error::Options(format!(
                "which model should {provider} run? Set SessionOptions::model"
            )));
        }
        (None, None) => default_model(endpoint.protocol.family().as_str()).to_string(),
    };
    let mut config = session_config(profile, &model);
    config.endpoint = provider.clone();
    config.protocol = endpoint.protocol;
    config.limits.max_turns = options.max_turns;
    config.limits.max_tool_rounds_per_input = options.max_tool_rounds;
    config.reasoning_effort = options.reasoning_effort;
    config.user_instructions = options.instructions.clone();
    Ok(config)
}

/// The names of a described profile's own tools, which host tools may not take.
fn profile_tool_names(description: &serde_json::Value) -> Vec<String> {
    description["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|tool| tool["name"].as_str().map(str::to_string))
        .collect()
}

/// Where a session's tools run: the caller's environment or the local machine in
/// `workspace`. Read-only mode wraps either, so no environment the caller hands in can
/// write or run commands behind a read-only policy.
async fn environment_for(
    given: Option<Arc<dyn Environment>>,
    workspace: &Path,
) -> Result<Arc<dyn Environment>, Error> {
    match given {
        Some(env) => Ok(env),
        None => EnvOptions {
            cwd: Some(workspace.to_path_buf()),
            ..EnvOptions::default()
        }
        .build()
        .await
        .map_err(Error::Options),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;
    use crate::environments::LocalEnvironment;
    use agent_protocol::ports::{FsError, SpawnError, SpawnRequest};

    /// The approval policy refuses writes and commands first; this is the second line, for
    /// any call that reaches the environment, and it follows the session's mode.
    #[tokio::test]
    async fn read_only_wraps_an_environment_the_caller_hands_in_while_the_mode_says_so() {
        let work = tempfile::tempdir().unwrap();
        let given: Arc<dyn Environment> = Arc::new(LocalEnvironment::new(work.path()).unwrap());
        let session_env =
            SessionEnvironment::new(environment_for(Some(given), work.path()).await.unwrap(), true);
        let env = session_env.env.clone();
        assert!(matches!(
            env.write_file("planted.txt", b"x").await,
            Err(FsError::Denied(m)) if m.contains("read-only")
        ));
        let request = SpawnRequest {
            command: "touch ran.txt".to_string(),
            working_dir: None,
            timeout_ms: 10_000,
            env: Vec::new(),
        };
        assert!(matches!(env.spawn(request).await, Err(SpawnError::Denied(_))));
        assert!(!work.path().join("planted.txt").exists());
        assert!(!work.path().join("ran.txt").exists());
        assert_eq!(env.local_workspace(), None);

        session_env.set_read_only(false);
        env.write_file("written.txt", b"x").await.unwrap();
        assert!(work.path().join("written.txt").exists());
        assert!(env.local_workspace().is_some());
    }
}
