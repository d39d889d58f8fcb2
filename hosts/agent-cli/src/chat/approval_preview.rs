//! What an approval question is about, shown before it is asked: the diff a write or an
//! edit would make (the file read now through the session's environment), the patch of
//! `apply_patch`, or the whole command. Everything from the model's call is escaped.

use super::diff;
use super::file_changes::FileChange;
use super::style::Palette;
use crate::terminal_text::{multi_line, one_line};
use agent_host::Environment;
use agent_host::approval::ApprovalQuestion;
use serde_json::Value;
use std::sync::Arc;

/// Lines of a diff or patch shown before the question (the rest are counted).
const PREVIEW_LINES: usize = 40;
/// Files larger than this are not read for a preview (as the chat's diffs after a change).
const MAX_PREVIEW_BYTES: u64 = 512 * 1024;

/// A file as it is now, for the diff of a change to it.
enum Current {
    Missing,
    Text(String),
    /// Too large or not text: the change is named, not shown.
    Unshown,
}

pub async fn preview(
    question: &ApprovalQuestion,
    env: &Arc<dyn Environment>,
    palette: &Palette,
) -> Vec<String> {
    let Ok(arguments) = serde_json::from_str::<Value>(&question.arguments_json) else {
        return Vec::new();
    };
    let text = |key: &str| arguments.get(key).and_then(Value::as_str);
    let mut lines = Vec::new();
    if let Some(path) = text("file_path") {
        lines.extend(link_warning(env, path, palette).await);
    }
    lines.extend(match question.tool_name.as_str() {
        "write_file" => match (text("file_path"), text("content")) {
            (Some(path), Some(content)) => match current(env, path).await {
                Current::Missing => diff_lines(path, None, Some(content.to_string()), palette),
                Current::Text(before) => diff_lines(path, Some(before), Some(content.to_string()), palette),
                Current::Unshown => unshown(path, "overwrites it", palette),
            },
            _ => Vec::new(),
        },
        // What the model asks to replace, as it asks: the tool finds it its own way (line
        // ends normalised, whitespace tolerated), so a diff worked out here could show
        // another place than the one it changes.
        "edit_file" => match (text("file_path"), text("old_string"), text("new_string")) {
            (Some(path), Some(old), Some(new)) => {
                let all = arguments.get("replace_all").and_then(Value::as_bool) == Some(true);
                replacement_lines(path, old, new, all, palette)
            }
            _ => Vec::new(),
        },
        "apply_patch" => text("patch").map_or_else(Vec::new, |patch| patch_lines(patch, palette)),
        "shell" => text("command").map_or_else(Vec::new, |command| command_lines(command, palette)),
        _ => Vec::new(),
    });
    lines
}

/// A warning when `path` leads somewhere else than it reads (a symbolic link on the way),
/// naming where; in red when that is inside `.git` or `.agent`, whose files run or steer
/// things outside the sandbox.
async fn link_warning(env: &Arc<dyn Environment>, path: &str, palette: &Palette) -> Vec<String> {
    let root = std::path::PathBuf::from(env.working_directory());
    let lexical = lexical_join(&root, path);
    let Ok(real) = env.real_path(path).await else {
        return Vec::new();
    };
    let real = std::path::PathBuf::from(real);
    if real == lexical {
        return Vec::new();
    }
    let shown = real.strip_prefix(&root).unwrap_or(&real);
    let line = format!(
        "  ! {} is a link to {}",
        one_line(path),
        one_line(&shown.to_string_lossy())
    );
    let sensitive = shown
        .components()
        .any(|c| matches!(c.as_os_str().to_str(), Some(".git" | ".agent")));
    vec![match sensitive {
        true => palette.red(&line),
        false => palette.yellow(&line),
    }]
}

/// `path` from `root` with `.` and `..` taken away, without asking the filesystem.
fn lexical_join(root: &std::path::Path, path: &str) -> std::path::PathBuf {
    use std::path::Component;
    let mut out = std::path::PathBuf::new();
    for component in root.join(path).components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

/// An edit as the model asks for it: the text replaced, then its replacement.
fn replacement_lines(path: &str, old: &str, new: &str, all: bool, palette: &Palette) -> Vec<String> {
    let every = if all { " (every occurrence)" } else { "" };
    let mut lines = vec![palette.dim(&format!("  {}: replace{every}", one_line(path)))];
    let side = |text: &str, mark: char| -> Vec<String> {
        text.lines()
            .map(|l| format!("     {mark} {}", multi_line(l)))
            .collect()
    };
    let (removed, added) = (side(old, '-'), side(new, '+'));
    let shown = PREVIEW_LINES / 2;
    for (lines_of, paint) in [(removed, 'r'), (added, 'g')] {
        let hidden = lines_of.len().saturating_sub(shown);
        for line in lines_of.into_iter().take(shown) {
            lines.push(match paint {
                'r' => palette.red(&line),
                _ => palette.green(&line),
            });
        }
        if hidden > 0 {
            lines.push(palette.dim(&format!("       … (+{hidden} lines)")));
        }
    }
    lines
}

async fn current(env: &Arc<dyn Environment>, path: &str) -> Current {
    match env.stat(path).await {
        Err(agent_protocol::ports::FsError::NotFound(_)) => return Current::Missing,
        Ok(stat) if stat.size <= MAX_PREVIEW_BYTES => {}
        _ => return Current::Unshown,
    }
    match env.read_file(path, None).await.map(String::from_utf8) {
        Ok(Ok(text)) => Current::Text(text),
        _ => Current::Unshown,
    }
}

fn unshown(path: &str, what: &str, palette: &Palette) -> Vec<String> {
    vec![palette.dim(&format!(
        "  {}: {what} (too large or not text to show)",
        one_line(path)
    ))]
}

fn diff_lines(path: &str, before: Option<String>, after: Option<String>, palette: &Palette) -> Vec<String> {
    let change = FileChange {
        call_id: None,
        path: path.to_string(),
        before,
        after,
        unreadable: false,
    };
    diff::render(&change, palette, PREVIEW_LINES)
}

/// A patch: every file it touches (never cut), then its lines coloured like a diff.
fn patch_lines(patch: &str, palette: &Palette) -> Vec<String> {
    let lines: Vec<&str> = patch.lines().collect();
    let files: Vec<String> = lines
        .iter()
        .filter(|l| l.starts_with("*** ") && (l.contains(" File: ") || l.starts_with("*** Move to: ")))
        .map(|l| palette.bold(&format!("  {}", one_line(l.trim_start_matches("*** ")))))
        .collect();
    let mut shown = files;
    shown.extend(lines.iter().take(PREVIEW_LINES).map(|line| {
        let escaped = format!("  {}", multi_line(line));
        match line.chars().next() {
            Some('+') => palette.green(&escaped),
            Some('-') => palette.red(&escaped),
            Some('@') => palette.cyan(&escaped),
            Some('*') => palette.bold(&escaped),
            _ => escaped,
        }
    }));
    if lines.len() > PREVIEW_LINES {
        shown.push(palette.dim(&format!("  … (+{} lines)", lines.len() - PREVIEW_LINES)));
    }
    shown
}

/// The whole command, every line of it.
fn command_lines(command: &str, palette: &Palette) -> Vec<String> {
    command
        .lines()
        .enumerate()
        .map(|(i, line)| {
            let lead = if i == 0 { "  $ " } else { "    " };
            format!("{lead}{}", palette.bold(&multi_line(line)))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_patch_is_coloured_and_cut_with_a_count() {
        let patch = format!(
            "*** Begin Patch\n*** Update File: a.rs\n@@\n-old\n+new\n{}*** End Patch",
            "+x\n".repeat(50)
        );
        let lines = patch_lines(&patch, &Palette::plain());
        // The files first, uncut, then the patch.
        assert_eq!(lines[0], "  Update File: a.rs");
        assert_eq!(lines.len(), 1 + PREVIEW_LINES + 1);
        assert_eq!(lines[4], "  -old");
        assert!(lines[1 + PREVIEW_LINES].contains("(+"), "{lines:?}");
    }

    #[test]
    fn a_patch_names_every_file_even_past_the_cut() {
        let patch = format!(
            "*** Begin Patch\n*** Update File: a.rs\n@@\n{}*** Update File: .git/config\n@@\n+x\n*** End Patch",
            "+y\n".repeat(60)
        );
        let lines = patch_lines(&patch, &Palette::plain());
        assert_eq!(lines[..2], ["  Update File: a.rs", "  Update File: .git/config"]);
    }

    #[test]
    fn an_edit_is_shown_as_asked_and_a_path_cannot_break_its_line() {
        let lines = replacement_lines("a\nb.rs", "x = 1\r\n", "x = 2\n", true, &Palette::plain());
        assert_eq!(
            lines,
            [
                "  a\\nb.rs: replace (every occurrence)",
                "     - x = 1",
                "     + x = 2"
            ]
        );
        assert_eq!(
            lexical_join(std::path::Path::new("/w"), "./a/../b"),
            std::path::Path::new("/w/b")
        );
    }

    #[test]
    fn a_command_cannot_hide_its_lines_or_drive_the_terminal() {
        let lines = command_lines("echo ok\nrm -rf x\u{1b}[2K", &Palette::plain());
        assert_eq!(lines.len(), 2);
        assert!(
            lines[1].contains("rm -rf x") && !lines[1].contains('\u{1b}'),
            "{lines:?}"
        );
    }
}
