//! The stale-read guard: what the agent last saw of each file, so that a change
//! is refused when the file changed since (a command, the user or another agent wrote it)
//! and an existing file is not overwritten unseen. Claude Code and OpenDev guard the same
//! way. A file is "seen" when a tool read it (read_file reads it whole even to show some
//! lines, and a partial read counts, as in Claude Code) or wrote it; the stamp is a hash of its
//! bytes, so timestamps of coarse file systems (or none, in the browser's memory) do not
//! matter. Kept per session and not persisted: a resumed session reads files again.

use std::cell::RefCell;
use std::collections::HashMap;
use std::hash::{DefaultHasher, Hasher};

/// The hashes of the files one session has seen, by path.
#[derive(Debug, Default)]
pub struct FileStamps {
    enabled: bool,
    seen: RefCell<HashMap<String, u64>>,
}

impl FileStamps {
    /// A guard that refuses stale changes when `enabled`; a disabled one allows everything.
    pub fn new(enabled: bool) -> Self {
        Self {
            enabled,
            seen: RefCell::default(),
        }
    }

    /// Whether changes are checked (else nothing needs reading for [`FileStamps::check`]).
    pub fn enabled(&self) -> bool {
        self.enabled
    }

    /// The agent has `bytes` as the contents of `path` (it read or wrote them).
    pub fn saw(&self, path: &str, working_dir: &str, bytes: &[u8]) {
        self.seen.borrow_mut().insert(key(path, working_dir), hash(bytes));
    }

    /// `path` no longer exists (the agent deleted or moved it).
    pub fn forget(&self, path: &str, working_dir: &str) {
        self.seen.borrow_mut().remove(&key(path, working_dir));
    }

    /// Before a change to `path`, whose contents are now `current` (`None`: it does not
    /// exist): refused when the agent saw other contents, or, with `must_have_seen`, when
    /// the file exists and the agent never saw it (overwriting it whole).
    pub fn check(
        &self,
        path: &str,
        working_dir: &str,
        current: Option<&[u8]>,
        must_have_seen: bool,
    ) -> Result<(), String> {
        let Some(current) = current.filter(|_| self.enabled) else {
            return Ok(());
        };
        match self.seen.borrow().get(&key(path, working_dir)) {
            Some(stamp) if *stamp == hash(current) => Ok(()),
            Some(_) => Err(format!(
                "{path} changed on disk since you last read or wrote it (a command, the user or \
                 another agent changed it), so nothing was written. Read it again with read_file \
                 and make your change to what it holds now."
            )),
            None if must_have_seen => Err(format!(
                "{path} already exists and you have not read it in this session, so it was not \
                 overwritten. Read it first with read_file (or change part of it with an edit)."
            )),
            None => Ok(()),
        }
    }
}

/// The same file named as `a.txt`, `./a.txt`, `src/../a.txt` or by its absolute path: the
/// absolute path, resolved lexically (links are the environment's business).
fn key(path: &str, working_dir: &str) -> String {
    let joined = if path.starts_with('/') {
        path.to_string()
    } else {
        format!("{working_dir}/{path}")
    };
    let mut parts: Vec<&str> = Vec::new();
    for part in joined.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            part => parts.push(part),
        }
    }
    format!("/{}", parts.join("/"))
}

fn hash(bytes: &[u8]) -> u64 {
    let mut hasher = DefaultHasher::new();
    hasher.write(bytes);
    hasher.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_change_needs_the_contents_the_agent_last_saw() {
        let stamps = FileStamps::new(true);
        let wd = "/w";
        assert_eq!(stamps.check("a.txt", wd, None, true), Ok(()), "a new file");
        assert!(
            stamps
                .check("a.txt", wd, Some(b"x"), true)
                .is_err_and(|e| e.contains("not read it"))
        );
        assert_eq!(
            stamps.check("a.txt", wd, Some(b"x"), false),
            Ok(()),
            "an edit of an unread file"
        );
        stamps.saw("./a.txt", wd, b"x");
        assert_eq!(stamps.check("/w/a.txt", wd, Some(b"x"), true), Ok(()));
        assert_eq!(stamps.check("src/../a.txt", wd, Some(b"x"), true), Ok(()));
        assert_eq!(stamps.check("a.txt", "/w/", Some(b"x"), true), Ok(()));
        assert_eq!(stamps.check("/w//./a.txt", wd, Some(b"x"), true), Ok(()));
        assert!(
            stamps
                .check("a.txt", wd, Some(b"y"), false)
                .is_err_and(|e| e.contains("changed on disk"))
        );
        stamps.forget("a.txt", wd);
        assert_eq!(stamps.check("a.txt", wd, Some(b"y"), false), Ok(()));
        let off = FileStamps::new(false);
        assert_eq!(off.check("a.txt", wd, Some(b"x"), true), Ok(()));
    }
}
