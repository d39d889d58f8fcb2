//! `agent-host mcp list`: the configured MCP servers, whether each starts, and the tools it
//! offers under the names the model sees. Starts every enabled server, then stops them.

use agent_host::config::host_tool_config;
use agent_host::host_tools::mcp::{SEPARATOR, StartedServers, log_dir, start_servers};
use clap::Subcommand;
use serde_json::{Value, json};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Subcommand)]
pub enum McpCommand {
    /// Start each configured server, list its state and tools, stop it.
    List {
        /// The project configuration file, instead of .agent/config.toml in the workspace.
        #[arg(long, value_name = "FILE")]
        config: Option<PathBuf>,
        /// The workspace whose configuration is read (default: the current folder).
        #[arg(short = 'C', long = "cd", visible_alias = "cwd", value_name = "DIR")]
        cwd: Option<PathBuf>,
        /// Print one JSON object.
        #[arg(long)]
        json: bool,
    },
}

pub async fn run(command: McpCommand) -> ExitCode {
    let McpCommand::List { config, cwd, json } = command;
    let workspace = match cwd.map_or_else(std::env::current_dir, Ok) {
        Ok(dir) => dir,
        Err(e) => {
            eprintln!("agent-host: no working directory: {e}");
            return ExitCode::from(2);
        }
    };
    let settings = match host_tool_config(Some(&workspace), config.as_deref()) {
        Ok(settings) => settings,
        Err(message) => {
            eprintln!("agent-host: {message}");
            return ExitCode::from(2);
        }
    };
    let sandbox = match project_sandbox(&settings.mcp_servers, &workspace, config.as_deref()) {
        Ok(sandbox) => sandbox,
        Err(message) => {
            eprintln!("agent-host: {message}");
            return ExitCode::from(2);
        }
    };
    let started = start_servers(&settings.mcp_servers, &workspace, log_dir().as_deref(), sandbox).await;
    let servers = describe(&started).await;
    started.stop().await;
    if json {
        println!("{}", json!({ "servers": servers }));
    } else if servers.is_empty() {
        println!("No MCP servers are configured ([mcp_servers.NAME] in config.toml).");
    } else {
        print!("{}", render(&servers));
    }
    ExitCode::SUCCESS
}

/// Each server as JSON, sorted by name: its state, command, log and tools (the names the
/// model sees, and whether each is offered).
pub async fn describe(started: &StartedServers) -> Vec<Value> {
    let mut servers = Vec::new();
    for server in &started.running {
        let tools: Vec<Value> = server
            .tools()
            .await
            .iter()
            .map(|tool| {
                json!({
                    "name": format!("{}{SEPARATOR}{}", server.name(), tool.name),
                    "offered": server.spec().offers(&tool.name),
                    "description": tool.description.as_deref().unwrap_or_default(),
                })
            })
            .collect();
        servers.push(json!({
            "name": server.name(),
            "state": "ready",
            "command": server.spec().command,
            "log": server.log_path(),
            "tools": tools,
        }));
    }
    for (name, why) in &started.failed {
        servers.push(json!({"name": name, "state": "failed", "error": why, "tools": []}));
    }
    for name in &started.disabled {
        servers.push(json!({"name": name, "state": "disabled", "tools": []}));
    }
    servers.sort_by(|a, b| a["name"].as_str().cmp(&b["name"].as_str()));
    servers
}

/// The sandbox a trusted project's stdio servers run in, as in a session in `workspace`
/// (the `sandbox` settings of its configuration); made only when there is such a server.
fn project_sandbox(
    specs: &std::collections::BTreeMap<String, agent_host::host_tools::mcp::McpServerSpec>,
    workspace: &std::path::Path,
    config_file: Option<&std::path::Path>,
) -> Result<Option<std::sync::Arc<agent_host::sandbox::Sandbox>>, String> {
    if !specs
        .values()
        .any(|spec| spec.enabled && spec.is_project_program())
    {
        return Ok(None);
    }
    let env = agent_host::environments::EnvOptions {
        cwd: Some(workspace.to_path_buf()),
        ..Default::default()
    };
    let settings = agent_host::config::Settings::for_command(&env, config_file, Default::default())?;
    settings.env_options(env).sandbox_for(&[workspace.to_path_buf()])
}

/// The list as text; everything a server said (names, errors) escaped for the terminal.
pub fn render(servers: &[Value]) -> String {
    let text =
        |value: &Value| crate::terminal_text::one_line(value.as_str().unwrap_or_default()).into_owned();
    let mut out = String::new();
    for server in servers {
        let (name, state) = (text(&server["name"]), text(&server["state"]));
        match server.get("error") {
            Some(error) => out.push_str(&format!("{name}: {state}: {}\n", text(error))),
            None => out.push_str(&format!("{name}: {state}\n")),
        }
        for tool in server["tools"].as_array().into_iter().flatten() {
            let offered = if tool["offered"] == true {
                ""
            } else {
                " (not offered: enabled_tools/disabled_tools)"
            };
            out.push_str(&format!("  {}{offered}\n", text(&tool["name"])));
        }
    }
    out
}

/// `agent-host mcp-server`: the options of the sessions it runs, as for `run`.
#[derive(clap::Args)]
pub struct McpServerArgs {
    #[command(flatten)]
    pub env: agent_host::environments::EnvOptions,
    /// Provider (default: the first built-in one configured, else the only other endpoint).
    #[arg(long, help_heading = "Model")]
    pub provider: Option<String>,
    /// Model name (default: $<PROVIDER>_MODEL, else the profile's default).
    #[arg(short = 'm', long, help_heading = "Model")]
    pub model: Option<String>,
    #[command(flatten)]
    pub settings: agent_host::config::SettingsFlags,
    #[command(flatten)]
    pub plugins: agent_host::config::PluginOptions,
}

/// Serves the `agent_host` tool over stdio until the client leaves. Nobody can be asked on
/// this channel: in `ask` mode writes and commands are refused (use --approval auto).
pub async fn serve(component: PathBuf, args: McpServerArgs) -> ExitCode {
    match prepare_server(&component, args).await {
        Ok(server) => match server.serve_stdio().await {
            Ok(()) => ExitCode::SUCCESS,
            Err(message) => crate::fail(crate::exit::AGENT_ERROR, message),
        },
        Err((code, message)) => crate::fail(code, message),
    }
}

async fn prepare_server(
    component: &std::path::Path,
    args: McpServerArgs,
) -> Result<agent_host::embed::mcp_server::AgentServer, (u8, String)> {
    let usage = |message: String| (crate::exit::USAGE, message);
    let overrides = args
        .settings
        .overrides(args.provider.clone(), args.model.clone(), None, &args.env);
    let settings =
        crate::load_settings(&args.env, args.plugins.config.as_deref(), overrides).map_err(usage)?;
    let target = settings.target().map_err(usage)?;
    let env_options = settings.env_options(args.env.clone());
    let policy = settings.approval_policy(None, env_options.allow_dangerous_commands);
    let env = env_options.build().await.map_err(usage)?;
    let mut config = settings.session_config(&target);
    let (host, _mcp) = crate::host_for(
        component,
        settings.endpoints.clone(),
        policy,
        (env.clone(), &env_options),
        &args.plugins,
        &mut config,
        Default::default(),
    )
    .await?;
    Ok(agent_host::embed::mcp_server::AgentServer::new(host, config, env))
}
