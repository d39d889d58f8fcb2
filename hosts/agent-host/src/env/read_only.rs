//! Read-only mode: reads and searches go through, anything that could change files is
//! refused with a reason the model can act on.

use super::Environment;
use crate::bindings::execution_environment::{SpawnError, SpawnRequest};
use crate::bindings::types::{DirEntry, FileStat, FsError, GrepMatch, GrepOptions};
use crate::process::ProcessHandle;
use async_trait::async_trait;
use std::sync::Arc;

pub struct ReadOnly {
    inner: Arc<dyn Environment>,
}

impl ReadOnly {
    pub fn new(inner: Arc<dyn Environment>) -> Self {
        Self { inner }
    }
}

fn refuse(what: &str) -> FsError {
    FsError::Denied(format!(
        "read-only mode: {what} is not allowed; report the change you would make instead"
    ))
}

#[async_trait]
impl Environment for ReadOnly {
    async fn read_file(&self, path: &str, range: Option<(u64, u64)>) -> Result<Vec<u8>, FsError> {
        self.inner.read_file(path, range).await
    }

    async fn write_file(&self, path: &str, _contents: &[u8]) -> Result<(), FsError> {
        Err(refuse(&format!("writing {path}")))
    }

    async fn delete_file(&self, path: &str) -> Result<(), FsError> {
        Err(refuse(&format!("deleting {path}")))
    }

    async fn rename_file(&self, from: &str, to: &str) -> Result<(), FsError> {
        Err(refuse(&format!("renaming {from} to {to}")))
    }

    async fn create_directory(&self, path: &str) -> Result<(), FsError> {
        Err(refuse(&format!("creating the directory {path}")))
    }

    async fn file_exists(&self, path: &str) -> bool {
        self.inner.file_exists(path).await
    }

    async fn stat(&self, path: &str) -> Result<FileStat, FsError> {
        self.inner.stat(path).await
    }

    async fn list_directory(&self, path: &str, depth: u32) -> Result<Vec<DirEntry>, FsError> {
        self.inner.list_directory(path, depth).await
    }

    async fn grep(&self, options: &GrepOptions) -> Result<Vec<GrepMatch>, FsError> {
        self.inner.grep(options).await
    }

    async fn glob(&self, pattern: &str, path: Option<&str>) -> Result<Vec<String>, FsError> {
        self.inner.glob(pattern, path).await
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
        // A command can write anywhere the user can, so none runs in read-only mode.
        Err(SpawnError::Denied(format!(
            "read-only mode: commands are not run because they could change files (`{}`); \
             use read_file, grep and glob to inspect the project",
            request.command
        )))
    }

    async fn real_path(&self, path: &str) -> Result<String, FsError> {
        self.inner.real_path(path).await
    }
}
