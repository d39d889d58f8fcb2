//! Coloured diffs of the files a tool changed, folded to a few lines.

use super::file_changes::FileChange;
use super::style::Palette;
use crate::terminal_text::{multi_line, one_line};
use similar::{ChangeTag, TextDiff};

/// Lines of context around each change.
const CONTEXT: usize = 2;

/// The change as lines for the screen: a header naming the file and what happened, then
/// at most `max_lines` diff lines, the rest counted in a "(+N lines)" note. The path and
/// the lines are escaped before they are painted: the model chose both.
pub fn render(change: &FileChange, palette: &Palette, max_lines: usize) -> Vec<String> {
    let path = one_line(&change.path);
    let (before, after) = match (&change.before, &change.after) {
        _ if change.unreadable => {
            return vec![palette.dim(&format!("  {path}: changed (binary or too large to show)"))];
        }
        (Some(_), None) => return vec![palette.dim(&format!("  {path}: deleted"))],
        (None, None) => return Vec::new(),
        (before, Some(after)) => (before.as_deref().unwrap_or(""), after.as_str()),
    };
    // Two large, different texts could take minutes: past the deadline the diff is coarser.
    let diff = TextDiff::configure()
        .timeout(std::time::Duration::from_millis(500))
        .diff_lines(before, after);
    let mut body: Vec<String> = Vec::new();
    let (mut added, mut removed) = (0, 0);
    for (index, group) in diff.grouped_ops(CONTEXT).iter().enumerate() {
        if index > 0 {
            body.push(palette.dim("       ⋮"));
        }
        for op in group {
            for change in diff.iter_changes(op) {
                let text = multi_line(change.value().trim_end_matches(['\n', '\r'])).into_owned();
                let line = match change.tag() {
                    ChangeTag::Delete => {
                        removed += 1;
                        let number = change.old_index().map_or(0, |i| i + 1);
                        palette.red(&format!("  {number:>4} - {text}"))
                    }
                    ChangeTag::Insert => {
                        added += 1;
                        let number = change.new_index().map_or(0, |i| i + 1);
                        palette.green(&format!("  {number:>4} + {text}"))
                    }
                    ChangeTag::Equal => {
                        let number = change.new_index().map_or(0, |i| i + 1);
                        palette.dim(&format!("  {number:>4}   {text}"))
                    }
                };
                body.push(line);
            }
        }
    }
    let summary = match change.before {
        None => format!("  {path}: new file, {}", lines(added)),
        Some(_) if added == 0 && removed == 0 => format!("  {path}: unchanged"),
        Some(_) => format!("  {path}: +{added} -{removed}"),
    };
    let mut lines = vec![palette.dim(&summary)];
    let hidden = body.len().saturating_sub(max_lines);
    lines.extend(body.into_iter().take(max_lines));
    if hidden > 0 {
        lines.push(palette.dim(&format!("       … (+{hidden} lines)")));
    }
    lines
}

fn lines(n: usize) -> String {
    match n {
        1 => "1 line".to_string(),
        n => format!("{n} lines"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn change(before: Option<&str>, after: Option<&str>) -> FileChange {
        FileChange {
            call_id: None,
            path: "x.py".into(),
            before: before.map(String::from),
            after: after.map(String::from),
            unreadable: false,
        }
    }

    #[test]
    fn an_edit_shows_removed_and_added_lines_with_context() {
        let lines = render(
            &change(Some("a\nb\nc\nd\n"), Some("a\nB\nc\nd\n")),
            &Palette::plain(),
            20,
        );
        assert_eq!(
            lines,
            vec![
                "  x.py: +1 -1",
                "     1   a",
                "     2 - b",
                "     2 + B",
                "     3   c",
                "     4   d",
            ]
        );
    }

    #[test]
    fn colours_mark_removals_red_and_additions_green() {
        let lines = render(&change(Some("a\n"), Some("b\n")), &Palette::colored(), 20);
        assert!(
            lines[1].contains("\u{1b}[38;5;9m") || lines[1].contains("\u{1b}[31m"),
            "{lines:?}"
        );
        assert!(
            lines[2].contains("\u{1b}[38;5;10m") || lines[2].contains("\u{1b}[32m"),
            "{lines:?}"
        );
    }

    /// A file written with escape sequences that would clear the screen and write the
    /// clipboard when its diff is shown, under a path that hides its real extension.
    #[test]
    fn escape_sequences_in_a_file_are_shown_not_run() {
        let change = FileChange {
            path: "notes\u{202e}txt.sh".into(),
            ..change(Some("a\n"), Some("a\n\u{1b}[2J\u{1b}]52;c;eA==\u{7}\tb\r\n"))
        };
        let lines = render(&change, &Palette::colored(), 20);
        let text = lines.join("\n");
        assert!(text.contains("notes\\u{202e}txt.sh: +1 -0"), "{lines:?}");
        assert!(text.contains("2 + \\x1b[2J\\x1b]52;c;eA==\\x07\tb"), "{lines:?}");
        assert!(!text.contains(['\u{7}', '\u{202e}', '\r']), "{lines:?}");
        assert!(
            !text.contains("\u{1b}[2J") && !text.contains("\u{1b}]"),
            "{lines:?}"
        );
    }

    #[test]
    fn a_new_file_is_folded_after_the_limit() {
        let content: String = (1..=30).map(|i| format!("line {i}\n")).collect();
        let lines = render(&change(None, Some(&content)), &Palette::plain(), 5);
        assert_eq!(lines[0], "  x.py: new file, 30 lines");
        assert_eq!(lines[1], "     1 + line 1");
        assert_eq!(lines.last().unwrap(), "       … (+25 lines)");
        assert_eq!(lines.len(), 7);
    }
}
