//! The data the component's imports exchange with a host, besides events and history:
//! files and processes (`execution-environment`), HTTP to LLM endpoints (`llm-transport`),
//! and the session's requests to its host (`session-host`: approvals, subagents). The core's
//! port traits and every Rust host speak these types; each side converts to and from its
//! WIT bindings once, at its edge.

use serde::{Deserialize, Serialize};

/// Which stream a piece of process output came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum OutputStream {
    Stdout,
    Stderr,
}

/// What a tool does, as hosts need to know it: whether to ask before it runs, and how to
/// show it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ToolCategory {
    /// Reads files (read_file, read_many_files).
    Read,
    /// Searches or lists (grep, glob, list_dir).
    Search,
    /// Changes files (write_file, edit_file, apply_patch).
    Write,
    /// Runs a command (shell).
    Command,
    /// Works through subagents (spawn_agent, send_input, wait, close_agent).
    Agent,
    /// A tool the host offers (plugins, command tools, native tools): the host knows its
    /// category.
    Host,
}

/// Why a file operation failed; mirrors `types.fs-error`. The message says what happened,
/// naming the path.
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
    /// Whether the entry is read-only for the host process.
    pub readonly: bool,
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
    pub category: ToolCategory,
}

/// The host's decision on a tool call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Approval {
    Allow,
    Deny(String),
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
