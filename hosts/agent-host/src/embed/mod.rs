//! The embedding API: a small typed facade over [`AgentRuntime`] for applications that run
//! the agent in-process.
//!
//! Build a [`Host`] once (it loads and compiles the core component, cached on disk), then
//! open any number of [`Session`]s, each in its own component instance:
//!
//! ```no_run
//! use agent_host::embed::{Host, SessionOptions, StopReason};
//! use agent_host::Endpoints;
//!
//! # async fn demo() -> Result<(), agent_host::embed::Error> {
//! let host = Host::builder()
//!     .component("target/agent-core.wasm")
//!     .endpoints(Endpoints::from_env()) // ANTHROPIC_API_KEY, OPENAI_API_KEY, ...
//!     .build()
//!     .await?;
//! let session = host.open_session(SessionOptions::in_workspace("/tmp/project")).await?;
//! let mut events = session.events();
//! let printer = tokio::spawn(async move {
//!     while let Some(event) = events.next().await {
//!         if let Some(text) = event.text_delta() {
//!             print!("{text}");
//!         } else if let Some(call) = event.tool_call() {
//!             println!("\n-> {} {}", call.name, call.arguments);
//!         }
//!     }
//! });
//! let outcome = session.submit("Create hello.py that prints Hello").await?;
//! assert_eq!(outcome.stop_reason, StopReason::Completed);
//! session.close().await?; // ends the event stream
//! let _ = printer.await;
//! # Ok(())
//! # }
//! ```
//!
//! Steer or interrupt from elsewhere with [`Session::handle`]; give the model your own
//! tools with [`HostBuilder::tool`] and [`NativeTool`]; record a session's LLM exchanges or
//! replay them offline with [`SessionOptions::record`] and [`SessionOptions::replay`].

mod error;
mod events;
mod native_tool;
mod session;

pub use crate::approval::ToolCategory;
pub use crate::host_tools::registry::HostTool;
pub use error::Error;
pub use events::{
    EndReason, Event, EventData, EventKind, Events, ImageInfo, LimitName, OutputStream, TokenSource,
    ToolCall, ToolOutcome, ToolResult, Warning,
};
pub use native_tool::{NativeTool, ToolError};
pub use session::{Outcome, ReasoningEffort, Session, SessionHandle, SessionOptions, StopReason};

use crate::compile_cache::default_cache_dir;
use crate::config::defaults::{default_model, locate_component, session_config};
use crate::environments::environment::Environment;
use crate::environments::options::EnvOptions;
use crate::host_tools::registry::HostTools;
use crate::runtime::engine::AgentRuntime;
use crate::transport::endpoints::Endpoints;
use crate::transport::http::HttpTransport;
use crate::transport::recorder::{RecordingTransport, recorded_session};
use crate::transport::replay::{Recording, ReplayTransport};
use crate::transport::session_transport::LlmTransport;
use agent_protocol::{SessionConfig, WireProtocol};
use std::path::PathBuf;
use std::sync::Arc;

/// Configures a [`Host`]; see [`Host::builder`].
#[derive(Default)]
pub struct HostBuilder {
    component: Option<PathBuf>,
    endpoints: Option<Endpoints>,
    cache_dir: Option<PathBuf>,
    tools: Vec<Arc<dyn HostTool>>,
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
    /// [`NativeTool`]. A name that clashes with the profile's own tools is an error when a
    /// session opens.
    pub fn tool(mut self, tool: impl HostTool + 'static) -> Self {
        self.tools.push(Arc::new(tool));
        self
    }

    /// Loads the component (compiling it on a cache miss, off the async threads).
    pub async fn build(self) -> Result<Host, Error> {
        let component = locate_component(self.component).map_err(Error::Component)?;
        let http = HttpTransport::new(self.endpoints.unwrap_or_else(Endpoints::from_env))
            .map_err(|e| Error::Options(format!("cannot create the HTTP client: {e:#}")))?;
        let cache_dir = self.cache_dir.or_else(default_cache_dir);
        let transport = http.clone();
        let runtime = tokio::task::spawn_blocking(move || {
            AgentRuntime::load(&component, cache_dir.as_deref(), transport)
        })
        .await
        .map_err(|e| Error::Component(e.to_string()))?
        .map_err(|e| Error::Component(format!("{e:#}")))?;
        Ok(Host {
            runtime,
            http,
            tools: self.tools,
        })
    }
}

/// The loaded agent component and the application's tools; opens sessions. Cheap to share
/// behind an `Arc`.
pub struct Host {
    runtime: AgentRuntime,
    http: HttpTransport,
    tools: Vec<Arc<dyn HostTool>>,
}

impl Host {
    pub fn builder() -> HostBuilder {
        HostBuilder::default()
    }

    /// The runtime underneath, for what the facade does not cover (snapshots, restore).
    pub fn runtime(&self) -> &AgentRuntime {
        &self.runtime
    }

    /// Starts a session in a fresh component instance; its events begin with
    /// `SESSION_START` (see [`Session::events`]).
    pub async fn open_session(&self, options: SessionOptions) -> Result<Session, Error> {
        let env = EnvOptions {
            cwd: Some(options.workspace.clone()),
            read_only: options.read_only,
            ..EnvOptions::default()
        }
        .build()
        .await
        .map_err(Error::Options)?;
        let mut endpoints = self.http.endpoints().clone();
        let replay = match &options.replay {
            Some(path) => {
                let recording = Recording::open(path).map_err(Error::Options)?;
                recording
                    .check_choice(options.provider.as_deref(), options.model.as_deref())
                    .map_err(Error::Options)?;
                endpoints.insert(recording.endpoint().map_err(Error::Options)?);
                Some(recording)
            }
            None => None,
        };
        let config = session_config_for(&options, &endpoints, replay.as_ref())?;
        let mut runtime = self.runtime.clone();
        runtime.set_read_only(options.read_only);
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
        if !self.tools.is_empty() {
            let reserved = profile_tool_names(&runtime, &config, env.clone()).await?;
            runtime.set_host_tools(HostTools::new(self.tools.clone(), &reserved).map_err(Error::Options)?);
        }
        let (session, events) = runtime.start_session(config, env).await.map_err(Error::trap)?;
        Ok(Session::new(session, events))
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
                 or a base URL such as ANTHROPIC_BASE_URL"
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
    let profile = if compatible { "openai" } else { provider.as_str() };
    let model = match (replay, &options.model) {
        (Some(recording), _) => recording.session().model.clone(),
        (None, Some(model)) => model.clone(),
        (None, None) if compatible => {
            return Err(Error::Options(format!(
                "which model should {provider} run? Set SessionOptions::model"
            )));
        }
        (None, None) => default_model(profile).to_string(),
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

/// The names of the profile's own tools, which host tools may not take.
async fn profile_tool_names(
    runtime: &AgentRuntime,
    config: &SessionConfig,
    env: Arc<dyn Environment>,
) -> Result<Vec<String>, Error> {
    let (mut session, _events) = runtime
        .start_session(config.clone(), env)
        .await
        .map_err(Error::trap)?;
    let description = session.describe().await.map_err(Error::trap)?;
    let description: serde_json::Value = serde_json::from_str(&description)
        .map_err(|e| Error::Internal(format!("the component described its profile in bad JSON: {e}")))?;
    Ok(description["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|tool| tool["name"].as_str().map(str::to_string))
        .collect())
}
