//! JSON-lines files appended as a session goes: `events.jsonl` (its events) and
//! `history.jsonl` (its journal).
//!
//! Each line is written with a single `write` of the line and its newline on a file opened
//! for appending, so what a crash can leave behind is at most one partial last line.
//! Readers ignore such a torn line; a writer reopening the file cuts it off first, so the
//! next line starts on a line of its own.

use super::PersistError;
use crate::private_files::private_options;
use crate::session_host::control::AgentEvent;
use serde::Serialize;
use serde::de::DeserializeOwned;
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::marker::PhantomData;
use std::path::{Path, PathBuf};

/// The writing end of a JSON-lines file of `T`s. Holds an exclusive lock on the file while
/// open.
#[derive(Debug)]
pub struct JsonLog<T> {
    file: File,
    path: PathBuf,
    lines: usize,
    /// Where the last complete line ends: a failed write is cut back to it.
    bytes: u64,
    /// Set when a failed write could not be cut back: appending more would finish its
    /// fragment into a line that does not parse, so nothing more is written.
    broken: bool,
    kind: PhantomData<fn(&T)>,
}

/// A session's event log.
pub type EventLog = JsonLog<AgentEvent>;

/// A JSON-lines file as read back.
#[derive(Debug)]
pub struct Lines<T> {
    pub lines: Vec<T>,
    /// Set when the last line was torn (and ignored).
    pub warning: Option<String>,
    /// Where the complete lines end, in bytes.
    valid_len: u64,
}

/// An event log as read back.
#[derive(Debug, Default)]
pub struct LogContents {
    pub events: Vec<AgentEvent>,
    /// Set when the last line was torn (and ignored).
    pub warning: Option<String>,
}

impl<T: Serialize + DeserializeOwned> JsonLog<T> {
    /// Creates a new, empty file.
    pub fn create(path: &Path) -> Result<Self, PersistError> {
        let file = private_options()
            .append(true)
            .create_new(true)
            .open(path)
            .map_err(PersistError::io(path))?;
        Self::locked(file, path)
    }

    /// Opens an existing file for appending; a torn last line is cut off (the warning says
    /// so).
    pub fn open(path: &Path) -> Result<(Self, Option<String>), PersistError> {
        let file = OpenOptions::new()
            .read(true)
            .append(true)
            .open(path)
            .map_err(PersistError::io(path))?;
        let mut log = Self::locked(file, path)?;
        let contents = read_lines::<T>(path)?;
        if contents.warning.is_some() {
            log.file
                .set_len(contents.valid_len)
                .map_err(PersistError::io(path))?;
            log.file.sync_all().map_err(PersistError::io(path))?;
        }
        log.lines = contents.lines.len();
        log.bytes = contents.valid_len;
        Ok((log, contents.warning))
    }

    /// The lock keeps two processes from interleaving their lines in one file; it goes
    /// away with the process, however it ends.
    fn locked(file: File, path: &Path) -> Result<Self, PersistError> {
        if file.try_lock().is_err() {
            let session = path
                .parent()
                .and_then(Path::file_name)
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_else(|| path.display().to_string());
            return Err(PersistError::InUse(session));
        }
        Ok(Self {
            file,
            path: path.to_path_buf(),
            lines: 0,
            bytes: 0,
            broken: false,
            kind: PhantomData,
        })
    }

    /// Appends one line; once this returns, a crash of the process cannot lose it. A write
    /// that fails part-way (a full disk) is cut back, so the file still ends on a whole line.
    pub fn append(&mut self, item: &T) -> Result<(), PersistError> {
        if self.broken {
            return Err(PersistError::CorruptFile {
                path: self.path.clone(),
                message: "an earlier write failed and could not be undone; nothing more is written"
                    .to_string(),
            });
        }
        let encoded = serde_json::to_string(item).map_err(|e| PersistError::CorruptFile {
            path: self.path.clone(),
            message: format!("cannot encode a line: {e}"),
        })?;
        // A credential that reached an event or the history (a command printed one) is not
        // written down.
        let mut line = crate::secrets::redact_known(&encoded).into_bytes();
        line.push(b'\n');
        if let Err(error) = self.file.write_all(&line) {
            self.broken = self.file.set_len(self.bytes).is_err();
            return Err(PersistError::io(&self.path)(error));
        }
        self.lines += 1;
        self.bytes += line.len() as u64;
        Ok(())
    }

    /// Makes what was appended durable against a power loss too.
    pub fn sync(&self) -> Result<(), PersistError> {
        self.file.sync_data().map_err(PersistError::io(&self.path))
    }

    /// How many lines the file holds.
    pub fn len(&self) -> usize {
        self.lines
    }

    pub fn is_empty(&self) -> bool {
        self.lines == 0
    }
}

/// Reads an event log (see [`read_lines`]).
pub fn read_events(path: &Path) -> Result<LogContents, PersistError> {
    let read = read_lines::<AgentEvent>(path)?;
    Ok(LogContents {
        events: read.lines,
        warning: read.warning,
    })
}

/// Reads a JSON-lines file. A last line without its newline is a write a crash cut short:
/// it is ignored and reported in `warning`. Any line that ends but does not parse is an
/// error naming it (never cut off: it may be a newer agent-host's, or damage to look at).
pub fn read_lines<T: DeserializeOwned>(path: &Path) -> Result<Lines<T>, PersistError> {
    let bytes = std::fs::read(path).map_err(PersistError::io(path))?;
    let mut contents = Lines {
        lines: Vec::new(),
        warning: None,
        valid_len: 0,
    };
    let mut offset = 0usize;
    for (index, line) in bytes.split_inclusive(|b| *b == b'\n').enumerate() {
        // No newline (only ever the last line): the write did not finish, whatever the
        // bytes say.
        let Some(json) = line.strip_suffix(b"\n") else {
            contents.warning = Some(format!(
                "{}: ignored a torn last line ({} bytes); every line before it is kept",
                path.display(),
                line.len()
            ));
            break;
        };
        let item = serde_json::from_slice::<T>(json).map_err(|error| PersistError::CorruptLog {
            path: path.to_path_buf(),
            line: index + 1,
            message: error.to_string(),
        })?;
        contents.lines.push(item);
        offset += line.len();
    }
    contents.valid_len = offset as u64;
    Ok(contents)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;
    use agent_protocol::{EndReason, EventData, EventKind, SessionState, StopReason};

    fn event(kind: EventKind) -> AgentEvent {
        let data = match kind {
            EventKind::UserInput => EventData::UserInput {
                content: "n".to_string(),
            },
            EventKind::ProcessingEnd => EventData::ProcessingEnd {
                stop_reason: StopReason::Completed,
                rounds: 1,
                turns: 1,
                usage: Default::default(),
                session_usage: Default::default(),
            },
            _ => EventData::SessionEnd {
                final_state: SessionState::Closed,
                reason: EndReason::Closed,
            },
        };
        super::super::host_event("s1", data)
    }

    #[test]
    fn a_torn_last_line_is_ignored_and_cut_before_the_next_append() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("events.jsonl");
        let mut log = EventLog::create(&path).unwrap();
        log.append(&event(EventKind::UserInput)).unwrap();
        log.append(&event(EventKind::ProcessingEnd)).unwrap();
        drop(log);
        let mut file = OpenOptions::new().append(true).open(&path).unwrap();
        file.write_all(br#"{"kind":"TOOL_CALL_E"#).unwrap();
        drop(file);

        let read = read_events(&path).unwrap();
        assert_eq!(read.events.len(), 2);
        assert!(read.warning.unwrap().contains("torn last line"));

        let (mut log, warning) = EventLog::open(&path).unwrap();
        assert!(warning.is_some());
        assert_eq!(log.len(), 2);
        log.append(&event(EventKind::SessionEnd)).unwrap();
        drop(log);
        let read = read_events(&path).unwrap();
        assert!(read.warning.is_none());
        let kinds: Vec<_> = read.events.iter().map(AgentEvent::kind).collect();
        assert_eq!(
            kinds,
            [
                EventKind::UserInput,
                EventKind::ProcessingEnd,
                EventKind::SessionEnd
            ]
        );
    }

    #[test]
    fn a_bad_line_before_the_end_is_an_error_naming_it() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("events.jsonl");
        let good = serde_json::to_string(&event(EventKind::UserInput)).unwrap();
        std::fs::write(&path, format!("{good}\nnot json\n{good}\n")).unwrap();
        let error = read_events(&path).unwrap_err().to_string();
        assert!(error.contains("line 2"), "{error}");
    }

    #[test]
    fn a_finished_last_line_that_does_not_parse_is_kept_and_reported_not_cut() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("events.jsonl");
        let good = serde_json::to_string(&event(EventKind::UserInput)).unwrap();
        let newer = r#"{"kind":"EVENT_OF_A_NEWER_HOST","session_id":"s1"}"#;
        let written = format!("{good}\n{newer}\n");
        std::fs::write(&path, &written).unwrap();
        let error = read_events(&path).unwrap_err().to_string();
        assert!(error.contains("line 2"), "{error}");
        assert!(EventLog::open(&path).is_err());
        assert_eq!(std::fs::read_to_string(&path).unwrap(), written);
    }

    #[test]
    fn after_a_write_that_cannot_be_undone_nothing_more_is_appended() {
        // /dev/full refuses every write and cannot be truncated: the worst a disk can do.
        let path = Path::new("/dev/full");
        let Ok(file) = OpenOptions::new().append(true).open(path) else {
            eprintln!("skipped: no /dev/full on this machine");
            return;
        };
        let mut log = EventLog::locked(file, path).unwrap();
        let first = log.append(&event(EventKind::UserInput)).unwrap_err();
        assert!(matches!(first, PersistError::Io { .. }), "{first}");
        let next = log
            .append(&event(EventKind::ProcessingEnd))
            .unwrap_err()
            .to_string();
        assert!(next.contains("could not be undone"), "{next}");
        assert_eq!(log.len(), 0);
    }

    #[test]
    fn a_second_writer_is_refused_while_the_first_holds_the_log() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("events.jsonl");
        let _first = EventLog::create(&path).unwrap();
        assert!(matches!(EventLog::open(&path), Err(PersistError::InUse(_))));
    }
}
