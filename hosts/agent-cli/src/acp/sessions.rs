//! The ACP sessions of one connection: each a chat session (`chat::setup` and
//! `chat::agent::Agent`) in the folder the client names, with the approval questions it asks.

use super::AcpArgs;
use super::editor_files::{ClientFiles, EditorFiles, EditorLink};
use super::editor_terminals::{EditorTerminals, TerminalStarted};
use crate::chat::agent::{Agent, Mode};
use crate::chat::approvals::PendingQuestion;
use crate::chat::file_changes::FileChanges;
use crate::chat::setup::FromEditor;
use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema::{
    AvailableCommand, AvailableCommandInput, AvailableCommandsUpdate, CurrentModeUpdate, LoadSessionRequest,
    LoadSessionResponse, McpServer, NewSessionRequest, NewSessionResponse, PromptRequest, SessionId,
    SessionMode, SessionModeState, SessionNotification, SessionUpdate, StopReason, UnstructuredCommandInput,
};
use agent_client_protocol::{self as acp, Client};
use agent_host::approval::ApprovalMode;
use agent_host::embed::SessionHandle;
use agent_host::extensions::CustomCommand;
use agent_host::persist::{PersistError, StoredSession};
use agent_protocol::Turn;
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use tokio::sync::mpsc;

/// How long the sessions get to close when the client has gone.
const CLOSE_PATIENCE: std::time::Duration = std::time::Duration::from_millis(1500);

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
    /// The workspace as the environment resolved it (links followed).
    pub workspace: String,
    /// The folder as the editor named it, which paths sent to it start from.
    pub root: PathBuf,
    /// The custom commands (.agent/commands, the user's): `/NAME arguments` sends one's prompt.
    pub commands: Vec<CustomCommand>,
    /// What to check when the endpoint rejects the key.
    pub credential_hint: Option<String>,
    /// Commands started in the editor's terminals, for their tool calls.
    pub terminals: mpsc::UnboundedReceiver<TerminalStarted>,
    /// Whether commands run in the editor's terminals (the user asked, the client offers).
    pub editor_terminals: bool,
}

/// A session just started: its id, mode and the update offering its commands.
struct Started {
    id: String,
    mode: ApprovalMode,
    commands: SessionNotification,
}

/// The connection's sessions, by id (agent-host's session ids).
pub struct Sessions {
    component: PathBuf,
    args: AcpArgs,
    /// The text-file methods the client offered at `initialize`.
    client_files: Mutex<ClientFiles>,
    open: Mutex<HashMap<String, Arc<tokio::sync::Mutex<AcpSession>>>>,
    /// Each session's controls, reachable while a turn holds the session (to cancel it).
    controls: Mutex<HashMap<String, Control>>,
}

/// A session's handle and whether a turn of it runs (a cancel only stops a running one).
struct Control {
    handle: SessionHandle,
    running: bool,
    /// A mode the client chose while a turn ran: applied when it ends.
    pending_mode: Option<ApprovalMode>,
}

impl Sessions {
    pub fn new(component: PathBuf, args: AcpArgs) -> Self {
        Self {
            component,
            args,
            client_files: Mutex::default(),
            open: Mutex::default(),
            controls: Mutex::default(),
        }
    }

    /// `session/new`: a session in `cwd`, configured as `chat` would be there; with the
    /// update that offers its custom commands, sent once the client has the session's id.
    pub async fn open(
        &self,
        cx: &ConnectionTo<Client>,
        request: NewSessionRequest,
    ) -> Result<(NewSessionResponse, SessionNotification), acp::Error> {
        let started = self.start(cx, request.cwd, &request.mcp_servers, None).await?;
        let response = NewSessionResponse::new(started.id).modes(modes(started.mode));
        Ok((response, started.commands))
    }

    /// `session/load`: a saved session of this machine re-entered in `cwd`, with the updates
    /// that replay its conversation (sent before the answer) and its commands.
    pub async fn load(
        &self,
        cx: &ConnectionTo<Client>,
        request: LoadSessionRequest,
    ) -> Result<(LoadSessionResponse, Vec<SessionNotification>), acp::Error> {
        let id = request.session_id.0.to_string();
        if lock(&self.open).contains_key(&id) {
            return Err(invalid(format!(
                "session {id} is open on this connection already"
            )));
        }
        if self.args.persist.no_persist {
            return Err(invalid(
                "agent-host acp runs with --no-persist: no session is saved, so none can be loaded",
            ));
        }
        let store = crate::sessions::default_store().map_err(internal)?;
        let stored = match store.load(&id) {
            // The store takes a prefix; the editor names a session by its whole id.
            Ok(stored) if stored.id() != id => {
                return Err(
                    agent_client_protocol::v1::schema::Error::session_not_found(request.session_id).into(),
                );
            }
            Ok(stored) if stored.meta.endpoint.is_empty() => {
                return Err(invalid(format!(
                    "session {id} never started: there is nothing to load"
                )));
            }
            Ok(stored) => stored,
            Err(PersistError::NotFound(_)) => {
                return Err(
                    agent_client_protocol::v1::schema::Error::session_not_found(request.session_id).into(),
                );
            }
            Err(error) => return Err(invalid(format!("cannot load session {id}: {error}"))),
        };
        let started = self
            .start(cx, request.cwd, &request.mcp_servers, Some(&stored))
            .await?;
        let session = self.session(&started.id)?;
        let history = session.lock().await.agent.session().history_json().await;
        let turns: Vec<Turn> = history
            .ok()
            .and_then(|json| serde_json::from_str(&json).ok())
            .unwrap_or_default();
        let session_id = SessionId::new(started.id.clone());
        let mut updates: Vec<SessionNotification> = super::replay::updates(&turns)
            .into_iter()
            .map(|update| SessionNotification::new(session_id.clone(), update))
            .collect();
        updates.push(started.commands);
        Ok((LoadSessionResponse::new().modes(modes(started.mode)), updates))
    }

    /// A session in `cwd` (a saved one re-entered when `resume` names it), with the
    /// client's MCP servers and, when the client offers them, its text files.
    async fn start(
        &self,
        cx: &ConnectionTo<Client>,
        cwd: PathBuf,
        mcp_servers: &[McpServer],
        resume: Option<&StoredSession>,
    ) -> Result<Started, acp::Error> {
        if !cwd.is_absolute() {
            return Err(invalid(format!(
                "cwd must be an absolute path, not {}",
                cwd.display()
            )));
        }
        let (mcp_servers, left_out) = super::mcp_servers::from_client(mcp_servers);
        for why in left_out {
            eprintln!("agent-host: warning: {}", crate::terminal_text::one_line(&why));
        }
        let offered = *lock(&self.client_files);
        let link = EditorLink::new(cx.clone(), offered, cwd.clone());
        let beneath_link = link.clone();
        let (started, terminals) = mpsc::unbounded_channel();
        let editor = FromEditor {
            beneath: (offered.read || offered.write || offered.terminal).then(|| {
                Box::new(move |base: Arc<dyn agent_host::Environment>| {
                    // Files outermost: its lock must cover commands wherever they run.
                    let commands = Arc::new(EditorTerminals::new(base, beneath_link.clone(), started));
                    Arc::new(EditorFiles::new(commands, beneath_link)) as Arc<dyn agent_host::Environment>
                }) as _
            }),
            mcp_servers,
        };
        let args = self.args.chat_args(cwd.clone());
        let prepared = match crate::chat::setup::prepare(&self.component, &args, editor).await {
            Ok(prepared) => prepared,
            Err((_, message)) => {
                return Err(match crate::chat::setup::missing_credentials(&args) {
                    Some(why) => auth_required(why),
                    None => internal(message),
                });
            }
        };
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
            resume,
            mode,
        )
        .await
        .map_err(|e| internal(crate::sessions::start_failure(e).1))?;
        let id = agent.session_id().to_string();
        link.bind(SessionId::new(id.clone()));
        let current = agent.approval();
        let control = Control {
            handle: agent.control(),
            running: false,
            pending_mode: None,
        };
        lock(&self.controls).insert(id.clone(), control);
        let commands = crate::custom_commands(&args.env, std::path::Path::new(&workspace));
        let menu = commands
            .iter()
            .map(|command| {
                let offered = AvailableCommand::new(command.name.clone(), command.summary());
                match &command.argument_hint {
                    Some(hint) => offered.input(AvailableCommandInput::Unstructured(
                        UnstructuredCommandInput::new(hint.clone()),
                    )),
                    None => offered,
                }
            })
            .collect();
        let announce = SessionNotification::new(
            id.clone(),
            SessionUpdate::AvailableCommandsUpdate(AvailableCommandsUpdate::new(menu)),
        );
        let session = AcpSession {
            agent,
            questions: prepared.questions,
            changes: prepared.changes,
            workspace,
            root: cwd,
            commands,
            credential_hint: prepared.credential_hint,
            terminals,
            editor_terminals: offered.terminal,
        };
        lock(&self.open).insert(id.clone(), Arc::new(tokio::sync::Mutex::new(session)));
        Ok(Started {
            id,
            mode: current,
            commands: announce,
        })
    }

    /// `authenticate`: agent-host takes keys from its environment and configuration files
    /// only, so this checks that one is there (for sessions in the folder agent-host was
    /// started in) and otherwise says where to set it.
    pub fn check_credentials(&self) -> Result<(), acp::Error> {
        let here = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("/"));
        match crate::chat::setup::missing_credentials(&self.args.chat_args(here)) {
            Some(why) => Err(auth_required(why)),
            None => Ok(()),
        }
    }

    /// What the client offered at `initialize`, for the sessions it opens next.
    pub fn set_client_files(&self, mut offered: ClientFiles) {
        // The editor's terminals run commands outside the sandbox: only when the user asked.
        offered.terminal &= self.args.editor_terminals;
        *lock(&self.client_files) = offered;
    }

    fn session(&self, id: &str) -> Result<Arc<tokio::sync::Mutex<AcpSession>>, acp::Error> {
        lock(&self.open)
            .get(id)
            .cloned()
            .ok_or_else(|| invalid(format!("no session {id} on this connection")))
    }

    /// Marks a turn of `id` running, in the order messages arrive: a second prompt while
    /// one runs is refused, and a cancel that came after the last turn had ended is forgotten.
    pub fn begin_turn(&self, id: &str) -> Result<(), acp::Error> {
        let mut controls = lock(&self.controls);
        let Some(control) = controls.get_mut(id) else {
            return Err(invalid(format!("no session {id} on this connection")));
        };
        if control.running {
            return Err(invalid(format!(
                "session {id} is still answering a prompt: cancel it or wait for its end"
            )));
        }
        control.handle.clear_cancel();
        control.running = true;
        Ok(())
    }

    /// `session/prompt`, after [`Sessions::begin_turn`]: one turn, its events sent as
    /// updates as they come.
    pub async fn prompt(
        &self,
        cx: &ConnectionTo<Client>,
        request: PromptRequest,
    ) -> Result<StopReason, acp::Error> {
        let id = request.session_id.0.to_string();
        let session = match self.session(&id) {
            Ok(session) => session,
            Err(error) => {
                self.end_turn(&id);
                return Err(error);
            }
        };
        // Only a mode change between turns can hold it now, for a moment.
        let mut session = session.lock().await;
        let ended = super::turn::run(cx, &request.session_id, &mut session, request.prompt).await;
        // A failed input may have left a new session in the old one's place.
        if let Some(control) = lock(&self.controls).get_mut(&id) {
            control.handle = session.agent.control();
        }
        // Ended while the session is still held: a mode chosen from now on waits for it.
        if let Some(mode) = self.end_turn(&id) {
            match session.agent.set_approval(mode).await {
                Ok(()) => {
                    let update = SessionUpdate::CurrentModeUpdate(CurrentModeUpdate::new(mode.as_str()));
                    let _ =
                        cx.send_notification(SessionNotification::new(request.session_id.clone(), update));
                }
                Err(error) => tracing::warn!("the mode chosen during the turn was not applied: {error}"),
            }
        }
        ended
    }

    /// Marks `id`'s turn ended; the mode chosen while it ran, if any.
    fn end_turn(&self, id: &str) -> Option<ApprovalMode> {
        let mut controls = lock(&self.controls);
        let control = controls.get_mut(id)?;
        control.running = false;
        control.pending_mode.take()
    }

    /// `session/cancel`: stops the running turn (its commands are killed); the turn then
    /// answers `cancelled`. Nothing when no turn runs.
    pub fn cancel(&self, id: &str) {
        if let Some(control) = lock(&self.controls).get(id).filter(|c| c.running) {
            control.handle.cancel();
        }
    }

    /// `session/set_mode`: an approval mode, from the next input on. Answered at once: while
    /// a turn runs, the mode is applied when it ends (the mode changes between inputs) and the
    /// client is told with `current_mode_update`.
    pub async fn set_mode(&self, id: &str, mode: &str) -> Result<(), acp::Error> {
        let mode: ApprovalMode = mode.parse().map_err(invalid)?;
        let session = self.session(id)?;
        if let Some(control) = lock(&self.controls).get_mut(id).filter(|c| c.running) {
            control.pending_mode = Some(mode);
            return Ok(());
        }
        let mut session = session.lock().await;
        session
            .agent
            .set_approval(mode)
            .await
            .map_err(|e| internal(format!("cannot change the mode: {e}")))
    }

    /// Closes every session at once (their commands killed), when the client has gone;
    /// clients kill an agent soon after closing its input, so the wait is bounded and
    /// every command still running is killed past it.
    pub async fn close_all(&self) {
        let sessions: Vec<_> = lock(&self.open).drain().map(|(_, s)| s).collect();
        let closing = sessions.iter().map(|session| async move {
            session.lock().await.agent.shutdown().await;
        });
        let closed = tokio::time::timeout(CLOSE_PATIENCE, futures_util::future::join_all(closing)).await;
        if closed.is_err() {
            tracing::warn!("the sessions did not close within {CLOSE_PATIENCE:?}: their commands are killed");
            agent_host::environments::kill_every_command();
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

/// No key: the client shows its authentication methods, which say where keys are set.
pub fn auth_required(why: impl Into<String>) -> acp::Error {
    acp::Error::auth_required().data(format!(
        "{} (agent-host reads keys from the environment it is started with, or config.toml; \
         set one and restart the agent)",
        why.into()
    ))
}

fn internal(message: impl Into<String>) -> acp::Error {
    acp::Error::internal_error().data(message.into())
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}
