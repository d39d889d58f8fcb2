//! apply_patch (v4a): parse the patch, work out every file's new content in memory, and
//! only then write. A patch that fails anywhere changes no file: the plan fails before any
//! write, and a write that fails midway is rolled back.

mod parser;
mod seek;

pub use parser::{Chunk, Hunk, LineOp, parse};

use crate::file_stamps::FileStamps;
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
    apply_guarded(text, env, &FileStamps::new(false))
}

/// [`apply`], refusing (before anything is written) to change a file that changed since
/// the session last saw it, or to replace with `*** Add File` an existing one it never saw.
pub fn apply_guarded(text: &str, env: &dyn Environment, stamps: &FileStamps) -> Result<String, PatchError> {
    let hunks = parse(text)?;
    let working_dir = env.working_directory();
    let mut plan = Plan {
        env,
        stamps,
        working_dir: &working_dir,
        state: BTreeMap::new(),
        summary: Vec::new(),
    };
    for hunk in &hunks {
        plan.add(hunk)?;
    }
    commit(env, &plan.state)?;
    for (path, change) in &plan.state {
        match change {
            Change::Write(text) => stamps.saw(path, &working_dir, text.as_bytes()),
            Change::Delete => stamps.forget(path, &working_dir),
        }
    }
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
    stamps: &'a FileStamps,
    working_dir: &'a str,
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
                self.check_replaced(path)?;
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
                        self.check_replaced(destination)?;
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

    /// A file the patch replaces whole (added or moved onto) must not be one the session
    /// never saw, or one that changed since.
    fn check_replaced(&self, path: &str) -> Result<(), PatchError> {
        // Contents this patch wrote are its own; a file it deleted is still on disk.
        if matches!(self.state.get(path), Some(Change::Write(_))) || !self.stamps.enabled() {
            return Ok(());
        }
        let current = self.env.read_file(path, None).ok();
        self.stamps
            .check(path, self.working_dir, current.as_deref(), true)
            .map_err(stale)
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
        self.stamps
            .check(path, self.working_dir, Some(&bytes), false)
            .map_err(stale)?;
        String::from_utf8(bytes)
            .map_err(|_| PatchError::Apply(format!("cannot {verb} {path}: it is not a UTF-8 text file")))
    }
}

/// A refusal of the stale-read guard, saying the whole patch was refused.
fn stale(refusal: String) -> PatchError {
    PatchError::Apply(format!("{refusal} No file of this patch was changed."))
}

fn check_path(path: &str) -> Result<(), PatchError> {
    if path.trim().is_empty() {
        return Err(PatchError::Parse("a file header names no path".to_string()));
    }
    Ok(())
}

/// The new text of a file after an update's chunks, each found after the previous one.
/// Only the changed lines change: context lines keep the file's bytes (whichever pass of
/// [`seek`] matched them), every line keeps its own line break, added lines take the
/// file's usual one, and a missing final newline stays missing.
fn apply_chunks(old: &str, chunks: &[Chunk], path: &str) -> Result<String, PatchError> {
    let file = FileLines::parse(old);
    let lines = &file.text;
    let mut replacements: Vec<(usize, usize, Vec<Line>)> = Vec::new();
    let mut index = 0;
    for chunk in chunks {
        if let Some(context) = &chunk.context {
            match seek::seek(lines, std::slice::from_ref(context), index, false) {
                Some((found, _)) => index = found + 1,
                None => {
                    return Err(PatchError::Apply(format!(
                        "failed to find the context line {context:?} (after '@@') in {path}"
                    )));
                }
            }
        }
        let mut ops = chunk.lines.clone();
        let mut old_lines = parser::old_lines(&ops);
        if old_lines.is_empty() {
            // Only additions: they go at the end of the file.
            replacements.push((lines.len(), 0, file.replacement(&ops, lines.len())));
            continue;
        }
        let mut found = seek::seek(lines, &old_lines, index, chunk.at_end_of_file);
        // A trailing empty line in the chunk often stands for the file's final newline.
        if found.is_none() && old_lines.last().is_some_and(String::is_empty) {
            drop_final_blank(&mut ops);
            old_lines = parser::old_lines(&ops);
            found = seek::seek(lines, &old_lines, index, chunk.at_end_of_file);
        }
        let Some((start, _pass)) = found else {
            return Err(PatchError::Apply(format!(
                "failed to find the expected lines in {path}:\n{}",
                chunk.old_lines().join("\n")
            )));
        };
        let length = old_lines.len();
        replacements.push((start, length, file.replacement(&ops, start)));
        index = start + length;
    }
    replacements.sort_by_key(|(start, ..)| *start);
    let mut result = file.lines();
    for (start, length, new_lines) in replacements.into_iter().rev() {
        result.splice(start..start + length, new_lines);
    }
    Ok(file.render(&result))
}

/// Drops the chunk's last old line, an empty one that stood for the file's final newline:
/// a context line goes from both sides; a removed one goes, with a final empty added line.
fn drop_final_blank(ops: &mut Vec<(LineOp, String)>) {
    let Some(last_old) = ops.iter().rposition(|(op, _)| *op != LineOp::Add) else {
        return;
    };
    let (op, _) = ops.remove(last_old);
    if op == LineOp::Remove
        && ops
            .last()
            .is_some_and(|(op, text)| *op == LineOp::Add && text.is_empty())
    {
        ops.pop();
    }
}

/// A line and whether it ends in CRLF.
type Line = (String, bool);

/// A file's lines without their breaks, each break remembered, so a file is written back
/// byte for byte where a patch does not change it.
struct FileLines {
    text: Vec<String>,
    crlf: Vec<bool>,
    final_newline: bool,
    /// The break of added lines: CRLF when most lines end that way.
    usual_crlf: bool,
}

impl FileLines {
    fn parse(old: &str) -> Self {
        let final_newline = old.is_empty() || old.ends_with('\n');
        let mut parts: Vec<&str> = old.split('\n').collect();
        // After the last `\n` comes the unterminated last line, or nothing.
        let unterminated = parts.pop().filter(|last| !last.is_empty());
        let crlf: Vec<bool> = parts.iter().map(|p| p.ends_with('\r')).collect();
        let usual_crlf = crlf.iter().filter(|c| **c).count() * 2 > crlf.len();
        let mut text: Vec<String> = parts
            .iter()
            .map(|p| p.strip_suffix('\r').unwrap_or(p).to_string())
            .collect();
        let mut crlf = crlf;
        if let Some(last) = unterminated {
            text.push(last.to_string());
            // Its break, should a later line follow it.
            crlf.push(usual_crlf);
        }
        Self {
            text,
            crlf,
            final_newline,
            usual_crlf,
        }
    }

    fn lines(&self) -> Vec<Line> {
        self.text.iter().cloned().zip(self.crlf.iter().copied()).collect()
    }

    /// What a chunk's `ops`, found at line `start`, leave: context lines as the file has
    /// them, added lines as the patch writes them.
    fn replacement(&self, ops: &[(LineOp, String)], start: usize) -> Vec<Line> {
        let mut at = start;
        let mut out = Vec::new();
        for (op, text) in ops {
            match op {
                LineOp::Keep => {
                    out.push((self.text[at].clone(), self.crlf[at]));
                    at += 1;
                }
                LineOp::Remove => at += 1,
                LineOp::Add => out.push((text.clone(), self.usual_crlf)),
            }
        }
        out
    }

    /// The text of `lines`, ending with a newline only if the file did.
    fn render(&self, lines: &[Line]) -> String {
        let mut text = String::new();
        for (i, (line, crlf)) in lines.iter().enumerate() {
            text.push_str(line);
            if i + 1 < lines.len() || self.final_newline {
                text.push_str(if *crlf { "\r\n" } else { "\n" });
            }
        }
        text
    }
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
