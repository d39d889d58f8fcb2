//! The ACP sessions of one connection: each a chat session (`chat::setup` and
//! `chat::agent::Agent`) in the folder the client names, with the approval questions it asks.

use super::AcpArgs;
use crate::chat::agent::{Agent, Mode};
use crate::chat::approvals::PendingQuestion;
use crate::chat::file_changes::FileChanges;
use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema::{
    NewSessionRequest, NewSessionResponse, PromptRequest, SessionMode, SessionModeState, StopReason,
};
use agent_client_protocol::{self as acp, Client};
use agent_host::approval::ApprovalMode;
use agent_host::embed::SessionHandle;
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use tokio::sync::mpsc;

/// The modes a client's menu offers: the approval modes.
const MODES: [(ApprovalMode, &str, &str); 3] = [
    (
        ApprovalMode::Ask,
        "Ask",
        "asks before each file change and command",
    ),
    (
        ApprovalMode::Auto,
        "Auto",
        "changes files and runs commands in the sandbox without asking (dangerous commands are asked about)",
    ),
    (
        ApprovalMode::ReadOnly,
        "Read-only",
        "only reads: changes and commands are refused",
    ),
];

/// One ACP session.
pub struct AcpSession {
    pub agent: Agent,
    pub questions: mpsc::UnboundedReceiver<PendingQuestion>,
    pub changes: Arc<FileChanges>,
    pub workspace: String,
}

/// The connection's sessions, by id (agent-host's session ids).
pub struct Sessions {
    component: PathBuf,
    args: AcpArgs,
    open: Mutex<HashMap<String, Arc<tokio::sync::Mutex<AcpSession>>>>,
    /// Each session's controls, reachable while a turn holds the session (to cancel it).
    controls: Mutex<HashMap<String, SessionHandle>>,
}

impl Sessions {
    pub fn new(component: PathBuf, args: AcpArgs) -> Self {
        Self {
            component,
            args,
            open: Mutex::default(),
            controls: Mutex::default(),
        }
    }

    /// `session/new`: a session in `cwd`, configured as `chat` would be there.
    pub async fn open(&self, request: NewSessionRequest) -> Result<NewSessionResponse, acp::Error> {
        if !request.cwd.is_absolute() {
            return Err(invalid(format!(
                "cwd must be an absolute path, not {}",
                request.cwd.display()
            )));
        }
        if !request.mcp_servers.is_empty() {
            tracing::warn!(
                "the client's {} MCP servers are not started: agent-host acp does not take MCP servers from \
                 session/new yet (configure them in config.toml)",
                request.mcp_servers.len()
            );
        }
        let args = self.args.chat_args(request.cwd.clone());
        let prepared = crate::chat::setup::prepare(&self.component, &args)
            .await
            .map_err(|(_, message)| internal(message))?;
        let store = match args.persist.no_persist {
            true => None,
            false => Some(crate::sessions::default_store().map_err(internal)?),
        };
        let workspace = prepared.env.working_directory();
        let mode = Mode {
            approval: prepared.approval,
            read_only: prepared.read_only.clone(),
        };
        let agent = Agent::start(
            prepared.host,
            prepared.env,
            prepared.config,
            store,
            prepared.changes.clone(),
            None,
            mode,
        )
        .await
        .map_err(|e| internal(crate::sessions::start_failure(e).1))?;
        let id = agent.session_id().to_string();
        let current = agent.approval();
        let session = AcpSession {
            agent,
            questions: prepared.questions,
            changes: prepared.changes,
            workspace,
        };
        lock(&self.open).insert(id.clone(), Arc::new(tokio::sync::Mutex::new(session)));
        Ok(NewSessionResponse::new(id).modes(modes(current)))
    }

    fn session(&self, id: &str) -> Result<Arc<tokio::sync::Mutex<AcpSession>>, acp::Error> {
        lock(&self.open)
            .get(id)
            .cloned()
            .ok_or_else(|| invalid(format!("no session {id} on this connection")))
    }

    /// `session/prompt`: one turn, its events sent as updates as they come.
    pub async fn prompt(
        &self,
        cx: &ConnectionTo<Client>,
        request: PromptRequest,
    ) -> Result<StopReason, acp::Error> {
        let id = request.session_id.0.to_string();
        let session = self.session(&id)?;
        let Ok(mut session) = session.try_lock() else {
            return Err(invalid(format!(
                "session {id} is still answering a prompt: cancel it or wait for its end"
            )));
        };
        lock(&self.controls).insert(id.clone(), session.agent.control());
        let ended = super::turn::run(cx, &request.session_id, &mut session, request.prompt).await;
        // A cancel that comes after the turn would stop the next one at its start.
        lock(&self.controls).remove(&id);
        ended
    }

    /// `session/cancel`: stops the running turn (its commands are killed); the turn then
    /// answers `cancelled`. Nothing when no turn runs.
    pub fn cancel(&self, id: &str) {
        if let Some(control) = lock(&self.controls).get(id) {
            control.cancel();
        }
    }

    /// `session/set_mode`: an approval mode, from the next call on.
    pub async fn set_mode(&self, id: &str, mode: &str) -> Result<(), acp::Error> {
        let mode: ApprovalMode = mode.parse().map_err(invalid)?;
        let session = self.session(id)?;
        let mut session = session.lock().await;
        session
            .agent
            .set_approval(mode)
            .await
            .map_err(|e| internal(format!("cannot change the mode: {e}")))
    }

    /// Closes every session (their commands killed), when the client has gone.
    pub async fn close_all(&self) {
        let sessions: Vec<_> = lock(&self.open).drain().map(|(_, s)| s).collect();
        for session in sessions {
            let mut session = session.lock().await;
            session.agent.shutdown().await;
        }
    }
}

/// The modes, `current` first chosen.
fn modes(current: ApprovalMode) -> SessionModeState {
    let available = MODES
        .iter()
        .map(|(mode, name, description)| SessionMode::new(mode.as_str(), *name).description(*description))
        .collect();
    SessionModeState::new(current.as_str(), available)
}

fn invalid(message: impl Into<String>) -> acp::Error {
    acp::Error::invalid_params().data(message.into())
}

fn internal(message: impl Into<String>) -> acp::Error {
    acp::Error::internal_error().data(message.into())
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}
