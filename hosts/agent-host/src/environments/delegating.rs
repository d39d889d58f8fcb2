//! Wrappers that pass most operations on to another environment. A wrapper implements
//! [`Delegating`], naming its inner environment and overriding only what it changes; the
//! blanket impl below makes it an [`Environment`]. The split exists because a blanket impl
//! of `Environment` itself could not be partly overridden, while a trait's default methods
//! can.

use crate::environments::environment::Environment;
use crate::environments::process::ProcessHandle;
use agent_protocol::ports::{DirEntry, FileStat, FsError, GrepMatch, GrepOptions, SpawnError, SpawnRequest};
use async_trait::async_trait;

/// An [`Environment`] that forwards every operation it does not override to
/// [`inner`](Delegating::inner). The methods mirror `Environment`'s one for one.
///
/// A policy wrapper must override every operation its policy covers: one left to the default
/// reaches the inner environment unchecked. That includes methods added to `Environment`
/// later, which get a forwarding default here too.
///
/// Implementors name the trait by its path (`impl crate::environments::delegating::Delegating for ..`) rather than
/// importing it: a type that implements it has both traits' methods under the same names, so
/// where both are in scope (as inside such an impl) a method call on the type itself, not on
/// a `dyn Environment`, is ambiguous.
#[async_trait]
pub trait Delegating: Send + Sync + 'static {
    /// The environment the operations not overridden go to.
    fn inner(&self) -> &dyn Environment;

    async fn read_file(&self, path: &str, range: Option<(u64, u64)>) -> Result<Vec<u8>, FsError> {
        self.inner().read_file(path, range).await
    }

    async fn write_file(&self, path: &str, contents: &[u8]) -> Result<(), FsError> {
        self.inner().write_file(path, contents).await
    }

    async fn delete_file(&self, path: &str) -> Result<(), FsError> {
        self.inner().delete_file(path).await
    }

    async fn rename_file(&self, from: &str, to: &str) -> Result<(), FsError> {
        self.inner().rename_file(from, to).await
    }

    async fn create_directory(&self, path: &str) -> Result<(), FsError> {
        self.inner().create_directory(path).await
    }

    async fn file_exists(&self, path: &str) -> bool {
        self.inner().file_exists(path).await
    }

    async fn stat(&self, path: &str) -> Result<FileStat, FsError> {
        self.inner().stat(path).await
    }

    async fn list_directory(&self, path: &str, depth: u32) -> Result<Vec<DirEntry>, FsError> {
        self.inner().list_directory(path, depth).await
    }

    async fn grep(&self, options: &GrepOptions) -> Result<Vec<GrepMatch>, FsError> {
        self.inner().grep(options).await
    }

    async fn glob(&self, pattern: &str, path: Option<&str>) -> Result<Vec<String>, FsError> {
        self.inner().glob(pattern, path).await
    }

    fn working_directory(&self) -> String {
        self.inner().working_directory()
    }

    fn platform(&self) -> String {
        self.inner().platform()
    }

    fn os_version(&self) -> String {
        self.inner().os_version()
    }

    async fn spawn(&self, request: SpawnRequest) -> Result<ProcessHandle, SpawnError> {
        self.inner().spawn(request).await
    }

    async fn real_path(&self, path: &str) -> Result<String, FsError> {
        self.inner().real_path(path).await
    }

    fn local_workspace(&self) -> Option<std::path::PathBuf> {
        self.inner().local_workspace()
    }

    fn checkpoint_exclusions(&self) -> Vec<std::path::PathBuf> {
        self.inner().checkpoint_exclusions()
    }

    fn scratch_directory(&self) -> Option<String> {
        self.inner().scratch_directory()
    }

    fn project_files(&self) -> Vec<std::path::PathBuf> {
        self.inner().project_files()
    }
}

#[async_trait]
impl<T: Delegating> Environment for T {
    async fn read_file(&self, path: &str, range: Option<(u64, u64)>) -> Result<Vec<u8>, FsError> {
        Delegating::read_file(self, path, range).await
    }

    async fn write_file(&self, path: &str, contents: &[u8]) -> Result<(), FsError> {
        Delegating::write_file(self, path, contents).await
    }

    async fn delete_file(&self, path: &str) -> Result<(), FsError> {
        Delegating::delete_file(self, path).await
    }

    async fn rename_file(&self, from: &str, to: &str) -> Result<(), FsError> {
        Delegating::rename_file(self, from, to).await
    }

    async fn create_directory(&self, path: &str) -> Result<(), FsError> {
        Delegating::create_directory(self, path).await
    }

    async fn file_exists(&self, path: &str) -> bool {
        Delegating::file_exists(self, path).await
    }

    async fn stat(&self, path: &str) -> Result<FileStat, FsError> {
        Delegating::stat(self, path).await
    }

    async fn list_directory(&self, path: &str, depth: u32) -> Result<Vec<DirEntry>, FsError> {
        Delegating::list_directory(self, path, depth).await
    }

    async fn grep(&self, options: &GrepOptions) -> Result<Vec<GrepMatch>, FsError> {
        Delegating::grep(self, options).await
    }

    async fn glob(&self, pattern: &str, path: Option<&str>) -> Result<Vec<String>, FsError> {
        Delegating::glob(self, pattern, path).await
    }

    fn working_directory(&self) -> String {
        Delegating::working_directory(self)
    }

    fn platform(&self) -> String {
        Delegating::platform(self)
    }

    fn os_version(&self) -> String {
        Delegating::os_version(self)
    }

    async fn spawn(&self, request: SpawnRequest) -> Result<ProcessHandle, SpawnError> {
        Delegating::spawn(self, request).await
    }

    async fn real_path(&self, path: &str) -> Result<String, FsError> {
        Delegating::real_path(self, path).await
    }

    fn local_workspace(&self) -> Option<std::path::PathBuf> {
        Delegating::local_workspace(self)
    }

    fn checkpoint_exclusions(&self) -> Vec<std::path::PathBuf> {
        Delegating::checkpoint_exclusions(self)
    }

    fn scratch_directory(&self) -> Option<String> {
        Delegating::scratch_directory(self)
    }

    fn project_files(&self) -> Vec<std::path::PathBuf> {
        Delegating::project_files(self)
    }
}
