//! The core linked natively: the same session code over ports that do the same work as the
//! host's imports (files from the real directory through agent-host's local environment,
//! replies from memory), with no component boundary in between.

use super::script::{RunResult, Timeline};
use agent_core::events::Event;
use agent_core::ports::{
    self, Approval, ApprovalRequest, ByteRange, DirEntry, FileStat, FsError, GrepMatch, GrepOptions,
    HttpRequest, HttpResponse, Interruption, LogLevel, Ports, Process, SpawnError, SpawnRequest,
    SubagentRequest, SubagentResult, TransportError,
};
use agent_core::{Session, SessionConfig};
use agent_host::LocalEnvironment;
use std::cell::Cell;
use std::collections::VecDeque;
use std::path::Path;
use std::rc::Rc;
use std::sync::Arc;

pub fn run(dir: &Path, replies: &[Vec<String>], prompt: &str) -> anyhow::Result<RunResult> {
    let timeline = Arc::new(Timeline::default());
    let host = Rc::new(CountingHost::default());
    let ports = Ports {
        env: Rc::new(DiskEnv(LocalEnvironment::new(dir)?)),
        transport: Rc::new(MemoryTransport {
            replies: replies.to_vec(),
            timeline: timeline.clone(),
        }),
        host: host.clone(),
        host_tools: Rc::new(NoHostTools),
    };
    let mut session = Session::new(SessionConfig::new("anthropic", super::MODEL), ports);
    let outcome = session
        .submit(prompt)
        .map_err(|e| anyhow::anyhow!("native session: {e}"))?;
    super::check_history(&session.history_json(), replies.len() - 1, "native")?;
    // The component's side closes its session too (one more event, SESSION_END).
    session.close();
    Ok(RunResult {
        rounds: outcome.rounds,
        final_text: outcome.final_text,
        round_costs_ms: timeline.round_costs_ms(),
        body_sizes: timeline.body_sizes(),
        events: host.events.get(),
    })
}

struct MemoryTransport {
    replies: Vec<Vec<String>>,
    timeline: Arc<Timeline>,
}

impl ports::Transport for MemoryTransport {
    fn send(&self, request: HttpRequest) -> Result<Box<dyn HttpResponse>, TransportError> {
        let index = self.timeline.record(request.body.len());
        let chunks = self
            .replies
            .get(index)
            .ok_or_else(|| TransportError::Connect(format!("no reply scripted for request {}", index + 1)))?;
        Ok(Box::new(MemoryResponse {
            chunks: chunks.iter().map(|c| c.as_bytes().to_vec()).collect(),
        }))
    }
}

struct MemoryResponse {
    chunks: VecDeque<Vec<u8>>,
}

impl HttpResponse for MemoryResponse {
    fn status(&self) -> u16 {
        200
    }
    fn headers(&self) -> Vec<(String, String)> {
        vec![("content-type".to_string(), "text/event-stream".to_string())]
    }
    fn next_chunk(&mut self) -> Result<Option<Vec<u8>>, TransportError> {
        Ok(self.chunks.pop_front())
    }
}

/// Counts events (the component's host forwards them to a channel that is drained).
#[derive(Default)]
struct CountingHost {
    events: Cell<usize>,
    random: Cell<u64>,
}

impl ports::SessionHost for CountingHost {
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
        std::thread::sleep(std::time::Duration::from_millis(ms));
        false
    }
    fn log(&self, _: LogLevel, _: &str) {}
    fn approve(&self, _: &ApprovalRequest) -> Approval {
        Approval::Allow
    }
    fn now_ms(&self) -> u64 {
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
        Err("no subagents in the loop benchmark".to_string())
    }
    fn subagent_send(&self, _: &str, _: &str) -> Result<(), String> {
        Err("no subagents in the loop benchmark".to_string())
    }
    fn subagent_wait(&self, _: &str) -> Result<SubagentResult, String> {
        Err("no subagents in the loop benchmark".to_string())
    }
    fn subagent_close(&self, _: &str) -> Result<(), String> {
        Err("no subagents in the loop benchmark".to_string())
    }
}

struct NoHostTools;

impl ports::HostTools for NoHostTools {
    fn call(&self, _: &str, name: &str, _: &str) -> Result<String, String> {
        Err(format!("no host tool {name} in the loop benchmark"))
    }
}

/// agent-host's local environment (the one the component's imports use) behind the core's
/// port trait; the benchmark's session only reads files.
struct DiskEnv(LocalEnvironment);

impl ports::Environment for DiskEnv {
    fn read_file(&self, path: &str, range: Option<ByteRange>) -> Result<Vec<u8>, FsError> {
        self.0.read_file(path, range.map(|r| (r.offset, r.length)))
    }
    fn write_file(&self, path: &str, contents: &[u8]) -> Result<(), FsError> {
        self.0.write_file(path, contents)
    }
    fn delete_file(&self, path: &str) -> Result<(), FsError> {
        self.0.delete_file(path)
    }
    fn file_exists(&self, path: &str) -> bool {
        self.0.file_exists(path)
    }
    fn stat(&self, path: &str) -> Result<FileStat, FsError> {
        self.0.stat(path)
    }
    fn list_directory(&self, path: &str, depth: u32) -> Result<Vec<DirEntry>, FsError> {
        self.0.list_directory(path, depth)
    }
    fn grep(&self, _: &GrepOptions) -> Result<Vec<GrepMatch>, FsError> {
        Err(FsError::Other(
            "grep is not used by the loop benchmark".to_string(),
        ))
    }
    fn glob(&self, pattern: &str, path: Option<&str>) -> Result<Vec<String>, FsError> {
        self.0.glob(pattern, path)
    }
    fn working_directory(&self) -> String {
        self.0.working_directory()
    }
    fn platform(&self) -> String {
        self.0.platform()
    }
    fn os_version(&self) -> String {
        self.0.os_version()
    }
    fn spawn(&self, _: SpawnRequest) -> Result<Box<dyn Process>, SpawnError> {
        Err(SpawnError::Unsupported(
            "the loop benchmark runs no commands".to_string(),
        ))
    }
}
