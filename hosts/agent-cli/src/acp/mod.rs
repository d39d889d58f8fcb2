//! `agent-host acp`: an Agent Client Protocol agent on standard input and output, so an
//! editor (Zed, a JetBrains IDE, Neovim, Emacs) runs agent-host as its agent. Each ACP
//! session is a chat session (the chat's setup and `Agent`): `run`'s configuration, trust,
//! approvals, sandbox, MCP servers, skills and commands for the session's folder; its
//! events become `session/update`s and its approval questions `session/request_permission`.
//! Standard output carries only protocol messages; logs go to standard error.

mod editor_files;
mod editor_terminals;
mod mcp_servers;
mod permission;
mod prompt_images;
mod replay;
mod sessions;
mod turn;
mod updates;

use crate::chat::ChatArgs;
use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema::{
    AgentCapabilities, AuthMethod, AuthMethodAgent, AuthenticateRequest, AuthenticateResponse,
    CancelNotification, Implementation, InitializeRequest, InitializeResponse, LoadSessionRequest,
    LoadSessionResponse, McpCapabilities, NewSessionRequest, NewSessionResponse, PromptCapabilities,
    PromptRequest, PromptResponse, SetSessionModeRequest, SetSessionModeResponse,
};
use agent_client_protocol::{self as acp, Agent, Client, Stdio};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

/// The one authentication method: a key agent-host finds itself (nothing to do in the editor).
const AUTH_METHOD: &str = "environment";

/// `agent-host acp`: the options every session starts from, as for `chat`.
#[derive(clap::Args)]
pub struct AcpArgs {
    #[command(flatten)]
    pub env: agent_host::environments::EnvOptions,
    /// Provider (default: the first built-in one configured, else the only other endpoint).
    #[arg(long, help_heading = "Model")]
    pub provider: Option<String>,
    /// Model name (default: $<PROVIDER>_MODEL, else the profile's default).
    #[arg(short = 'm', long, help_heading = "Model")]
    pub model: Option<String>,
    /// --approval is the sessions' first mode (the editor's mode menu changes it).
    #[command(flatten)]
    pub settings: agent_host::config::SettingsFlags,
    #[command(flatten)]
    pub plugins: agent_host::config::PluginOptions,
    #[command(flatten)]
    pub persist: crate::sessions::PersistOptions,
    /// Run commands in the editor's terminals when it offers them: OUTSIDE agent-host's
    /// sandbox, with the editor's environment (credentials included).
    #[arg(long)]
    pub editor_terminals: bool,
}

impl AcpArgs {
    /// The chat's options for a session in `cwd`.
    fn chat_args(&self, cwd: PathBuf) -> ChatArgs {
        let mut env = self.env.clone();
        env.cwd = Some(cwd);
        ChatArgs {
            env,
            provider: self.provider.clone(),
            model: self.model.clone(),
            settings: self.settings.clone(),
            plugins: self.plugins.clone(),
            persist: self.persist.clone(),
            continue_last: false,
            resume: None,
        }
    }
}

/// Serves ACP until the client closes standard input.
pub async fn serve(component: PathBuf, args: AcpArgs) -> ExitCode {
    // Each session's folder is the one the editor names in session/new, on this machine.
    if args.env.cwd.is_some() {
        return crate::fail(
            crate::exit::USAGE,
            "agent-host acp takes each session's folder from the editor (session/new's cwd): drop --cd"
                .to_string(),
        );
    }
    if args.env.env.as_deref().is_some_and(|env| env != "local") {
        return crate::fail(
            crate::exit::USAGE,
            "agent-host acp runs sessions in the editor's folders on this machine: --env is not taken"
                .to_string(),
        );
    }
    let state = Arc::new(sessions::Sessions::new(component, args));
    match connect(state.clone()).await {
        Ok(()) => {
            state.close_all().await;
            ExitCode::SUCCESS
        }
        Err(error) => {
            state.close_all().await;
            crate::fail(
                crate::exit::AGENT_ERROR,
                format!("the ACP connection failed: {error}"),
            )
        }
    }
}

async fn connect(state: Arc<sessions::Sessions>) -> Result<(), acp::Error> {
    let (for_init, for_auth, for_new, for_load) =
        (state.clone(), state.clone(), state.clone(), state.clone());
    let (for_prompt, for_cancel, for_mode) = (state.clone(), state.clone(), state);
    Agent
        .v1()
        .name("agent-host")
        .on_receive_request(
            async move |request: InitializeRequest,
                        responder: acp::v1::Responder<InitializeResponse>,
                        _cx: ConnectionTo<Client>| {
                let fs = &request.client_capabilities.fs;
                for_init.set_client_files(editor_files::ClientFiles {
                    read: fs.read_text_file,
                    write: fs.write_text_file,
                    terminal: request.client_capabilities.terminal,
                });
                // Version 1 is the one this agent speaks, whatever the client offers.
                responder.respond(
                    InitializeResponse::new(acp::schema::ProtocolVersion::V1)
                        .agent_capabilities(
                            AgentCapabilities::new()
                                .load_session(true)
                                .prompt_capabilities(PromptCapabilities::new().embedded_context(true).image(true))
                                .mcp_capabilities(McpCapabilities::new().http(true)),
                        )
                        .auth_methods(vec![AuthMethod::Agent(
                            AuthMethodAgent::new(AUTH_METHOD, "API key in agent-host's environment").description(
                                "agent-host reads the provider's key from its variable (ANTHROPIC_API_KEY, \
                                 OPENAI_API_KEY, GEMINI_API_KEY, or an endpoint's key_env) or from config.toml: \
                                 set it where the editor starts agent-host (in Zed, the agent server's env) \
                                 and restart the agent",
                            ),
                        )])
                        .agent_info(Implementation::new("agent-host", env!("CARGO_PKG_VERSION"))),
                )
            },
            acp::on_receive_request!(),
        )
        .on_receive_request(
            async move |_request: AuthenticateRequest,
                        responder: acp::v1::Responder<AuthenticateResponse>,
                        _cx: ConnectionTo<Client>| {
                responder.respond_with_result(for_auth.check_credentials().map(|()| AuthenticateResponse::new()))
            },
            acp::on_receive_request!(),
        )
        .on_receive_request(
            async move |request: NewSessionRequest,
                        responder: acp::v1::Responder<NewSessionResponse>,
                        cx: ConnectionTo<Client>| {
                // Opening a session loads configuration and starts servers: off the loop
                // that dispatches messages.
                let state = for_new.clone();
                let connection = cx.clone();
                cx.spawn(async move {
                    match state.open(&connection, request).await {
                        Ok((opened, commands)) => {
                            let _ = responder.respond(opened);
                            let _ = connection.send_notification(commands);
                        }
                        Err(error) => {
                            let _ = responder.respond_with_error(error);
                        }
                    }
                    Ok(())
                })
            },
            acp::on_receive_request!(),
        )
        .on_receive_request(
            async move |request: LoadSessionRequest,
                        responder: acp::v1::Responder<LoadSessionResponse>,
                        cx: ConnectionTo<Client>| {
                let state = for_load.clone();
                let connection = cx.clone();
                cx.spawn(async move {
                    match state.load(&connection, request).await {
                        // The conversation is replayed before the answer, as the protocol asks.
                        Ok((loaded, updates)) => {
                            for update in updates {
                                let _ = connection.send_notification(update);
                            }
                            let _ = responder.respond(loaded);
                        }
                        Err(error) => {
                            let _ = responder.respond_with_error(error);
                        }
                    }
                    Ok(())
                })
            },
            acp::on_receive_request!(),
        )
        .on_receive_request(
            async move |request: PromptRequest,
                        responder: acp::v1::Responder<PromptResponse>,
                        cx: ConnectionTo<Client>| {
                // A turn asks the client for permissions: it must not hold the dispatch loop,
                // which would never deliver the answers. It is marked running here, before
                // any later message is dispatched, so a cancel right behind it finds it.
                let state = for_prompt.clone();
                let connection = cx.clone();
                let turn = state.begin_turn(&request.session_id.0);
                cx.spawn(async move {
                    let result = match turn {
                        Ok(()) => state.prompt(&connection, request).await,
                        Err(error) => Err(error),
                    };
                    let _ = responder.respond_with_result(result.map(PromptResponse::new));
                    Ok(())
                })
            },
            acp::on_receive_request!(),
        )
        .on_receive_notification(
            async move |notification: CancelNotification, _cx: ConnectionTo<Client>| {
                for_cancel.cancel(&notification.session_id.0);
                Ok(())
            },
            acp::on_receive_notification!(),
        )
        .on_receive_request(
            async move |request: SetSessionModeRequest,
                        responder: acp::v1::Responder<SetSessionModeResponse>,
                        cx: ConnectionTo<Client>| {
                let state = for_mode.clone();
                cx.spawn(async move {
                    let set = state.set_mode(&request.session_id.0, &request.mode_id.0).await;
                    let _ = responder.respond_with_result(set.map(|()| SetSessionModeResponse::new()));
                    Ok(())
                })
            },
            acp::on_receive_request!(),
        )
        .connect_to(Stdio::new())
        .await
}
