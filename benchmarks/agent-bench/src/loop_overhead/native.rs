//! The core linked natively: the same session code over ports that do the same work as the
//! host's imports (files from the real directory through agent-host's local environment,
//! replies from memory), with no component boundary in between.

use super::script::{RunResult, Timeline};
use agent_core::Session;
use agent_core::ports::{
    self, ByteRange, DirEntry, FileStat, FsError, GrepMatch, GrepOptions, HttpRequest, HttpResponse, Ports,
    Process, SpawnError, SpawnRequest, TransportError,
};
use agent_host::LocalEnvironment;
use agent_test_support::quiet::{NoHostTools, QuietHost};
use std::collections::VecDeque;
use std::path::Path;
use std::rc::Rc;
use std::sync::Arc;

pub fn run(dir: &Path, replies: &[Vec<String>], prompt: &str) -> anyhow::Result<RunResult> {
    let timeline = Arc::new(Timeline::default());
    // Counting events on the real clock, as the component's host forwards them to a channel.
    let host = Rc::new(QuietHost::with_wall_time());
    let ports = Ports {
        env: Rc::new(DiskEnv(LocalEnvironment::new(dir)?)),
        transport: Rc::new(MemoryTransport {
            replies: replies.to_vec(),
            timeline: timeline.clone(),
        }),
        host: host.clone(),
        host_tools: Rc::new(NoHostTools),
    };
    let mut session = Session::new(super::session_config(), ports);
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
    fn send(&self, request: &mut HttpRequest) -> Result<Box<dyn HttpResponse>, TransportError> {
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
