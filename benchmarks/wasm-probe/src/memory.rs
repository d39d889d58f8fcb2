//! The smallest ports `agent_core::run_tool` accepts: files in a map, and nothing else.
//! (`agent_core::fakes` would do natively but is not compiled for wasm32.)

use agent_core::events::Event;
use agent_core::ports::{
    Approval, ApprovalRequest, ByteRange, DirEntry, EntryKind, Environment, FileStat, FsError, GrepMatch,
    GrepOptions, HostTools, HttpRequest, HttpResponse, Interruption, LogLevel, Ports, Process, SessionHost,
    SpawnError, SpawnRequest, SubagentRequest, SubagentResult, Transport, TransportError,
};
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::rc::Rc;

/// Files by path, exactly as given (the cases use one relative path).
#[derive(Default)]
pub struct MemoryEnv {
    files: RefCell<BTreeMap<String, Vec<u8>>>,
}

impl MemoryEnv {
    pub fn put(&self, path: &str, contents: Vec<u8>) {
        self.files.borrow_mut().insert(path.to_string(), contents);
    }

    /// Runs `check` on a file's contents without copying them.
    pub fn with_file<T>(&self, path: &str, check: impl FnOnce(Option<&[u8]>) -> T) -> T {
        check(self.files.borrow().get(path).map(Vec::as_slice))
    }
}

fn missing(path: &str) -> FsError {
    FsError::NotFound(format!("{path}: no such file"))
}

fn unsupported(what: &str) -> FsError {
    FsError::Other(format!("{what} is not available in the benchmark probe"))
}

impl Environment for MemoryEnv {
    fn read_file(&self, path: &str, range: Option<ByteRange>) -> Result<Vec<u8>, FsError> {
        let files = self.files.borrow();
        let bytes = files.get(path).ok_or_else(|| missing(path))?;
        Ok(match range {
            None => bytes.clone(),
            Some(range) => {
                let start = usize::try_from(range.offset)
                    .unwrap_or(usize::MAX)
                    .min(bytes.len());
                let length = usize::try_from(range.length).unwrap_or(usize::MAX);
                bytes[start..start.saturating_add(length).min(bytes.len())].to_vec()
            }
        })
    }

    fn write_file(&self, path: &str, contents: &[u8]) -> Result<(), FsError> {
        self.put(path, contents.to_vec());
        Ok(())
    }

    fn delete_file(&self, path: &str) -> Result<(), FsError> {
        self.files
            .borrow_mut()
            .remove(path)
            .map(|_| ())
            .ok_or_else(|| missing(path))
    }

    fn file_exists(&self, path: &str) -> bool {
        self.files.borrow().contains_key(path)
    }

    fn stat(&self, path: &str) -> Result<FileStat, FsError> {
        let files = self.files.borrow();
        let bytes = files.get(path).ok_or_else(|| missing(path))?;
        Ok(FileStat {
            kind: EntryKind::File,
            size: bytes.len() as u64,
            modified_ms: 0,
            readonly: false,
        })
    }

    fn list_directory(&self, _: &str, _: u32) -> Result<Vec<DirEntry>, FsError> {
        Err(unsupported("list_directory"))
    }

    fn grep(&self, _: &GrepOptions) -> Result<Vec<GrepMatch>, FsError> {
        Err(unsupported("grep"))
    }

    fn glob(&self, _: &str, _: Option<&str>) -> Result<Vec<String>, FsError> {
        Err(unsupported("glob"))
    }

    fn working_directory(&self) -> String {
        "/probe".to_string()
    }

    fn platform(&self) -> String {
        "probe".to_string()
    }

    fn os_version(&self) -> String {
        "probe".to_string()
    }

    fn spawn(&self, _: SpawnRequest) -> Result<Box<dyn Process>, SpawnError> {
        Err(SpawnError::Unsupported(
            "the benchmark probe runs no commands".to_string(),
        ))
    }
}

/// No LLM, no host, no host tools: the cases never reach them.
struct Nothing;

impl Transport for Nothing {
    fn send(&self, request: HttpRequest) -> Result<Box<dyn HttpResponse>, TransportError> {
        Err(TransportError::NotConfigured(request.endpoint))
    }
}

impl HostTools for Nothing {
    fn call(&self, _: &str, name: &str, _: &str) -> Result<String, String> {
        Err(format!("no host tool {name} in the benchmark probe"))
    }
}

impl SessionHost for Nothing {
    fn emit(&self, _: Event) {}
    fn take_steering(&self, _: &str) -> Vec<String> {
        Vec::new()
    }
    fn take_follow_ups(&self, _: &str) -> Vec<String> {
        Vec::new()
    }
    fn abort_requested(&self, _: &str) -> Option<Interruption> {
        None
    }
    fn sleep(&self, _: &str, _: u64) -> bool {
        false
    }
    fn log(&self, _: LogLevel, _: &str) {}
    fn approve(&self, _: &ApprovalRequest) -> Approval {
        Approval::Allow
    }
    fn now_ms(&self) -> u64 {
        0
    }
    fn random_bytes(&self, len: usize) -> Vec<u8> {
        vec![0; len]
    }
    fn spawn_subagent(&self, _: &SubagentRequest) -> Result<String, String> {
        Err("no subagents in the benchmark probe".to_string())
    }
    fn subagent_send(&self, _: &str, _: &str) -> Result<(), String> {
        Err("no subagents in the benchmark probe".to_string())
    }
    fn subagent_wait(&self, _: &str) -> Result<SubagentResult, String> {
        Err("no subagents in the benchmark probe".to_string())
    }
    fn subagent_close(&self, _: &str) -> Result<(), String> {
        Err("no subagents in the benchmark probe".to_string())
    }
}

/// Ports over `env` and nothing else.
pub fn ports(env: Rc<MemoryEnv>) -> Ports {
    let nothing = Rc::new(Nothing);
    Ports {
        env,
        transport: nothing.clone(),
        host: nothing.clone(),
        host_tools: nothing,
    }
}
