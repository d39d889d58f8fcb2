//! Head/tail truncation of tool output before it enters the history (section 5 of the
//! spec). Characters first (handles a single 10 MB line), then lines (readability).

use crate::config::SessionConfig;
use crate::tools::ToolTraits;
pub use crate::tools::traits::OutputLimits;

/// Which part of an over-long output survives (each tool's is in its `TRAITS`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    HeadTail,
    Tail,
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

/// Where the model can find an output's full text, for the truncation marker.
#[derive(Debug, Clone, Copy)]
pub enum FullOutput<'a> {
    /// Saved at this path (the environment's scratch folder), which read_file accepts.
    SavedAt(&'a str),
    /// Kept only in the host's event stream (the spec's wording): no scratch area.
    EventStream,
}

impl FullOutput<'_> {
    fn sentence(self) -> String {
        match self {
            Self::SavedAt(path) => format!(
                "The full output was saved to {path}: read it with read_file, paging with offset and limit."
            ),
            Self::EventStream => "The full output is available in the event stream.".to_string(),
        }
    }
}

/// Character-based truncation (section 5.1).
pub fn truncate_chars(output: &str, max_chars: usize, mode: Mode) -> String {
    truncate_chars_saved(output, max_chars, mode, FullOutput::EventStream)
}

/// [`truncate_chars`], with the marker saying where the full output is.
pub fn truncate_chars_saved(output: &str, max_chars: usize, mode: Mode, full: FullOutput<'_>) -> String {
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
                 {} \
                 If you need to see specific parts, re-run the tool with more targeted parameters.]\n\n{}",
                &output[..offset_from_start(output, head)],
                full.sentence(),
                &output[offset_from_end(output, tail)..]
            )
        }
        Mode::Tail => format!(
            "[WARNING: Tool output was truncated. First {removed} characters were removed. {}]\n\n{}",
            full.sentence(),
            &output[offset_from_end(output, max_chars)..]
        ),
    }
}

/// Line-based truncation (section 5.3), applied after character truncation.
pub fn truncate_lines(output: &str, max_lines: usize) -> String {
    truncate_lines_saved(output, max_lines, FullOutput::EventStream)
}

/// [`truncate_lines`], with the marker saying where the full output is when it was saved.
pub fn truncate_lines_saved(output: &str, max_lines: usize, full: FullOutput<'_>) -> String {
    let lines: Vec<&str> = output.split('\n').collect();
    if lines.len() <= max_lines {
        return output.to_string();
    }
    let head = max_lines / 2;
    let tail = max_lines - head;
    let omitted = lines.len() - head - tail;
    // Character truncation's warning may be among the omitted lines: this one says it too.
    let saved = match full {
        FullOutput::SavedAt(_) => format!(". {}", full.sentence()),
        FullOutput::EventStream => String::new(),
    };
    format!(
        "{}\n[... {omitted} lines omitted{saved} ...]\n{}",
        lines[..head].join("\n"),
        lines[lines.len() - tail..].join("\n")
    )
}

/// Whether [`truncate_tool_output`] would cut `output`.
pub fn would_truncate(output: &str, limits: &OutputLimits) -> bool {
    (output.len() > limits.max_chars && output.chars().count() > limits.max_chars)
        || limits
            .max_lines
            .is_some_and(|n| output.split('\n').nth(n).is_some())
}

/// The full pipeline for one tool's output.
pub fn truncate_tool_output(output: &str, limits: &OutputLimits) -> String {
    truncate_tool_output_saved(output, limits, FullOutput::EventStream)
}

/// [`truncate_tool_output`], the markers saying where the full output is.
pub fn truncate_tool_output_saved(output: &str, limits: &OutputLimits, full: FullOutput<'_>) -> String {
    let result = truncate_chars_saved(output, limits.max_chars, limits.mode, full);
    match limits.max_lines {
        Some(n) => truncate_lines_saved(&result, n, full),
        None => result,
    }
}

/// A tool's limits after the session's overrides (`tool_output_limits`).
pub fn limits_for(config: &SessionConfig, tool: &str, traits: &ToolTraits) -> OutputLimits {
    let mut limits = traits.output;
    if let Some(o) = config.tool_output_limits.iter().find(|l| l.tool == tool) {
        if let Some(chars) = o.max_chars {
            limits.max_chars = chars as usize;
        }
        if let Some(lines) = o.max_lines {
            limits.max_lines = Some(lines as usize);
        }
    }
    limits
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
        let limits = OutputLimits {
            max_chars: 1_000,
            max_lines: Some(4),
            mode: Mode::HeadTail,
        };
        let out = truncate_tool_output(&text, &limits);
        assert_eq!(out, "0\n1\n[... 6 lines omitted ...]\n8\n9");
    }
}
