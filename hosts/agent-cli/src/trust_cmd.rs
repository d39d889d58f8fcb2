//! `agent-host trust [DIR]`: the user vouches for a workspace's `.agent/config.toml` as it is
//! now, so its endpoints, command tools, plugins, MCP servers, hooks and looser settings apply (see
//! `agent_host::config::trust`); the programs it names run in each session's command sandbox.
//! `--forget` takes that back.

use agent_host::config::file::FileLayer;
use agent_host::config::{CONFIG_FILE, FileLocations, LayerKind};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(clap::Args)]
pub struct TrustArgs {
    /// The workspace whose .agent/config.toml to trust (default: the current directory).
    dir: Option<PathBuf>,
    /// Stop trusting it instead.
    #[arg(long)]
    forget: bool,
}

pub fn run(args: TrustArgs) -> ExitCode {
    match trust(args) {
        Ok(message) => {
            println!("{}", crate::terminal_text::multi_line(&message));
            ExitCode::SUCCESS
        }
        Err(message) => {
            eprintln!("agent-host: {}", crate::terminal_text::multi_line(&message));
            ExitCode::from(crate::exit::USAGE)
        }
    }
}

fn trust(args: TrustArgs) -> Result<String, String> {
    let dir = match args.dir {
        Some(dir) => dir,
        None => std::env::current_dir().map_err(|e| format!("cannot read the current directory: {e}"))?,
    };
    let file = dir.join(CONFIG_FILE);
    let locations = FileLocations::new(Some(&dir), None);
    let store = locations
        .trust_store()
        .ok_or("no configuration folder to keep the trust list in: set AGENT_HOST_CONFIG_DIR")?;
    if args.forget {
        return Ok(match store.forget(&file)? {
            true => format!("{} is no longer trusted", file.display()),
            false => format!("{} was not trusted", file.display()),
        });
    }
    if !file.is_file() {
        return Err(format!("{} has no {CONFIG_FILE} to trust", dir.display()));
    }
    // A file that does not load would be trusted blind: have it fixed first.
    let layer = FileLayer::load(&file, LayerKind::Project)?;
    store.trust(&file)?;
    let mut grants: Vec<String> = layer
        .endpoints
        .keys()
        .map(|name| format!("endpoints.{name}"))
        .collect();
    if layer.tools_at.is_some() {
        grants.push(format!("{} command tool(s)", layer.agent.tools.len()));
    }
    if layer.plugins_at.is_some() {
        grants.push("[plugins]".to_string());
    }
    // What starting a server passes it: its command, and the variables it may read
    // (agent-host's own credentials among them, when named).
    for (name, spec) in &layer.agent.mcp_servers {
        let mut variables: Vec<&str> = spec.env_vars.iter().map(String::as_str).collect();
        variables.extend(spec.bearer_token_env_var.as_deref());
        variables.extend(spec.env_http_headers.values().map(String::as_str));
        let reads = match variables.is_empty() {
            true => String::new(),
            false => format!(" reading {}", variables.join(", ")),
        };
        let runs = match (&spec.command, &spec.url) {
            (Some(command), _) => format!("runs {command}"),
            (None, Some(url)) => format!("at {url}"),
            (None, None) => String::new(),
        };
        grants.push(format!("MCP server {name} ({runs}{reads})"));
    }
    let hooks = &layer.agent.hooks;
    if !hooks.is_empty() {
        let commands: Vec<String> = hooks
            .events()
            .into_iter()
            .flat_map(|(event, specs)| {
                specs
                    .iter()
                    .map(move |h| format!("{event}: {}", h.command.join(" ")))
            })
            .collect();
        grants.push(format!("hooks ({})", commands.join("; ")));
    }
    let grants = match grants.is_empty() {
        true => String::new(),
        false => format!(" ({})", grants.join(", ")),
    };
    Ok(format!(
        "trusted {} as it is now{grants}{}; a change to the file untrusts it again (trust list: {})",
        file.display(),
        sandboxed_programs(&layer),
        store.path().display()
    ))
}

/// What the trust does not pin: the programs the file names are the repository's files,
/// which the agent's commands can rewrite, so they run with no more rights than commands.
fn sandboxed_programs(layer: &FileLayer) -> String {
    let stdio_servers = layer
        .agent
        .mcp_servers
        .values()
        .any(|spec| spec.is_project_program());
    let programs: Vec<&str> = [
        (layer.tools_at.is_some(), "command tools"),
        (!layer.agent.hooks.is_empty(), "hooks"),
        (stdio_servers, "MCP servers"),
    ]
    .into_iter()
    .filter_map(|(named, what)| named.then_some(what))
    .collect();
    let all = match programs.split_last() {
        None => return String::new(),
        Some((last, [])) => last.to_string(),
        Some((last, rest)) => format!("{} and {last}", rest.join(", ")),
    };
    format!(
        "; its {all} run in each session's command sandbox (--sandbox), with no more rights than \
         the agent's commands"
    )
}
