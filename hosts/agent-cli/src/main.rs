//! The `agent-host` command line.

use agent_host::approval::ApprovalPolicy;
use agent_host::compile_cache::default_cache_dir;
use agent_host::config::{
    PluginOptions, PluginSources, Settings, SettingsFlags, Source, Sourced, default_model, load_plugins,
    locate_component, session_config,
};
use agent_host::embed::{Error, Host, HostTool, SessionOptions, StopReason, ToolSource};
use agent_host::environments::EnvOptions;
use agent_host::transport::RecordReplayOptions;
use agent_host::transport::options::REPLAY_REFUSES_CHANGES;
use agent_host::{Endpoints, Environment};
use clap::{Parser, Subcommand};
use event_view::EventView;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

mod batch;
mod chat;
mod config_cmd;
mod event_view;
mod mcp_cmd;
mod plugin_view;
mod profile_view;
mod sessions;
mod terminal_prompt;
mod terminal_text;
mod trust_cmd;
mod undo_cmd;

/// Exit codes a script can rely on.
mod exit {
    pub const USAGE: u8 = 2;
    pub const AGENT_ERROR: u8 = 1;
    pub const LIMIT: u8 = 3;
    pub const INTERRUPTED: u8 = 130;
}

/// `run --help`'s account of the exit codes and of what is printed where.
const RUN_EXIT_CODES: &str = "Output: readable text on stdout (never coloured), or one JSON object \
per event with --json; errors and warnings on stderr.

Exit codes:
  0    the task completed (or the agent asked a question back)
  1    the agent failed: the LLM request failed, the component trapped, or the conversation \
no longer fits the context window
  2    usage: bad flags or configuration, no provider configured, unknown provider
  3    stopped by a limit (--max-turns, max_tool_rounds_per_input)
  130  interrupted (Ctrl-C)";

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
    #[command(after_help = RUN_EXIT_CODES)]
    Run {
        /// What the agent should do; with --command, the command's arguments.
        #[arg(required_unless_present = "command")]
        task: Option<String>,
        /// Run a custom command (.agent/commands/NAME.md, or commands/NAME.md in the user's
        /// configuration folder) with TASK as its arguments.
        #[arg(long, value_name = "NAME")]
        command: Option<String>,
        #[command(flatten)]
        env: EnvOptions,
        /// Provider: anthropic, openai, gemini, a server named in OPENAI_COMPATIBLE_ENDPOINTS,
        /// or replay (with --replay FILE) (default: the first built-in one configured).
        #[arg(long)]
        provider: Option<String>,
        /// Model name (default: $<PROVIDER>_MODEL, else the profile's default).
        #[arg(long)]
        model: Option<String>,
        /// Print one JSON object per event instead of readable text.
        #[arg(long)]
        json: bool,
        /// Stop after this many LLM turns (0 = unlimited; default: the configuration, else 0).
        #[arg(long)]
        max_turns: Option<u32>,
        #[command(flatten)]
        settings: SettingsFlags,
        #[command(flatten)]
        plugins: PluginOptions,
        #[command(flatten)]
        record_replay: RecordReplayOptions,
        #[command(flatten)]
        persist: sessions::PersistOptions,
    },
    /// Saved sessions, most recent first (every run is saved unless --no-persist).
    Sessions(sessions::SessionsArgs),
    /// Continue a saved session in a fresh instance over its workspace: with TASK, or the
    /// input it was interrupted in.
    Resume(sessions::ResumeArgs),
    /// Put a saved session's files back as they were before one of its inputs (from the
    /// checkpoints recorded before each input), saying which files it restores.
    Undo(undo_cmd::UndoArgs),
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
        /// anthropic, openai, gemini or compact.
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
    /// An interactive session: type a task, watch it stream, steer it by typing while it
    /// works; Ctrl-C cancels the current input (twice quits), /help lists the commands.
    Chat(chat::ChatArgs),
    /// The layered configuration (user file, project file, environment, flags).
    Config {
        #[command(subcommand)]
        command: config_cmd::ConfigCommand,
    },
    /// Trust a workspace's .agent/config.toml as it is now: until then its endpoints, command
    /// tools, plugins, MCP servers and looser approval, variable policy and limits are ignored.
    Trust(trust_cmd::TrustArgs),
    /// Tool plugins (WebAssembly components of world tool-plugin).
    Plugin {
        #[command(subcommand)]
        command: PluginCommand,
    },
    /// Serve agent-host as an MCP server on stdio: one tool, agent_host, that runs a task
    /// in a new session and returns its final answer (as `codex mcp-server`).
    McpServer(mcp_cmd::McpServerArgs),
    /// Run many tasks (TASKS.jsonl, one JSON object per line), --jobs at a time, each in its
    /// own copy of its workspace; results, patches and event logs go to --out, and a re-run
    /// skips the tasks that finished.
    Batch(batch::BatchArgs),
    /// Take tasks from a Redis queue (`batch --queue`) and run them one at a time until
    /// SIGTERM; a task whose worker died goes to another worker after the visibility timeout.
    Worker(batch::worker::WorkerArgs),
    /// MCP servers configured as [mcp_servers.NAME] in config.toml.
    Mcp {
        #[command(subcommand)]
        command: mcp_cmd::McpCommand,
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

/// How long `run` waits for an interrupted session to stop before it exits anyway.
const INTERRUPT_GRACE: std::time::Duration = std::time::Duration::from_secs(5);

fn fail(code: u8, message: impl std::fmt::Display) -> ExitCode {
    // Errors can quote an endpoint's reply (a key it repeats) or the model's words.
    let message = agent_host::secrets::redact_known(&message.to_string());
    eprintln!("agent-host: {}", terminal_text::multi_line(&message));
    ExitCode::from(code)
}

fn main() -> ExitCode {
    // Before any thread exists: the credentials leave the process environment, where every
    // command the agent runs could read them (`/proc/$PPID/environ`).
    // SAFETY: no other thread has started yet.
    unsafe { agent_host::secrets::withhold_credentials() };
    match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
        Ok(runtime) => runtime.block_on(async_main()),
        Err(e) => fail(exit::AGENT_ERROR, format!("cannot start the async runtime: {e}")),
    }
}

async fn async_main() -> ExitCode {
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
    if let Command::Config { command } = cli.command {
        return config_cmd::run(command);
    }
    if let Command::Mcp { command } = cli.command {
        return mcp_cmd::run(command).await;
    }
    if let Command::Trust(args) = cli.command {
        return trust_cmd::run(args);
    }
    if let Command::Undo(args) = cli.command {
        return undo_cmd::undo(args);
    }
    let component = match locate_component(cli.component) {
        Ok(path) => path,
        Err(message) => return fail(exit::USAGE, message),
    };
    match cli.command {
        Command::Run {
            task,
            command,
            env,
            provider,
            model,
            json,
            max_turns,
            settings,
            plugins,
            record_replay,
            persist,
        } => {
            let task = match custom_command_prompt(command.as_deref(), task, &env) {
                Ok(task) => task,
                Err(message) => return fail(exit::USAGE, message),
            };
            let choice = RunChoice {
                provider,
                model,
                json,
                max_turns,
                settings,
                record_replay,
                persistence: persist.persistence(),
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
        Command::Chat(args) => chat::run(component, args).await,
        Command::McpServer(args) => mcp_cmd::serve(component, args).await,
        Command::Batch(args) => batch::run(component, args).await,
        Command::Worker(args) => batch::worker::run(component, args).await,
        Command::Sessions(args) => sessions::list(args),
        Command::Resume(args) => sessions::resume(component, args).await,
        Command::Plugin { .. }
        | Command::Config { .. }
        | Command::Mcp { .. }
        | Command::Trust(_)
        | Command::Undo(_) => ExitCode::SUCCESS,
    }
}

/// The component loaded with `endpoints`, `approvals` and `tools`; a failure is the
/// message to show.
async fn build_host(
    component: &Path,
    endpoints: Endpoints,
    approvals: Option<ApprovalPolicy>,
    tools: Vec<Arc<dyn HostTool>>,
    sources: Vec<Arc<dyn ToolSource>>,
) -> Result<Host, String> {
    let mut builder = Host::builder()
        .component(component)
        .endpoints(endpoints)
        .tools(tools);
    for source in sources {
        builder = builder.tool_source(source);
    }
    if let Some(policy) = approvals {
        builder = builder.approvals(policy);
    }
    builder.build().await.map_err(|e| e.to_string())
}

/// What `run` was asked to use.
struct RunChoice {
    provider: Option<String>,
    model: Option<String>,
    json: bool,
    max_turns: Option<u32>,
    settings: SettingsFlags,
    record_replay: RecordReplayOptions,
    persistence: sessions::Persistence,
}

async fn run(
    component: PathBuf,
    task: String,
    env_options: EnvOptions,
    plugin_options: PluginOptions,
    choice: RunChoice,
) -> ExitCode {
    let RunChoice {
        mut provider,
        mut model,
        json,
        max_turns,
        settings,
        record_replay,
        persistence,
    } = choice;
    let overrides = settings.overrides(provider.clone(), model.clone(), max_turns, &env_options);
    let mut settings = match Settings::for_command(&env_options, plugin_options.config.as_deref(), overrides)
    {
        Ok(settings) => settings,
        Err(message) => return fail(exit::USAGE, message),
    };
    if let Some(warning) = settings.untrusted_project.as_ref().and_then(|p| p.warning()) {
        // It quotes keys of the untrusted file.
        eprintln!("agent-host: warning: {}", terminal_text::one_line(&warning));
    }
    let replay = match record_replay.open_replay(&mut settings.endpoints, &mut provider, &mut model) {
        Ok(replay) => replay,
        Err(message) => return fail(exit::USAGE, message),
    };
    if let (Some(recording), Some(provider), Some(model)) = (&replay, provider, model) {
        // The recorded session's profile, whatever the endpoint's default is today.
        if let Some(profile) = agent_protocol::Profile::parse(&recording.session().provider) {
            settings
                .endpoint_profile
                .insert(provider.clone(), Sourced::new(profile, Source::flag("--replay")));
        }
        settings.set_target(provider, model, Source::flag("--replay"));
    }
    let target = match settings.target() {
        Ok(target) => target,
        Err(message) => return fail(exit::USAGE, message),
    };
    let provider = target.provider.clone();
    let mut env_options = settings.env_options(env_options);
    if replay.is_some() && !record_replay.replay_trusted {
        env_options.changes_refused = Some(REPLAY_REFUSES_CHANGES.to_string());
    }
    let (approvals, approval_warning) = terminal_prompt::terminal_approvals(&settings, &mut env_options);
    if let Some(warning) = approval_warning {
        eprintln!("agent-host: {warning}");
    }
    let env = match env_options.build().await {
        Ok(env) => env,
        Err(message) => return fail(exit::USAGE, message),
    };
    let mut config = settings.session_config(&target);
    let host = match host_for(
        &component,
        settings.endpoints.clone(),
        approvals,
        (env.clone(), &env_options),
        &plugin_options,
        &mut config,
    )
    .await
    {
        Ok(host) => host,
        Err((code, message)) => return fail(code, message),
    };
    // For the message if the endpoint rejects the credentials.
    let credential_hint = host.endpoints().get(&provider).map(|e| {
        format!(
            "the {provider} endpoint ({}) rejected the request's credentials: check {}",
            agent_host::secrets::redact::redact_url(&e.base_url),
            e.key_var
        )
    });
    let options = SessionOptions {
        config: Some(config),
        environment: Some(env),
        record: record_replay.record.clone(),
        replay: replay.and(record_replay.replay.clone()),
        read_only: env_options.read_only,
        ..SessionOptions::default()
    };
    let session = match persistence.open(&host, options, json).await {
        Ok(session) => session,
        Err((code, message)) => return fail(code, message),
    };
    let mut events = session.events();
    let printer = tokio::spawn(async move {
        let mut view = EventView::new(json);
        while let Some(event) = events.next().await {
            view.show(&event);
        }
        view.finish();
    });
    // Ctrl-C asks for a graceful abort; the loop notices it at its next check (a running
    // command or stream is cut at once) and returns, so the instance stays consistent. A
    // session stuck where no check comes (a host call that never returns) does not hold
    // the user: after a grace period, or at a second Ctrl-C, the process exits.
    let interrupter = {
        let handle = session.handle();
        tokio::spawn(async move {
            if tokio::signal::ctrl_c().await.is_ok() {
                handle.abort();
                let _ = tokio::time::timeout(INTERRUPT_GRACE, tokio::signal::ctrl_c()).await;
                eprintln!(
                    "agent-host: the session did not stop within {} s of Ctrl-C; exiting",
                    INTERRUPT_GRACE.as_secs()
                );
                agent_host::environments::kill_every_command();
                std::process::exit(i32::from(exit::INTERRUPTED));
            }
        })
    };
    let outcome = session.submit(&task).await;
    interrupter.abort();
    let _ = session.close().await;
    // The event stream ends with the session.
    drop(session);
    let _ = printer.await;
    match outcome {
        Err(error) => {
            let mut message = error.to_string();
            if let (Error::Llm(text), Some(hint)) = (&error, credential_hint)
                && text.starts_with("authentication error")
            {
                message = format!("{message}\n{hint}");
            }
            fail(exit::AGENT_ERROR, message)
        }
        Ok(outcome) => match outcome.stop_reason {
            StopReason::Completed => ExitCode::SUCCESS,
            StopReason::TurnLimit | StopReason::RoundLimit => fail(
                exit::LIMIT,
                format!("stopped by a limit after {} turns", outcome.turns),
            ),
            StopReason::AwaitingInput => ExitCode::SUCCESS,
            StopReason::ContextLength => fail(
                exit::AGENT_ERROR,
                "the conversation no longer fits the model's context window",
            ),
            StopReason::Cancelled | StopReason::Aborted => fail(exit::INTERRUPTED, "interrupted"),
        },
    }
}

/// The task of a run: TASK itself, or with `--command NAME` that command's prompt with TASK
/// as its arguments.
fn custom_command_prompt(
    command: Option<&str>,
    task: Option<String>,
    env: &EnvOptions,
) -> Result<String, String> {
    let Some(name) = command else {
        return Ok(task.unwrap_or_default());
    };
    let name = name.strip_prefix('/').unwrap_or(name);
    let workspace = match &env.cwd {
        Some(dir) => dir.clone(),
        None => std::env::current_dir().map_err(|e| format!("no working directory: {e}"))?,
    };
    let commands = custom_commands(env, &workspace);
    match agent_host::extensions::commands::find(&commands, name) {
        Some(command) => Ok(command.expand(task.as_deref().unwrap_or_default())),
        None => {
            let names: Vec<String> = commands.iter().map(|c| c.name.clone()).collect();
            Err(format!(
                "there is no custom command {name:?} (.agent/commands/{name}.md, or commands/{name}.md in \
                 the user's configuration folder); the commands are: {}",
                if names.is_empty() {
                    "none".to_string()
                } else {
                    names.join(", ")
                }
            ))
        }
    }
}

/// The folders `--deny-dir` keeps from the session on this machine (none for a remote
/// workspace: its folders are there), which no custom command or skill is read from.
fn denied_dirs(env: &EnvOptions) -> Vec<PathBuf> {
    if !matches!(env.env.as_deref(), None | Some("local")) {
        return Vec::new();
    }
    let here = std::env::current_dir().unwrap_or_default();
    env.deny_dirs.iter().map(|dir| here.join(dir)).collect()
}

/// The custom commands: the user's, and the project's when `workspace` is local (a remote
/// one's files are there, not here). Files that cannot be used are named in warnings.
pub(crate) fn custom_commands(
    env: &EnvOptions,
    workspace: &Path,
) -> Vec<agent_host::extensions::CustomCommand> {
    let local = matches!(env.env.as_deref(), None | Some("local"));
    let user_dir = agent_host::extensions::user_dir();
    let (commands, problems) = agent_host::extensions::commands::discover(
        local.then_some(workspace),
        user_dir.as_deref(),
        &denied_dirs(env),
    );
    for problem in problems {
        eprintln!(
            "agent-host: warning: a custom command is left out: {}",
            terminal_text::one_line(&problem)
        );
    }
    commands
}

/// The layered settings of a command that runs sessions (flags in `overrides`), with a
/// warning naming what an untrusted project file had ignored.
pub(crate) fn load_settings(
    env: &EnvOptions,
    config_file: Option<&Path>,
    overrides: agent_host::config::Overrides,
) -> Result<Settings, String> {
    let settings = Settings::for_command(env, config_file, overrides)?;
    if let Some(warning) = settings.untrusted_project.as_ref().and_then(|p| p.warning()) {
        // It quotes keys of the untrusted file.
        eprintln!("agent-host: warning: {}", terminal_text::one_line(&warning));
    }
    Ok(settings)
}

/// A host offering the configured host tools to sessions in `env`, with `config` given the
/// prompt's skills section; a mistake in the tools' configuration is a usage error.
pub(crate) async fn host_for(
    component: &Path,
    endpoints: Endpoints,
    policy: ApprovalPolicy,
    (env, env_options): (Arc<dyn Environment>, &EnvOptions),
    plugins: &PluginOptions,
    config: &mut agent_protocol::SessionConfig,
) -> Result<Host, (u8, String)> {
    // A trusted project's hooks and MCP servers are the repository's files, which commands
    // can rewrite: they run in the commands' sandbox (none for a remote session, which
    // reads no project file).
    let project_sandbox = env_options.made_sandbox.get().cloned().flatten();
    let hooks = policy.hooks().map(|hooks| match env_options.made_sandbox.get() {
        Some(sandbox) => hooks.with_project_sandbox(sandbox.clone(), env_options.env_policy()),
        None => hooks.clone(),
    });
    let policy = policy.with_hooks(hooks);
    let extras = host_tools(env, env_options, plugins, project_sandbox)
        .await
        .map_err(|message| (exit::USAGE, message))?;
    config.user_instructions = extras.instructions;
    build_host(component, endpoints, Some(policy), extras.tools, extras.sources)
        .await
        .map_err(|message| (exit::AGENT_ERROR, message))
}

/// What a session gets from the configuration and the extension folders: host tools
/// (command tools, plugins, MCP servers' tools, `load_skill`) and the system prompt's
/// skills section.
struct HostExtras {
    tools: Vec<Arc<dyn HostTool>>,
    /// The MCP servers' tools, which change while sessions run.
    sources: Vec<Arc<dyn ToolSource>>,
    instructions: Option<String>,
}

/// The configured command tools, plugins, MCP servers and skills, for sessions in `env`.
async fn host_tools(
    env: Arc<dyn Environment>,
    env_options: &EnvOptions,
    plugin_options: &PluginOptions,
    project_sandbox: Option<Arc<agent_host::sandbox::Sandbox>>,
) -> Result<HostExtras, String> {
    // A remote workspace's configuration file is not read: it would run commands here.
    let local_workspace = match env_options.env.as_deref() {
        None | Some("local") => Some(PathBuf::from(env.working_directory())),
        Some(_) => None,
    };
    let settings = plugin_options.load_config(local_workspace.as_deref())?;
    let mut tools = settings.command_tools(env_options)?;
    let sources = plugin_options.sources(PluginSources::from_config(&settings.plugins)?)?;
    let cache = default_cache_dir();
    let (_plugins, plugin_tools) =
        load_plugins(&sources, plugin_options.limits(), cache.as_deref(), env).await?;
    tools.extend(plugin_tools);
    let sources = mcp_tools(&settings.mcp_servers, local_workspace.as_deref(), project_sandbox)
        .await
        .into_iter()
        .collect();
    // Skills: the project's only from a local workspace (a remote one's files are there).
    let user_dir = agent_host::extensions::user_dir();
    let (skills, problems) = agent_host::extensions::skills::discover(
        local_workspace.as_deref(),
        user_dir.as_deref(),
        &denied_dirs(env_options),
    );
    for problem in problems {
        eprintln!(
            "agent-host: warning: a skill is left out: {}",
            terminal_text::one_line(&problem)
        );
    }
    let instructions = agent_host::extensions::skills::prompt_section(&skills);
    if !skills.is_empty() {
        tools.push(Arc::new(agent_host::extensions::skills::LoadSkill::new(skills)));
    }
    Ok(HostExtras {
        tools,
        sources,
        instructions,
    })
}

/// The configured MCP servers' tools. Servers run on this machine, in the workspace (the
/// current folder for a remote one), a trusted project's in `project_sandbox`; one that
/// does not start is reported and left out.
async fn mcp_tools(
    specs: &std::collections::BTreeMap<String, agent_host::host_tools::mcp::McpServerSpec>,
    local_workspace: Option<&Path>,
    project_sandbox: Option<Arc<agent_host::sandbox::Sandbox>>,
) -> Option<Arc<dyn ToolSource>> {
    if specs.is_empty() {
        return None;
    }
    let here = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
    let started = agent_host::host_tools::mcp::start_servers(
        specs,
        local_workspace.unwrap_or(&here),
        agent_host::host_tools::mcp::log_dir().as_deref(),
        project_sandbox,
    )
    .await;
    for (name, why) in &started.failed {
        // The reason may quote the server (its error messages): escaped.
        eprintln!(
            "agent-host: warning: MCP server {name} is left out: {}",
            terminal_text::one_line(why)
        );
    }
    Some(started.tool_source())
}

/// The environment and a host with the endpoints of the process environment, for the
/// commands that run no task; a failure is already reported.
async fn env_and_host(
    component: &Path,
    env_options: EnvOptions,
) -> Result<(Arc<dyn Environment>, Host), ExitCode> {
    let env = env_options
        .build()
        .await
        .map_err(|message| fail(exit::USAGE, message))?;
    let host = build_host(component, Endpoints::from_env(), None, Vec::new(), Vec::new())
        .await
        .map_err(|message| fail(exit::AGENT_ERROR, message))?;
    Ok((env, host))
}

async fn tool(
    component: PathBuf,
    name: String,
    args: String,
    env_options: EnvOptions,
    provider: String,
) -> ExitCode {
    let (env, host) = match env_and_host(&component, env_options).await {
        Ok(both) => both,
        Err(code) => return code,
    };
    match host.run_tool(env, &provider, &name, &args).await {
        Ok(Ok(output)) => {
            print!("{output}");
            if !output.ends_with('\n') {
                println!();
            }
            ExitCode::SUCCESS
        }
        Ok(Err(error)) => fail(exit::AGENT_ERROR, format!("{name}: {error}")),
        Err(trap) => fail(exit::AGENT_ERROR, trap),
    }
}

async fn profile(
    component: PathBuf,
    provider: String,
    model: Option<String>,
    env_options: EnvOptions,
    json: bool,
) -> ExitCode {
    let (env, host) = match env_and_host(&component, env_options).await {
        Ok(both) => both,
        Err(code) => return code,
    };
    let model = model.unwrap_or_else(|| default_model(&provider).to_string());
    let description = match host.describe(session_config(&provider, &model), env).await {
        Ok(description) => description,
        Err(error) => return fail(exit::AGENT_ERROR, error),
    };
    if let Some(error) = description.get("error").and_then(|e| e.as_str()) {
        return fail(exit::USAGE, error);
    }
    if json {
        println!("{description}");
    } else {
        print!("{}", profile_view::render(&description));
    }
    ExitCode::SUCCESS
}
