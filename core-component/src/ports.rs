//! The core's view of the outside world. Each trait mirrors one imported WIT interface, so
//! the loop runs the same natively (with in-memory fakes in tests) and inside the component
//! (over the imports, see `wasm`).

use std::fmt;

/// Why a file operation failed; mirrors `types.fs-error`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FsError {
    #[error("{0}")]
    NotFound(String),
    #[error("{0}")]
    PermissionDenied(String),
    #[error("{0}")]
    IsDirectory(String),
    #[error("{0}")]
    NotADirectory(String),
    #[error("{0}")]
    Binary(String),
    #[error("{0}")]
    TooLarge(String),
    #[error("{0}")]
    AlreadyExists(String),
    #[error("{0}")]
    Denied(String),
    #[error("{0}")]
    InvalidInput(String),
    #[error("{0}")]
    Other(String),
}

/// What a path is (`types.entry-kind`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EntryKind {
    File,
    Directory,
    Symlink,
    Other,
}

/// Metadata of a path (`types.file-stat`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileStat {
    pub kind: EntryKind,
    pub size: u64,
    pub modified_ms: u64,
}

/// One entry of a directory listing (`types.dir-entry`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DirEntry {
    /// Relative to the listed directory, `/`-separated.
    pub path: String,
    pub kind: EntryKind,
    pub size: u64,
    /// 1 for direct children.
    pub depth: u32,
}

/// What a grep returns per file (`types.grep-output-mode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GrepOutputMode {
    Content,
    FilesWithMatches,
    Count,
}

/// A content search (`types.grep-options`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GrepOptions {
    pub pattern: String,
    pub path: Option<String>,
    pub glob_filter: Option<String>,
    pub case_insensitive: bool,
    pub fixed_strings: bool,
    pub max_results: u32,
    pub output_mode: GrepOutputMode,
}

/// One grep hit (`types.grep-match`); in count mode `line_number` is the count.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GrepMatch {
    pub path: String,
    pub line_number: u32,
    pub line: String,
}

/// A byte range of a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ByteRange {
    pub offset: u64,
    pub length: u64,
}

/// Which stream a process chunk came from.
pub use agent_protocol::event::OutputStream;

/// A piece of process output as it arrived.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutputChunk {
    pub stream: OutputStream,
    pub data: Vec<u8>,
}

/// How to start a command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SpawnRequest {
    pub command: String,
    pub working_dir: Option<String>,
    pub timeout_ms: u64,
    pub env: Vec<(String, String)>,
}

/// The outcome of a finished process.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ExecResult {
    pub stdout: String,
    pub stderr: String,
    pub exit_code: i32,
    pub timed_out: bool,
    pub duration_ms: u64,
}

/// Why a process could not be started.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SpawnError {
    #[error("process execution is not available here: {0}")]
    Unsupported(String),
    #[error("command denied: {0}")]
    Denied(String),
    #[error("invalid working directory: {0}")]
    InvalidWorkingDir(String),
    #[error("could not start the command: {0}")]
    Failed(String),
}

/// A running command.
pub trait Process {
    fn id(&self) -> u32;
    /// Blocks for the next chunk; `None` once both streams are closed.
    fn read_output(&mut self) -> Option<OutputChunk>;
    /// Blocks until exit or timeout.
    fn wait(&mut self) -> ExecResult;
    fn kill(&mut self);
}

/// Files and processes (`execution-environment`).
pub trait Environment {
    fn read_file(&self, path: &str, range: Option<ByteRange>) -> Result<Vec<u8>, FsError>;
    /// Creates missing parent directories.
    fn write_file(&self, path: &str, contents: &[u8]) -> Result<(), FsError>;
    /// Deletes a file; a directory is an error.
    fn delete_file(&self, path: &str) -> Result<(), FsError>;
    fn file_exists(&self, path: &str) -> bool;
    fn stat(&self, path: &str) -> Result<FileStat, FsError>;
    /// Sorted by path, down to `depth` levels, ignored entries left out.
    fn list_directory(&self, path: &str, depth: u32) -> Result<Vec<DirEntry>, FsError>;
    fn grep(&self, options: &GrepOptions) -> Result<Vec<GrepMatch>, FsError>;
    /// Newest first, relative to the working directory.
    fn glob(&self, pattern: &str, path: Option<&str>) -> Result<Vec<String>, FsError>;
    fn working_directory(&self) -> String;
    fn platform(&self) -> String;
    fn os_version(&self) -> String;
    fn spawn(&self, request: SpawnRequest) -> Result<Box<dyn Process>, SpawnError>;
}

/// An HTTP request to a host-configured endpoint.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HttpRequest {
    pub endpoint: String,
    pub method: String,
    pub path: String,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
    pub timeout_ms: Option<u64>,
}

/// Why a request failed below HTTP.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TransportError {
    #[error("unknown endpoint: {0}")]
    UnknownEndpoint(String),
    #[error("endpoint not configured: {0}")]
    NotConfigured(String),
    #[error("connection failed: {0}")]
    Connect(String),
    #[error("timed out: {0}")]
    Timeout(String),
    #[error("connection broken: {0}")]
    Io(String),
    #[error("cancelled")]
    Cancelled,
}

/// A response whose body streams in.
pub trait HttpResponse {
    fn status(&self) -> u16;
    fn headers(&self) -> Vec<(String, String)>;
    fn next_chunk(&mut self) -> Result<Option<Vec<u8>>, TransportError>;
}

/// HTTP to LLM endpoints (`llm-transport`).
pub trait Transport {
    fn send(&self, request: HttpRequest) -> Result<Box<dyn HttpResponse>, TransportError>;
}

/// How the host wants a session interrupted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Interruption {
    CancelInput,
    AbortSession,
}

/// Severity of a log line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LogLevel {
    Trace,
    Debug,
    Info,
    Warn,
    Error,
}

/// A tool call awaiting the host's decision.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApprovalRequest {
    pub session_id: String,
    pub call_id: String,
    pub tool_name: String,
    pub arguments_json: String,
    pub summary: String,
    pub category: agent_protocol::ToolCategory,
}

/// What a parent session asks of a new subagent (see `session-host` in the WIT).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SubagentRequest {
    pub parent_session_id: String,
    pub task: String,
    /// Subdirectory the child is scoped to, relative to the parent's working directory.
    pub working_dir: Option<String>,
    /// None: the parent's model.
    pub model: Option<String>,
    /// 0 = unlimited.
    pub max_turns: u32,
    /// The child's depth (the parent's + 1).
    pub depth: u32,
}

/// What a subagent produced for its latest input.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SubagentResult {
    pub output: String,
    pub success: bool,
    pub turns_used: u32,
}

/// The host's decision on a tool call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Approval {
    Allow,
    Deny(String),
}

/// Events out, control in (`session-host`), plus the clock and randomness the core needs.
pub trait SessionHost {
    fn emit(&self, event: crate::events::Event);
    /// The history grew (or, for a tool result, is about to); hosts that persist sessions
    /// journal the entry. Hosts that do not can ignore it.
    fn record_history(&self, _session_id: &str, _entry: &crate::history::HistoryEntry) {}
    fn take_steering(&self, session_id: &str) -> Vec<String>;
    fn take_follow_ups(&self, session_id: &str) -> Vec<String>;
    fn abort_requested(&self, session_id: &str) -> Option<Interruption>;
    /// Returns true if an interruption cut the sleep short.
    fn sleep(&self, session_id: &str, ms: u64) -> bool;
    fn log(&self, level: LogLevel, message: &str);
    fn approve(&self, request: &ApprovalRequest) -> Approval;
    /// Milliseconds since the Unix epoch (`wasi:clocks/wall-clock`).
    fn now_ms(&self) -> u64;
    /// Random bytes (`wasi:random/random`).
    fn random_bytes(&self, len: usize) -> Vec<u8>;
    /// Starts a child session (its own instance, running concurrently); returns its id.
    fn spawn_subagent(&self, request: &SubagentRequest) -> Result<String, String>;
    /// Steers a running child, or starts a new input for a finished one.
    fn subagent_send(&self, agent_id: &str, message: &str) -> Result<(), String>;
    /// Blocks until the child has finished its current input.
    fn subagent_wait(&self, agent_id: &str) -> Result<SubagentResult, String>;
    /// Aborts and removes a child.
    fn subagent_close(&self, agent_id: &str) -> Result<(), String>;
}

/// Tools implemented by the host (`host-tools`).
pub trait HostTools {
    fn call(&self, session_id: &str, name: &str, arguments_json: &str) -> Result<String, String>;
}

/// All the ports a session uses.
#[derive(Clone)]
pub struct Ports {
    pub env: std::rc::Rc<dyn Environment>,
    pub transport: std::rc::Rc<dyn Transport>,
    pub host: std::rc::Rc<dyn SessionHost>,
    pub host_tools: std::rc::Rc<dyn HostTools>,
}

impl fmt::Debug for Ports {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Ports").finish_non_exhaustive()
    }
}
