//! `agent-host config show`: the effective configuration, each value with its source.

use agent_host::config::{Settings, SettingsFlags};
use agent_host::environments::EnvOptions;
use agent_host::environments::options::EnvPolicyArg;
use agent_host::sandbox::{NetworkAccess, SandboxMode};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(clap::Subcommand)]
pub enum ConfigCommand {
    /// Print every effective setting and where it comes from (default, user file, project
    /// file, environment variable or flag). Keys are never printed, only whether one is set
    /// and from which variable.
    Show(ShowArgs),
}

#[derive(clap::Args)]
pub struct ShowArgs {
    /// Print one JSON object: {"files": ..., "settings": {KEY: {"value", "source"}}}.
    #[arg(long)]
    json: bool,
    /// The workspace whose .agent/config.toml is the project file (default: the current
    /// directory).
    #[arg(short = 'C', long = "cd", visible_alias = "cwd", value_name = "DIR")]
    cwd: Option<PathBuf>,
    /// The project configuration file, instead of the workspace's.
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
    /// Show the settings as if run with this provider.
    #[arg(long)]
    provider: Option<String>,
    /// Show the settings as if run with this model.
    #[arg(short = 'm', long)]
    model: Option<String>,
    /// Show the settings as if run with this turn limit.
    #[arg(long)]
    max_turns: Option<u32>,
    /// Show the settings as if run with this variable policy.
    #[arg(long = "vars", alias = "env-policy", value_name = "POLICY")]
    env_policy: Option<EnvPolicyArg>,
    /// Show the settings as if run in read-only mode.
    #[arg(long)]
    read_only: bool,
    /// Show the settings as if run with this sandbox mode.
    #[arg(short = 's', long, value_name = "MODE")]
    sandbox: Option<SandboxMode>,
    /// Show the settings as if run with this network setting (alone: on).
    #[arg(
        long,
        value_name = "MODE",
        num_args = 0..=1,
        require_equals = true,
        default_missing_value = "on"
    )]
    sandbox_network: Option<NetworkAccess>,
    /// Show the settings as if run with these hosts allowed (repeatable; presets expanded).
    #[arg(long = "network-allow", value_name = "HOST")]
    network_allow: Vec<String>,
    #[command(flatten)]
    settings: SettingsFlags,
}

pub fn run(command: ConfigCommand) -> ExitCode {
    let ConfigCommand::Show(args) = command;
    let env = EnvOptions {
        cwd: args.cwd,
        env_policy: args.env_policy,
        read_only: args.read_only,
        sandbox: args.sandbox,
        sandbox_network: args.sandbox_network,
        network_allow: args.network_allow,
        ..EnvOptions::default()
    };
    let overrides = args
        .settings
        .overrides(args.provider, args.model, args.max_turns, &env);
    match Settings::for_command(&env, args.config.as_deref(), overrides) {
        Ok(settings) if args.json => {
            println!("{}", settings.to_json());
            ExitCode::SUCCESS
        }
        Ok(settings) => {
            // Values and keys may come from an untrusted project file.
            print!("{}", crate::terminal_text::multi_line(&settings.render()));
            ExitCode::SUCCESS
        }
        Err(message) => {
            eprintln!("agent-host: {}", crate::terminal_text::multi_line(&message));
            ExitCode::from(2)
        }
    }
}
