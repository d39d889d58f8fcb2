//! Path boundaries over any environment: allowed and denied roots, denied wins. The check
//! is on the real path (symbolic links and `..` resolved by the environment, a dangling link
//! to where it points, since creating a file through it lands there; for a new file its
//! nearest existing ancestor), never on the text the model wrote.

use crate::environments::environment::Environment;
use crate::environments::process::ProcessHandle;
use agent_protocol::ports::{DirEntry, FileStat, FsError, GrepMatch, GrepOptions, SpawnError, SpawnRequest};
use async_trait::async_trait;
use std::path::{Path, PathBuf};
use std::sync::Arc;

pub struct PathPolicy {
    inner: Arc<dyn Environment>,
    allowed: Vec<PathBuf>,
    denied: Vec<PathBuf>,
    /// The inner environment's read-only project files (`Environment::project_files`): let
    /// through for reading unless denied; the inner environment reads them without links.
    project_files: Vec<PathBuf>,
}

impl PathPolicy {
    /// Allows `allowed` (the working directory when empty) except `denied`. Both are
    /// resolved through the environment first, so a root given through a link still holds.
    pub async fn new(
        inner: Arc<dyn Environment>,
        allowed: &[String],
        denied: &[String],
    ) -> Result<Self, FsError> {
        let mut resolved_allowed = Vec::new();
        let allowed: Vec<String> = if allowed.is_empty() {
            vec![inner.working_directory()]
        } else {
            allowed.to_vec()
        };
        for root in &allowed {
            resolved_allowed.push(PathBuf::from(inner.real_path(root).await?));
        }
        // The session's saved outputs are read back through this boundary too (a denied
        // directory still wins).
        if let Some(scratch) = inner.scratch_directory() {
            resolved_allowed.push(PathBuf::from(inner.real_path(&scratch).await?));
        }
        let mut resolved_denied = Vec::new();
        for root in denied {
            resolved_denied.push(PathBuf::from(inner.real_path(root).await?));
        }
        let project_files = inner.project_files();
        Ok(Self {
            inner,
            allowed: resolved_allowed,
            denied: resolved_denied,
            project_files,
        })
    }

    /// Whether `path` is exactly one of the project files, and not denied.
    fn project_file(&self, path: &str) -> bool {
        let path = Path::new(path);
        self.project_files.iter().any(|file| file == path) && !self.denied.iter().any(|d| path.starts_with(d))
    }

    /// Whether a real path is inside the boundary; the error says which rule refused it.
    fn verdict(&self, real: &Path) -> Result<(), String> {
        if let Some(denied) = self.denied.iter().find(|d| real.starts_with(d)) {
            return Err(format!(
                "{} is inside the denied directory {}",
                real.display(),
                denied.display()
            ));
        }
        if self.allowed.iter().any(|a| real.starts_with(a)) {
            return Ok(());
        }
        let allowed: Vec<String> = self.allowed.iter().map(|a| a.display().to_string()).collect();
        Err(format!(
            "{} is outside the allowed directories ({})",
            real.display(),
            allowed.join(", ")
        ))
    }

    /// The real path of `path` when the boundary allows it.
    async fn check(&self, path: &str) -> Result<PathBuf, FsError> {
        let real = PathBuf::from(self.inner.real_path(path).await?);
        self.verdict(&real)
            .map_err(|reason| FsError::Denied(format!("{path}: {reason}")))?;
        Ok(real)
    }

    /// Whether a path from a search result (relative to the working directory, links not
    /// followed) may be shown.
    fn shows(&self, path: &str) -> bool {
        let full = Path::new(&self.inner.working_directory()).join(path);
        self.verdict(&full).is_ok()
    }
}

/// `working_directory`, `platform`, `os_version` and `real_path` are the forwarding defaults.
#[async_trait]
impl crate::environments::delegating::Delegating for PathPolicy {
    fn inner(&self) -> &dyn Environment {
        &*self.inner
    }

    fn checkpoint_exclusions(&self) -> Vec<PathBuf> {
        let mut excluded = self.inner.checkpoint_exclusions();
        excluded.extend(self.denied.iter().cloned());
        excluded
    }

    async fn read_file(&self, path: &str, range: Option<(u64, u64)>) -> Result<Vec<u8>, FsError> {
        if !self.project_file(path) {
            self.check(path).await?;
        }
        self.inner.read_file(path, range).await
    }

    async fn write_file(&self, path: &str, contents: &[u8]) -> Result<(), FsError> {
        self.check(path).await?;
        self.inner.write_file(path, contents).await
    }

    async fn delete_file(&self, path: &str) -> Result<(), FsError> {
        self.check(path).await?;
        self.inner.delete_file(path).await
    }

    async fn rename_file(&self, from: &str, to: &str) -> Result<(), FsError> {
        self.check(from).await?;
        self.check(to).await?;
        self.inner.rename_file(from, to).await
    }

    async fn create_directory(&self, path: &str) -> Result<(), FsError> {
        self.check(path).await?;
        self.inner.create_directory(path).await
    }

    async fn file_exists(&self, path: &str) -> bool {
        (self.project_file(path) || self.check(path).await.is_ok()) && self.inner.file_exists(path).await
    }

    async fn stat(&self, path: &str) -> Result<FileStat, FsError> {
        self.check(path).await?;
        self.inner.stat(path).await
    }

    async fn list_directory(&self, path: &str, depth: u32) -> Result<Vec<DirEntry>, FsError> {
        let base = self.check(path).await?;
        let mut entries = self.inner.list_directory(path, depth).await?;
        // A denied directory inside an allowed one stays out of the listing.
        entries.retain(|e| self.verdict(&base.join(&e.path)).is_ok());
        Ok(entries)
    }

    async fn grep(&self, options: &GrepOptions) -> Result<Vec<GrepMatch>, FsError> {
        self.check(options.path.as_deref().unwrap_or(".")).await?;
        let mut matches = self.inner.grep(options).await?;
        matches.retain(|m| self.shows(&m.path));
        Ok(matches)
    }

    async fn glob(&self, pattern: &str, path: Option<&str>) -> Result<Vec<String>, FsError> {
        self.check(path.unwrap_or(".")).await?;
        let mut files = self.inner.glob(pattern, path).await?;
        files.retain(|f| self.shows(f));
        Ok(files)
    }

    async fn spawn(&self, request: SpawnRequest) -> Result<ProcessHandle, SpawnError> {
        // The command's directory is checked; what the command does is the OS sandbox's to confine (docs/sandbox-and-trust.md).
        let dir = request.working_dir.as_deref().unwrap_or(".");
        self.check(dir)
            .await
            .map_err(|e| SpawnError::Denied(e.to_string()))?;
        self.inner.spawn(request).await
    }
}
