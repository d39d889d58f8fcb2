//! The chat's input history, kept per user across chats in the state folder
//! (`chat-history.jsonl`: one JSON string per line, appended as each input is sent), so Up
//! and Ctrl-R find what was typed in an earlier chat. The state folder is private (0700)
//! and the file is made 0600: inputs can quote secrets.

use std::fs::OpenOptions;
use std::io::{Read, Seek, SeekFrom, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::PathBuf;

/// The file's name in the state folder.
pub const FILE_NAME: &str = "chat-history.jsonl";
/// Entries kept in memory; older ones stay in the file but are not offered.
const KEPT: usize = 1000;
/// Only the file's end is read: a history grown huge does not slow the chat's start.
const READ_LIMIT: u64 = 4 * 1024 * 1024;

#[derive(Debug, Default)]
pub struct History {
    /// Oldest first.
    entries: Vec<String>,
    /// Where new entries are appended (`None`: this chat's history is not saved).
    file: Option<PathBuf>,
}

impl History {
    /// The saved history, appended to from now on; an unreadable file gives an empty one
    /// (with a warning in the log) rather than no chat.
    pub fn load(file: PathBuf) -> Self {
        let entries = match read_tail(&file) {
            Ok(entries) => entries,
            Err(error) => {
                if error.kind() != std::io::ErrorKind::NotFound {
                    tracing::warn!(%error, "cannot read the chat history {}", file.display());
                }
                Vec::new()
            }
        };
        Self {
            entries,
            file: Some(file),
        }
    }

    /// In memory only.
    pub fn unsaved() -> Self {
        Self::default()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// The `i`-th newest entry (0: the last one entered).
    pub fn newest(&self, i: usize) -> Option<&str> {
        let index = self.entries.len().checked_sub(i + 1)?;
        self.entries.get(index).map(String::as_str)
    }

    /// The newest entry at or older than the `from`-th newest that contains `query`.
    pub fn find(&self, query: &str, from: usize) -> Option<usize> {
        (from..self.entries.len()).find(|&i| self.newest(i).is_some_and(|e| e.contains(query)))
    }

    /// Adds `input` unless it is blank or repeats the last entry, and saves it.
    pub fn add(&mut self, input: &str) {
        if input.trim().is_empty() || self.entries.last().is_some_and(|last| last == input) {
            return;
        }
        self.entries.push(input.to_string());
        if self.entries.len() > KEPT {
            self.entries.remove(0);
        }
        if let Some(file) = &self.file
            && let Err(error) = append(file, input)
        {
            tracing::warn!(%error, "cannot save the chat history to {}", file.display());
        }
    }
}

fn read_tail(file: &PathBuf) -> std::io::Result<Vec<String>> {
    let mut handle = OpenOptions::new()
        .read(true)
        .custom_flags(nix::libc::O_NOFOLLOW | nix::libc::O_NONBLOCK)
        .open(file)?;
    let metadata = handle.metadata()?;
    if !metadata.is_file() {
        return Err(std::io::Error::other("not a regular file"));
    }
    let start = metadata.len().saturating_sub(READ_LIMIT);
    handle.seek(SeekFrom::Start(start))?;
    let mut bytes = Vec::new();
    handle.take(READ_LIMIT).read_to_end(&mut bytes)?;
    let text = String::from_utf8_lossy(&bytes);
    let mut lines = text.lines();
    if start > 0 {
        // The first line read may be the end of a cut one.
        lines.next();
    }
    let mut entries: Vec<String> = lines
        .filter_map(|line| serde_json::from_str::<String>(line).ok())
        .collect();
    if entries.len() > KEPT {
        entries.drain(..entries.len() - KEPT);
    }
    Ok(entries)
}

fn append(file: &PathBuf, input: &str) -> std::io::Result<()> {
    let line = serde_json::to_string(input).map_err(std::io::Error::other)?;
    // Non-blocking, so a FIFO put in its place cannot hold the chat; then only a regular
    // file is written.
    let mut handle = OpenOptions::new()
        .create(true)
        .append(true)
        .mode(0o600)
        .custom_flags(nix::libc::O_NOFOLLOW | nix::libc::O_NONBLOCK)
        .open(file)?;
    if !handle.metadata()?.is_file() {
        return Err(std::io::Error::other("not a regular file"));
    }
    // One write per entry: chats running side by side append whole lines.
    handle.write_all(format!("{line}\n").as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_survive_into_the_next_chat_and_are_found_newest_first() -> anyhow::Result<()> {
        let dir = tempfile::tempdir()?;
        let file = dir.path().join(FILE_NAME);
        let mut first = History::load(file.clone());
        first.add("fix the parser\nand its tests");
        first.add("run the benchmarks");
        first.add("run the benchmarks");
        first.add("  ");
        let second = History::load(file.clone());
        assert_eq!(second.len(), 2);
        assert_eq!(second.newest(0), Some("run the benchmarks"));
        assert_eq!(second.newest(1), Some("fix the parser\nand its tests"));
        assert_eq!(second.find("parser", 0), Some(1));
        assert_eq!(second.find("run", 1), None);
        use std::os::unix::fs::PermissionsExt;
        assert_eq!(std::fs::metadata(&file)?.permissions().mode() & 0o777, 0o600);
        Ok(())
    }

    #[test]
    fn a_history_that_is_not_a_regular_file_is_not_read() -> anyhow::Result<()> {
        let dir = tempfile::tempdir()?;
        let file = dir.path().join(FILE_NAME);
        std::os::unix::fs::symlink("/etc/passwd", &file)?;
        assert!(History::load(file).is_empty());
        Ok(())
    }

    #[test]
    fn a_fifo_in_place_of_the_history_neither_blocks_nor_is_written() -> anyhow::Result<()> {
        let dir = tempfile::tempdir()?;
        let file = dir.path().join(FILE_NAME);
        nix::unistd::mkfifo(&file, nix::sys::stat::Mode::S_IRWXU)?;
        let mut history = History::load(file.clone());
        // Blocked forever before: an open for writing waits for a reader.
        history.add("typed");
        assert_eq!(history.newest(0), Some("typed"));
        Ok(())
    }
}
