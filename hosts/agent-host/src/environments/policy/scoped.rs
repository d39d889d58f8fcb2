//! An environment scoped to a subdirectory of another (for subagents): its working
//! directory is the subdirectory, relative paths start there, and nothing outside it can be
//! reached (a path boundary on the subdirectory's real path).

use crate::environments::environment::Environment;
use crate::environments::policy::path_policy::PathPolicy;
use crate::environments::process::ProcessHandle;
use agent_protocol::ports::{DirEntry, FileStat, FsError, GrepMatch, GrepOptions, SpawnError, SpawnRequest};
use async_trait::async_trait;
use std::path::Path;
use std::sync::Arc;

pub struct Scoped {
    /// The boundary over the parent environment.
    inner: PathPolicy,
    /// The subdirectory as the parent names it (relative to the parent's working directory).
    prefix: String,
    working_directory: String,
}

impl Scoped {
    /// Scopes `parent` to `subdirectory`, which must exist inside it.
    pub async fn new(parent: Arc<dyn Environment>, subdirectory: &str) -> Result<Self, FsError> {
        let stat = parent.stat(subdirectory).await?;
        if stat.kind != agent_protocol::ports::EntryKind::Directory {
            return Err(FsError::NotADirectory(format!(
                "{subdirectory} is not a directory"
            )));
        }
        let real = parent.real_path(subdirectory).await?;
        let parent_root = parent.real_path(".").await?;
        let prefix = Path::new(&real)
            .strip_prefix(&parent_root)
            .map_err(|_| {
                FsError::Denied(format!(
                    "{subdirectory} resolves to {real}, outside the working directory {parent_root}"
                ))
            })?
            .to_string_lossy()
            .into_owned();
        let inner = PathPolicy::new(parent, std::slice::from_ref(&real), &[]).await?;
        Ok(Self {
            inner,
            prefix,
            working_directory: real,
        })
    }

    /// A path as the parent understands it.
    fn outer(&self, path: &str) -> String {
        if Path::new(path).is_absolute() {
            path.to_string()
        } else {
            Path::new(&self.prefix).join(path).to_string_lossy().into_owned()
        }
    }

    /// A path from the parent's search results, relative to the scope again.
    fn inner_path(&self, path: &str) -> String {
        Path::new(path)
            .strip_prefix(&self.prefix)
            .map(|p| p.to_string_lossy().into_owned())
            .unwrap_or_else(|_| path.to_string())
    }
}

/// Every path is mapped to the parent's; `platform` and `os_version` are the forwarding
/// defaults. Calls go through `inner()`, a `dyn Environment`: on the `PathPolicy` itself
/// they would be ambiguous, as it has both traits' methods and both are in scope here.
#[async_trait]
impl crate::environments::delegating::Delegating for Scoped {
    fn inner(&self) -> &dyn Environment {
        &self.inner
    }

    /// The parent's scratch folder is outside the scope: a subagent's outputs are only cut.
    fn scratch_directory(&self) -> Option<String> {
        None
    }

    async fn read_file(&self, path: &str, range: Option<(u64, u64)>) -> Result<Vec<u8>, FsError> {
        self.inner().read_file(&self.outer(path), range).await
    }

    async fn write_file(&self, path: &str, contents: &[u8]) -> Result<(), FsError> {
        self.inner().write_file(&self.outer(path), contents).await
    }

    async fn delete_file(&self, path: &str) -> Result<(), FsError> {
        self.inner().delete_file(&self.outer(path)).await
    }

    async fn rename_file(&self, from: &str, to: &str) -> Result<(), FsError> {
        self.inner().rename_file(&self.outer(from), &self.outer(to)).await
    }

    async fn create_directory(&self, path: &str) -> Result<(), FsError> {
        self.inner().create_directory(&self.outer(path)).await
    }

    async fn file_exists(&self, path: &str) -> bool {
        self.inner().file_exists(&self.outer(path)).await
    }

    async fn stat(&self, path: &str) -> Result<FileStat, FsError> {
        self.inner().stat(&self.outer(path)).await
    }

    async fn list_directory(&self, path: &str, depth: u32) -> Result<Vec<DirEntry>, FsError> {
        self.inner().list_directory(&self.outer(path), depth).await
    }

    async fn grep(&self, options: &GrepOptions) -> Result<Vec<GrepMatch>, FsError> {
        let mut outer = options.clone();
        outer.path = Some(self.outer(options.path.as_deref().unwrap_or(".")));
        let mut matches = self.inner().grep(&outer).await?;
        for m in &mut matches {
            m.path = self.inner_path(&m.path);
        }
        Ok(matches)
    }

    async fn glob(&self, pattern: &str, path: Option<&str>) -> Result<Vec<String>, FsError> {
        let files = self
            .inner()
            .glob(pattern, Some(&self.outer(path.unwrap_or("."))))
            .await?;
        Ok(files.iter().map(|f| self.inner_path(f)).collect())
    }

    fn working_directory(&self) -> String {
        self.working_directory.clone()
    }

    async fn spawn(&self, mut request: SpawnRequest) -> Result<ProcessHandle, SpawnError> {
        request.working_dir = Some(self.outer(request.working_dir.as_deref().unwrap_or(".")));
        self.inner().spawn(request).await
    }

    async fn real_path(&self, path: &str) -> Result<String, FsError> {
        self.inner().real_path(&self.outer(path)).await
    }
}
