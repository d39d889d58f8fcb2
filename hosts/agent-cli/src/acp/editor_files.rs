//! The editor as the session's environment for text files: when the client offers
//! `fs/read_text_file` and `fs/write_text_file`, the agent reads the editor's buffers (unsaved
//! changes included) and the editor makes, and can show, each write.
//!
//! It sits directly over the local environment, beneath every policy wrapper, so a path
//! reaches the editor only after agent-host's own rules have passed it (read-only mode, deny
//! rules, the command guard; the core's stale-read guard before that), and only after the
//! local environment has read the file itself (a read: confinement, links, special files) or
//! checked where the write lands (inside the workspace once links are followed, a regular
//! file with no other hard links). Binary files, ranged reads, files outside the workspace
//! (scratch, `--allow-dir` folders), listings, searches and commands stay local.
//!
//! The editor runs outside the sandbox, so the check of a path and the editor's use of it
//! must not be split by a command that swaps a folder on that path for a link: no command of
//! this process runs while an editor is asked (commands hold a shared lock for their whole
//! run, an editor request the exclusive one until the editor answers; a sandboxed command's
//! processes all end with it).

use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema::{ReadTextFileRequest, SessionId, WriteTextFileRequest};
use agent_client_protocol::{Client, JsonRpcRequest};
use agent_host::Environment;
use agent_host::environments::ProcessHandle;
use agent_host::environments::nearest_real_path;
use agent_protocol::ports::{FsError, SpawnError, SpawnRequest};
use async_trait::async_trait;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;
use std::time::Instant;
use tokio::sync::{OwnedRwLockWriteGuard, RwLock};

/// How long the editor gets to answer one request; a read then falls back to the disk.
const EDITOR_PATIENCE: Duration = Duration::from_secs(30);

/// What the client offered at `initialize` (and, for terminals, the user allowed).
#[derive(Clone, Copy, Debug, Default)]
pub struct ClientFiles {
    pub read: bool,
    pub write: bool,
    /// The client's terminals, used only with `--editor-terminals`.
    pub terminal: bool,
}

/// One session's line to the editor; its id is known once the session has started (reads
/// before that, of the instruction files, go to the disk).
pub struct EditorLink {
    connection: ConnectionTo<Client>,
    offered: ClientFiles,
    session: OnceLock<SessionId>,
    /// The folder the editor named, which the paths it is sent start from.
    root: PathBuf,
    /// Set when the editor did not answer a write in time: writes stay local from then on.
    writes_failed: AtomicBool,
}

impl EditorLink {
    pub fn new(connection: ConnectionTo<Client>, offered: ClientFiles, root: PathBuf) -> Arc<Self> {
        Arc::new(Self {
            connection,
            offered,
            session: OnceLock::new(),
            root,
            writes_failed: AtomicBool::new(false),
        })
    }

    pub fn bind(&self, session: SessionId) {
        let _ = self.session.set(session);
    }

    fn reads(&self) -> bool {
        self.offered.read && self.session.get().is_some()
    }

    fn writes(&self) -> bool {
        self.offered.write && self.session.get().is_some() && !self.writes_failed.load(Ordering::Relaxed)
    }

    pub fn terminals(&self) -> bool {
        self.offered.terminal && self.session.get().is_some()
    }

    /// Sends the request `build` makes for this session; its answer, or why there is none.
    pub async fn ask<R: JsonRpcRequest>(
        &self,
        build: impl FnOnce(SessionId) -> R,
    ) -> Result<R::Response, String> {
        let session = self.session.get().ok_or("the session has not started")?;
        // Awaited to the end: a request dropped early is cancelled with a message clients
        // may not know.
        self.connection
            .send_request(build(session.clone()))
            .block_task()
            .await
            .map_err(|error| error.to_string())
    }

    /// [`EditorLink::ask`] given [`EDITOR_PATIENCE`] (a late answer is dropped).
    pub async fn ask_briefly<R: JsonRpcRequest>(
        &self,
        build: impl FnOnce(SessionId) -> R,
    ) -> Result<R::Response, String> {
        match tokio::time::timeout(EDITOR_PATIENCE, self.ask(build)).await {
            Ok(answer) => answer,
            Err(_) => Err(format!("no answer within {EDITOR_PATIENCE:?}")),
        }
    }

    async fn read(&self, path: &Path) -> Result<String, String> {
        self.ask_briefly(|session| ReadTextFileRequest::new(session, path.to_path_buf()))
            .await
            .map(|response| response.content)
    }

    /// Asks the editor to write; `quiet` (no command may run) is held until the editor has
    /// answered, however late: past [`EDITOR_PATIENCE`] the call fails, the request stays the
    /// editor's, and the session's next writes are made by agent-host.
    async fn write(
        self: &Arc<Self>,
        path: &Path,
        text: &str,
        quiet: OwnedRwLockWriteGuard<()>,
    ) -> Result<(), String> {
        let (answered, answer) = tokio::sync::oneshot::channel();
        let link = self.clone();
        let request = (path.to_path_buf(), text.to_string());
        *pending_write() = Some((path.to_path_buf(), Instant::now()));
        tokio::spawn(async move {
            let result = link
                .ask(|session| WriteTextFileRequest::new(session, request.0, request.1))
                .await;
            *pending_write() = None;
            drop(quiet);
            let _ = answered.send(result);
        });
        match tokio::time::timeout(EDITOR_PATIENCE, answer).await {
            Ok(Ok(result)) => result.map(|_| ()),
            Ok(Err(_)) => Err("the connection to the editor ended".to_string()),
            Err(_) => {
                self.writes_failed.store(true, Ordering::Relaxed);
                Err(format!(
                    "no answer within {EDITOR_PATIENCE:?} (the editor may still make the change; \
                     agent-host writes the session's files itself from now on)"
                ))
            }
        }
    }
}

/// The write an editor is being asked to make, and since when: while it is unanswered every
/// other command and editor request waits, and past [`EDITOR_PATIENCE`] they give up, saying
/// why, instead of waiting on (the lock itself stays until the editor answers).
static PENDING_WRITE: Mutex<Option<(PathBuf, Instant)>> = Mutex::new(None);

fn pending_write() -> std::sync::MutexGuard<'static, Option<(PathBuf, Instant)>> {
    PENDING_WRITE
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Waits for `acquire` (a lock), unless an editor has left a write unanswered too long.
async fn unless_stuck<T>(acquire: impl std::future::Future<Output = T>) -> Result<T, String> {
    tokio::pin!(acquire);
    let mut check = tokio::time::interval(Duration::from_millis(500));
    loop {
        tokio::select! {
            acquired = &mut acquire => return Ok(acquired),
            _ = check.tick() => {
                if let Some((path, since)) = pending_write().as_ref()
                    && since.elapsed() > EDITOR_PATIENCE
                {
                    return Err(format!(
                        "the editor has not answered a write to {} for {} s; until it does, no command \
                         runs and no file goes to the editor (answer or dismiss it in the editor)",
                        path.display(),
                        since.elapsed().as_secs()
                    ));
                }
            }
        }
    }
}

/// One lock for the whole process: no command of any session runs while an editor is asked
/// (sessions of one connection may share a folder).
fn commands_lock() -> Arc<RwLock<()>> {
    static LOCK: OnceLock<Arc<RwLock<()>>> = OnceLock::new();
    LOCK.get_or_init(Arc::default).clone()
}

/// Whether two paths name the same file or folder now (links followed).
fn same_place(a: &Path, b: &Path) -> bool {
    match (std::fs::metadata(a), std::fs::metadata(b)) {
        (Ok(a), Ok(b)) => a.dev() == b.dev() && a.ino() == b.ino(),
        _ => false,
    }
}

/// The local environment with text files read and written through the editor.
pub struct EditorFiles {
    inner: Arc<dyn Environment>,
    link: Arc<EditorLink>,
    /// Shared by each running command, taken whole while the editor is asked.
    commands: Arc<RwLock<()>>,
    /// The workspace with links resolved: only files under it go to the editor.
    workspace: PathBuf,
}

impl EditorFiles {
    pub fn new(inner: Arc<dyn Environment>, link: Arc<EditorLink>) -> Self {
        let named = PathBuf::from(inner.working_directory());
        let workspace = std::fs::canonicalize(&named).unwrap_or(named);
        Self {
            inner,
            link,
            commands: commands_lock(),
            workspace,
        }
    }

    /// The path the editor knows `path` by (its folder joined to the rest, links resolved)
    /// and the real path, when it names a file inside the workspace; `None` sends the
    /// operation to the disk. A real path that is not UTF-8 stays local: the editor takes
    /// paths as text, so it would get another name (`\xff` turned into U+FFFD), which a link
    /// could make another file.
    fn in_workspace(&self, path: &str) -> Option<(PathBuf, PathBuf)> {
        let given = Path::new(path);
        let absolute = match given.is_absolute() {
            true => given.to_path_buf(),
            false => PathBuf::from(self.inner.working_directory()).join(given),
        };
        let real = nearest_real_path(&absolute).ok()?;
        real.to_str()?;
        let inside = real.strip_prefix(&self.workspace).ok()?.to_path_buf();
        Some((self.link.root.join(inside), real))
    }
}

/// Text the editor can hold: UTF-8 without NUL bytes.
fn as_text(bytes: &[u8]) -> Option<&str> {
    std::str::from_utf8(bytes)
        .ok()
        .filter(|text| !text.contains('\0'))
}

#[async_trait]
impl agent_host::environments::Delegating for EditorFiles {
    fn inner(&self) -> &dyn Environment {
        &*self.inner
    }

    async fn read_file(&self, path: &str, range: Option<(u64, u64)>) -> Result<Vec<u8>, FsError> {
        if range.is_some() || !self.link.reads() {
            return self.inner.read_file(path, range).await;
        }
        let _no_command_runs = match unless_stuck(self.commands.write()).await {
            Ok(guard) => guard,
            Err(why) => {
                tracing::warn!("{path} is read from disk: {why}");
                return self.inner.read_file(path, None).await;
            }
        };
        // The disk's copy first: the local environment's confinement decides what may be
        // read at all, and a binary file is no buffer.
        let disk = self.inner.read_file(path, None).await?;
        if as_text(&disk).is_none() {
            return Ok(disk);
        }
        // The editor's path must name the very file that was read.
        let Some((editor_path, _)) = self
            .in_workspace(path)
            .filter(|(editor_path, real)| same_place(editor_path, real))
        else {
            return Ok(disk);
        };
        match self.link.read(&editor_path).await {
            Ok(text) => Ok(text.into_bytes()),
            Err(why) => {
                tracing::warn!(
                    "the editor did not read {}, read from disk: {why}",
                    editor_path.display()
                );
                Ok(disk)
            }
        }
    }

    async fn write_file(&self, path: &str, contents: &[u8]) -> Result<(), FsError> {
        let text = match as_text(contents) {
            Some(text) if self.link.writes() => text,
            _ => return self.inner.write_file(path, contents).await,
        };
        let no_command_runs = unless_stuck(self.commands.clone().write_owned())
            .await
            .map_err(|why| FsError::Other(format!("{path} was not written: {why}")))?;
        let Some((editor_path, real)) = self.in_workspace(path) else {
            return self.inner.write_file(path, contents).await;
        };
        match std::fs::symlink_metadata(&real) {
            // What the local environment refuses (a directory, a device, a file with other
            // hard links, which could be outside) it refuses with its own message.
            Ok(found) if !found.is_file() || found.nlink() > 1 => {
                return self.inner.write_file(path, contents).await;
            }
            Ok(_) => {}
            Err(_) => {
                // A new file: its folders are made here, confined, as a local write would.
                if let Some(parent) = Path::new(path).parent().filter(|p| !p.as_os_str().is_empty()) {
                    self.inner.create_directory(&parent.to_string_lossy()).await?;
                }
            }
        }
        // The editor's path must lead where agent-host checked: the file, or a new file's folder.
        let checked = match real.exists() {
            true => same_place(&editor_path, &real),
            false => match (editor_path.parent(), real.parent()) {
                (Some(editor_folder), Some(real_folder)) => same_place(editor_folder, real_folder),
                _ => false,
            },
        };
        if !checked {
            return self.inner.write_file(path, contents).await;
        }
        self.link
            .write(&editor_path, text, no_command_runs)
            .await
            .map_err(|why| FsError::Other(format!("the editor did not write {path}: {why}")))
    }

    async fn spawn(&self, request: SpawnRequest) -> Result<ProcessHandle, SpawnError> {
        let running = unless_stuck(self.commands.clone().read_owned())
            .await
            .map_err(|why| SpawnError::Failed(format!("the command was not started: {why}")))?;
        let handle = self.inner.spawn(request).await?;
        // Released when the command has ended, not when its result is read: the core reads
        // it only after the round's other calls (an edit among them) have started.
        let ended = handle.ended();
        tokio::spawn(async move {
            ended.await;
            drop(running);
        });
        Ok(handle)
    }
}
