//! The local execution environment: files under the workspace through cap-std directory
//! handles, searches with ripgrep's crates, and real processes (see `process`).
//!
//! Confinement is by construction: every file operation goes through a `cap_std::fs::Dir`
//! opened at the workspace (or at an extra allowed root), and cap-std resolves each path
//! beneath that handle, so `..` and symbolic links that lead outside fail in the kernel's
//! path resolution (`openat2` with `RESOLVE_BENEATH` on Linux) instead of in a string check.

use crate::environments::env_vars::EnvPolicy;
use crate::environments::environment::Environment;
use crate::environments::file_kind;
use crate::environments::process::{self, ProcessHandle};
use crate::environments::project_view::ProjectView;
use crate::environments::scratch::ScratchFolder;
use crate::environments::search;
use crate::sandbox::Sandbox;
use agent_protocol::ports::{
    DirEntry, EntryKind, FileStat, FsError, GrepMatch, GrepOptions, SpawnError, SpawnRequest,
};
use async_trait::async_trait;
use cap_std::ambient_authority;
use cap_std::fs::Dir;
use std::io::ErrorKind;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, UNIX_EPOCH};

pub use crate::environments::link_targets::nearest_real_path;

/// A directory the environment may touch, and the handle everything under it goes through.
#[derive(Debug)]
struct Root {
    path: PathBuf,
    dir: Dir,
}

/// The scratch folder (see `scratch`) and the handle everything under it goes through.
#[derive(Debug)]
struct Scratch {
    root: Root,
    _folder: ScratchFolder,
}

fn open_scratch_in(parent: Option<&Path>) -> Option<Arc<Scratch>> {
    let folder = ScratchFolder::create(parent)?;
    match open_root(folder.path()) {
        Ok(root) => Some(Arc::new(Scratch {
            root,
            _folder: folder,
        })),
        Err(error) => {
            tracing::warn!(%error, "no folder for saved tool outputs; long outputs are only cut");
            None
        }
    }
}

/// Files and processes on this machine, confined to a workspace and any extra roots.
#[derive(Debug, Clone)]
pub struct LocalEnvironment {
    /// The workspace first, then the extra allowed roots.
    roots: Arc<Vec<Root>>,
    scratch: Option<Arc<Scratch>>,
    env_policy: EnvPolicy,
    /// `None`: commands run with all the user's rights.
    sandbox: Option<Arc<Sandbox>>,
    /// The instruction files and `.git/HEAD` of the repository the workspace is a folder of.
    project: Option<Arc<ProjectView>>,
}

fn open_root(dir: &Path) -> std::io::Result<Root> {
    let path = std::fs::canonicalize(dir)?;
    if !path.is_dir() {
        return Err(std::io::Error::new(
            ErrorKind::NotADirectory,
            format!("{} is not a directory", path.display()),
        ));
    }
    let dir = Dir::open_ambient_dir(&path, ambient_authority())?;
    Ok(Root { path, dir })
}

impl LocalEnvironment {
    /// An environment confined to `dir` (made absolute), credentials filtered from commands.
    pub fn new(dir: impl AsRef<Path>) -> std::io::Result<Self> {
        let workspace = open_root(dir.as_ref())?;
        let project = ProjectView::above(&workspace.path).map(Arc::new);
        Ok(Self {
            roots: Arc::new(vec![workspace]),
            scratch: open_scratch_in(None),
            env_policy: EnvPolicy::default(),
            sandbox: None,
            project,
        })
    }

    /// Also allows the given directories (e.g. a shared cache), reached by absolute paths.
    pub fn with_extra_roots(self, dirs: &[PathBuf]) -> std::io::Result<Self> {
        let mut roots: Vec<Root> = Vec::with_capacity(dirs.len() + 1);
        roots.push(open_root(&self.roots[0].path)?);
        for dir in dirs {
            roots.push(open_root(dir)?);
        }
        Ok(Self {
            roots: Arc::new(roots),
            scratch: self.scratch,
            env_policy: self.env_policy,
            sandbox: self.sandbox,
            project: self.project,
        })
    }

    /// Keeps saved outputs in a folder made in `parent` (e.g. agent-host's state folder,
    /// which sandboxed commands cannot read) instead of the system's temporary folder.
    pub fn with_scratch_in(mut self, parent: &Path) -> Self {
        if std::fs::create_dir_all(parent).is_ok()
            && let Some(scratch) = open_scratch_in(Some(parent))
        {
            self.scratch = Some(scratch);
        }
        self
    }

    /// Runs every command in `sandbox` (`None`: with all the user's rights).
    pub fn with_sandbox(mut self, sandbox: Option<Arc<Sandbox>>) -> Self {
        self.sandbox = sandbox;
        self
    }

    /// The workspace, then the extra roots (canonical).
    pub fn root_paths(&self) -> Vec<PathBuf> {
        self.roots.iter().map(|r| r.path.clone()).collect()
    }

    pub fn with_env_policy(mut self, policy: EnvPolicy) -> Self {
        self.env_policy = policy;
        self
    }

    pub fn root(&self) -> &Path {
        &self.roots[0].path
    }

    /// The root a path falls under and the path relative to it. Relative paths are under
    /// the workspace; an absolute one must start with one of the roots.
    fn locate(&self, path: &str) -> Result<(&Root, PathBuf), FsError> {
        if path.is_empty() {
            return Err(FsError::InvalidInput("the path is empty".to_string()));
        }
        if path.contains('\0') {
            return Err(FsError::InvalidInput(format!(
                "the path {path:?} contains a NUL byte"
            )));
        }
        let given = Path::new(path);
        let (root, relative) = if given.is_absolute() {
            self.roots
                .iter()
                .chain(self.scratch.as_ref().map(|s| &s.root))
                .find_map(|root| {
                    given
                        .strip_prefix(&root.path)
                        .ok()
                        .map(|rest| (root, rest.to_path_buf()))
                })
                .ok_or_else(|| self.outside(path))?
        } else {
            (&self.roots[0], given.to_path_buf())
        };
        let relative = if relative.as_os_str().is_empty() {
            PathBuf::from(".")
        } else {
            relative
        };
        Ok((root, relative))
    }

    fn outside(&self, path: &str) -> FsError {
        let roots: Vec<String> = self.roots.iter().map(|r| r.path.display().to_string()).collect();
        FsError::Denied(format!(
            "{path} is outside the workspace; this environment may only use {}",
            roots.join(", ")
        ))
    }

    /// An I/O error as the WIT `fs-error`, naming the path; an escape cap-std stopped is a
    /// denial.
    fn error(&self, error: std::io::Error, path: &str) -> FsError {
        if error.kind() == ErrorKind::PermissionDenied
            && error.to_string().contains("outside of the filesystem")
        {
            return FsError::Denied(format!(
                "{path} leads outside the workspace (through `..` or a symbolic link); this environment may only use {}",
                self.roots[0].path.display()
            ));
        }
        fs_error(error, path)
    }

    /// The real directory a path names, checked to be inside its root.
    fn real_dir(&self, path: &str) -> Result<PathBuf, FsError> {
        let (root, relative) = self.locate(path)?;
        let inside = root
            .dir
            .canonicalize(&relative)
            .map_err(|e| self.error(e, path))?;
        Ok(root.path.join(inside))
    }

    /// Reads a regular file (see `file_kind` for what else is refused, and why).
    pub fn read_file(&self, path: &str, range: Option<(u64, u64)>) -> Result<Vec<u8>, FsError> {
        let (root, relative) = match self.locate(path) {
            Ok(found) => found,
            Err(outside) => return self.project_file(path, range).unwrap_or(Err(outside)),
        };
        file_kind::read(&root.dir, &relative, path, range, &|e| self.error(e, path))
    }

    /// Writes a regular file; one with other hard links only under an `--allow-dir`.
    pub fn write_file(&self, path: &str, contents: &[u8]) -> Result<(), FsError> {
        let (root, relative) = self.locate(path)?;
        if root.dir.is_dir(&relative) {
            return Err(FsError::IsDirectory(format!("{path} is a directory")));
        }
        if let Some(parent) = relative.parent().filter(|p| !p.as_os_str().is_empty()) {
            self.create_parents(root, parent, path)?;
        }
        let vouched = || self.under_extra_root(root, &relative);
        file_kind::write(&root.dir, &relative, path, contents, &vouched, &|e| {
            self.error(e, path)
        })
    }

    /// Whether `relative` lies under an `--allow-dir` once links are followed (also when
    /// given relative to the workspace, for an extra root inside it).
    fn under_extra_root(&self, root: &Root, relative: &Path) -> bool {
        let Ok(inside) = root.dir.canonicalize(relative) else {
            return false;
        };
        let real = root.path.join(inside);
        self.roots[1..].iter().any(|extra| real.starts_with(&extra.path))
    }

    pub fn delete_file(&self, path: &str) -> Result<(), FsError> {
        let (root, relative) = self.locate(path)?;
        if root.dir.is_dir(&relative) {
            return Err(FsError::IsDirectory(format!(
                "{path} is a directory; delete-file removes files only"
            )));
        }
        root.dir.remove_file(&relative).map_err(|e| self.error(e, path))
    }

    pub fn rename_file(&self, from: &str, to: &str) -> Result<(), FsError> {
        let (source_root, source) = self.locate(from)?;
        let (target_root, target) = self.locate(to)?;
        source_root
            .dir
            .symlink_metadata(&source)
            .map_err(|e| self.error(e, from))?;
        if let Some(parent) = target.parent().filter(|p| !p.as_os_str().is_empty()) {
            self.create_parents(target_root, parent, to)?;
        }
        source_root
            .dir
            .rename(&source, &target_root.dir, &target)
            .map_err(|e| self.error(e, from))
    }

    pub fn create_directory(&self, path: &str) -> Result<(), FsError> {
        let (root, relative) = self.locate(path)?;
        self.create_parents(root, &relative, path)
    }

    /// `create_dir_all` beneath a root. A link on the way that leads outside makes cap-std
    /// report "already exists"; resolving the path then names the real problem.
    fn create_parents(&self, root: &Root, dirs: &Path, path: &str) -> Result<(), FsError> {
        root.dir
            .create_dir_all(dirs)
            .map_err(|error| match root.dir.canonicalize(dirs) {
                Err(resolving) => self.error(resolving, path),
                Ok(_) => self.error(error, path),
            })
    }

    pub fn file_exists(&self, path: &str) -> bool {
        match self.locate(path) {
            Ok((root, relative)) => root.dir.exists(relative),
            Err(_) => self
                .project
                .as_ref()
                .and_then(|project| project.exists(path))
                .unwrap_or(false),
        }
    }

    /// A file outside the roots that the project view shows (see `project_view`).
    fn project_file(&self, path: &str, range: Option<(u64, u64)>) -> Option<Result<Vec<u8>, FsError>> {
        self.project.as_ref()?.read(path, range)
    }

    pub fn stat(&self, path: &str) -> Result<FileStat, FsError> {
        let (root, relative) = self.locate(path)?;
        let meta = root.dir.metadata(&relative).map_err(|e| self.error(e, path))?;
        let file_type = meta.file_type();
        let kind = if file_type.is_dir() {
            EntryKind::Directory
        } else if file_type.is_file() {
            EntryKind::File
        } else {
            EntryKind::Other
        };
        let modified_ms = meta
            .modified()
            .ok()
            .and_then(|t| t.into_std().duration_since(UNIX_EPOCH).ok())
            .map_or(0, |d| d.as_millis() as u64);
        Ok(FileStat {
            kind,
            size: if meta.is_dir() { 0 } else { meta.len() },
            modified_ms,
            readonly: meta.permissions().readonly(),
        })
    }

    pub fn list_directory(&self, path: &str, depth: u32) -> Result<Vec<DirEntry>, FsError> {
        let base = self.real_dir(path)?;
        if !base.is_dir() {
            return Err(FsError::NotADirectory(format!("{path} is not a directory")));
        }
        Ok(search::list(&base, depth))
    }

    pub fn grep(&self, options: &GrepOptions) -> Result<Vec<GrepMatch>, FsError> {
        let base = self.real_dir(options.path.as_deref().unwrap_or("."))?;
        search::grep(&base, self.root(), options)
    }

    pub fn glob(&self, pattern: &str, path: Option<&str>) -> Result<Vec<String>, FsError> {
        let base = self.real_dir(path.unwrap_or("."))?;
        search::glob(&base, self.root(), pattern)
    }

    pub fn working_directory(&self) -> String {
        self.root().to_string_lossy().into_owned()
    }

    pub fn platform(&self) -> String {
        match std::env::consts::OS {
            "macos" => "darwin".to_string(),
            other => other.to_string(),
        }
    }

    pub fn os_version(&self) -> String {
        let release = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap_or_default();
        format!("{} {}", std::env::consts::OS, release.trim())
            .trim()
            .to_string()
    }

    /// Starts a command in the workspace (or a directory inside it), in the sandbox if there
    /// is one; without, a shell can reach whatever the user can.
    pub fn spawn(
        &self,
        command: &str,
        working_dir: Option<&str>,
        timeout_ms: u64,
        env: &[(String, String)],
    ) -> Result<ProcessHandle, SpawnError> {
        let cwd = match working_dir {
            Some(dir) => self
                .real_dir(dir)
                .map_err(|e| SpawnError::InvalidWorkingDir(e.to_string()))?,
            None => self.root().to_path_buf(),
        };
        if !cwd.is_dir() {
            return Err(SpawnError::InvalidWorkingDir(format!(
                "{} is not a directory",
                cwd.display()
            )));
        }
        process::spawn(
            command,
            process::RunIn {
                cwd: &cwd,
                timeout: Duration::from_millis(timeout_ms.max(1)),
                policy: self.env_policy,
                extra_env: env,
                sandbox: self.sandbox.clone(),
            },
        )
        .map_err(|e| match e {
            process::StartError::Sandbox(e) => SpawnError::Denied(e.to_string()),
            process::StartError::Io(e) => match &self.sandbox {
                Some(sandbox) => SpawnError::Failed(format!(
                    "could not start /bin/bash in the {} sandbox: {e}",
                    sandbox.mode()
                )),
                None => SpawnError::Failed(format!("could not start /bin/bash: {e}")),
            },
        })
    }

    /// Resolves `path` on this machine, dangling links to where they point (not confined:
    /// policy wrappers decide).
    pub fn real_path(&self, path: &str) -> Result<String, FsError> {
        let given = Path::new(path);
        let absolute = if given.is_absolute() {
            given.to_path_buf()
        } else {
            self.root().join(given)
        };
        nearest_real_path(&absolute)
            .map(|p| p.to_string_lossy().into_owned())
            .map_err(|e| fs_error(e, path))
    }
}

/// An I/O error as the WIT `fs-error`, naming the path.
pub fn fs_error(error: std::io::Error, path: &str) -> FsError {
    match error.kind() {
        ErrorKind::NotFound => FsError::NotFound(format!("{path} does not exist")),
        ErrorKind::PermissionDenied => FsError::PermissionDenied(format!("permission denied: {path}")),
        ErrorKind::IsADirectory => FsError::IsDirectory(format!("{path} is a directory")),
        ErrorKind::NotADirectory => FsError::NotADirectory(format!("a parent of {path} is not a directory")),
        ErrorKind::AlreadyExists => FsError::AlreadyExists(format!("{path} already exists")),
        _ => FsError::Other(format!("{path}: {error}")),
    }
}

#[async_trait]
impl Environment for LocalEnvironment {
    fn local_workspace(&self) -> Option<PathBuf> {
        Some(self.root().to_path_buf())
    }

    fn scratch_directory(&self) -> Option<String> {
        self.scratch
            .as_ref()
            .map(|s| s.root.path.to_string_lossy().into_owned())
    }

    fn project_files(&self) -> Vec<PathBuf> {
        self.project
            .as_ref()
            .map(|project| project.files())
            .unwrap_or_default()
    }

    /// The sandbox's denied reads, and what it keeps read-only whatever the mode (`.git`,
    /// `.agent`, a `.git` file's `gitdir:` target): a restore must not rewrite a repository.
    fn checkpoint_exclusions(&self) -> Vec<PathBuf> {
        let mut excluded = crate::sandbox::protected_paths(self.root());
        if let Some(sandbox) = &self.sandbox {
            excluded.extend(sandbox.denied_reads().iter().cloned());
        }
        excluded
    }

    async fn read_file(&self, path: &str, range: Option<(u64, u64)>) -> Result<Vec<u8>, FsError> {
        let size = match range {
            Some((_, length)) => Some(length),
            None => LocalEnvironment::stat(self, path).ok().map(|s| s.size),
        };
        // A path that cannot be statted fails just as fast when read.
        if size.is_none_or(|size| size <= INLINE_IO_LIMIT) {
            return LocalEnvironment::read_file(self, path, range);
        }
        let (env, path) = (self.clone(), path.to_string());
        blocking(move || env.read_file(&path, range)).await
    }

    async fn write_file(&self, path: &str, contents: &[u8]) -> Result<(), FsError> {
        if contents.len() as u64 <= INLINE_IO_LIMIT {
            return LocalEnvironment::write_file(self, path, contents);
        }
        let (env, path, contents) = (self.clone(), path.to_string(), contents.to_vec());
        blocking(move || env.write_file(&path, &contents)).await
    }

    async fn delete_file(&self, path: &str) -> Result<(), FsError> {
        LocalEnvironment::delete_file(self, path)
    }

    async fn rename_file(&self, from: &str, to: &str) -> Result<(), FsError> {
        LocalEnvironment::rename_file(self, from, to)
    }

    async fn create_directory(&self, path: &str) -> Result<(), FsError> {
        LocalEnvironment::create_directory(self, path)
    }

    async fn file_exists(&self, path: &str) -> bool {
        LocalEnvironment::file_exists(self, path)
    }

    async fn stat(&self, path: &str) -> Result<FileStat, FsError> {
        LocalEnvironment::stat(self, path)
    }

    async fn list_directory(&self, path: &str, depth: u32) -> Result<Vec<DirEntry>, FsError> {
        let (env, path) = (self.clone(), path.to_string());
        blocking(move || env.list_directory(&path, depth)).await
    }

    async fn grep(&self, options: &GrepOptions) -> Result<Vec<GrepMatch>, FsError> {
        let (env, options) = (self.clone(), options.clone());
        blocking(move || env.grep(&options)).await
    }

    async fn glob(&self, pattern: &str, path: Option<&str>) -> Result<Vec<String>, FsError> {
        let (env, pattern, path) = (self.clone(), pattern.to_string(), path.map(str::to_string));
        blocking(move || env.glob(&pattern, path.as_deref())).await
    }

    fn working_directory(&self) -> String {
        LocalEnvironment::working_directory(self)
    }

    fn platform(&self) -> String {
        LocalEnvironment::platform(self)
    }

    fn os_version(&self) -> String {
        LocalEnvironment::os_version(self)
    }

    async fn spawn(&self, request: SpawnRequest) -> Result<ProcessHandle, SpawnError> {
        LocalEnvironment::spawn(
            self,
            &request.command,
            request.working_dir.as_deref(),
            request.timeout_ms,
            &request.env,
        )
    }

    async fn real_path(&self, path: &str) -> Result<String, FsError> {
        LocalEnvironment::real_path(self, path)
    }
}

/// Reads and writes up to this size, and metadata operations, run on the calling thread: a
/// hop to the blocking pool costs more than they do (it was most of the component's fixed
/// cost per loop round, BENCHMARKS.md), as wasmtime-wasi's `allow_blocking_current_thread`
/// also reasons. Bigger files, listings and searches, whose time has no bound, still run
/// off the async worker threads.
const INLINE_IO_LIMIT: u64 = 256 * 1024;

/// Runs blocking filesystem work off the async worker threads.
async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> Result<T, FsError> + Send + 'static,
) -> Result<T, FsError> {
    tokio::task::spawn_blocking(work)
        .await
        .unwrap_or_else(|e| Err(FsError::Other(format!("the filesystem task failed: {e}"))))
}
