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
//! the session runs while the editor is asked (commands hold a shared lock for their whole
//! run, an editor request the exclusive one; a sandboxed command's processes all end with it).

use agent_client_protocol::Client;
use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema::{ReadTextFileRequest, SessionId, WriteTextFileRequest};
use agent_host::Environment;
use agent_host::environments::ProcessHandle;
use agent_protocol::ports::{FsError, SpawnError, SpawnRequest};
use async_trait::async_trait;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

/// How long the editor gets to answer one request; a read then falls back to the disk.
const EDITOR_PATIENCE: Duration = Duration::from_secs(30);

/// What the client offered at `initialize`.
#[derive(Clone, Copy, Debug, Default)]
pub struct ClientFiles {
    pub read: bool,
    pub write: bool,
}

/// One session's line to the editor; its id is known once the session has started (reads
/// before that, of the instruction files, go to the disk).
pub struct EditorLink {
    connection: ConnectionTo<Client>,
    offered: ClientFiles,
    session: OnceLock<SessionId>,
    /// The folder the editor named, which the paths it is sent start from.
    root: PathBuf,
}

impl EditorLink {
    pub fn new(connection: ConnectionTo<Client>, offered: ClientFiles, root: PathBuf) -> Arc<Self> {
        Arc::new(Self {
            connection,
            offered,
            session: OnceLock::new(),
            root,
        })
    }

    pub fn bind(&self, session: SessionId) {
        let _ = self.session.set(session);
    }

    fn reads(&self) -> bool {
        self.offered.read && self.session.get().is_some()
    }

    fn writes(&self) -> bool {
        self.offered.write && self.session.get().is_some()
    }

    async fn read(&self, path: &Path) -> Result<String, String> {
        let session = self.session.get().ok_or("the session has not started")?;
        let request = ReadTextFileRequest::new(session.clone(), path.to_path_buf());
        let sent = self.connection.send_request(request).block_task();
        match tokio::time::timeout(EDITOR_PATIENCE, sent).await {
            Ok(Ok(response)) => Ok(response.content),
            Ok(Err(error)) => Err(error.to_string()),
            Err(_) => Err(format!("no answer within {EDITOR_PATIENCE:?}")),
        }
    }

    async fn write(&self, path: &Path, text: &str) -> Result<(), String> {
        let session = self.session.get().ok_or("the session has not started")?;
        let request = WriteTextFileRequest::new(session.clone(), path.to_path_buf(), text.to_string());
        let sent = self.connection.send_request(request).block_task();
        match tokio::time::timeout(EDITOR_PATIENCE, sent).await {
            Ok(Ok(_)) => Ok(()),
            Ok(Err(error)) => Err(error.to_string()),
            Err(_) => Err(format!(
                "no answer within {EDITOR_PATIENCE:?} (the editor may still make the change)"
            )),
        }
    }
}

/// The local environment with text files read and written through the editor.
pub struct EditorFiles {
    inner: Arc<dyn Environment>,
    link: Arc<EditorLink>,
    /// Shared by each running command, taken whole while the editor is asked.
    commands: Arc<tokio::sync::RwLock<()>>,
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
            commands: Arc::default(),
            workspace,
        }
    }

    /// The path the editor knows `path` by (from its folder, links resolved), when it names
    /// a file inside the workspace; `None` sends the operation to the disk.
    async fn in_workspace(&self, path: &str) -> Option<(PathBuf, PathBuf)> {
        let real = PathBuf::from(self.inner.real_path(path).await.ok()?);
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
        let _no_command_runs = self.commands.write().await;
        // The disk's copy first: the local environment's confinement decides what may be
        // read at all, and a binary file is no buffer.
        let disk = self.inner.read_file(path, None).await?;
        if as_text(&disk).is_none() {
            return Ok(disk);
        }
        let Some((editor_path, _)) = self.in_workspace(path).await else {
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
        let _no_command_runs = self.commands.write().await;
        let Some((editor_path, real)) = self.in_workspace(path).await else {
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
        self.link
            .write(&editor_path, text)
            .await
            .map_err(|why| FsError::Other(format!("the editor did not write {path}: {why}")))
    }

    async fn spawn(&self, request: SpawnRequest) -> Result<ProcessHandle, SpawnError> {
        let running = self.commands.clone().read_owned().await;
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
