//! How a host picks and wraps its environment: the `--env`, `--read-only`, `--allow-dir`,
//! `--deny-dir`, `--env-policy`, `--sandbox` and `--allow-dangerous-commands` flags, usable by embedders
//! as a plain struct.

use crate::environments::dir_flags::FlagDirs;
use crate::environments::env_vars::EnvPolicy;
use crate::environments::environment::Environment;
use crate::environments::local::LocalEnvironment;
use crate::environments::policy::{CommandGuard, Logged, PathPolicy, ReadOnly};
use crate::sandbox::{NetworkAccess, Sandbox, SandboxConfig, SandboxMode};
use std::path::PathBuf;
use std::sync::{Arc, OnceLock};

/// Where tools run and under which policies.
#[derive(Debug, Clone, Default, clap::Args)]
#[command(next_help_heading = "Where tools run")]
pub struct EnvOptions {
    /// Working directory of the agent, its workspace (default: the current directory).
    #[arg(short = 'C', long = "cd", visible_alias = "cwd", value_name = "DIR")]
    pub cwd: Option<PathBuf>,
    /// `local` (default) or `ssh://user@host[:port]/path`.
    #[arg(long = "env", value_name = "ENV")]
    pub env: Option<String>,
    /// Private key for `--env ssh://...` (default: ~/.ssh/id_ed25519, id_ecdsa, id_rsa).
    #[arg(long, value_name = "FILE")]
    pub ssh_key: Option<PathBuf>,
    /// known_hosts file for `--env ssh://...` (default: ~/.ssh/known_hosts).
    #[arg(long, value_name = "FILE")]
    pub known_hosts: Option<PathBuf>,
    /// Refuse every change to files and every command.
    #[arg(long)]
    pub read_only: bool,
    /// Another directory the agent may use, by absolute path (repeatable). It must exist; a
    /// relative one is taken from the current directory (with --env ssh://, from the remote
    /// working directory).
    #[arg(long = "allow-dir", value_name = "DIR")]
    pub allow_dirs: Vec<PathBuf>,
    /// A directory the agent may not touch, even inside the workspace (repeatable). It must
    /// exist; a relative one is taken from the current directory like --allow-dir's, not
    /// from --cd (with --env ssh://, from the remote working directory).
    #[arg(long = "deny-dir", value_name = "DIR")]
    pub deny_dirs: Vec<PathBuf>,
    /// Host variables commands see: inherit-all (minus credentials; the default), core or
    /// none.
    #[arg(
        long = "vars",
        alias = "env-policy",
        value_name = "POLICY",
        help_heading = "Sandbox"
    )]
    pub env_policy: Option<EnvPolicyArg>,
    /// Run commands the guard would refuse (rm -rf /, mkfs, dd to a disk, fork bombs).
    #[arg(long, help_heading = "Sandbox")]
    pub allow_dangerous_commands: bool,
    /// A credential variable commands may see after all (repeatable): every policy drops
    /// variables named or shaped like credentials and the endpoints' key variables.
    #[arg(
        long = "vars-allow",
        alias = "env-allow",
        value_name = "NAME",
        help_heading = "Sandbox"
    )]
    pub env_allow: Vec<String>,
    /// Why nothing may change (set by the host, e.g. while replaying a recording someone
    /// else made): writes, shell commands, command tools and plugins' commands are refused
    /// with this reason.
    #[arg(skip)]
    pub changes_refused: Option<String>,
    /// Where local commands may write: workspace-write (the default: the workspace and the
    /// --allow-dir roots, .git and .agent read-only), read-only, or danger-full-access (no
    /// sandbox). Commands over SSH have the remote user's rights.
    #[arg(short = 's', long, value_name = "MODE", help_heading = "Sandbox")]
    pub sandbox: Option<SandboxMode>,
    /// What sandboxed commands reach of the network: off (the default), allow-list (only
    /// the --network-allow hosts, through agent-host's proxy) or on (everything);
    /// --sandbox-network alone: on.
    #[arg(
        long,
        value_name = "MODE",
        num_args = 0..=1,
        require_equals = true,
        default_missing_value = "on",
        help_heading = "Sandbox"
    )]
    pub sandbox_network: Option<NetworkAccess>,
    /// A host sandboxed commands may reach through agent-host's proxy (repeatable; turns
    /// the allow-list on): example.com (ports 80 and 443), *.example.com (its subdomains),
    /// example.com:8080, example.com:*, 10.0.0.0/8, or a preset: @python, @npm, @rust,
    /// @go, @debian, @github.
    #[arg(long = "network-allow", value_name = "HOST", help_heading = "Sandbox")]
    pub network_allow: Vec<String>,
    /// Paths sandboxed commands may not read besides the user's credentials (set from the
    /// settings: agent-host's own files and `sandbox_deny_read`).
    #[arg(skip)]
    pub sandbox_deny_read: Vec<PathBuf>,
    /// The sandbox these options made, shared by the environment and the command tools.
    #[arg(skip)]
    pub made_sandbox: OnceLock<Option<Arc<Sandbox>>>,
}

/// `EnvPolicy` as a flag value.
#[derive(Debug, Clone, Copy, Default)]
pub struct EnvPolicyArg(pub EnvPolicy);

impl std::str::FromStr for EnvPolicyArg {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        s.parse().map(Self)
    }
}

impl EnvOptions {
    /// The environment these options describe, policies applied innermost first: path
    /// boundary, read-only mode, command guard, logging.
    pub async fn build(&self) -> Result<Arc<dyn Environment>, String> {
        self.build_over(|base| base).await
    }

    /// [`EnvOptions::build`] with `beneath` wrapped directly around the machine's
    /// environment, under every policy wrapper: what it does to an operation happens only
    /// once every policy has passed it (an editor serving text files, for `agent-host acp`).
    pub async fn build_over(
        &self,
        beneath: impl FnOnce(Arc<dyn Environment>) -> Arc<dyn Environment>,
    ) -> Result<Arc<dyn Environment>, String> {
        for name in &self.env_allow {
            crate::secrets::allow(name);
        }
        let remote = self.env.as_deref().is_some_and(|e| e.starts_with("ssh://"));
        let dirs = if remote {
            FlagDirs::remote(&self.allow_dirs, &self.deny_dirs)
        } else {
            let current =
                std::env::current_dir().map_err(|e| format!("cannot read the current directory: {e}"))?;
            FlagDirs::local(&self.allow_dirs, &self.deny_dirs, &current)?
        };
        let base: Arc<dyn Environment> = match self.env.as_deref() {
            None | Some("local") => Arc::new(self.local(&dirs.allow)?),
            Some(url) if url.starts_with("ssh://") => {
                let target = crate::environments::ssh::SshTarget::parse(url)?;
                let env = crate::environments::ssh::SshEnvironment::connect(
                    &target,
                    self.ssh_key.as_deref(),
                    self.known_hosts.as_deref(),
                    self.env_policy(),
                )
                .await?;
                Arc::new(env)
            }
            Some(other) => {
                return Err(format!(
                    "unknown environment {other:?}: use local or ssh://user@host[:port]/path"
                ));
            }
        };
        if remote {
            dirs.check_remote(&*base).await?;
        }
        let mut env = beneath(base);
        // The local environment is confined by its directory handles; a remote one is
        // bounded here, on paths the server resolves.
        if remote || !dirs.deny.is_empty() {
            let denied: Vec<String> = dirs
                .deny
                .iter()
                .map(|d| d.to_string_lossy().into_owned())
                .collect();
            let mut allowed = vec![env.working_directory()];
            allowed.extend(dirs.allow.iter().map(|d| d.to_string_lossy().into_owned()));
            env = Arc::new(
                PathPolicy::new(env, &allowed, &denied)
                    .await
                    .map_err(|e| format!("--deny-dir: {}", e))?,
            );
        }
        if self.read_only {
            env = Arc::new(ReadOnly::new(env));
        }
        if let Some(reason) = &self.changes_refused {
            env = Arc::new(ReadOnly::because(env, reason.clone()));
        }
        if !self.allow_dangerous_commands {
            env = Arc::new(CommandGuard::new(env));
        }
        Ok(Arc::new(Logged::new(env)))
    }

    /// What the sandbox flags and settings ask for.
    pub fn sandbox_config(&self) -> Result<SandboxConfig, String> {
        Ok(SandboxConfig {
            mode: self.sandbox.unwrap_or_default(),
            network: self.network_access(),
            network_allow: egress_proxy::AllowList::parse(&self.network_allow)
                .map_err(|e| format!("--network-allow: {e}"))?,
            resolution: crate::sandbox::NameResolution::from_test_variable()?,
            // --deny-dir holds for commands too (relative: from the current directory).
            deny_read: self
                .sandbox_deny_read
                .iter()
                .chain(&self.deny_dirs)
                .map(|p| std::path::absolute(p).unwrap_or_else(|_| p.clone()))
                .collect(),
        })
    }

    /// What the flags ask of the network: --sandbox-network's value, else allow-list when
    /// --network-allow names a host, else off.
    pub fn network_access(&self) -> NetworkAccess {
        NetworkAccess::given_or_implied(self.sandbox_network, !self.network_allow.is_empty())
    }

    /// The sandbox of local commands in `roots` (the workspace first), made once for
    /// these options; `None` in danger-full-access. Fails when the kernel cannot enforce
    /// the mode, saying how to choose another.
    pub fn sandbox_for(&self, roots: &[PathBuf]) -> Result<Option<Arc<Sandbox>>, String> {
        if let Some(made) = self.made_sandbox.get() {
            return Ok(made.clone());
        }
        let made = Sandbox::new(&self.sandbox_config()?, roots)
            .map_err(|e| e.to_string())?
            .map(Arc::new);
        Ok(self.made_sandbox.get_or_init(|| made).clone())
    }

    /// How commands are confined, for headers: the mode and network, or why none.
    pub fn sandbox_summary(&self) -> String {
        if self.env.as_deref().is_some_and(|e| e.starts_with("ssh://")) {
            return match self.network_access() {
                NetworkAccess::AllowList => {
                    "none over SSH (the remote user's rights; the network allow-list does not apply)"
                        .to_string()
                }
                _ => "none over SSH (the remote user's rights)".to_string(),
            };
        }
        match self.made_sandbox.get() {
            Some(Some(sandbox)) => sandbox.describe(),
            Some(None) if self.network_access() == NetworkAccess::AllowList => format!(
                "{} (no sandbox, so the network allow-list does not apply)",
                SandboxMode::DangerFullAccess
            ),
            Some(None) => SandboxMode::DangerFullAccess.name().to_string(),
            None => format!("{} (not started)", self.sandbox.unwrap_or_default()),
        }
    }

    /// The variable policy: `--env-policy`, else inherit-all.
    pub fn env_policy(&self) -> EnvPolicy {
        self.env_policy.map(|p| p.0).unwrap_or_default()
    }

    fn local(&self, allow_dirs: &[PathBuf]) -> Result<LocalEnvironment, String> {
        let dir = match &self.cwd {
            Some(dir) => dir.clone(),
            None => std::env::current_dir().map_err(|e| format!("cannot read the current directory: {e}"))?,
        };
        let mut env = LocalEnvironment::new(&dir)
            .and_then(|env| env.with_extra_roots(allow_dirs))
            .map(|env| env.with_env_policy(self.env_policy()))
            .map_err(|e| format!("cannot use {} as the working directory: {e}", dir.display()))?;
        // Saved outputs go where sandboxed commands cannot read them: agent-host's state
        // folder, which the sandbox hides.
        if let Some(state) = crate::persist::default_state_dir() {
            env = env.with_scratch_in(&state.join("outputs"));
        }
        let sandbox = self.sandbox_for(&env.root_paths())?;
        Ok(env.with_sandbox(sandbox))
    }
}
