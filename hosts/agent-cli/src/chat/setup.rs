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
use std::path::Path;
use std::sync::Arc;
use tokio::sync::mpsc;

/// A failure before the chat starts: the exit code and the message.
pub type SetupError = (u8, String);

pub struct Prepared {
    pub host: Host,
    pub config: agent_protocol::SessionConfig,
    pub env: Arc<dyn Environment>,
    pub changes: Arc<FileChanges>,
    /// Questions of the approval policy (`None` in read-only mode, where nothing is asked).
    pub questions: Option<mpsc::UnboundedReceiver<PendingQuestion>>,
    /// The approval mode, for the banner.
    pub approval: ApprovalMode,
    /// How commands are confined, for the banner.
    pub sandbox: String,
    /// What to check when the endpoint rejects the credentials.
    pub credential_hint: Option<String>,
}

pub async fn prepare(component: &Path, args: &ChatArgs) -> Result<Prepared, SetupError> {
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
    // Questions are asked in the chat in every mode but read-only (dangerous commands are
    // always asked about); the prompt then answers for them instead of the command guard.
    let approval = settings.approval.value;
    let (prompt, questions) = match approval {
        ApprovalMode::ReadOnly => (None, None),
        _ => {
            let (prompt, questions) = chat_prompt();
            (Some(prompt as Arc<dyn ApprovalPrompt>), Some(questions))
        }
    };
    let allow_dangerous = env_options.allow_dangerous_commands;
    env_options.allow_dangerous_commands |= prompt.is_some();
    let changes = Arc::new(FileChanges::default());
    let observed = changes.clone();
    let policy = settings
        .approval_policy(prompt, allow_dangerous)
        .with_call_observer(Arc::new(move |call| {
            observed.call_started(&call.session_id, &call.call_id)
        }));
    let env = env_options.build().await.map_err(usage)?;
    let env: Arc<dyn Environment> = Arc::new(Recording::new(env, changes.clone()));
    let mut config = settings.session_config(&target);
    let host = crate::host_for(
        component,
        endpoints,
        policy,
        (env.clone(), &env_options),
        &args.plugins,
        &mut config,
    )
    .await?;
    Ok(Prepared {
        host,
        config,
        env,
        changes,
        questions,
        approval,
        sandbox: env_options.sandbox_summary(),
        credential_hint,
    })
}
