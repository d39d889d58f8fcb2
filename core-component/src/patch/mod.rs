//! apply_patch (v4a): parse the patch, work out every file's new content in memory, and
//! only then write. A patch that fails anywhere changes no file: the plan fails before any
//! write, and a write that fails midway is rolled back.

mod parser;
mod seek;

pub use parser::{Chunk, Hunk, parse};

use crate::ports::{EntryKind, Environment, FsError};
use std::collections::BTreeMap;

/// The files a patch names (added, updated, deleted or moved to), each once, in order; read
/// from its headers alone, so a patch too broken to apply still says what it meant to touch.
pub fn affected_paths(patch: &str) -> Vec<String> {
    const HEADERS: [&str; 4] = [
        "*** Add File: ",
        "*** Update File: ",
        "*** Delete File: ",
        "*** Move to: ",
    ];
    let mut paths: Vec<String> = Vec::new();
    for line in patch.lines() {
        let line = line.trim();
        if let Some(path) = HEADERS.iter().find_map(|h| line.strip_prefix(h)) {
            let path = path.trim().to_string();
            if !paths.contains(&path) {
                paths.push(path);
            }
        }
    }
    paths
}

/// Why a patch was not applied. Every variant means no file was changed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PatchError {
    #[error("invalid patch: {0}")]
    Parse(String),
    #[error("{0}")]
    Apply(String),
    #[error("{0}")]
    Io(String),
}

/// One planned change to the environment.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Change {
    Write(String),
    Delete,
}

/// Applies a patch; returns the summary of affected files (`A`, `M`, `D` per path).
pub fn apply(text: &str, env: &dyn Environment) -> Result<String, PatchError> {
    let hunks = parse(text)?;
    let mut plan = Plan {
        env,
        state: BTreeMap::new(),
        summary: Vec::new(),
    };
    for hunk in &hunks {
        plan.add(hunk)?;
    }
    commit(env, &plan.state)?;
    let mut out = String::from("Success. Updated the following files:\n");
    for (mark, path) in &plan.summary {
        out.push_str(&format!("{mark} {path}\n"));
    }
    Ok(out)
}

/// The planned state of every path the patch touches, built hunk by hunk so that later
/// hunks see earlier ones.
struct Plan<'a> {
    env: &'a dyn Environment,
    state: BTreeMap<String, Change>,
    summary: Vec<(char, String)>,
}

impl Plan<'_> {
    fn add(&mut self, hunk: &Hunk) -> Result<(), PatchError> {
        check_path(hunk.path())?;
        match hunk {
            Hunk::Add { path, contents } => {
                if self.is_directory(path) {
                    return Err(PatchError::Apply(format!("cannot add {path}: it is a directory")));
                }
                self.state.insert(path.clone(), Change::Write(contents.clone()));
                self.summary.push(('A', path.clone()));
            }
            Hunk::Delete { path } => {
                self.read(path, "delete")?;
                self.state.insert(path.clone(), Change::Delete);
                self.summary.push(('D', path.clone()));
            }
            Hunk::Update {
                path,
                move_to,
                chunks,
            } => {
                let old = self.read(path, "update")?;
                let new = apply_chunks(&old, chunks, path)?;
                match move_to {
                    Some(destination) if destination != path => {
                        check_path(destination)?;
                        if self.is_directory(destination) {
                            return Err(PatchError::Apply(format!(
                                "cannot move {path} to {destination}: it is a directory"
                            )));
                        }
                        self.state.insert(path.clone(), Change::Delete);
                        self.state.insert(destination.clone(), Change::Write(new));
                        self.summary.push(('M', destination.clone()));
                    }
                    _ => {
                        self.state.insert(path.clone(), Change::Write(new));
                        self.summary.push(('M', path.clone()));
                    }
                }
            }
        }
        Ok(())
    }

    fn is_directory(&self, path: &str) -> bool {
        !self.state.contains_key(path) && self.env.stat(path).is_ok_and(|s| s.kind == EntryKind::Directory)
    }

    /// The current text of a file, as earlier hunks left it.
    fn read(&self, path: &str, verb: &str) -> Result<String, PatchError> {
        match self.state.get(path) {
            Some(Change::Write(text)) => return Ok(text.clone()),
            Some(Change::Delete) => {
                return Err(PatchError::Apply(format!(
                    "cannot {verb} {path}: an earlier part of this patch deletes it"
                )));
            }
            None => {}
        }
        if self.is_directory(path) {
            return Err(PatchError::Apply(format!(
                "cannot {verb} {path}: it is a directory"
            )));
        }
        let bytes = self.env.read_file(path, None).map_err(|e| match e {
            FsError::NotFound(_) => {
                PatchError::Apply(format!("cannot {verb} {path}: the file does not exist"))
            }
            other => PatchError::Apply(format!("cannot {verb} {path}: {other}")),
        })?;
        String::from_utf8(bytes)
            .map_err(|_| PatchError::Apply(format!("cannot {verb} {path}: it is not a UTF-8 text file")))
    }
}

fn check_path(path: &str) -> Result<(), PatchError> {
    if path.trim().is_empty() {
        return Err(PatchError::Parse("a file header names no path".to_string()));
    }
    Ok(())
}

/// The new text of a file after an update's chunks, each found after the previous one.
fn apply_chunks(old: &str, chunks: &[Chunk], path: &str) -> Result<String, PatchError> {
    let mut lines: Vec<String> = old.split('\n').map(str::to_string).collect();
    if lines.last().is_some_and(String::is_empty) {
        lines.pop();
    }
    let mut replacements: Vec<(usize, usize, Vec<String>)> = Vec::new();
    let mut index = 0;
    for chunk in chunks {
        if let Some(context) = &chunk.context {
            match seek::seek(&lines, std::slice::from_ref(context), index, false) {
                Some((found, _)) => index = found + 1,
                None => {
                    return Err(PatchError::Apply(format!(
                        "failed to find the context line {context:?} (after '@@') in {path}"
                    )));
                }
            }
        }
        if chunk.old_lines.is_empty() {
            // Only additions: they go at the end of the file.
            replacements.push((lines.len(), 0, chunk.new_lines.clone()));
            continue;
        }
        let mut old_lines = chunk.old_lines.clone();
        let mut new_lines = chunk.new_lines.clone();
        let mut found = seek::seek(&lines, &old_lines, index, chunk.at_end_of_file);
        // A trailing empty line in the chunk often stands for the file's final newline.
        if found.is_none() && old_lines.last().is_some_and(String::is_empty) {
            old_lines.pop();
            if new_lines.last().is_some_and(String::is_empty) {
                new_lines.pop();
            }
            found = seek::seek(&lines, &old_lines, index, chunk.at_end_of_file);
        }
        let Some((start, _pass)) = found else {
            return Err(PatchError::Apply(format!(
                "failed to find the expected lines in {path}:\n{}",
                chunk.old_lines.join("\n")
            )));
        };
        replacements.push((start, old_lines.len(), new_lines));
        index = start + old_lines.len();
    }
    replacements.sort_by_key(|(start, ..)| *start);
    for (start, length, new_lines) in replacements.into_iter().rev() {
        lines.splice(start..start + length, new_lines);
    }
    let mut text = lines.join("\n");
    text.push('\n');
    Ok(text)
}

/// Writes the plan. If a write fails, the ones already done are undone before reporting.
fn commit(env: &dyn Environment, state: &BTreeMap<String, Change>) -> Result<(), PatchError> {
    let mut done: Vec<(&str, Option<Vec<u8>>)> = Vec::new();
    for (path, change) in state {
        let original = env.read_file(path, None).ok();
        let result = match change {
            Change::Write(text) => env.write_file(path, text.as_bytes()),
            Change::Delete if original.is_none() => Ok(()),
            Change::Delete => env.delete_file(path),
        };
        if let Err(error) = result {
            let undone = done.iter().rev().all(|(path, original)| match original {
                Some(bytes) => env.write_file(path, bytes).is_ok(),
                None => env.delete_file(path).is_ok(),
            });
            let state = if undone {
                "no file was changed"
            } else {
                "undoing the earlier writes failed too, so some files may be changed"
            };
            return Err(PatchError::Io(format!(
                "writing {path} failed ({error}); {state}"
            )));
        }
        done.push((path, original));
    }
    Ok(())
}
