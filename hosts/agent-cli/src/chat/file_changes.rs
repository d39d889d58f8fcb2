//! The chat's view of what the agent's tools did to files, for the diffs it shows. An
//! environment wrapper keeps each file's contents from just before a write or delete,
//! because reading them when TOOL_CALL_START reaches the screen would race the tool (the
//! component runs on while the event travels). Each change is recorded with the call that
//! made it: the approval policy tells [`FileChanges::call_started`] of every call just
//! before it runs, and the component runs a session's file tools one at a time, so a
//! write-then-edit of one file shows each call's own diff however late the events arrive.
//! Only the chat's own session is followed ([`FileChanges::follow_session`]): subagents
//! run concurrently through the same environment and their diffs are not shown, so their
//! calls must not take the slot while the session's own call writes.

use agent_host::Environment;
use agent_protocol::ports::FsError;
use async_trait::async_trait;
use std::sync::{Arc, Mutex};

/// Files larger than this are not kept for a diff.
const MAX_KEPT_BYTES: usize = 512 * 1024;
/// Changes nobody took (a subagent's, a plugin's) are forgotten beyond this many.
const MAX_CHANGES: usize = 64;

/// One file's contents before and after a change; `None` where the file did not exist, or
/// was too large or not text (then `unreadable` says so).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileChange {
    /// The call that made it (the last one started when it was made).
    pub call_id: Option<String>,
    pub path: String,
    pub before: Option<String>,
    pub after: Option<String>,
    pub unreadable: bool,
}

/// The changes made so far and not yet shown.
#[derive(Debug, Default)]
pub struct FileChanges {
    changes: Mutex<Vec<FileChange>>,
    current_call: Mutex<Option<String>>,
    /// The chat's session; `None`: every session's calls count.
    session: Mutex<Option<String>>,
}

impl FileChanges {
    /// Follows the calls of `session_id` (the chat's session, anew after `/reset`) only.
    pub fn follow_session(&self, session_id: &str) {
        *lock(&self.session) = Some(session_id.to_string());
        *lock(&self.current_call) = None;
    }

    /// A call of `session_id` about to run, which the changes from now on belong to when
    /// the session is the one followed.
    pub fn call_started(&self, session_id: &str, call_id: &str) {
        if lock(&self.session)
            .as_deref()
            .is_some_and(|followed| followed != session_id)
        {
            return;
        }
        *lock(&self.current_call) = Some(call_id.to_string());
    }

    fn record(&self, mut change: FileChange) {
        change.call_id = lock(&self.current_call).clone();
        let mut changes = lock(&self.changes);
        changes.push(change);
        let excess = changes.len().saturating_sub(MAX_CHANGES);
        changes.drain(..excess);
    }

    /// Takes the changes call `call_id` made to `paths` (as the tool named them), oldest
    /// first, merging several changes of one file into one; the call's other changes are
    /// dropped (a failed patch's rollback is not shown later).
    pub fn take(&self, call_id: &str, paths: &[String], working_dir: &str) -> Vec<FileChange> {
        let wanted: Vec<String> = paths.iter().map(|p| normalize(p, working_dir)).collect();
        let mut changes = lock(&self.changes);
        let mut taken: Vec<FileChange> = Vec::new();
        let mut kept = Vec::new();
        for change in changes.drain(..) {
            if change.call_id.as_deref() != Some(call_id) {
                kept.push(change);
                continue;
            }
            if !wanted.contains(&normalize(&change.path, working_dir)) {
                continue;
            }
            let key = normalize(&change.path, working_dir);
            match taken.iter_mut().find(|t| normalize(&t.path, working_dir) == key) {
                Some(earlier) => {
                    earlier.after = change.after;
                    earlier.unreadable |= change.unreadable;
                }
                None => taken.push(change),
            }
        }
        *changes = kept;
        taken
    }
}

/// A path relative to the working directory, without `./`.
fn normalize(path: &str, working_dir: &str) -> String {
    let relative = path
        .strip_prefix(working_dir)
        .and_then(|p| p.strip_prefix('/'))
        .unwrap_or(path);
    relative.trim_start_matches("./").to_string()
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Text contents worth a diff: `Err(())` when too large or not UTF-8.
fn as_text(bytes: &[u8]) -> Result<String, ()> {
    if bytes.len() > MAX_KEPT_BYTES {
        return Err(());
    }
    String::from_utf8(bytes.to_vec()).map_err(|_| ())
}

/// Wraps an environment and records what its writes and deletes change.
pub struct Recording {
    inner: Arc<dyn Environment>,
    changes: Arc<FileChanges>,
}

impl Recording {
    pub fn new(inner: Arc<dyn Environment>, changes: Arc<FileChanges>) -> Self {
        Self { inner, changes }
    }

    /// The current contents, as `(text, unreadable)`.
    async fn contents(&self, path: &str) -> (Option<String>, bool) {
        match self.inner.read_file(path, None).await {
            Ok(bytes) => match as_text(&bytes) {
                Ok(text) => (Some(text), false),
                Err(()) => (None, true),
            },
            Err(_) => (None, false),
        }
    }
}

#[async_trait]
impl agent_host::environments::Delegating for Recording {
    fn inner(&self) -> &dyn Environment {
        &*self.inner
    }

    async fn write_file(&self, path: &str, contents: &[u8]) -> Result<(), FsError> {
        let (before, unreadable_before) = self.contents(path).await;
        self.inner.write_file(path, contents).await?;
        let after = as_text(contents).ok();
        self.changes.record(FileChange {
            call_id: None,
            path: path.to_string(),
            before,
            unreadable: unreadable_before || after.is_none(),
            after,
        });
        Ok(())
    }

    async fn delete_file(&self, path: &str) -> Result<(), FsError> {
        let (before, unreadable) = self.contents(path).await;
        self.inner.delete_file(path).await?;
        self.changes.record(FileChange {
            call_id: None,
            path: path.to_string(),
            before,
            after: None,
            unreadable,
        });
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn writes_and_deletes_are_recorded_with_the_contents_before() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.txt"), "old\n").unwrap();
        let local = agent_host::LocalEnvironment::new(dir.path()).unwrap();
        let changes = Arc::new(FileChanges::default());
        let env = Recording::new(Arc::new(local), changes.clone());
        changes.call_started("s", "c1");
        env.write_file("a.txt", b"new\n").await.unwrap();
        env.write_file("./a.txt", b"newer\n").await.unwrap();
        env.write_file("b.txt", b"b\n").await.unwrap();
        let cwd = env.working_directory();
        let taken = changes.take("c1", &["a.txt".to_string()], &cwd);
        assert_eq!(taken.len(), 1, "{taken:?}");
        assert_eq!(taken[0].before.as_deref(), Some("old\n"));
        assert_eq!(taken[0].after.as_deref(), Some("newer\n"));
        let absolute = format!("{cwd}/b.txt");
        changes.call_started("s", "c2");
        env.delete_file("b.txt").await.unwrap();
        let taken = changes.take("c2", &[absolute], &cwd);
        assert_eq!(taken.len(), 1);
        assert_eq!(taken[0].before, Some("b\n".to_string()));
        assert_eq!(taken[0].after, None);
    }

    /// A write then an edit of one file, both done before either call's end is shown (as
    /// when the events lag behind the component): each call gets its own change.
    #[tokio::test]
    async fn each_call_gets_its_own_change_of_a_file_whatever_the_timing() {
        let dir = tempfile::tempdir().unwrap();
        let changes = Arc::new(FileChanges::default());
        let local = agent_host::LocalEnvironment::new(dir.path()).unwrap();
        let env = Recording::new(Arc::new(local), changes.clone());
        let cwd = env.working_directory();
        changes.follow_session("chat");
        changes.call_started("chat", "write");
        env.write_file("hello.py", b"print(1)\nprint(2)\n").await.unwrap();
        changes.call_started("chat", "edit");
        // A subagent's call starting meanwhile does not take the edit's change.
        changes.call_started("subagent", "edit");
        changes.call_started("subagent", "x");
        env.write_file("hello.py", b"print(1)\nprint(3)\n").await.unwrap();
        let paths = ["hello.py".to_string()];
        let edit = changes.take("edit", &paths, &cwd);
        let write = changes.take("write", &paths, &cwd);
        assert_eq!(write.len(), 1);
        assert_eq!(write[0].before, None);
        assert_eq!(write[0].after.as_deref(), Some("print(1)\nprint(2)\n"));
        assert_eq!(edit.len(), 1);
        assert_eq!(edit[0].before.as_deref(), Some("print(1)\nprint(2)\n"));
        assert_eq!(edit[0].after.as_deref(), Some("print(1)\nprint(3)\n"));
    }
}
