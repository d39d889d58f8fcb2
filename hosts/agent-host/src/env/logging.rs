//! A logging wrapper: every operation with its path, outcome and duration, through
//! `tracing` (target `agent_host::env`; `AGENT_HOST_LOG=agent_host::env=info` shows them).

use super::{Environment, fs_error_message};
use crate::bindings::execution_environment::{SpawnError, SpawnRequest};
use crate::bindings::types::{DirEntry, FileStat, FsError, GrepMatch, GrepOptions};
use crate::process::ProcessHandle;
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

fn log<T>(op: &str, subject: &str, started: Instant, outcome: &Result<T, FsError>) {
    let ms = started.elapsed().as_millis() as u64;
    match outcome {
        Ok(_) => tracing::info!(target: "agent_host::env", op, subject, ms, "ok"),
        Err(e) => {
            tracing::info!(target: "agent_host::env", op, subject, ms, error = fs_error_message(e), "failed")
        }
    }
}

#[async_trait]
impl Environment for Logged {
    async fn read_file(&self, path: &str, range: Option<(u64, u64)>) -> Result<Vec<u8>, FsError> {
        let started = Instant::now();
        let outcome = self.inner.read_file(path, range).await;
        log("read_file", path, started, &outcome);
        outcome
    }

    async fn write_file(&self, path: &str, contents: &[u8]) -> Result<(), FsError> {
        let started = Instant::now();
        let outcome = self.inner.write_file(path, contents).await;
        log("write_file", path, started, &outcome);
        outcome
    }

    async fn delete_file(&self, path: &str) -> Result<(), FsError> {
        let started = Instant::now();
        let outcome = self.inner.delete_file(path).await;
        log("delete_file", path, started, &outcome);
        outcome
    }

    async fn rename_file(&self, from: &str, to: &str) -> Result<(), FsError> {
        let started = Instant::now();
        let outcome = self.inner.rename_file(from, to).await;
        log("rename_file", &format!("{from} -> {to}"), started, &outcome);
        outcome
    }

    async fn create_directory(&self, path: &str) -> Result<(), FsError> {
        let started = Instant::now();
        let outcome = self.inner.create_directory(path).await;
        log("create_directory", path, started, &outcome);
        outcome
    }

    async fn file_exists(&self, path: &str) -> bool {
        self.inner.file_exists(path).await
    }

    async fn stat(&self, path: &str) -> Result<FileStat, FsError> {
        let started = Instant::now();
        let outcome = self.inner.stat(path).await;
        log("stat", path, started, &outcome);
        outcome
    }

    async fn list_directory(&self, path: &str, depth: u32) -> Result<Vec<DirEntry>, FsError> {
        let started = Instant::now();
        let outcome = self.inner.list_directory(path, depth).await;
        log("list_directory", path, started, &outcome);
        outcome
    }

    async fn grep(&self, options: &GrepOptions) -> Result<Vec<GrepMatch>, FsError> {
        let started = Instant::now();
        let outcome = self.inner.grep(options).await;
        log("grep", &options.pattern, started, &outcome);
        outcome
    }

    async fn glob(&self, pattern: &str, path: Option<&str>) -> Result<Vec<String>, FsError> {
        let started = Instant::now();
        let outcome = self.inner.glob(pattern, path).await;
        log("glob", pattern, started, &outcome);
        outcome
    }

    fn working_directory(&self) -> String {
        self.inner.working_directory()
    }

    fn platform(&self) -> String {
        self.inner.platform()
    }

    fn os_version(&self) -> String {
        self.inner.os_version()
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

    async fn real_path(&self, path: &str) -> Result<String, FsError> {
        self.inner.real_path(path).await
    }
}
