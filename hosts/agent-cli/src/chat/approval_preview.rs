//! What an approval question is about, shown before it is asked: the diff a write or an
//! edit would make (the file read now through the session's environment), the patch of
//! `apply_patch`, or the whole command. Everything from the model's call is escaped.

use super::diff;
use super::file_changes::FileChange;
use super::style::Palette;
use crate::terminal_text::multi_line;
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
    match question.tool_name.as_str() {
        "write_file" => match (text("file_path"), text("content")) {
            (Some(path), Some(content)) => match current(env, path).await {
                Current::Missing => diff_lines(path, None, Some(content.to_string()), palette),
                Current::Text(before) => diff_lines(path, Some(before), Some(content.to_string()), palette),
                Current::Unshown => unshown(path, "overwrites it", palette),
            },
            _ => Vec::new(),
        },
        // An empty `old_string` is refused by the tool (and would match everywhere).
        "edit_file" => match (text("file_path"), text("old_string"), text("new_string")) {
            (Some(path), Some(old), Some(new)) if !old.is_empty() => {
                let all = arguments.get("replace_all").and_then(Value::as_bool) == Some(true);
                match current(env, path).await {
                    Current::Text(before) if before.contains(old) => {
                        let after = match all {
                            true => before.replace(old, new),
                            false => before.replacen(old, new, 1),
                        };
                        diff_lines(path, Some(before), Some(after), palette)
                    }
                    Current::Unshown => unshown(path, "edits it", palette),
                    // The edit will fail and say why; nothing to show.
                    _ => Vec::new(),
                }
            }
            _ => Vec::new(),
        },
        "apply_patch" => text("patch").map_or_else(Vec::new, |patch| patch_lines(patch, palette)),
        _ => match text("command") {
            Some(command) => command_lines(command, palette),
            None => Vec::new(),
        },
    }
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
        multi_line(path)
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

/// A patch's lines coloured like a diff.
fn patch_lines(patch: &str, palette: &Palette) -> Vec<String> {
    let lines: Vec<&str> = patch.lines().collect();
    let mut shown: Vec<String> = lines
        .iter()
        .take(PREVIEW_LINES)
        .map(|line| {
            let escaped = format!("  {}", multi_line(line));
            match line.chars().next() {
                Some('+') => palette.green(&escaped),
                Some('-') => palette.red(&escaped),
                Some('@') => palette.cyan(&escaped),
                Some('*') => palette.bold(&escaped),
                _ => escaped,
            }
        })
        .collect();
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
        assert_eq!(lines.len(), PREVIEW_LINES + 1);
        assert_eq!(lines[3], "  -old");
        assert!(lines[PREVIEW_LINES].contains("(+"), "{lines:?}");
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
