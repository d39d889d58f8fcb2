//! How a host picks and wraps its environment: the `--env`, `--read-only`, `--allow-dir`,
//! `--deny-dir`, `--env-policy` and `--allow-dangerous-commands` flags, usable by embedders
//! as a plain struct.

use crate::environments::dir_flags::FlagDirs;
use crate::environments::env_vars::EnvPolicy;
use crate::environments::environment::Environment;
use crate::environments::local::LocalEnvironment;
use crate::environments::policy::{CommandGuard, Logged, PathPolicy, ReadOnly};
use std::path::PathBuf;
use std::sync::Arc;

/// Where tools run and under which policies.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct EnvOptions {
    /// Working directory of the agent (default: the current directory).
    #[arg(long)]
    pub cwd: Option<PathBuf>,
    /// `local` (default) or `ssh://user@host[:port]/path`.
    #[arg(long = "env", value_name = "ENV")]
    pub env: Option<String>,
    /// Private key for `--env ssh://...` (default: ~/.ssh/id_ed25519, id_ecdsa, id_rsa).
    #[arg(long)]
    pub ssh_key: Option<PathBuf>,
    /// known_hosts file for `--env ssh://...` (default: ~/.ssh/known_hosts).
    #[arg(long)]
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
    /// from --cwd (with --env ssh://, from the remote working directory).
    #[arg(long = "deny-dir", value_name = "DIR")]
    pub deny_dirs: Vec<PathBuf>,
    /// Host variables commands see: inherit-all (minus credentials; the default), core or
    /// none.
    #[arg(long, value_name = "POLICY")]
    pub env_policy: Option<EnvPolicyArg>,
    /// Run commands the guard would refuse (rm -rf /, mkfs, dd to a disk, fork bombs).
    #[arg(long)]
    pub allow_dangerous_commands: bool,
    /// A credential variable commands may see after all (repeatable): every policy drops
    /// variables named or shaped like credentials and the endpoints' key variables.
    #[arg(long = "env-allow", value_name = "NAME")]
    pub env_allow: Vec<String>,
    /// Why nothing may change (set by the host, e.g. while replaying a recording someone
    /// else made): writes, shell commands, command tools and plugins' commands are refused
    /// with this reason.
    #[arg(skip)]
    pub changes_refused: Option<String>,
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
        let mut env = base;
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

    /// The variable policy: `--env-policy`, else inherit-all.
    pub fn env_policy(&self) -> EnvPolicy {
        self.env_policy.map(|p| p.0).unwrap_or_default()
    }

    fn local(&self, allow_dirs: &[PathBuf]) -> Result<LocalEnvironment, String> {
        let dir = match &self.cwd {
            Some(dir) => dir.clone(),
            None => std::env::current_dir().map_err(|e| format!("cannot read the current directory: {e}"))?,
        };
        LocalEnvironment::new(&dir)
            .and_then(|env| env.with_extra_roots(allow_dirs))
            .map(|env| env.with_env_policy(self.env_policy()))
            .map_err(|e| format!("cannot use {} as the working directory: {e}", dir.display()))
    }
}
