//! One MCP server over stdio: started with its own variables and its standard error in a log
//! file (never the terminal), a trusted project's in the session's command sandbox, its
//! tools listed within the start-up timeout, each call within the tool timeout. A server
//! that stops is started again once and the model told so; a second stop leaves it stopped,
//! and its tools answer with that.

use super::notices::NotingListChanges;
use super::result::output_of;
use super::spec::McpServerSpec;
use super::{sandboxed, transport};
use crate::host_tools::ToolOutput;
use crate::sandbox::Sandbox;
use rmcp::model::{
    CallToolRequestParams, ClientCapabilities, ClientConfig, Implementation, JsonObject, Tool,
};
use rmcp::service::RunningService;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::{ClientHandler, RoleClient, ServiceError, ServiceExt};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::PoisonError;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};
use tokio::sync::Mutex;

/// The client's side of the session. A changed tool list is noted by the transport
/// ([`NotingListChanges`]), in order with the server's other messages, and read again before
/// the server's next call or a session's next request.
#[derive(Clone)]
struct Handler;

impl ClientHandler for Handler {
    fn get_info(&self) -> ClientConfig {
        ClientConfig::new(
            ClientCapabilities::default(),
            Implementation::new("agent-host", env!("CARGO_PKG_VERSION")),
        )
    }
}

type Service = RunningService<RoleClient, Handler>;

struct Connection {
    /// `None` once it stopped a second time.
    service: Option<Service>,
    tools: Vec<Tool>,
    restarted: bool,
}

pub struct McpServer {
    name: String,
    spec: McpServerSpec,
    cwd: PathBuf,
    log: Option<PathBuf>,
    /// The sandbox a trusted project's stdio server runs in (`None`: with the user's
    /// rights, as the session's commands in `danger-full-access`).
    project_sandbox: Option<Arc<Sandbox>>,
    tools_changed: Arc<AtomicBool>,
    /// Grows whenever the tool list read from the server changes.
    generation: AtomicU64,
    /// Set when listing its changed tools failed: not tried again before then.
    listing_paused_until: std::sync::Mutex<Option<Instant>>,
    connection: Mutex<Connection>,
}

impl McpServer {
    /// Starts the server and lists its tools, within its start-up timeout; the error says
    /// why it did not start (and where its log is). A trusted project's stdio server (one
    /// without a `base_dir`) runs in `project_sandbox`, the session's command sandbox
    /// (`None`: the session runs commands with the user's rights, and so this); the user's
    /// own runs unsandboxed either way.
    pub async fn start(
        name: &str,
        spec: McpServerSpec,
        workspace: &Path,
        log_dir: Option<&Path>,
        project_sandbox: Option<Arc<Sandbox>>,
    ) -> Result<Arc<Self>, String> {
        let cwd = spec.start_dir(workspace);
        let server = Self {
            name: name.to_string(),
            log: log_dir
                .filter(|_| spec.url.is_none())
                .map(|dir| dir.join(format!("{name}.log"))),
            spec,
            cwd,
            project_sandbox,
            tools_changed: Arc::new(AtomicBool::new(false)),
            generation: AtomicU64::new(1),
            listing_paused_until: std::sync::Mutex::new(None),
            connection: Mutex::new(Connection {
                service: None,
                tools: Vec::new(),
                restarted: false,
            }),
        };
        let (service, tools) = server.connect().await?;
        *server.connection.lock().await = Connection {
            service: Some(service),
            tools,
            restarted: false,
        };
        Ok(Arc::new(server))
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    pub fn spec(&self) -> &McpServerSpec {
        &self.spec
    }

    pub fn log_path(&self) -> Option<&Path> {
        self.log.as_deref()
    }

    /// A number that grows whenever the tools it offers change.
    pub fn generation(&self) -> u64 {
        self.generation.load(Ordering::SeqCst)
    }

    /// Reads its tools again if it announced they changed; cheap when it did not.
    pub async fn refresh_if_announced(&self) {
        if self.tools_changed.load(Ordering::SeqCst) {
            let mut connection = self.connection.lock().await;
            self.refresh_tools(&mut connection).await;
        }
    }

    /// The tools it offers now (read again if it said its list changed).
    pub async fn tools(&self) -> Vec<Tool> {
        let mut connection = self.connection.lock().await;
        self.refresh_tools(&mut connection).await;
        connection.tools.clone()
    }

    /// Calls its tool `tool` with a JSON object of arguments.
    pub async fn call(&self, tool: &str, arguments_json: &str) -> Result<ToolOutput, String> {
        let arguments = parse_arguments(arguments_json)?;
        let peer = {
            let mut connection = self.connection.lock().await;
            if connection.service.as_ref().is_none_or(stopped) {
                // It stopped between calls: the call has not been sent, so it runs on the
                // restarted server.
                self.restart(&mut connection, "stopped").await?;
            }
            self.refresh_tools(&mut connection).await;
            if !connection.tools.iter().any(|t| t.name == tool) {
                // Its announcement may not have been handled yet: ask the server itself.
                self.tools_changed.store(true, Ordering::SeqCst);
                self.refresh_tools(&mut connection).await;
            }
            if !connection.tools.iter().any(|t| t.name == tool) {
                return Err(format!(
                    "the MCP server {} no longer offers the tool {tool:?} (its tool list changed)",
                    self.name
                ));
            }
            match &connection.service {
                Some(service) => service.peer().clone(),
                None => return Err(self.stopped_for_good()),
            }
        };
        let mut params = CallToolRequestParams::new(tool.to_string());
        params.arguments = arguments;
        let timeout = self.spec.tool_timeout();
        match tokio::time::timeout(timeout, peer.call_tool(params)).await {
            Err(_) => Err(format!(
                "the MCP server {} did not finish {tool} within {} s (its tool_timeout_sec)",
                self.name,
                timeout.as_secs_f64()
            )),
            // A credential the server echoes (a variable it was given, a header) is not
            // handed on, as with command output.
            Ok(Ok(result)) => output_of(result)
                .map(|mut output| {
                    output.text = crate::secrets::redact_known(&output.text);
                    output
                })
                .map_err(|text| crate::secrets::redact_known(&text)),
            Ok(Err(ServiceError::TransportClosed | ServiceError::TransportSend(_))) => {
                let mut connection = self.connection.lock().await;
                self.restart(&mut connection, &format!("stopped while running {tool}"))
                    .await?;
                Err(format!(
                    "the MCP server {} stopped while running {tool}, and was started again: the call \
                     may or may not have taken effect; check, then call again if needed",
                    self.name
                ))
            }
            Ok(Err(error)) => Err(crate::secrets::redact_known(&format!(
                "the MCP server {} answered {tool} with an error: {error}",
                self.name
            ))),
        }
    }

    /// Stops the server (closing its input first, as the MCP spec's stdio shutdown says).
    pub async fn stop(&self) {
        let service = self.connection.lock().await.service.take();
        if let Some(service) = service {
            let _ = service.cancel().await;
        }
    }

    async fn refresh_tools(&self, connection: &mut Connection) {
        let paused = self
            .listing_paused_until
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .is_some_and(|until| Instant::now() < until);
        if paused || !self.tools_changed.swap(false, Ordering::SeqCst) {
            return;
        }
        // Announced again unless the listing completes: one that fails, times out or is
        // dropped (its session interrupted) is tried again later, never lost.
        let mut pending = StillChanged(Some(&self.tools_changed));
        let Some(service) = &connection.service else {
            return;
        };
        let failure =
            match tokio::time::timeout(self.spec.startup_timeout(), list_tools(service.peer())).await {
                Ok(Ok(tools)) => {
                    pending.0 = None;
                    self.replace_tools(connection, tools);
                    return;
                }
                Ok(Err(error)) => format!("failed: {error}"),
                Err(_) => "timed out".to_string(),
            };
        // A server that does not list its tools would otherwise hold up every request of
        // every session for its start-up timeout.
        *self
            .listing_paused_until
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = Some(Instant::now() + LISTING_RETRY_PAUSE);
        tracing::warn!(
            "MCP server {}: listing its changed tools {failure}; trying again in {} s",
            self.name,
            LISTING_RETRY_PAUSE.as_secs()
        );
    }

    /// Starts the server again after it stopped (`why`), once in its life; the second time
    /// it stays stopped. Reported either way.
    async fn restart(&self, connection: &mut Connection, why: &str) -> Result<(), String> {
        // The old process is ended and its standard error logged before another starts.
        if let Some(mut service) = connection.service.take() {
            let _ = service.close_with_timeout(CLOSE_WAIT).await;
        }
        if connection.restarted {
            tracing::warn!("MCP server {} {why} again; not started again", self.name);
            // Its tools are no longer offered to running sessions.
            self.replace_tools(connection, Vec::new());
            return Err(self.stopped_for_good());
        }
        connection.restarted = true;
        tracing::warn!(
            "MCP server {} {why}; starting it again (once){}",
            self.name,
            self.log_note()
        );
        let (service, tools) = self.connect().await?;
        connection.service = Some(service);
        self.replace_tools(connection, tools);
        Ok(())
    }

    fn replace_tools(&self, connection: &mut Connection, tools: Vec<Tool>) {
        if connection.tools != tools {
            connection.tools = tools;
            self.generation.fetch_add(1, Ordering::SeqCst);
        }
    }

    fn stopped_for_good(&self) -> String {
        format!(
            "the MCP server {} stopped again after it was restarted once, and was not started again; \
             its tools are unavailable for the rest of this run{}",
            self.name,
            self.log_note()
        )
    }

    fn log_note(&self) -> String {
        self.log
            .as_ref()
            .map_or_else(String::new, |log| format!(" (its log: {})", log.display()))
    }

    /// Spawns the process, initialises the session and lists the tools, within the start-up
    /// timeout (a process that does not make it is killed).
    async fn connect(&self) -> Result<(Service, Vec<Tool>), String> {
        let failed = |why: String| {
            format!(
                "the MCP server {} did not start: {why}{}",
                self.name,
                self.log_note()
            )
        };
        let handler = Handler;
        let timeout = self.spec.startup_timeout();
        let started = tokio::time::timeout(timeout, async {
            let service = match &self.spec.url {
                Some(url) => {
                    let config = transport::http(&self.spec, url)?;
                    handler
                        .serve(NotingListChanges::new(
                            StreamableHttpClientTransport::from_config(config),
                            self.tools_changed.clone(),
                        ))
                        .await
                }
                None => {
                    let log = self.open_log().map_err(|e| e.to_string())?;
                    match self.sandbox() {
                        Some(sandbox) => {
                            handler
                                .serve(NotingListChanges::new(
                                    sandboxed::start(&self.spec, &self.cwd, sandbox, log)?,
                                    self.tools_changed.clone(),
                                ))
                                .await
                        }
                        None => {
                            let stderr = log.map_or_else(std::process::Stdio::null, Into::into);
                            handler
                                .serve(NotingListChanges::new(
                                    transport::stdio(&self.spec, &self.cwd, stderr)?,
                                    self.tools_changed.clone(),
                                ))
                                .await
                        }
                    }
                }
            }
            .map_err(|e| e.to_string())?;
            // Cleared before listing: a change announced from now on is read again later.
            self.tools_changed.store(false, Ordering::SeqCst);
            let tools = list_tools(service.peer()).await.map_err(|e| e.to_string())?;
            Ok::<_, String>((service, tools))
        })
        .await
        .map_err(|_| {
            failed(format!(
                "it did not answer initialize and tools/list within {} s (startup_timeout_sec)",
                timeout.as_secs_f64()
            ))
        })?
        .map_err(failed)?;
        Ok(started)
    }

    /// The sandbox its process runs in: a trusted project's server's, none for the user's
    /// own (from the user's file, started in its folder).
    fn sandbox(&self) -> Option<&Sandbox> {
        match self.spec.base_dir {
            Some(_) => None,
            None => self.project_sandbox.as_deref(),
        }
    }

    /// The log file, appended to, with a line saying this start began; `None` when there
    /// is no state folder.
    fn open_log(&self) -> std::io::Result<Option<std::fs::File>> {
        let Some(path) = &self.log else {
            return Ok(None);
        };
        // Private: a server's messages can hold what it was given (tokens, paths). A log
        // past its cap starts over, so a chatty server cannot fill the disk.
        if let Some(dir) = path.parent() {
            crate::private_files::create_private_dir(dir)?;
        }
        if std::fs::metadata(path).is_ok_and(|m| m.len() > MAX_LOG_BYTES) {
            std::fs::remove_file(path)?;
        }
        let mut file = {
            use std::os::unix::fs::OpenOptionsExt;
            crate::private_files::private_options()
                .create(true)
                .append(true)
                .custom_flags(libc::O_NOFOLLOW)
                .open(path)?
        };
        writeln!(
            file,
            "--- {} started: {} {}",
            chrono::Utc::now().to_rfc3339(),
            self.spec.command.as_deref().unwrap_or_default(),
            self.spec.args.join(" ")
        )?;
        Ok(Some(file))
    }
}

/// Sets its flag again when dropped still holding it.
struct StillChanged<'a>(Option<&'a AtomicBool>);

impl Drop for StillChanged<'_> {
    fn drop(&mut self) {
        if let Some(flag) = self.0 {
            flag.store(true, Ordering::SeqCst);
        }
    }
}

/// How long a stopped server's connection may take to close before it is started again
/// (rmcp gives a child it closes 3 s to leave before a SIGTERM, and another 3 s).
const CLOSE_WAIT: Duration = Duration::from_secs(10);

/// How long a server whose changed tools could not be listed is left before trying again.
const LISTING_RETRY_PAUSE: Duration = Duration::from_secs(30);

/// Whether a connection's server is gone (its process ended or the session was closed).
fn stopped(service: &Service) -> bool {
    service.is_closed() || service.peer().is_transport_closed()
}

/// A call's arguments: a JSON object, or nothing.
fn parse_arguments(arguments_json: &str) -> Result<Option<JsonObject>, String> {
    if arguments_json.trim().is_empty() {
        return Ok(None);
    }
    match serde_json::from_str(arguments_json) {
        Ok(serde_json::Value::Object(object)) => Ok(Some(object)),
        Ok(serde_json::Value::Null) => Ok(None),
        Ok(other) => Err(format!("the arguments must be a JSON object, not {other}")),
        Err(error) => Err(format!("the arguments are not JSON: {error}")),
    }
}

/// A server's log is started over at its next start once it passed this.
pub(super) const MAX_LOG_BYTES: u64 = 16 * 1024 * 1024;

/// At most this many pages of `tools/list`: a server cannot keep the listing going forever.
const MAX_TOOL_PAGES: usize = 20;

/// The server's tools, page by page up to [`MAX_TOOL_PAGES`].
async fn list_tools(peer: &rmcp::Peer<RoleClient>) -> Result<Vec<Tool>, ServiceError> {
    let mut tools = Vec::new();
    let mut cursor = None;
    for _ in 0..MAX_TOOL_PAGES {
        let params = rmcp::model::PaginatedRequestParams::default().with_cursor(cursor);
        let page = peer.list_tools(Some(params)).await?;
        tools.extend(page.tools);
        match page.next_cursor {
            Some(next) => cursor = Some(next),
            None => break,
        }
    }
    Ok(tools)
}
