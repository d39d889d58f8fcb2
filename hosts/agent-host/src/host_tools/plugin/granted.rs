//! A plugin's view of the workspace: every operation checks the capability it needs against
//! what the user granted, so an ungranted call is an error naming the missing grant (and how
//! to give it) rather than a trap or a silent success.

use super::manifest::Capability;
use crate::environments::environment::Environment;
use crate::environments::process::ProcessHandle;
use agent_protocol::ports::{DirEntry, FileStat, FsError, GrepMatch, GrepOptions, SpawnError, SpawnRequest};
use async_trait::async_trait;
use std::collections::BTreeSet;
use std::sync::Arc;

/// The most a plugin reads in one call; more would only fill its (capped) memory.
pub const READ_CAP: u64 = 16 << 20;

pub struct Granted {
    inner: Arc<dyn Environment>,
    plugin: String,
    granted: BTreeSet<Capability>,
}

impl Granted {
    pub fn new(inner: Arc<dyn Environment>, plugin: &str, granted: BTreeSet<Capability>) -> Self {
        Self {
            inner,
            plugin: plugin.to_string(),
            granted,
        }
    }

    fn check(&self, needed: Capability, what: &str) -> Result<(), String> {
        if self.granted.contains(&needed) {
            return Ok(());
        }
        Err(format!(
            "plugin {plugin} was not granted `{cap}`, which {what} needs (grant it with --grant {plugin}={cap} \
             or [plugins.grants] in the config)",
            plugin = self.plugin,
            cap = needed.as_str()
        ))
    }

    fn fs(&self, needed: Capability, what: &str) -> Result<(), FsError> {
        self.check(needed, what).map_err(FsError::Denied)
    }
}

/// `working_directory`, `platform` and `os_version` are the forwarding defaults: they need
/// no grant.
#[async_trait]
impl crate::environments::delegating::Delegating for Granted {
    fn inner(&self) -> &dyn Environment {
        &*self.inner
    }

    /// The session's saved outputs are not a plugin's business.
    fn scratch_directory(&self) -> Option<String> {
        None
    }

    async fn read_file(&self, path: &str, range: Option<(u64, u64)>) -> Result<Vec<u8>, FsError> {
        self.fs(Capability::Read, &format!("reading {path}"))?;
        // Checked before reading, so a huge file never reaches the host's memory either.
        let length = match range {
            Some((_, length)) => length,
            None => self.inner.stat(path).await?.size,
        };
        if length > READ_CAP {
            return Err(FsError::TooLarge(format!(
                "plugins read at most {} MiB per call and {path} asks for {length} bytes: read it in ranges",
                READ_CAP >> 20
            )));
        }
        self.inner.read_file(path, range).await
    }

    async fn write_file(&self, path: &str, contents: &[u8]) -> Result<(), FsError> {
        self.fs(Capability::Write, &format!("writing {path}"))?;
        self.inner.write_file(path, contents).await
    }

    async fn delete_file(&self, path: &str) -> Result<(), FsError> {
        self.fs(Capability::Write, &format!("deleting {path}"))?;
        self.inner.delete_file(path).await
    }

    async fn rename_file(&self, from: &str, to: &str) -> Result<(), FsError> {
        self.fs(Capability::Write, &format!("renaming {from}"))?;
        self.inner.rename_file(from, to).await
    }

    async fn create_directory(&self, path: &str) -> Result<(), FsError> {
        self.fs(Capability::Write, &format!("creating the directory {path}"))?;
        self.inner.create_directory(path).await
    }

    async fn file_exists(&self, path: &str) -> bool {
        // No error channel here: without `read` nothing is visible.
        self.granted.contains(&Capability::Read) && self.inner.file_exists(path).await
    }

    async fn stat(&self, path: &str) -> Result<FileStat, FsError> {
        self.fs(Capability::Read, &format!("looking at {path}"))?;
        self.inner.stat(path).await
    }

    async fn list_directory(&self, path: &str, depth: u32) -> Result<Vec<DirEntry>, FsError> {
        self.fs(Capability::Read, &format!("listing {path}"))?;
        self.inner.list_directory(path, depth).await
    }

    async fn grep(&self, options: &GrepOptions) -> Result<Vec<GrepMatch>, FsError> {
        self.fs(Capability::Read, "searching files")?;
        self.inner.grep(options).await
    }

    async fn glob(&self, pattern: &str, path: Option<&str>) -> Result<Vec<String>, FsError> {
        self.fs(Capability::Read, "finding files")?;
        self.inner.glob(pattern, path).await
    }

    async fn spawn(&self, request: SpawnRequest) -> Result<ProcessHandle, SpawnError> {
        self.check(Capability::Run, "running a command")
            .map_err(SpawnError::Denied)?;
        self.inner.spawn(request).await
    }

    async fn real_path(&self, path: &str) -> Result<String, FsError> {
        self.fs(Capability::Read, &format!("resolving {path}"))?;
        self.inner.real_path(path).await
    }
}
