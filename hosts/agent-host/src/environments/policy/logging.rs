//! A logging wrapper: every operation with its path, outcome and duration, through
//! `tracing` (target `agent_host::env`; `AGENT_HOST_LOG=agent_host::env=info` shows them).

use crate::environments::environment::Environment;
use crate::environments::process::ProcessHandle;
use agent_protocol::ports::{DirEntry, FileStat, FsError, GrepMatch, GrepOptions, SpawnError, SpawnRequest};
use async_trait::async_trait;
use std::sync::Arc;
use std::time::Instant;

pub struct Logged {
    inner: Arc<dyn Environment>,
}

impl Logged {
    pub fn new(inner: Arc<dyn Environment>) -> Self {
        Self { inner }
    }
}

/// Runs `operation` and logs its outcome and how long it took. The operation is a future not
/// yet polled, so the time is that of the work alone.
async fn logged<T>(
    op: &str,
    subject: &str,
    operation: impl Future<Output = Result<T, FsError>>,
) -> Result<T, FsError> {
    let started = Instant::now();
    let outcome = operation.await;
    let ms = started.elapsed().as_millis() as u64;
    match &outcome {
        Ok(_) => tracing::info!(target: "agent_host::env", op, subject, ms, "ok"),
        Err(e) => {
            tracing::info!(target: "agent_host::env", op, subject, ms, error = %e, "failed")
        }
    }
    outcome
}

#[async_trait]
impl crate::environments::delegating::Delegating for Logged {
    fn inner(&self) -> &dyn Environment {
        &*self.inner
    }

    async fn read_file(&self, path: &str, range: Option<(u64, u64)>) -> Result<Vec<u8>, FsError> {
        logged("read_file", path, self.inner.read_file(path, range)).await
    }

    async fn write_file(&self, path: &str, contents: &[u8]) -> Result<(), FsError> {
        logged("write_file", path, self.inner.write_file(path, contents)).await
    }

    async fn delete_file(&self, path: &str) -> Result<(), FsError> {
        logged("delete_file", path, self.inner.delete_file(path)).await
    }

    async fn rename_file(&self, from: &str, to: &str) -> Result<(), FsError> {
        let subject = format!("{from} -> {to}");
        logged("rename_file", &subject, self.inner.rename_file(from, to)).await
    }

    async fn create_directory(&self, path: &str) -> Result<(), FsError> {
        logged("create_directory", path, self.inner.create_directory(path)).await
    }

    async fn stat(&self, path: &str) -> Result<FileStat, FsError> {
        logged("stat", path, self.inner.stat(path)).await
    }

    async fn list_directory(&self, path: &str, depth: u32) -> Result<Vec<DirEntry>, FsError> {
        logged("list_directory", path, self.inner.list_directory(path, depth)).await
    }

    async fn grep(&self, options: &GrepOptions) -> Result<Vec<GrepMatch>, FsError> {
        logged("grep", &options.pattern, self.inner.grep(options)).await
    }

    async fn glob(&self, pattern: &str, path: Option<&str>) -> Result<Vec<String>, FsError> {
        logged("glob", pattern, self.inner.glob(pattern, path)).await
    }

    async fn spawn(&self, request: SpawnRequest) -> Result<ProcessHandle, SpawnError> {
        let command = request.command.clone();
        let outcome = self.inner.spawn(request).await;
        match &outcome {
            Ok(process) => {
                tracing::info!(target: "agent_host::env", op = "spawn", command, pid = process.pid(), "started")
            }
            Err(error) => tracing::info!(target: "agent_host::env", op = "spawn", command, ?error, "refused"),
        }
        outcome
    }
}
