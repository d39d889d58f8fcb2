//! `agent-host plugin serve`: the loaded components' tools as an MCP server, on stdio or
//! streamable HTTP on a loopback address, for any MCP client.

use agent_host::config::{PluginOptions, PluginSources, load_plugins};
use agent_host::embed::tools_server::ToolsServer;
use agent_host::environments::EnvOptions;
use agent_host::host_tools::component::FolderRules;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(clap::Args)]
pub struct ServeArgs {
    #[command(flatten)]
    pub env: EnvOptions,
    #[command(flatten)]
    pub plugins: PluginOptions,
    /// Serve streamable HTTP at http://ADDRESS/mcp (a loopback address, e.g. 127.0.0.1:8765;
    /// port 0 picks one and prints it) instead of stdio.
    #[arg(long, value_name = "ADDRESS")]
    pub http: Option<SocketAddr>,
}

pub async fn serve(args: ServeArgs) -> ExitCode {
    match prepare(&args).await {
        Ok(server) => {
            let served = match args.http {
                Some(address) => {
                    server
                        .serve_http(address, |bound| {
                            eprintln!("agent-host: serving the tools over MCP at http://{bound}/mcp");
                        })
                        .await
                }
                None => server.serve_stdio().await,
            };
            match served {
                Ok(()) => ExitCode::SUCCESS,
                Err(message) => crate::fail(crate::exit::AGENT_ERROR, message),
            }
        }
        Err(message) => crate::fail(crate::exit::USAGE, message),
    }
}

async fn prepare(args: &ServeArgs) -> Result<ToolsServer, String> {
    let overrides = agent_host::config::Overrides {
        env_policy: args.env.env_policy.map(|p| p.0),
        read_only: args.env.read_only,
        sandbox: args.env.sandbox,
        sandbox_network: args.env.sandbox_network,
        network_allow: args.env.network_allow.clone(),
        ..Default::default()
    };
    let settings = crate::load_settings(&args.env, args.plugins.config.as_deref(), overrides)?;
    let env_options = settings.env_options(args.env.clone());
    let env = env_options.build().await?;
    let local_workspace: Option<PathBuf> = match env_options.env.as_deref() {
        None | Some("local") => Some(PathBuf::from(env.working_directory())),
        Some(_) => None,
    };
    let config = args.plugins.load_config(local_workspace.as_deref())?;
    let sources = args
        .plugins
        .sources(PluginSources::from_config(&config.plugins)?)?;
    if sources.files.is_empty() {
        return Err(
            "no components to serve: name them with --plugin FILE or --plugins-dir DIR, or in [plugins] of the configuration"
                .into(),
        );
    }
    let folders = FolderRules::for_environment(&env_options, local_workspace);
    let cache = agent_host::compile_cache::default_cache_dir();
    let (loaded, tools) =
        load_plugins(&sources, args.plugins.limits(), cache.as_deref(), env, &folders).await?;
    let names: Vec<&str> = loaded.iter().map(|l| l.name()).collect();
    eprintln!(
        "agent-host: {} tools from {}",
        tools.len(),
        crate::terminal_text::one_line(&names.join(", "))
    );
    ToolsServer::new(tools)
}
