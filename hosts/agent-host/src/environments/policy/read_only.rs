//! Read-only mode: reads and searches go through, anything that could change files is
//! refused with a reason the model can act on. A session's wrapper follows its approval
//! mode, which the user may change while it runs (the chat's `/approval`).

use crate::environments::environment::Environment;
use crate::environments::process::ProcessHandle;
use agent_protocol::ports::FsError;
use agent_protocol::ports::{SpawnError, SpawnRequest};
use async_trait::async_trait;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

pub struct ReadOnly {
    inner: Arc<dyn Environment>,
    /// Why, when it is not the user's `--read-only` (a replayed recording's changes).
    reason: Option<String>,
    /// Whether it refuses now; only [`ReadOnly::switchable`] shares it with anyone.
    on: Arc<AtomicBool>,
}

impl ReadOnly {
    pub fn new(inner: Arc<dyn Environment>) -> Self {
        Self::switchable(inner, Arc::new(AtomicBool::new(true)))
    }

    /// Read-only for `reason`, which every refusal names.
    pub fn because(inner: Arc<dyn Environment>, reason: impl Into<String>) -> Self {
        Self {
            reason: Some(reason.into()),
            ..Self::new(inner)
        }
    }

    /// Read-only while `on` holds, else `inner` as it is: a session whose approval mode
    /// can change (see [`crate::embed::Session::set_approval_mode`]).
    pub fn switchable(inner: Arc<dyn Environment>, on: Arc<AtomicBool>) -> Self {
        Self {
            inner,
            reason: None,
            on,
        }
    }

    fn refusing(&self) -> bool {
        self.on.load(Ordering::SeqCst)
    }

    fn refuse(&self, what: &str) -> FsError {
        FsError::Denied(match &self.reason {
            Some(reason) => format!("{what} was refused: {reason}"),
            None => {
                format!("read-only mode: {what} is not allowed; report the change you would make instead")
            }
        })
    }
}

/// What only reads is the forwarding default.
#[async_trait]
impl crate::environments::delegating::Delegating for ReadOnly {
    fn inner(&self) -> &dyn Environment {
        &*self.inner
    }

    /// Nothing changes here: no checkpoints to restore (a restore would write).
    fn local_workspace(&self) -> Option<std::path::PathBuf> {
        match self.refusing() {
            true => None,
            false => self.inner.local_workspace(),
        }
    }

    /// Nothing is written, not even saved outputs: they are only cut.
    fn scratch_directory(&self) -> Option<String> {
        match self.refusing() {
            true => None,
            false => self.inner.scratch_directory(),
        }
    }

    async fn write_file(&self, path: &str, contents: &[u8]) -> Result<(), FsError> {
        if !self.refusing() {
            return self.inner.write_file(path, contents).await;
        }
        Err(self.refuse(&format!("writing {path}")))
    }

    async fn delete_file(&self, path: &str) -> Result<(), FsError> {
        if !self.refusing() {
            return self.inner.delete_file(path).await;
        }
        Err(self.refuse(&format!("deleting {path}")))
    }

    async fn rename_file(&self, from: &str, to: &str) -> Result<(), FsError> {
        if !self.refusing() {
            return self.inner.rename_file(from, to).await;
        }
        Err(self.refuse(&format!("renaming {from} to {to}")))
    }

    async fn create_directory(&self, path: &str) -> Result<(), FsError> {
        if !self.refusing() {
            return self.inner.create_directory(path).await;
        }
        Err(self.refuse(&format!("creating the directory {path}")))
    }

    async fn spawn(&self, request: SpawnRequest) -> Result<ProcessHandle, SpawnError> {
        if !self.refusing() {
            return self.inner.spawn(request).await;
        }
        // A command can write anywhere the user can, so none runs in read-only mode.
        Err(SpawnError::Denied(match &self.reason {
            Some(reason) => format!("`{}` was not run: {reason}", request.command),
            None => format!(
                "read-only mode: commands are not run because they could change files (`{}`); \
                 use read_file, grep and glob to inspect the project",
                request.command
            ),
        }))
    }
}
