//! Parsing the v4a patch format (appendix A of the spec). Lenient where models are sloppy
//! (markers padded with spaces, a heredoc wrapper, a first chunk without `@@`), strict where
//! a guess could change the wrong file (unknown headers, empty updates).

use super::PatchError;

/// One file operation of a patch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Hunk {
    Add {
        path: String,
        contents: String,
    },
    Delete {
        path: String,
    },
    Update {
        path: String,
        move_to: Option<String>,
        chunks: Vec<Chunk>,
    },
}

impl Hunk {
    pub fn path(&self) -> &str {
        match self {
            Self::Add { path, .. } | Self::Delete { path } | Self::Update { path, .. } => path,
        }
    }
}

/// One `@@` section of an update: lines to find and what replaces them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Chunk {
    /// The text after `@@`: a line to find first, to narrow where the chunk applies.
    pub context: Option<String>,
    /// The chunk's lines in order: context lines are kept as the file has them, so the
    /// patch's copy of them only has to be found.
    pub lines: Vec<(LineOp, String)>,
    /// `*** End of File` followed: the old lines are at the end of the file.
    pub at_end_of_file: bool,
}

/// What a line of a chunk does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LineOp {
    /// ` `: a context line, found in the file and left as it is there.
    Keep,
    /// `-`: found in the file and removed.
    Remove,
    /// `+`: added.
    Add,
}

impl Chunk {
    /// The lines to find: context and removed lines.
    pub fn old_lines(&self) -> Vec<String> {
        old_lines(&self.lines)
    }

    /// The lines after the change, as the patch writes them: context and added lines.
    pub fn new_lines(&self) -> Vec<String> {
        self.lines
            .iter()
            .filter(|(op, _)| *op != LineOp::Remove)
            .map(|(_, text)| text.clone())
            .collect()
    }
}

/// The context and removed lines of `lines`.
pub fn old_lines(lines: &[(LineOp, String)]) -> Vec<String> {
    lines
        .iter()
        .filter(|(op, _)| *op != LineOp::Add)
        .map(|(_, text)| text.clone())
        .collect()
}

const BEGIN: &str = "*** Begin Patch";
const END: &str = "*** End Patch";
const ADD: &str = "*** Add File: ";
const DELETE: &str = "*** Delete File: ";
const UPDATE: &str = "*** Update File: ";
const MOVE: &str = "*** Move to: ";
const END_OF_FILE: &str = "*** End of File";

/// Parses a whole patch.
pub fn parse(text: &str) -> Result<Vec<Hunk>, PatchError> {
    let lines: Vec<&str> = unwrap_heredoc(text.trim()).lines().collect();
    let (first, last) = match (lines.first(), lines.last()) {
        (Some(first), Some(last)) if lines.len() >= 2 => (first.trim(), last.trim()),
        _ => {
            return Err(PatchError::Parse(format!(
                "a patch starts with '{BEGIN}' and ends with '{END}'"
            )));
        }
    };
    if first != BEGIN {
        return Err(PatchError::Parse(format!(
            "the first line of the patch must be '{BEGIN}'"
        )));
    }
    if last != END {
        return Err(PatchError::Parse(format!(
            "the last line of the patch must be '{END}'"
        )));
    }
    let body = &lines[1..lines.len() - 1];
    let mut hunks = Vec::new();
    let mut i = 0;
    while i < body.len() {
        let line = body[i].trim();
        let number = i + 2;
        if let Some(path) = line.strip_prefix(ADD) {
            let mut contents = String::new();
            i += 1;
            while i < body.len() && !is_header(body[i]) {
                let Some(added) = body[i].strip_prefix('+') else {
                    return Err(PatchError::Parse(format!(
                        "line {}: every line of an added file starts with '+', got {:?}",
                        i + 2,
                        body[i]
                    )));
                };
                contents.push_str(added);
                contents.push('\n');
                i += 1;
            }
            hunks.push(Hunk::Add {
                path: path.trim().to_string(),
                contents,
            });
        } else if let Some(path) = line.strip_prefix(DELETE) {
            hunks.push(Hunk::Delete {
                path: path.trim().to_string(),
            });
            i += 1;
        } else if let Some(path) = line.strip_prefix(UPDATE) {
            let path = path.trim().to_string();
            i += 1;
            let mut move_to = None;
            if let Some(destination) = body.get(i).and_then(|l| l.trim().strip_prefix(MOVE)) {
                move_to = Some(destination.trim().to_string());
                i += 1;
            }
            let (chunks, next) = parse_chunks(body, i)?;
            if chunks.is_empty() {
                return Err(PatchError::Parse(format!(
                    "line {number}: the update of {path} has no changes (expected '@@' and changed lines)"
                )));
            }
            i = next;
            hunks.push(Hunk::Update {
                path,
                move_to,
                chunks,
            });
        } else if line.is_empty() {
            i += 1;
        } else {
            return Err(PatchError::Parse(format!(
                "line {number}: {line:?} is not a valid hunk header; expected '{ADD}', '{DELETE}' or '{UPDATE}' and a path"
            )));
        }
    }
    if hunks.is_empty() {
        return Err(PatchError::Parse("the patch changes no file".to_string()));
    }
    Ok(hunks)
}

/// `*** Add File:`, `*** Delete File:`, `*** Update File:` (markers inside chunks, like
/// `*** End of File`, are not headers).
fn is_header(line: &str) -> bool {
    let line = line.trim();
    [ADD, DELETE, UPDATE].iter().any(|h| line.starts_with(h))
}

/// The chunks of an update, from `start` to the next file header.
fn parse_chunks(body: &[&str], start: usize) -> Result<(Vec<Chunk>, usize), PatchError> {
    let mut chunks: Vec<Chunk> = Vec::new();
    let mut current: Option<Chunk> = None;
    let mut i = start;
    while i < body.len() && !is_header(body[i]) {
        let line = body[i];
        let trimmed = line.trim();
        if trimmed == "@@" || trimmed.starts_with("@@ ") {
            chunks.extend(current.take().filter(has_changes));
            let hint = trimmed.trim_start_matches("@@").trim();
            current = Some(Chunk {
                context: (!hint.is_empty()).then(|| hint.to_string()),
                ..Chunk::default()
            });
        } else if trimmed == END_OF_FILE {
            let chunk = current.get_or_insert_with(Chunk::default);
            chunk.at_end_of_file = true;
        } else {
            // The first chunk may come without its `@@` line.
            let chunk = current.get_or_insert_with(Chunk::default);
            match line.chars().next() {
                Some('+') => chunk.lines.push((LineOp::Add, line[1..].to_string())),
                Some('-') => chunk.lines.push((LineOp::Remove, line[1..].to_string())),
                Some(' ') => chunk.lines.push((LineOp::Keep, line[1..].to_string())),
                // An empty line in a chunk is an empty context line whose space was lost.
                None => chunk.lines.push((LineOp::Keep, String::new())),
                Some(_) => {
                    return Err(PatchError::Parse(format!(
                        "line {}: {line:?} in a chunk must start with ' ', '-' or '+'",
                        i + 2
                    )));
                }
            }
        }
        i += 1;
    }
    chunks.extend(current.filter(has_changes));
    Ok((chunks, i))
}

fn has_changes(chunk: &Chunk) -> bool {
    !chunk.lines.is_empty()
}

/// Strips a shell heredoc around the patch (`<<'EOF'` ... `EOF`), as models sometimes send
/// the command they would have run.
fn unwrap_heredoc(text: &str) -> &str {
    let mut lines = text.lines();
    let Some(first) = lines.next() else {
        return text;
    };
    let Some(tag) = first.trim().strip_prefix("<<") else {
        return text;
    };
    let tag = tag.trim().trim_matches(|c| c == '\'' || c == '"');
    let inner_start = first.len() + 1;
    match text.trim_end().strip_suffix(tag) {
        Some(rest) if !tag.is_empty() && rest.len() >= inner_start => rest[inner_start..].trim(),
        _ => text,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn all_three_operations_with_move_hints_and_end_of_file() {
        let patch = "*** Begin Patch\n*** Add File: a.txt\n+one\n+two\n*** Delete File: b.txt\n\
                     *** Update File: c.txt\n*** Move to: d/c.txt\n@@ fn main() {\n context\n-old\n+new\n\
                     @@\n-tail\n+TAIL\n*** End of File\n*** End Patch\n";
        let hunks = parse(patch).unwrap_or_default();
        assert_eq!(hunks.len(), 3);
        assert_eq!(
            hunks[0],
            Hunk::Add {
                path: "a.txt".into(),
                contents: "one\ntwo\n".into()
            }
        );
        let Hunk::Update { move_to, chunks, .. } = &hunks[2] else {
            panic!("not an update: {hunks:?}");
        };
        assert_eq!(move_to.as_deref(), Some("d/c.txt"));
        assert_eq!(chunks[0].context.as_deref(), Some("fn main() {"));
        assert_eq!(chunks[0].old_lines(), ["context", "old"]);
        assert_eq!(chunks[0].new_lines(), ["context", "new"]);
        assert!(chunks[1].at_end_of_file && !chunks[0].at_end_of_file);
    }

    #[test]
    fn padded_markers_and_heredocs_are_tolerated() {
        let patch = "<<'EOF'\n *** Begin Patch \n  *** Delete File: x\n *** End Patch\nEOF\n";
        assert_eq!(parse(patch), Ok(vec![Hunk::Delete { path: "x".into() }]));
    }

    #[test]
    fn errors_say_what_is_wrong_and_where() {
        let bad_header = parse("*** Begin Patch\n*** Frobnicate File: foo\n*** End Patch");
        assert!(
            matches!(&bad_header, Err(PatchError::Parse(m)) if m.contains("line 2") && m.contains("not a valid hunk header"))
        );
        let empty_update = parse("*** Begin Patch\n*** Update File: foo.txt\n*** End Patch");
        assert!(
            matches!(&empty_update, Err(PatchError::Parse(m)) if m.contains("update of foo.txt has no changes"))
        );
        let empty = parse("*** Begin Patch\n*** End Patch");
        assert!(matches!(&empty, Err(PatchError::Parse(m)) if m.contains("changes no file")));
        let no_end = parse("*** Begin Patch\n*** Delete File: x\n");
        assert!(matches!(&no_end, Err(PatchError::Parse(m)) if m.contains("last line")));
    }
}
