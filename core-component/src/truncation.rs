//! Head/tail truncation of tool output before it enters the history (section 5 of the
//! spec). Characters first (handles a single 10 MB line), then lines (readability).

/// Which part of an over-long output survives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    HeadTail,
    Tail,
}

/// Default (max characters, max lines) of a tool (section 5.2).
pub fn default_limits(tool: &str) -> (usize, Option<usize>) {
    match tool {
        "read_file" => (50_000, None),
        "shell" => (30_000, Some(256)),
        "grep" => (20_000, Some(200)),
        "glob" => (20_000, Some(500)),
        "edit_file" | "apply_patch" => (10_000, None),
        "write_file" => (1_000, None),
        // A subagent's report comes back through `wait`.
        "spawn_agent" | "wait" => (20_000, None),
        _ => (30_000, None),
    }
}

/// Default truncation mode of a tool.
pub fn default_mode(tool: &str) -> Mode {
    match tool {
        "read_file" | "shell" | "spawn_agent" | "wait" => Mode::HeadTail,
        "grep" | "glob" | "edit_file" | "apply_patch" | "write_file" => Mode::Tail,
        _ => Mode::HeadTail,
    }
}

/// Byte offset of the `n`-th character from the start.
fn offset_from_start(s: &str, n: usize) -> usize {
    s.char_indices().nth(n).map(|(i, _)| i).unwrap_or(s.len())
}

/// Byte offset where the last `n` characters begin.
fn offset_from_end(s: &str, n: usize) -> usize {
    if n == 0 {
        return s.len();
    }
    s.char_indices().rev().nth(n - 1).map(|(i, _)| i).unwrap_or(0)
}

/// Character-based truncation (section 5.1).
pub fn truncate_chars(output: &str, max_chars: usize, mode: Mode) -> String {
    // A byte length within the limit is a char length within it too: skip the count.
    if output.len() <= max_chars {
        return output.to_string();
    }
    let total = output.chars().count();
    if total <= max_chars {
        return output.to_string();
    }
    let removed = total - max_chars;
    match mode {
        Mode::HeadTail => {
            // With an odd limit the tail gets the extra character: exactly `max_chars` are
            // kept, so the count in the marker is exact.
            let head = max_chars / 2;
            let tail = max_chars - head;
            format!(
                "{}\n\n[WARNING: Tool output was truncated. {removed} characters were removed from the middle. \
                 The full output is available in the event stream. \
                 If you need to see specific parts, re-run the tool with more targeted parameters.]\n\n{}",
                &output[..offset_from_start(output, head)],
                &output[offset_from_end(output, tail)..]
            )
        }
        Mode::Tail => format!(
            "[WARNING: Tool output was truncated. First {removed} characters were removed. \
             The full output is available in the event stream.]\n\n{}",
            &output[offset_from_end(output, max_chars)..]
        ),
    }
}

/// Line-based truncation (section 5.3), applied after character truncation.
pub fn truncate_lines(output: &str, max_lines: usize) -> String {
    let lines: Vec<&str> = output.split('\n').collect();
    if lines.len() <= max_lines {
        return output.to_string();
    }
    let head = max_lines / 2;
    let tail = max_lines - head;
    let omitted = lines.len() - head - tail;
    format!(
        "{}\n[... {omitted} lines omitted ...]\n{}",
        lines[..head].join("\n"),
        lines[lines.len() - tail..].join("\n")
    )
}

/// The full pipeline for one tool's output.
pub fn truncate_tool_output(output: &str, tool: &str, max_chars: usize, max_lines: Option<usize>) -> String {
    let result = truncate_chars(output, max_chars, default_mode(tool));
    match max_lines {
        Some(n) => truncate_lines(&result, n),
        None => result,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn head_tail_keeps_both_ends_and_says_how_much_was_removed() {
        let out = truncate_chars(
            &format!("{}{}", "a".repeat(100), "b".repeat(100)),
            50,
            Mode::HeadTail,
        );
        assert!(out.starts_with(&"a".repeat(25)));
        assert!(out.ends_with(&"b".repeat(25)));
        assert!(out.contains("150 characters were removed from the middle"));
    }

    #[test]
    fn tail_mode_keeps_the_end() {
        let out = truncate_chars("0123456789", 4, Mode::Tail);
        assert!(out.ends_with("\n\n6789"));
        assert!(out.contains("First 6 characters were removed"));
    }

    #[test]
    fn multibyte_characters_are_counted_as_characters() {
        let s = "\u{e9}".repeat(10);
        assert_eq!(truncate_chars(&s, 10, Mode::Tail), s);
        let out = truncate_chars(&s, 4, Mode::HeadTail);
        assert!(out.starts_with("\u{e9}\u{e9}\n"));
    }

    #[test]
    fn odd_limits_keep_exactly_the_limit() {
        let out = truncate_chars("abcdefghij", 5, Mode::HeadTail);
        assert!(out.starts_with("ab\n\n[WARNING"), "{out}");
        assert!(out.ends_with("]\n\nhij"), "{out}");
        assert!(out.contains(" 5 characters were removed"));
        let lines = truncate_lines("1\n2\n3\n4\n5\n6", 3);
        assert_eq!(lines, "1\n[... 3 lines omitted ...]\n5\n6");
    }

    #[test]
    fn multibyte_characters_are_never_split() {
        // Two-, three- and four-byte characters on both sides of every cut; none of them
        // occurs in the marker, so counting them counts what was kept.
        let s: String = "\u{1F600}\u{00DF}\u{20AC}".repeat(1_000);
        let ours = |c: &char| matches!(c, '\u{1F600}' | '\u{00DF}' | '\u{20AC}');
        for max in [0, 1, 2, 3, 7, 100, 2_999] {
            for mode in [Mode::HeadTail, Mode::Tail] {
                let out = truncate_chars(&s, max, mode);
                assert_eq!(out.chars().filter(ours).count(), max, "max {max}, {mode:?}");
            }
        }
    }

    #[test]
    fn lines_are_cut_after_characters() {
        let text = (0..10).map(|i| i.to_string()).collect::<Vec<_>>().join("\n");
        let out = truncate_tool_output(&text, "shell", 1_000, Some(4));
        assert_eq!(out, "0\n1\n[... 6 lines omitted ...]\n8\n9");
    }
}
