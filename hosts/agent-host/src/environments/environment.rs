//! The [`Environment`] trait every backend and policy wrapper implements, and what all of
//! them share.

use crate::environments::process::ProcessHandle;
use agent_protocol::ports::{DirEntry, FileStat, FsError, GrepMatch, GrepOptions, SpawnError, SpawnRequest};
use async_trait::async_trait;

/// Files, searches and processes of one place. Paths are relative to
/// [`working_directory`](Environment::working_directory) or absolute; errors name the path
/// and become tool errors the model can read.
///
/// Wrappers implement it through `Delegating`; a method added here gets a forwarding
/// default there, so check each wrapper whose policy should cover it.
#[async_trait]
pub trait Environment: Send + Sync + 'static {
    async fn read_file(&self, path: &str, range: Option<(u64, u64)>) -> Result<Vec<u8>, FsError>;
    /// Creates missing parent directories.
    async fn write_file(&self, path: &str, contents: &[u8]) -> Result<(), FsError>;
    async fn delete_file(&self, path: &str) -> Result<(), FsError>;
    async fn rename_file(&self, from: &str, to: &str) -> Result<(), FsError>;
    async fn create_directory(&self, path: &str) -> Result<(), FsError>;
    async fn file_exists(&self, path: &str) -> bool;
    async fn stat(&self, path: &str) -> Result<FileStat, FsError>;
    async fn list_directory(&self, path: &str, depth: u32) -> Result<Vec<DirEntry>, FsError>;
    async fn grep(&self, options: &GrepOptions) -> Result<Vec<GrepMatch>, FsError>;
    async fn glob(&self, pattern: &str, path: Option<&str>) -> Result<Vec<String>, FsError>;
    fn working_directory(&self) -> String;
    fn platform(&self) -> String;
    fn os_version(&self) -> String;
    async fn spawn(&self, request: SpawnRequest) -> Result<ProcessHandle, SpawnError>;
    /// The absolute path `path` names once `..` and symlinks are resolved; for a path that
    /// does not exist yet, where creating it would land: its existing part resolved (a
    /// dangling link to its target) and the rest appended. Policy wrappers check this, not
    /// the text the model wrote.
    async fn real_path(&self, path: &str) -> Result<String, FsError>;
    /// The folder on this machine the workspace is, for checkpoints (which record and
    /// restore it directly); `None` for remote and virtual environments, which have none.
    fn local_workspace(&self) -> Option<std::path::PathBuf> {
        None
    }
    /// Paths a checkpoint of the local workspace must neither copy nor restore: what the
    /// environment's policies deny (denied directories, credentials commands may not read).
    fn checkpoint_exclusions(&self) -> Vec<std::path::PathBuf> {
        Vec::new()
    }
    /// The folder, outside the workspace, where the agent saves the full text of tool
    /// outputs it cut (`execution-environment.scratch-directory`); reads and writes under it
    /// are allowed. `None`: no such place, outputs are only cut.
    fn scratch_directory(&self) -> Option<String> {
        None
    }
    /// Files outside the workspace that the environment shows, read-only: the instruction
    /// files and `.git/HEAD` above a workspace below its repository's root (`project_view`).
    /// A path boundary wrapped around it lets exactly these through for reading.
    fn project_files(&self) -> Vec<std::path::PathBuf> {
        Vec::new()
    }
}

/// Largest piece of a file `read-file` returns at once.
pub const MAX_READ: u64 = 256 * 1024 * 1024;

/// The `(offset, length)` a read of a file of `size` bytes covers, within `MAX_READ`;
/// `is_dir` refuses directories. Shared by every backend so the errors read the same.
pub fn read_window(
    path: &str,
    size: u64,
    is_dir: bool,
    range: Option<(u64, u64)>,
) -> Result<(u64, u64), FsError> {
    if is_dir {
        return Err(FsError::IsDirectory(format!("{path} is a directory, not a file")));
    }
    let (offset, length) = range.unwrap_or((0, size));
    if length > MAX_READ {
        return Err(FsError::TooLarge(format!(
            "{path} is {size} bytes; read at most {MAX_READ} bytes at a time"
        )));
    }
    Ok((offset, length))
}
