//! In-memory implementations of every port, for native tests of the loop.
//! They behave like real hosts where the loop can tell: files persist, processes report
//! output in chunks, HTTP bodies arrive in pieces.

use crate::wire::Reply;
use agent_core::events::Event;
use agent_core::history::HistoryEntry;
use agent_core::ports::*;
use std::cell::RefCell;
use std::collections::{BTreeMap, VecDeque};
use std::rc::Rc;

/// A command handler: what a fake process prints and returns.
pub type ProcessHandler = Box<dyn Fn(&SpawnRequest) -> ExecResult>;

/// An in-memory filesystem rooted at `/work`, with a programmable process runner.
pub struct FakeEnv {
    pub files: RefCell<BTreeMap<String, Vec<u8>>>,
    pub spawned: RefCell<Vec<SpawnRequest>>,
    /// `spawn <command>` and `wait <command>` in the order they happened, to tell
    /// concurrent execution (all spawns before the first wait) from sequential.
    pub process_log: Rc<RefCell<Vec<String>>>,
    handler: ProcessHandler,
    /// Like the browser host's: platform `browser`, and `spawn` is unsupported.
    browser: bool,
    /// The scratch folder it reports (files under it live in `files` like any other).
    scratch: Option<String>,
}

impl Default for FakeEnv {
    fn default() -> Self {
        Self::new(Box::new(|req: &SpawnRequest| ExecResult {
            stdout: format!("ran: {}\n", req.command),
            ..ExecResult::default()
        }))
    }
}

impl FakeEnv {
    pub fn new(handler: ProcessHandler) -> Self {
        Self {
            files: RefCell::new(BTreeMap::new()),
            spawned: RefCell::new(Vec::new()),
            process_log: Rc::default(),
            handler,
            browser: false,
            scratch: None,
        }
    }

    /// Reports `dir` as its scratch folder.
    pub fn with_scratch(mut self, dir: &str) -> Self {
        self.scratch = Some(dir.to_string());
        self
    }

    /// An environment like the browser host's, which cannot run processes.
    pub fn browser() -> Self {
        Self {
            browser: true,
            ..Self::default()
        }
    }

    fn key(path: &str) -> String {
        path.strip_prefix("/work/")
            .unwrap_or(path)
            .trim_start_matches("./")
            .to_string()
    }

    pub fn put(&self, path: &str, contents: &str) {
        self.files
            .borrow_mut()
            .insert(Self::key(path), contents.as_bytes().to_vec());
    }

    pub fn put_bytes(&self, path: &str, contents: &[u8]) {
        self.files.borrow_mut().insert(Self::key(path), contents.to_vec());
    }

    /// Directories exist implicitly, as prefixes of stored files.
    fn is_dir(&self, path: &str) -> bool {
        let prefix = format!("{}/", Self::key(path).trim_end_matches('/'));
        prefix != "/" && self.files.borrow().keys().any(|k| k.starts_with(&prefix))
    }

    /// Runs `check` on a file's contents without copying them.
    pub fn with_file<T>(&self, path: &str, check: impl FnOnce(Option<&[u8]>) -> T) -> T {
        check(self.files.borrow().get(&Self::key(path)).map(Vec::as_slice))
    }

    pub fn get(&self, path: &str) -> Option<String> {
        self.files
            .borrow()
            .get(&Self::key(path))
            .map(|b| String::from_utf8_lossy(b).into_owned())
    }
}

struct FakeProcess {
    command: String,
    log: Rc<RefCell<Vec<String>>>,
    chunks: VecDeque<OutputChunk>,
    result: ExecResult,
}

impl Process for FakeProcess {
    fn id(&self) -> u32 {
        0
    }
    fn read_output(&mut self) -> Option<OutputChunk> {
        self.chunks.pop_front()
    }
    fn wait(&mut self) -> ExecResult {
        self.log.borrow_mut().push(format!("wait {}", self.command));
        self.result.clone()
    }
    fn kill(&mut self) {}
}

impl Environment for FakeEnv {
    fn read_file(&self, path: &str, range: Option<ByteRange>) -> Result<Vec<u8>, FsError> {
        let files = self.files.borrow();
        let bytes = files
            .get(&Self::key(path))
            .ok_or_else(|| FsError::NotFound(format!("file not found: {path}")))?;
        Ok(match range {
            Some(r) => {
                let start = (r.offset as usize).min(bytes.len());
                let end = start.saturating_add(r.length as usize).min(bytes.len());
                bytes[start..end].to_vec()
            }
            None => bytes.clone(),
        })
    }

    fn write_file(&self, path: &str, contents: &[u8]) -> Result<(), FsError> {
        self.files.borrow_mut().insert(Self::key(path), contents.to_vec());
        Ok(())
    }

    fn delete_file(&self, path: &str) -> Result<(), FsError> {
        if self.is_dir(path) {
            return Err(FsError::IsDirectory(format!("{path} is a directory")));
        }
        self.files
            .borrow_mut()
            .remove(&Self::key(path))
            .map(|_| ())
            .ok_or_else(|| FsError::NotFound(format!("file not found: {path}")))
    }

    fn file_exists(&self, path: &str) -> bool {
        self.files.borrow().contains_key(&Self::key(path)) || self.is_dir(path)
    }

    fn list_directory(&self, path: &str, depth: u32) -> Result<Vec<DirEntry>, FsError> {
        let prefix = match Self::key(path).trim_end_matches('/') {
            "" | "." => String::new(),
            dir => format!("{dir}/"),
        };
        let mut entries = std::collections::BTreeMap::new();
        for (key, bytes) in self.files.borrow().iter() {
            let Some(rest) = key.strip_prefix(&prefix) else {
                continue;
            };
            let parts: Vec<&str> = rest.split('/').collect();
            for level in 1..=parts.len().min(depth.max(1) as usize) {
                let is_file = level == parts.len();
                entries.entry(parts[..level].join("/")).or_insert(DirEntry {
                    path: parts[..level].join("/"),
                    kind: if is_file {
                        EntryKind::File
                    } else {
                        EntryKind::Directory
                    },
                    size: if is_file { bytes.len() as u64 } else { 0 },
                    depth: level as u32,
                });
            }
        }
        Ok(entries.into_values().collect())
    }

    /// Literal (substring) matching only: the fake has no regex engine.
    fn grep(&self, options: &GrepOptions) -> Result<Vec<GrepMatch>, FsError> {
        let fold = |s: &str| {
            if options.case_insensitive {
                s.to_lowercase()
            } else {
                s.to_string()
            }
        };
        let needle = fold(&options.pattern);
        let mut found = Vec::new();
        for (path, bytes) in self.files.borrow().iter() {
            if options
                .glob_filter
                .as_deref()
                .is_some_and(|g| !fake_glob_match(g, path))
            {
                continue;
            }
            let text = String::from_utf8_lossy(bytes);
            let hits: Vec<(usize, &str)> = text
                .lines()
                .enumerate()
                .filter(|(_, line)| fold(line).contains(&needle))
                .collect();
            match (options.output_mode, hits.len()) {
                (_, 0) => {}
                (GrepOutputMode::Content, _) => found.extend(hits.iter().map(|(i, line)| GrepMatch {
                    path: path.clone(),
                    line_number: *i as u32 + 1,
                    line: line.to_string(),
                })),
                (GrepOutputMode::FilesWithMatches, _) => found.push(GrepMatch {
                    path: path.clone(),
                    line_number: 0,
                    line: String::new(),
                }),
                (GrepOutputMode::Count, n) => found.push(GrepMatch {
                    path: path.clone(),
                    line_number: n as u32,
                    line: String::new(),
                }),
            }
        }
        if options.max_results > 0 {
            found.truncate(options.max_results as usize);
        }
        Ok(found)
    }

    fn glob(&self, pattern: &str, _path: Option<&str>) -> Result<Vec<String>, FsError> {
        Ok(self
            .files
            .borrow()
            .keys()
            .filter(|k| fake_glob_match(pattern, k))
            .cloned()
            .collect())
    }

    fn stat(&self, path: &str) -> Result<FileStat, FsError> {
        if self.is_dir(path) {
            return Ok(FileStat {
                kind: EntryKind::Directory,
                size: 0,
                modified_ms: 0,
                readonly: false,
            });
        }
        let files = self.files.borrow();
        let bytes = files
            .get(&Self::key(path))
            .ok_or_else(|| FsError::NotFound(format!("file not found: {path}")))?;
        Ok(FileStat {
            kind: EntryKind::File,
            size: bytes.len() as u64,
            modified_ms: 0,
            readonly: false,
        })
    }

    fn working_directory(&self) -> String {
        "/work".to_string()
    }

    fn platform(&self) -> String {
        match self.browser {
            true => "browser".to_string(),
            false => "linux".to_string(),
        }
    }

    fn os_version(&self) -> String {
        "FakeOS 1.0".to_string()
    }

    fn scratch_directory(&self) -> Option<String> {
        self.scratch.clone()
    }

    fn spawn(&self, request: SpawnRequest) -> Result<Box<dyn Process>, SpawnError> {
        if self.browser {
            return Err(SpawnError::Unsupported(
                "this is a browser: there is no process execution here".to_string(),
            ));
        }
        let result = (self.handler)(&request);
        self.process_log
            .borrow_mut()
            .push(format!("spawn {}", request.command));
        let command = request.command.clone();
        self.spawned.borrow_mut().push(request);
        let mut chunks = VecDeque::new();
        for (stream, text) in [
            (OutputStream::Stdout, &result.stdout),
            (OutputStream::Stderr, &result.stderr),
        ] {
            if !text.is_empty() {
                chunks.push_back(OutputChunk {
                    stream,
                    data: text.as_bytes().to_vec(),
                });
            }
        }
        Ok(Box::new(FakeProcess {
            command,
            log: self.process_log.clone(),
            chunks,
            result,
        }))
    }
}

/// The fake's glob: `*.ext` / `**/*.ext` match by suffix, anything else must be equal.
fn fake_glob_match(pattern: &str, path: &str) -> bool {
    match pattern.trim_start_matches("**/").strip_prefix('*') {
        Some(suffix) => path.ends_with(suffix),
        None => pattern == path,
    }
}

/// A scripted HTTP response: status, headers and body pieces.
#[derive(Debug, Clone)]
pub struct ScriptedResponse {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub chunks: Vec<Vec<u8>>,
    /// Fail with this error after the chunks instead of ending the body.
    pub break_with: Option<TransportError>,
}

impl ScriptedResponse {
    /// A 200 SSE response whose body is split into pieces of `piece` bytes.
    pub fn sse(body: &str, piece: usize) -> Self {
        Self {
            status: 200,
            headers: vec![("content-type".to_string(), "text/event-stream".to_string())],
            chunks: body.as_bytes().chunks(piece.max(1)).map(<[u8]>::to_vec).collect(),
            break_with: None,
        }
    }

    /// A scripted reply (see [`crate::wire`]) with its whole body split into pieces of
    /// `piece` bytes, so that events straddle chunk boundaries.
    pub fn from_reply(reply: &Reply, piece: usize) -> Self {
        Self {
            status: reply.status,
            headers: reply.headers.clone(),
            chunks: reply
                .body()
                .as_bytes()
                .chunks(piece.max(1))
                .map(<[u8]>::to_vec)
                .collect(),
            break_with: None,
        }
    }

    /// Adds a response header.
    pub fn with_header(mut self, name: &str, value: &str) -> Self {
        self.headers.push((name.to_string(), value.to_string()));
        self
    }

    /// A JSON response with a status.
    pub fn json(status: u16, body: &str) -> Self {
        Self {
            status,
            headers: vec![("content-type".to_string(), "application/json".to_string())],
            chunks: vec![body.as_bytes().to_vec()],
            break_with: None,
        }
    }
}

struct FakeHttpResponse {
    status: u16,
    headers: Vec<(String, String)>,
    chunks: VecDeque<Vec<u8>>,
    break_with: Option<TransportError>,
}

impl HttpResponse for FakeHttpResponse {
    fn status(&self) -> u16 {
        self.status
    }
    fn headers(&self) -> Vec<(String, String)> {
        self.headers.clone()
    }
    fn next_chunk(&mut self) -> Result<Option<Vec<u8>>, TransportError> {
        match self.chunks.pop_front() {
            Some(chunk) => Ok(Some(chunk)),
            None => match self.break_with.take() {
                Some(error) => Err(error),
                None => Ok(None),
            },
        }
    }
}

/// Replays scripted responses in order and records every request.
#[derive(Default)]
pub struct ScriptedTransport {
    pub responses: RefCell<VecDeque<ScriptedResponse>>,
    pub requests: RefCell<Vec<HttpRequest>>,
}

impl ScriptedTransport {
    pub fn new(responses: impl IntoIterator<Item = ScriptedResponse>) -> Self {
        Self {
            responses: RefCell::new(responses.into_iter().collect()),
            requests: RefCell::new(Vec::new()),
        }
    }

    /// The JSON bodies of the requests received so far.
    pub fn request_bodies(&self) -> Vec<serde_json::Value> {
        self.requests
            .borrow()
            .iter()
            .map(|r| serde_json::from_slice(&r.body).unwrap_or(serde_json::Value::Null))
            .collect()
    }
}

impl Transport for ScriptedTransport {
    fn send(&self, request: &mut HttpRequest) -> Result<Box<dyn HttpResponse>, TransportError> {
        self.requests.borrow_mut().push(request.clone());
        let Some(scripted) = self.responses.borrow_mut().pop_front() else {
            return Err(TransportError::Connect(
                "the script has no more responses".to_string(),
            ));
        };
        Ok(Box::new(FakeHttpResponse {
            status: scripted.status,
            headers: scripted.headers,
            chunks: scripted.chunks.into(),
            break_with: scripted.break_with,
        }))
    }
}

/// Records events and serves queued steering, follow-ups and interruptions.
#[derive(Default)]
pub struct RecordingHost {
    pub events: RefCell<Vec<Event>>,
    /// Every history entry the session journaled, as `record_history` received it.
    pub journal: RefCell<Vec<HistoryEntry>>,
    pub steering: RefCell<Vec<String>>,
    pub follow_ups: RefCell<Vec<String>>,
    pub interruption: RefCell<Option<Interruption>>,
    pub denied_tools: RefCell<Vec<String>>,
    pub logs: RefCell<Vec<(LogLevel, String)>>,
    /// Every `sleep` asked for, in milliseconds (the fake does not wait).
    pub sleeps: RefCell<Vec<u64>>,
    /// Approval requests seen.
    pub approvals: RefCell<Vec<ApprovalRequest>>,
    /// Subagent requests seen; a spawned child "finishes" its task at once.
    pub subagents: RefCell<Vec<SubagentRequest>>,
    /// Messages sent to children and children closed, as `(agent id, message)` and ids.
    pub subagent_messages: RefCell<Vec<(String, String)>>,
    pub closed_subagents: RefCell<Vec<String>>,
    /// Called on every emitted event, e.g. to steer when a tool starts.
    #[allow(clippy::type_complexity)]
    pub on_event: RefCell<Option<Box<dyn Fn(&Event, &RecordingHost)>>>,
    /// The session tree's spending (`spend`); a test adds to it to stand for subagents.
    pub spending: std::cell::Cell<agent_core::protocol::Spending>,
    clock: std::cell::Cell<u64>,
}

impl RecordingHost {
    pub fn kinds(&self) -> Vec<agent_core::events::EventKind> {
        self.events.borrow().iter().map(|e| e.kind()).collect()
    }
}

impl SessionHost for RecordingHost {
    fn emit(&self, event: Event) {
        if let Some(hook) = self.on_event.borrow().as_ref() {
            hook(&event, self);
        }
        self.events.borrow_mut().push(event);
    }
    fn record_history(&self, _: &str, entry: &HistoryEntry) {
        self.journal.borrow_mut().push(entry.clone());
    }
    fn take_steering(&self, _: &str) -> Vec<String> {
        std::mem::take(&mut *self.steering.borrow_mut())
    }
    fn take_follow_ups(&self, _: &str) -> Vec<String> {
        std::mem::take(&mut *self.follow_ups.borrow_mut())
    }
    fn abort_requested(&self, _: &str) -> Option<Interruption> {
        *self.interruption.borrow()
    }
    fn sleep(&self, _: &str, ms: u64) -> bool {
        self.sleeps.borrow_mut().push(ms);
        self.clock.set(self.clock.get() + ms);
        false
    }
    fn log(&self, level: LogLevel, message: &str) {
        self.logs.borrow_mut().push((level, message.to_string()));
    }
    fn approve(&self, request: &ApprovalRequest) -> Approval {
        self.approvals.borrow_mut().push(request.clone());
        if self.denied_tools.borrow().contains(&request.tool_name) {
            Approval::Deny("denied by test policy".to_string())
        } else {
            Approval::Allow
        }
    }
    fn now_ms(&self) -> u64 {
        // A fixed date (2026-01-01) that advances 1 ms per call keeps timestamps ordered.
        let t = self.clock.get() + 1;
        self.clock.set(t);
        1_767_225_600_000 + t
    }
    fn random_bytes(&self, len: usize) -> Vec<u8> {
        (0..len)
            .map(|i| (i as u8).wrapping_mul(37).wrapping_add(11))
            .collect()
    }
    fn spawn_subagent(&self, request: &SubagentRequest) -> Result<String, String> {
        let mut subagents = self.subagents.borrow_mut();
        subagents.push(request.clone());
        Ok(format!("agent-{}", subagents.len()))
    }
    fn subagent_send(&self, agent_id: &str, message: &str) -> Result<(), String> {
        self.known_subagent(agent_id)?;
        self.subagent_messages
            .borrow_mut()
            .push((agent_id.to_string(), message.to_string()));
        Ok(())
    }
    fn subagent_wait(&self, agent_id: &str) -> Result<SubagentResult, String> {
        let request = self.known_subagent(agent_id)?;
        Ok(SubagentResult {
            output: format!("done: {}", request.task),
            success: true,
            turns_used: 1,
        })
    }
    fn subagent_close(&self, agent_id: &str) -> Result<(), String> {
        self.known_subagent(agent_id)?;
        self.closed_subagents.borrow_mut().push(agent_id.to_string());
        Ok(())
    }
    fn spend(
        &self,
        _: &str,
        amount: agent_core::protocol::Spending,
        released: agent_core::protocol::Spending,
    ) -> agent_core::protocol::Spending {
        let mut total = self.spending.get();
        self.spending.set(total.spend(amount, released));
        total
    }
}

impl RecordingHost {
    fn known_subagent(&self, agent_id: &str) -> Result<SubagentRequest, String> {
        let index: usize = agent_id
            .strip_prefix("agent-")
            .and_then(|n| n.parse().ok())
            .ok_or_else(|| format!("no subagent {agent_id}"))?;
        self.subagents
            .borrow()
            .get(index.wrapping_sub(1))
            .cloned()
            .ok_or_else(|| format!("no subagent {agent_id}"))
    }
}

/// Host tools that echo their call, for tests of the `host-tools` route; a test can give
/// the images each call returns, and the tool lists its calls bring about (as an MCP
/// server's `tools/list_changed` would).
#[derive(Default)]
pub struct EchoHostTools {
    /// Returned with every call's text.
    pub images: RefCell<Vec<HostImage>>,
    /// Each call takes the first of these as the host's tools from then on.
    pub lists_after_calls: RefCell<VecDeque<Vec<agent_core::llm::ToolDefinition>>>,
    /// What `changes` answers next (then `None` until another call changes the list).
    changed: RefCell<Option<Vec<agent_core::llm::ToolDefinition>>>,
    /// Sessions that asked for changes, in order.
    pub asked: RefCell<Vec<String>>,
}

impl HostTools for EchoHostTools {
    fn call(&self, _: &str, name: &str, arguments_json: &str) -> Result<HostToolOutput, String> {
        if let Some(list) = self.lists_after_calls.borrow_mut().pop_front() {
            *self.changed.borrow_mut() = Some(list);
        }
        Ok(HostToolOutput {
            text: format!("{name} called with {arguments_json}"),
            images: self.images.borrow().clone(),
        })
    }

    fn changes(&self, session_id: &str) -> Option<Vec<agent_core::llm::ToolDefinition>> {
        self.asked.borrow_mut().push(session_id.to_string());
        self.changed.borrow_mut().take()
    }
}

/// Ports over the given fakes.
pub fn ports(env: Rc<FakeEnv>, transport: Rc<ScriptedTransport>, host: Rc<RecordingHost>) -> Ports {
    ports_with_tools(env, transport, host, Rc::new(EchoHostTools::default()))
}

/// Ports over the given fakes and host tools.
pub fn ports_with_tools(
    env: Rc<FakeEnv>,
    transport: Rc<ScriptedTransport>,
    host: Rc<RecordingHost>,
    host_tools: Rc<dyn HostTools>,
) -> Ports {
    Ports {
        env,
        transport,
        host,
        host_tools,
    }
}
