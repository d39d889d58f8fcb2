//! Tool calls as the chat shows them: one compact line per call (`● write_file hello.py`)
//! and its result folded to a few lines.

use super::style::{Palette, fit};
use crate::terminal_text::{multi_line, one_line};
use agent_host::protocol::ToolCategory;
use serde_json::Value;

/// Lines of a tool's output shown from its start and from its end (where a traceback ends
/// and the sandbox adds its note); the lines between are counted.
const HEAD_LINES: usize = 2;
const TAIL_LINES: usize = 4;
/// Lines of an error shown.
const ERROR_LINES: usize = 3;
/// Longest summary of a call's arguments, in columns.
const SUMMARY_WIDTH: usize = 72;

/// What a call is about: the files it changes (the core names them), else the arguments
/// that say it: the command, the pattern... Escaped: all of it is the model's.
pub fn summary(arguments: &Value, changes: &[String]) -> String {
    let field = |name: &str| arguments.get(name).and_then(Value::as_str);
    let text = if !changes.is_empty() {
        changes.join(", ")
    } else if let Some(main) = ["file_path", "command", "pattern", "path", "task", "message"]
        .iter()
        .find_map(|name| field(name))
    {
        match (field("pattern"), field("path")) {
            (Some(pattern), Some(path)) => format!("{pattern} in {path}"),
            _ => main.to_string(),
        }
    } else if let Some(paths) = arguments.get("paths").and_then(Value::as_array) {
        paths
            .iter()
            .filter_map(Value::as_str)
            .collect::<Vec<_>>()
            .join(", ")
    } else if let Some(agent) = field("agent_id") {
        agent.to_string()
    } else {
        match arguments {
            Value::Object(map) if map.is_empty() => String::new(),
            other => other.to_string(),
        }
    };
    let first_line = one_line(text.lines().next().unwrap_or_default());
    let cut = if text.lines().nth(1).is_some() {
        format!("{first_line} …")
    } else {
        first_line.to_string()
    };
    fit(&cut, SUMMARY_WIDTH)
}

/// A call's output: a count for reads, else its first and last lines (escaped: a command's
/// output or a file's text may hold escape sequences) and how many are between.
pub fn folded_output(category: ToolCategory, output: &str, palette: &Palette) -> Vec<String> {
    let lines: Vec<&str> = output.trim_end().lines().collect();
    if lines.is_empty() {
        return vec![palette.dim("  (no output)")];
    }
    if category == ToolCategory::Read {
        let count = match lines.len() {
            1 => "1 line".to_string(),
            n => format!("{n} lines"),
        };
        return vec![palette.dim(&format!("  read {count}"))];
    }
    let line = |l: &&str| palette.dim(&format!("  {}", multi_line(l)));
    if lines.len() <= HEAD_LINES + TAIL_LINES + 1 {
        return lines.iter().map(line).collect();
    }
    let hidden = lines.len() - HEAD_LINES - TAIL_LINES;
    let mut shown: Vec<String> = lines[..HEAD_LINES].iter().map(line).collect();
    shown.push(palette.dim(&format!("  … {hidden} more lines (Ctrl-O shows all)")));
    shown.extend(lines[lines.len() - TAIL_LINES..].iter().map(line));
    shown
}

/// A failed call's error, in red.
pub fn error_lines(error: &str, palette: &Palette) -> Vec<String> {
    let lines: Vec<&str> = error.trim_end().lines().collect();
    let mut shown: Vec<String> = lines
        .iter()
        .take(ERROR_LINES)
        .map(|l| palette.red(&format!("  ✗ {}", multi_line(l))))
        .collect();
    if lines.len() > ERROR_LINES {
        shown.push(palette.dim(&format!("  … (+{} lines)", lines.len() - ERROR_LINES)));
    }
    shown
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn summaries_name_what_the_call_is_about() {
        let changes = |paths: &[&str]| paths.iter().map(|p| p.to_string()).collect::<Vec<_>>();
        assert_eq!(
            summary(
                &json!({"file_path": "hello.py", "content": "x"}),
                &changes(&["hello.py"])
            ),
            "hello.py"
        );
        assert_eq!(
            summary(&json!({"command": "cargo test\necho done"}), &[]),
            "cargo test …"
        );
        assert_eq!(
            summary(&json!({"pattern": "fn main", "path": "src"}), &[]),
            "fn main in src"
        );
        // apply_patch: the files the core read from the patch.
        let patch = "*** Begin Patch\n*** Update File: a.py\n*** Add File: b.py\n*** End Patch";
        assert_eq!(
            summary(&json!({"patch": patch}), &changes(&["a.py", "b.py"])),
            "a.py, b.py"
        );
        assert_eq!(summary(&json!({"agent_id": "agent-1"}), &[]), "agent-1");
    }

    /// A call whose command, output and error try to clear the screen, retitle the
    /// terminal and write the clipboard, painted in our colours.
    #[test]
    fn arguments_output_and_errors_cannot_drive_the_terminal() {
        assert_eq!(
            summary(&json!({"command": "ls\r\u{1b}[2Kecho safe"}), &[]),
            "ls\\r\\x1b[2Kecho safe"
        );
        assert_eq!(
            summary(&json!({}), &["a\u{202e}txt.exe".to_string()]),
            "a\\u{202e}txt.exe"
        );
        let palette = Palette::colored();
        let output = "ok\tdone\n\u{1b}]52;c;cm0gLXJmIH4=\u{7}\u{1b}[2J\n\u{9b}31m";
        let lines = folded_output(ToolCategory::Command, output, &palette);
        assert_eq!(lines.len(), 3, "{lines:?}");
        assert!(lines[0].contains("ok\tdone"), "{lines:?}");
        assert!(
            lines[1].contains("\\x1b]52;c;cm0gLXJmIH4=\\x07\\x1b[2J"),
            "{lines:?}"
        );
        assert!(lines[2].contains("\\u{9b}31m"), "{lines:?}");
        let errors = error_lines("failed\u{1b}]0;pwned\u{7}", &palette);
        assert!(errors[0].contains("failed\\x1b]0;pwned\\x07"), "{errors:?}");
        // Only our own colours remain: each line starts and ends with one of them.
        for line in lines.iter().chain(&errors) {
            let escapes: Vec<&str> = line.split('\u{1b}').skip(1).collect();
            assert!(
                escapes
                    .iter()
                    .all(|e| e.starts_with('[') && !e.starts_with("[2J")),
                "{line:?}"
            );
            assert!(!line.contains(['\u{7}', '\u{9b}']), "{line:?}");
        }
    }

    #[test]
    fn long_output_is_folded_with_a_count() {
        let output: String = (1..=10).map(|i| format!("line {i}\n")).collect();
        let lines = folded_output(ToolCategory::Command, &output, &Palette::plain());
        assert_eq!(
            lines,
            [
                "  line 1",
                "  line 2",
                "  … 4 more lines (Ctrl-O shows all)",
                "  line 7",
                "  line 8",
                "  line 9",
                "  line 10"
            ]
        );
        let short: String = (1..=7).map(|i| format!("line {i}\n")).collect();
        assert_eq!(
            folded_output(ToolCategory::Command, &short, &Palette::plain()).len(),
            7
        );
        assert_eq!(
            folded_output(ToolCategory::Read, &output, &Palette::plain()),
            vec!["  read 10 lines"]
        );
    }
}
