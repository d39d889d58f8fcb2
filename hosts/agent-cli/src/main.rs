//! The `agent-host` command line.

use agent_host::approval::ApprovalPolicy;
use agent_host::compile_cache::default_cache_dir;
use agent_host::config::{
    PluginOptions, PluginSources, Settings, default_model, load_plugins, locate_component, session_config,
};
use agent_host::embed::{Host, HostTool, ToolSource};
use agent_host::environments::EnvOptions;
use agent_host::host_tools::component::FolderRules;
use agent_host::{Endpoints, Environment};
use clap::{Parser, Subcommand};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

mod acp;
mod batch;
mod chat;
mod config_cmd;
mod error_hints;
mod event_view;
mod mcp_cmd;
mod output_schema;
mod plugin_serve;
mod plugin_view;
mod profile_view;
mod renamed_flags;
mod run_cmd;
mod run_result;
mod sessions;
mod task_input;
mod terminal_prompt;
mod terminal_text;
mod trust_cmd;
mod undo_cmd;
mod version;

/// Exit codes a script can rely on.
mod exit {
    pub const USAGE: u8 = 2;
    pub const AGENT_ERROR: u8 = 1;
    pub const LIMIT: u8 = 3;
    pub const SCHEMA_MISMATCH: u8 = 4;
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
  3    stopped by a limit (--max-turns, max_tool_rounds_per_input, a budget)
  4    the final answer does not match --output-schema, even after a repair round
  130  interrupted (Ctrl-C)";

#[derive(Parser)]
#[command(
    name = "agent-host",
    disable_version_flag = true,
    about = "A coding agent that runs its tools in a sandbox: chat with it, or give it a task to run",
    long_about = "A coding agent that runs its tools in a sandbox: chat with it, or give it a task to run.\n\n\
                  The agent is one WebAssembly component (agent-core.wasm) that agent-host runs with \
                  wasmtime; the files it reads and the commands it runs are confined to the workspace.",
    after_help = "Start with `agent-host` (on a terminal, the same as `agent-host chat`), or \
                  `agent-host run \"TASK\"`; `agent-host COMMAND --help` tells more."
)]
struct Cli {
    /// The core component (default: $AGENT_CORE_COMPONENT, else agent-core.wasm beside the
    /// binary, one folder up, or in ../share/agent-host/).
    #[arg(long, global = true, value_name = "FILE")]
    component: Option<PathBuf>,
    /// Print the version and the component's path and SHA-256.
    #[arg(short = 'V', long)]
    version: bool,
    #[command(subcommand)]
    command: Option<Command>,
}

/// `agent-host` alone on a terminal: `agent-host chat` (with its defaults, and the settings
/// the environment holds); elsewhere nothing, and the help is printed.
fn bare_chat() -> Option<Command> {
    use std::io::IsTerminal;
    if !(std::io::stdin().is_terminal() && std::io::stdout().is_terminal()) {
        return None;
    }
    <Cli as clap::Parser>::try_parse_from(["agent-host", "chat"])
        .ok()
        .and_then(|cli| cli.command)
}

/// The command line once `--version` and a missing command are dealt with.
struct ParsedCli {
    component: Option<PathBuf>,
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run a task to completion and print each event as it happens.
    #[command(after_help = RUN_EXIT_CODES)]
    Run(run_cmd::RunArgs),
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
    /// Serve an editor as its agent over the Agent Client Protocol (ACP) on stdio: Zed,
    /// JetBrains IDEs, Neovim and Emacs clients start `agent-host acp`.
    Acp(acp::AcpArgs),
    /// The layered configuration (user file, project file, environment, flags).
    Config {
        #[command(subcommand)]
        command: config_cmd::ConfigCommand,
    },
    /// Trust a workspace's .agent/config.toml as it is now: until then its endpoints, command
    /// tools, plugins, MCP servers and looser approval, variable policy and limits are ignored.
    Trust(trust_cmd::TrustArgs),
    /// WebAssembly components as tools: tool-plugins and any component with plain exports.
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
    /// Show a plugin's name, what it asks for or is granted, and its tools with their schemas.
    /// A tool-plugin runs (sandboxed, nothing granted) only to give its definitions; a
    /// component with plain exports does not run: its tools come from its exports' types
    /// and its WIT, and its effective policy is shown.
    Inspect {
        /// The plugin's .wasm file.
        file: PathBuf,
        /// Print one JSON object.
        #[arg(long)]
        json: bool,
        /// The configuration file whose `[plugins.policy]` applies, instead of the usual ones.
        #[arg(long, value_name = "FILE")]
        config: Option<PathBuf>,
    },
    /// Serve the tools of the components (--plugin, --plugins-dir, [plugins]) over MCP, on
    /// stdio or, with --http, streamable HTTP on a loopback address: each call runs as in a
    /// session, under the component's policy or grants, without approvals.
    Serve(Box<plugin_serve::ServeArgs>),
}

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
            // The ACP library warns of every error answer it sends, which agent-host words itself.
            tracing_subscriber::EnvFilter::try_from_env("AGENT_HOST_LOG")
                .unwrap_or_else(|_| "warn,agent_client_protocol=error".into()),
        )
        .with_ansi(
            std::io::IsTerminal::is_terminal(&std::io::stderr()) && std::env::var_os("NO_COLOR").is_none(),
        )
        .with_writer(std::io::stderr)
        .init();
    // One command tree, for the renamed flags' warnings and then for parsing.
    let command = <Cli as clap::CommandFactory>::command();
    for warning in renamed_flags::warnings(&command, std::env::args_os()) {
        eprintln!("agent-host: warning: {warning}");
    }
    let cli = match <Cli as clap::FromArgMatches>::from_arg_matches_mut(&mut command.get_matches()) {
        Ok(cli) => cli,
        Err(error) => error.exit(),
    };
    if cli.version {
        println!("{}", version::describe(cli.component));
        return ExitCode::SUCCESS;
    }
    // Bare, on a terminal, it opens the chat as claude, codex and gemini do.
    let Some(command) = cli.command.or_else(bare_chat) else {
        let _ = <Cli as clap::CommandFactory>::command().print_help();
        return ExitCode::from(exit::USAGE);
    };
    let cli = ParsedCli {
        component: cli.component,
        command,
    };
    if let Command::Plugin {
        command: PluginCommand::Inspect { file, json, config },
    } = &cli.command
    {
        return plugin_view::inspect(file, config.as_deref(), *json).await;
    }
    if let Command::Plugin {
        command: PluginCommand::Serve(args),
    } = cli.command
    {
        return plugin_serve::serve(*args).await;
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
        Command::Run(args) => run_cmd::run_command(component, args).await,
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
        Command::Acp(args) => acp::serve(component, args).await,
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

/// The folders `--deny-dir` keeps from the session on this machine (none for a remote
/// workspace: its folders are there), which no custom command or skill is read from.
pub(crate) fn denied_dirs(env: &EnvOptions) -> Vec<PathBuf> {
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
    added_mcp: McpSpecs,
) -> Result<(Host, McpServers), (u8, String)> {
    // A trusted project's hooks and MCP servers are the repository's files, which commands
    // can rewrite: they run in the commands' sandbox (none for a remote session, which
    // reads no project file).
    let project_sandbox = env_options.made_sandbox.get().cloned().flatten();
    let hooks = policy.hooks().map(|hooks| match env_options.made_sandbox.get() {
        Some(sandbox) => hooks.with_project_sandbox(sandbox.clone(), env_options.env_policy()),
        None => hooks.clone(),
    });
    let policy = policy.with_hooks(hooks);
    let extras = host_tools(env, env_options, plugins, project_sandbox, added_mcp)
        .await
        .map_err(|message| (exit::USAGE, message))?;
    config.user_instructions = extras.instructions;
    let sources = extras.mcp.iter().map(|servers| servers.tool_source()).collect();
    let host = build_host(component, endpoints, Some(policy), extras.tools, sources)
        .await
        .map_err(|message| (exit::AGENT_ERROR, message))?;
    Ok((host, extras.mcp))
}

/// MCP server entries by name, as `[mcp_servers.NAME]` holds them.
pub(crate) type McpSpecs = std::collections::BTreeMap<String, agent_host::host_tools::mcp::McpServerSpec>;

/// The configured MCP servers as they started (`None`: none configured), for `/mcp`.
pub(crate) type McpServers = Option<Arc<agent_host::host_tools::mcp::StartedServers>>;

/// What a session gets from the configuration and the extension folders: host tools
/// (command tools, plugins, MCP servers' tools, `load_skill`) and the system prompt's
/// skills section.
struct HostExtras {
    tools: Vec<Arc<dyn HostTool>>,
    /// The MCP servers, whose tools change while sessions run.
    mcp: McpServers,
    instructions: Option<String>,
}

/// The configured command tools, plugins, MCP servers and skills, for sessions in `env`.
async fn host_tools(
    env: Arc<dyn Environment>,
    env_options: &EnvOptions,
    plugin_options: &PluginOptions,
    project_sandbox: Option<Arc<agent_host::sandbox::Sandbox>>,
    added_mcp: McpSpecs,
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
    let folders = FolderRules::for_environment(env_options, local_workspace.clone());
    let (_plugins, plugin_tools) =
        load_plugins(&sources, plugin_options.limits(), cache.as_deref(), env, &folders).await?;
    tools.extend(plugin_tools);
    // Servers a client added (`agent-host acp`) beside the configured ones, which keep their names.
    let mut specs = settings.mcp_servers.clone();
    for (name, spec) in added_mcp {
        match specs.contains_key(&name) {
            true => eprintln!(
                "agent-host: warning: the client's MCP server {name} is left out: the configuration has one of that name"
            ),
            false => {
                specs.insert(name, spec);
            }
        }
    }
    let mcp = mcp_servers(&specs, local_workspace.as_deref(), project_sandbox).await;
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
        mcp,
        instructions,
    })
}

/// The configured MCP servers' tools. Servers run on this machine, in the workspace (the
/// current folder for a remote one), a trusted project's in `project_sandbox`; one that
/// does not start is reported and left out.
async fn mcp_servers(
    specs: &std::collections::BTreeMap<String, agent_host::host_tools::mcp::McpServerSpec>,
    local_workspace: Option<&Path>,
    project_sandbox: Option<Arc<agent_host::sandbox::Sandbox>>,
) -> McpServers {
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
    Some(Arc::new(started))
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
