//! Everything the chat needs before its first prompt, resolved like `run` resolves it (the
//! layered settings: flags over environment over configuration files): the provider and
//! model, the environment (wrapped to record file changes for diffs), the host with the
//! approval policy and the host tools, and the session configuration.

use super::ChatArgs;
use super::approvals::{PendingQuestion, chat_prompt};
use super::file_changes::{FileChanges, Recording};
use crate::exit;
use agent_host::Environment;
use agent_host::approval::{ApprovalMode, ApprovalPrompt};
use agent_host::embed::Host;
use agent_host::environments::policy::ReadOnly;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use tokio::sync::mpsc;

/// A failure before the chat starts: the exit code and the message.
pub type SetupError = (u8, String);

pub struct Prepared {
    pub host: Host,
    pub config: agent_protocol::SessionConfig,
    pub env: Arc<dyn Environment>,
    pub changes: Arc<FileChanges>,
    /// Questions of the approval policy (read-only mode asks none).
    pub questions: mpsc::UnboundedReceiver<PendingQuestion>,
    /// The approval mode at the start.
    pub approval: ApprovalMode,
    /// Whether `env` refuses changes: on while the mode is read-only.
    pub read_only: Arc<AtomicBool>,
    /// How commands are confined, for the banner.
    pub sandbox: String,
    /// The sandbox itself (`None`: danger-full-access, or a remote workspace), for `/sandbox`.
    pub sandbox_rules: Option<Arc<agent_host::sandbox::Sandbox>>,
    /// The MCP servers as they started, for `/mcp`.
    pub mcp: crate::McpServers,
    /// What to check when the endpoint rejects the credentials.
    pub credential_hint: Option<String>,
}

/// Wraps the machine's environment beneath every policy.
pub type BaseWrapper = Box<dyn FnOnce(Arc<dyn Environment>) -> Arc<dyn Environment> + Send>;

/// What an editor adds to a session (`agent-host acp`); nothing for the terminal's chat.
#[derive(Default)]
pub struct FromEditor {
    /// The editor's text files, beneath every policy.
    pub beneath: Option<BaseWrapper>,
    /// The editor's MCP servers, beside the configured ones.
    pub mcp_servers: crate::McpSpecs,
}

/// Why `args` reach no provider for want of a key or an endpoint (`None`: one is
/// configured), read again without the warnings [`prepare`] already gave.
pub fn missing_credentials(args: &ChatArgs) -> Option<String> {
    let overrides = args
        .settings
        .overrides(args.provider.clone(), args.model.clone(), None, &args.env);
    agent_host::config::Settings::for_command(&args.env, args.plugins.config.as_deref(), overrides)
        .ok()?
        .missing_credentials()
}

pub async fn prepare(component: &Path, args: &ChatArgs, editor: FromEditor) -> Result<Prepared, SetupError> {
    let usage = |message: String| (exit::USAGE, message);
    let overrides = args
        .settings
        .overrides(args.provider.clone(), args.model.clone(), None, &args.env);
    let settings =
        crate::load_settings(&args.env, args.plugins.config.as_deref(), overrides).map_err(usage)?;
    let target = settings.target().map_err(usage)?;
    let endpoints = settings.endpoints.clone();
    let credential_hint = endpoints.get(&target.provider).map(|e| {
        format!(
            "the {} endpoint ({}) rejected the request's credentials: check {}",
            target.provider,
            agent_host::secrets::redact::redact_url(&e.base_url),
            e.key_var
        )
    });
    let mut env_options = settings.env_options(args.env.clone());
    // Read-only is the session's mode, which `/approval` may change: the session's own
    // read-only wrapper follows it, where the options' wrapper could never be lifted.
    let approval = match env_options.read_only {
        true => ApprovalMode::ReadOnly,
        false => settings.approval.value,
    };
    env_options.read_only = false;
    // Questions are asked in the chat (dangerous commands in every mode but read-only, where
    // no command runs); the prompt answers for them instead of the command guard.
    let (prompt, questions) = chat_prompt();
    let allow_dangerous = env_options.allow_dangerous_commands;
    env_options.allow_dangerous_commands = true;
    let changes = Arc::new(FileChanges::default());
    let observed = changes.clone();
    let policy = settings
        .approval_policy(Some(prompt as Arc<dyn ApprovalPrompt>), allow_dangerous)
        .with_call_observer(Arc::new(move |call| {
            observed.call_started(&call.session_id, &call.call_id)
        }));
    let policy = match policy.mode() == approval {
        true => policy,
        false => policy.with_mode(approval),
    };
    let env = match editor.beneath {
        Some(beneath) => env_options.build_over(beneath).await,
        None => env_options.build().await,
    }
    .map_err(usage)?;
    let env: Arc<dyn Environment> = Arc::new(Recording::new(env, changes.clone()));
    // What the chat itself runs (`!command`, plugins) follows the mode too.
    let read_only = Arc::new(AtomicBool::new(approval == ApprovalMode::ReadOnly));
    let env: Arc<dyn Environment> = Arc::new(ReadOnly::switchable(env, read_only.clone()));
    let mut config = settings.session_config(&target);
    let (host, mcp) = crate::host_for(
        component,
        endpoints,
        policy,
        (env.clone(), &env_options),
        &args.plugins,
        &mut config,
        editor.mcp_servers,
    )
    .await?;
    Ok(Prepared {
        host,
        config,
        env,
        changes,
        questions,
        approval,
        read_only,
        sandbox: env_options.sandbox_summary(),
        sandbox_rules: env_options.made_sandbox.get().cloned().flatten(),
        mcp,
        credential_hint,
    })
}
