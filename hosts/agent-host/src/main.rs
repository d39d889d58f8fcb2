//! The `agent-host` command line.

use agent_host::bindings::api;
use agent_host::config::{default_model, locate_component, session_config};
use agent_host::endpoints::{COMPATIBLE_VAR, variable_prefix};
use agent_host::env::EnvOptions;
use agent_host::host_tools::HostTools;
use agent_host::tool_options::{PluginOptions, PluginSources, load_plugins};
use agent_host::{AgentRuntime, Endpoints, Environment, HttpTransport};
use clap::{Parser, Subcommand};
use event_view::EventView;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

mod event_view;
mod plugin_view;

/// Exit codes a script can rely on.
mod exit {
    pub const USAGE: u8 = 2;
    pub const AGENT_ERROR: u8 = 1;
    pub const LIMIT: u8 = 3;
    pub const INTERRUPTED: u8 = 130;
}

#[derive(Parser)]
#[command(name = "agent-host", version, about = "Run the agent-core component natively")]
struct Cli {
    /// The core component (default: $AGENT_CORE_COMPONENT, or agent-core.wasm near the binary).
    #[arg(long, global = true)]
    component: Option<PathBuf>,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run a task to completion and print each event as it happens.
    Run {
        /// What the agent should do.
        task: String,
        #[command(flatten)]
        env: EnvOptions,
        /// Provider: anthropic, openai, gemini, or a server named in
        /// OPENAI_COMPATIBLE_ENDPOINTS (default: the first built-in one configured).
        #[arg(long)]
        provider: Option<String>,
        /// Model name (default: $<PROVIDER>_MODEL, else the profile's default).
        #[arg(long)]
        model: Option<String>,
        /// Print one JSON object per event instead of readable text.
        #[arg(long)]
        json: bool,
        /// Stop after this many LLM turns (0 = unlimited).
        #[arg(long, default_value_t = 0)]
        max_turns: u32,
        #[command(flatten)]
        plugins: PluginOptions,
    },
    /// Run one tool through the component and print its output.
    Tool {
        /// Tool name, e.g. read_file.
        name: String,
        /// Arguments as a JSON object.
        #[arg(long, default_value = "{}")]
        args: String,
        #[command(flatten)]
        env: EnvOptions,
        /// Provider profile whose tool set to use (default: the first profile that has the
        /// tool: anthropic, openai, gemini).
        #[arg(long, default_value = "any")]
        provider: String,
    },
    /// Show a provider profile as a session would use it: capabilities, tools and the
    /// system prompt for a working directory. Makes no LLM request.
    Profile {
        /// anthropic, openai or gemini.
        #[arg(long, default_value = "anthropic")]
        provider: String,
        /// Model name (default: the profile's default model).
        #[arg(long)]
        model: Option<String>,
        #[command(flatten)]
        env: EnvOptions,
        /// Print the description as one JSON object.
        #[arg(long)]
        json: bool,
    },
    /// Tool plugins (WebAssembly components of world tool-plugin).
    Plugin {
        #[command(subcommand)]
        command: PluginCommand,
    },
}

#[derive(Subcommand)]
enum PluginCommand {
    /// Show a plugin's name, the capabilities it asks for, and its tools with their schemas.
    /// Runs the plugin (sandboxed, nothing granted) only to ask for its definitions.
    Inspect {
        /// The plugin's .wasm file.
        file: PathBuf,
        /// Print one JSON object.
        #[arg(long)]
        json: bool,
    },
}

fn fail(code: u8, message: impl std::fmt::Display) -> ExitCode {
    eprintln!("agent-host: {message}");
    ExitCode::from(code)
}

#[tokio::main]
async fn main() -> ExitCode {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("AGENT_HOST_LOG").unwrap_or_else(|_| "warn".into()),
        )
        .with_writer(std::io::stderr)
        .init();
    let cli = Cli::parse();
    if let Command::Plugin {
        command: PluginCommand::Inspect { file, json },
    } = &cli.command
    {
        return plugin_view::inspect(file, *json).await;
    }
    let component = match locate_component(cli.component) {
        Ok(path) => path,
        Err(message) => return fail(exit::USAGE, message),
    };
    match cli.command {
        Command::Run {
            task,
            env,
            provider,
            model,
            json,
            max_turns,
            plugins,
        } => {
            let choice = RunChoice {
                provider,
                model,
                json,
                max_turns,
            };
            run(component, task, env, plugins, choice).await
        }
        Command::Tool {
            name,
            args,
            env,
            provider,
        } => tool(component, name, args, env, provider).await,
        Command::Profile {
            provider,
            model,
            env,
            json,
        } => profile(component, provider, model, env, json).await,
        Command::Plugin { .. } => ExitCode::SUCCESS,
    }
}

fn load_runtime(component: &std::path::Path, endpoints: Endpoints) -> Result<AgentRuntime, String> {
    let transport =
        HttpTransport::new(endpoints).map_err(|e| format!("cannot create the HTTP client: {e}"))?;
    let cache = agent_host::runtime::default_cache_dir();
    AgentRuntime::load(component, cache.as_deref(), transport).map_err(|e| format!("{e:#}"))
}

/// What `run` was asked to use.
struct RunChoice {
    provider: Option<String>,
    model: Option<String>,
    json: bool,
    max_turns: u32,
}

async fn run(
    component: PathBuf,
    task: String,
    env_options: EnvOptions,
    plugin_options: PluginOptions,
    choice: RunChoice,
) -> ExitCode {
    let RunChoice {
        provider,
        model,
        json,
        max_turns,
    } = choice;
    let endpoints = Endpoints::from_env();
    let provider = match provider {
        Some(p) => p,
        None => match endpoints.first_configured() {
            Some(endpoint) => endpoint.name.clone(),
            None => {
                return fail(
                    exit::USAGE,
                    "no LLM provider is configured: set ANTHROPIC_API_KEY (or OPENAI_API_KEY, GEMINI_API_KEY), \
                     or ANTHROPIC_BASE_URL for an Anthropic-compatible server that needs no key",
                );
            }
        },
    };
    let protocol = match endpoints.get(&provider) {
        None => {
            return fail(
                exit::USAGE,
                format!(
                    "unknown provider {provider:?}: use anthropic, openai, gemini or an endpoint named in \
                     {COMPATIBLE_VAR} (name=url,...)"
                ),
            );
        }
        Some(endpoint) if !endpoint.configured => {
            return fail(
                exit::USAGE,
                format!(
                    "provider {provider} is not configured: set {} (or its base URL)",
                    endpoint.key_var
                ),
            );
        }
        Some(endpoint) => endpoint.protocol,
    };
    // A named OpenAI-compatible server gets the OpenAI profile (codex-aligned tools); its
    // model has no sensible default.
    let compatible = protocol == api::WireProtocol::ChatCompletions;
    let profile = if compatible { "openai" } else { provider.as_str() };
    let model_var = format!("{}_MODEL", variable_prefix(&provider));
    let model = match model.or_else(|| std::env::var(&model_var).ok()) {
        Some(model) => model,
        None if compatible => {
            return fail(
                exit::USAGE,
                format!("which model should {provider} run? Pass --model or set {model_var}"),
            );
        }
        None => default_model(&provider).to_string(),
    };
    let env = match env_options.build().await {
        Ok(env) => env,
        Err(message) => return fail(exit::USAGE, message),
    };
    // For the message if the endpoint rejects the credentials.
    let credential_hint = endpoints.get(&provider).map(|e| {
        format!(
            "the {provider} endpoint ({}) rejected the request's credentials: check {}",
            e.base_url, e.key_var
        )
    });
    let mut runtime = match load_runtime(&component, endpoints) {
        Ok(runtime) => runtime,
        Err(message) => return fail(exit::AGENT_ERROR, message),
    };
    let mut config = session_config(profile, &model);
    config.endpoint = provider.clone();
    config.protocol = protocol;
    config.limits.max_turns = max_turns;
    if let Err(message) =
        add_host_tools(&mut runtime, &config, env.clone(), &env_options, &plugin_options).await
    {
        return fail(exit::USAGE, message);
    }
    let (mut session, mut events) = match runtime.start_session(config, env).await {
        Ok(started) => started,
        Err(e) => {
            return fail(
                exit::AGENT_ERROR,
                format!("the component failed to start a session: {e:#}"),
            );
        }
    };
    let controller = session.controller();
    let printer = tokio::spawn(async move {
        let mut view = EventView::new(json);
        while let Some(event) = events.recv().await {
            view.show(&event);
        }
        view.finish();
    });
    // Ctrl-C asks for a graceful abort; the loop notices it at its next check (a running
    // command or stream is cut at once) and returns, so the instance stays consistent.
    let interrupter = {
        let controller = controller.clone();
        tokio::spawn(async move {
            if tokio::signal::ctrl_c().await.is_ok() {
                controller.abort();
            }
        })
    };
    let outcome = session.submit(&task).await;
    interrupter.abort();
    let _ = session.close().await;
    // The event stream ends with the session's store.
    drop(session);
    let _ = printer.await;
    match outcome {
        Err(trap) => fail(exit::AGENT_ERROR, format!("the component trapped: {trap:#}")),
        Ok(Err(error)) => {
            let mut message = agent_host::runtime::describe_agent_error(&error);
            if let (api::AgentError::Llm(text), Some(hint)) = (&error, credential_hint)
                && text.starts_with("authentication error")
            {
                message = format!("{message}\n{hint}");
            }
            fail(exit::AGENT_ERROR, message)
        }
        Ok(Ok(outcome)) => match outcome.stop_reason {
            api::StopReason::Completed => ExitCode::SUCCESS,
            api::StopReason::TurnLimit | api::StopReason::RoundLimit => fail(
                exit::LIMIT,
                format!("stopped by a limit after {} turns", outcome.turns),
            ),
            api::StopReason::AwaitingInput => ExitCode::SUCCESS,
            api::StopReason::ContextLength => fail(
                exit::AGENT_ERROR,
                "the conversation no longer fits the model's context window",
            ),
            api::StopReason::Cancelled | api::StopReason::Aborted => fail(exit::INTERRUPTED, "interrupted"),
        },
    }
}

/// Loads the configured command tools and the plugins and offers them to the session; a
/// name clash among them or with the profile's own tools is an error.
async fn add_host_tools(
    runtime: &mut AgentRuntime,
    config: &api::SessionConfig,
    env: Arc<dyn Environment>,
    env_options: &EnvOptions,
    plugin_options: &PluginOptions,
) -> Result<(), String> {
    runtime.set_read_only(env_options.read_only);
    // A remote workspace's configuration file is not read: it would run commands here.
    let local_workspace = match env_options.env.as_deref() {
        None | Some("local") => Some(PathBuf::from(env.working_directory())),
        Some(_) => None,
    };
    let settings = plugin_options.load_config(local_workspace.as_deref())?;
    let mut tools = settings.command_tools(env_options)?;
    let sources = plugin_options.sources(PluginSources::from_config(&settings.plugins)?)?;
    let cache = agent_host::runtime::default_cache_dir();
    let (_plugins, plugin_tools) =
        load_plugins(&sources, plugin_options.limits(), cache.as_deref(), env.clone()).await?;
    tools.extend(plugin_tools);
    if tools.is_empty() {
        return Ok(());
    }
    let reserved = profile_tool_names(runtime, config, env).await?;
    runtime.set_host_tools(HostTools::new(tools, &reserved)?);
    Ok(())
}

/// The names of the profile's own tools, from the component's description of it.
async fn profile_tool_names(
    runtime: &AgentRuntime,
    config: &api::SessionConfig,
    env: Arc<dyn Environment>,
) -> Result<Vec<String>, String> {
    let trap = |e: anyhow::Error| format!("the component trapped: {e:#}");
    let (mut session, _events) = runtime.start_session(config.clone(), env).await.map_err(trap)?;
    let description: serde_json::Value =
        serde_json::from_str(&session.describe().await.map_err(trap)?).map_err(|e| e.to_string())?;
    Ok(description["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|tool| tool["name"].as_str().map(str::to_string))
        .collect())
}

/// The environment and a runtime with the endpoints of the process environment, for
/// the commands that run no task; a failure is already reported.
async fn env_and_runtime(
    component: &std::path::Path,
    env_options: EnvOptions,
) -> Result<(Arc<dyn Environment>, AgentRuntime), ExitCode> {
    let env = env_options
        .build()
        .await
        .map_err(|message| fail(exit::USAGE, message))?;
    let runtime =
        load_runtime(component, Endpoints::from_env()).map_err(|message| fail(exit::AGENT_ERROR, message))?;
    Ok((env, runtime))
}

async fn tool(
    component: PathBuf,
    name: String,
    args: String,
    env_options: EnvOptions,
    provider: String,
) -> ExitCode {
    let (env, runtime) = match env_and_runtime(&component, env_options).await {
        Ok(both) => both,
        Err(code) => return code,
    };
    match runtime.run_tool(env, &provider, &name, &args).await {
        Ok(Ok(output)) => {
            print!("{output}");
            if !output.ends_with('\n') {
                println!();
            }
            ExitCode::SUCCESS
        }
        Ok(Err(error)) => fail(exit::AGENT_ERROR, format!("{name}: {error}")),
        Err(trap) => fail(exit::AGENT_ERROR, format!("the component trapped: {trap:#}")),
    }
}

async fn profile(
    component: PathBuf,
    provider: String,
    model: Option<String>,
    env_options: EnvOptions,
    json: bool,
) -> ExitCode {
    let (env, runtime) = match env_and_runtime(&component, env_options).await {
        Ok(both) => both,
        Err(code) => return code,
    };
    let model = model.unwrap_or_else(|| default_model(&provider).to_string());
    let config = session_config(&provider, &model);
    let described = match runtime.start_session(config, env).await {
        Ok((mut session, _events)) => session.describe().await,
        Err(trap) => Err(trap),
    };
    let text = match described {
        Ok(text) => text,
        Err(trap) => return fail(exit::AGENT_ERROR, format!("the component trapped: {trap:#}")),
    };
    let description: serde_json::Value = match serde_json::from_str(&text) {
        Ok(value) => value,
        Err(e) => {
            return fail(
                exit::AGENT_ERROR,
                format!("the component described itself in bad JSON: {e}"),
            );
        }
    };
    if let Some(error) = description.get("error").and_then(|e| e.as_str()) {
        return fail(exit::USAGE, error);
    }
    if json {
        println!("{description}");
    } else {
        print!("{}", agent_host::profile_view::render(&description));
    }
    ExitCode::SUCCESS
}
