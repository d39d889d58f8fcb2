//! The core's view of the outside world. Each trait mirrors one imported WIT interface, so
//! the loop runs the same natively (with in-memory fakes in tests) and inside the component
//! (over the imports, see `wasm`).

use std::fmt;

pub use agent_protocol::ports::*;

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
    /// An absolute folder, outside the workspace, where the session may save tool outputs
    /// for the model to read back with read_file; `None` when the environment has none.
    fn scratch_directory(&self) -> Option<String> {
        None
    }
    fn spawn(&self, request: SpawnRequest) -> Result<Box<dyn Process>, SpawnError>;
}

/// A response whose body streams in.
pub trait HttpResponse {
    fn status(&self) -> u16;
    fn headers(&self) -> Vec<(String, String)>;
    fn next_chunk(&mut self) -> Result<Option<Vec<u8>>, TransportError>;
}

/// HTTP to LLM endpoints (`llm-transport`).
pub trait Transport {
    /// Sends `request`. The caller keeps it, to reuse its body's buffer for the next request
    /// (a body is the whole conversation: a fresh buffer each turn was most of the
    /// component's allocation); a transport may take parts of it while it sends, and puts
    /// the body back.
    fn send(&self, request: &mut HttpRequest) -> Result<Box<dyn HttpResponse>, TransportError>;
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
    /// Adds `amount` to the spending of `session_id`'s tree (the session and its subagents,
    /// which the budgets bound together), takes `released` away (a settled reservation,
    /// never below zero) and returns the total; zero amounts only read it.
    fn spend(
        &self,
        session_id: &str,
        amount: agent_protocol::Spending,
        released: agent_protocol::Spending,
    ) -> agent_protocol::Spending;
}

/// An image a host tool returns, as the host gave it (checked by the core before a model
/// sees it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostImage {
    pub media_type: String,
    pub data: Vec<u8>,
}

/// What a host tool returns.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HostToolOutput {
    pub text: String,
    pub images: Vec<HostImage>,
}

impl From<String> for HostToolOutput {
    fn from(text: String) -> Self {
        Self {
            text,
            images: Vec::new(),
        }
    }
}

/// Tools implemented by the host (`host-tools`).
pub trait HostTools {
    fn call(&self, session_id: &str, name: &str, arguments_json: &str) -> Result<HostToolOutput, String>;

    /// All of the session's host tools when they changed since it last asked; `None` when
    /// they did not (a host whose tools never change keeps this default).
    fn changes(&self, _session_id: &str) -> Option<Vec<crate::llm::ToolDefinition>> {
        None
    }
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
