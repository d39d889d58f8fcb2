//! Ports that do as little as possible, for benchmarks (natively and in wasm): files in a
//! map, no LLM, no host tools, and a host that allows everything and only counts events.

use agent_core::events::Event;
use agent_core::ports::{
    Approval, ApprovalRequest, ByteRange, DirEntry, EntryKind, Environment, FileStat, FsError, GrepMatch,
    GrepOptions, HostTools, HttpRequest, HttpResponse, Interruption, LogLevel, Ports, Process, SessionHost,
    SpawnError, SpawnRequest, SubagentRequest, SubagentResult, Transport, TransportError,
};
use std::cell::{Cell, RefCell};
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

/// No LLM endpoint: a request fails at once.
pub struct NoLlm;

impl Transport for NoLlm {
    fn send(&self, request: HttpRequest) -> Result<Box<dyn HttpResponse>, TransportError> {
        Err(TransportError::NotConfigured(request.endpoint))
    }
}

/// No host tools.
pub struct NoHostTools;

impl HostTools for NoHostTools {
    fn call(&self, _: &str, name: &str, _: &str) -> Result<String, String> {
        Err(format!("no host tool {name} here"))
    }
}

/// A host that allows every call, starts no subagent and counts the events it is given.
/// Its clock reads 0 and its sleeps return at once, unless it keeps wall time (a loop
/// benchmark compares against the component, whose host does).
#[derive(Default)]
pub struct QuietHost {
    pub events: Cell<usize>,
    wall_time: bool,
    random: Cell<u64>,
}

impl QuietHost {
    /// A host on the real clock, whose sleeps really wait.
    pub fn with_wall_time() -> Self {
        Self {
            wall_time: true,
            ..Self::default()
        }
    }
}

const NO_SUBAGENTS: &str = "no subagents here";

impl SessionHost for QuietHost {
    fn emit(&self, event: Event) {
        std::hint::black_box(&event);
        self.events.set(self.events.get() + 1);
    }
    fn take_steering(&self, _: &str) -> Vec<String> {
        Vec::new()
    }
    fn take_follow_ups(&self, _: &str) -> Vec<String> {
        Vec::new()
    }
    fn abort_requested(&self, _: &str) -> Option<Interruption> {
        None
    }
    fn sleep(&self, _: &str, ms: u64) -> bool {
        if self.wall_time {
            std::thread::sleep(std::time::Duration::from_millis(ms));
        }
        false
    }
    fn log(&self, _: LogLevel, _: &str) {}
    fn approve(&self, _: &ApprovalRequest) -> Approval {
        Approval::Allow
    }
    fn now_ms(&self) -> u64 {
        if !self.wall_time {
            return 0;
        }
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_millis() as u64)
            .unwrap_or(0)
    }
    fn random_bytes(&self, len: usize) -> Vec<u8> {
        // Ids only need to differ; a counter through splitmix64 is enough.
        (0..len)
            .map(|_| {
                let mut z = self.random.get().wrapping_add(0x9E37_79B9_7F4A_7C15);
                self.random.set(z);
                z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
                z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
                (z ^ (z >> 31)) as u8
            })
            .collect()
    }
    fn spawn_subagent(&self, _: &SubagentRequest) -> Result<String, String> {
        Err(NO_SUBAGENTS.to_string())
    }
    fn subagent_send(&self, _: &str, _: &str) -> Result<(), String> {
        Err(NO_SUBAGENTS.to_string())
    }
    fn subagent_wait(&self, _: &str) -> Result<SubagentResult, String> {
        Err(NO_SUBAGENTS.to_string())
    }
    fn subagent_close(&self, _: &str) -> Result<(), String> {
        Err(NO_SUBAGENTS.to_string())
    }
}

/// Ports over `env` and nothing else.
pub fn ports(env: Rc<MemoryEnv>) -> Ports {
    Ports {
        env,
        transport: Rc::new(NoLlm),
        host: Rc::new(QuietHost::default()),
        host_tools: Rc::new(NoHostTools),
    }
}
