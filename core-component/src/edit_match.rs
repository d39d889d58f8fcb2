//! Finding `old_string` in a file for edit_file: exact first, then the fuzzy chain of the
//! OpenDev paper (appendix D), stopping at the first pass that finds anything. Every pass
//! returns regions of the file itself, so the file's own formatting is what gets replaced;
//! several regions are an ambiguity the caller reports, never a guess.

use std::ops::Range;

/// The passes, in order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pass {
    Exact,
    LineTrimmed,
    BlockAnchor,
    WhitespaceNormalized,
    IndentationFlexible,
    EscapeNormalized,
    TrimmedBoundary,
    ContextAware,
}

impl Pass {
    pub fn name(self) -> &'static str {
        match self {
            Self::Exact => "exact",
            Self::LineTrimmed => "line-trimmed",
            Self::BlockAnchor => "block-anchor",
            Self::WhitespaceNormalized => "whitespace-normalized",
            Self::IndentationFlexible => "indentation-flexible",
            Self::EscapeNormalized => "escape-normalized",
            Self::TrimmedBoundary => "trimmed-boundary",
            Self::ContextAware => "context-aware",
        }
    }
}

/// Middle-line similarity a block-anchor candidate needs (anchors already match).
const BLOCK_ANCHOR_SIMILARITY: f32 = 0.3;
/// Whole-region similarity a context-aware candidate needs.
const CONTEXT_AWARE_SIMILARITY: f32 = 0.5;

/// One pass's search: the regions it finds.
type Search<'a> = dyn Fn() -> Vec<Range<usize>> + 'a;

/// The regions of `content` matching `needle` under the first pass that finds any.
pub fn find(content: &str, needle: &str) -> Option<(Pass, Vec<Range<usize>>)> {
    if needle.is_empty() {
        return None;
    }
    let lines = Lines::new(content);
    let wanted: Vec<&str> = needle.trim_end_matches('\n').split('\n').collect();
    let passes: [(Pass, &Search); 8] = [
        (Pass::Exact, &|| occurrences(content, needle)),
        (Pass::LineTrimmed, &|| {
            lines.windows(&wanted, |a, b| a.trim() == b.trim())
        }),
        (Pass::BlockAnchor, &|| {
            lines.anchored(&wanted, BLOCK_ANCHOR_SIMILARITY, true)
        }),
        (Pass::WhitespaceNormalized, &|| {
            lines.windows(&wanted, |a, b| collapse_whitespace(a) == collapse_whitespace(b))
        }),
        (Pass::IndentationFlexible, &|| lines.non_blank_windows(&wanted)),
        (Pass::EscapeNormalized, &|| {
            let unescaped = unescape(needle);
            if unescaped == needle {
                Vec::new()
            } else {
                occurrences(content, &unescaped)
            }
        }),
        (Pass::TrimmedBoundary, &|| {
            let trimmed = needle.trim();
            if trimmed == needle || trimmed.is_empty() {
                return Vec::new();
            }
            occurrences(content, trimmed)
                .into_iter()
                .map(|r| lines.widen(r))
                .collect()
        }),
        (Pass::ContextAware, &|| {
            lines.anchored(&wanted, CONTEXT_AWARE_SIMILARITY, false)
        }),
    ];
    for (pass, run) in passes {
        let mut found = run();
        found.dedup();
        if !found.is_empty() {
            return Some((pass, found));
        }
    }
    None
}

fn occurrences(content: &str, needle: &str) -> Vec<Range<usize>> {
    content
        .match_indices(needle)
        .map(|(i, m)| i..i + m.len())
        .collect()
}

fn collapse_whitespace(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn unescape(s: &str) -> String {
    s.replace("\\n", "\n").replace("\\t", "\t").replace("\\\\", "\\")
}

fn similarity(a: &str, b: &str) -> f32 {
    similar::TextDiff::from_chars(a, b).ratio()
}

/// A file's lines with their byte ranges (without the line break).
struct Lines<'a> {
    text: &'a str,
    spans: Vec<Range<usize>>,
}

impl<'a> Lines<'a> {
    fn new(text: &'a str) -> Self {
        let mut spans = Vec::new();
        let mut start = 0;
        for (i, c) in text.char_indices() {
            if c == '\n' {
                spans.push(start..i);
                start = i + 1;
            }
        }
        if start < text.len() {
            spans.push(start..text.len());
        }
        Self { text, spans }
    }

    fn line(&self, i: usize) -> &'a str {
        &self.text[self.spans[i].clone()]
    }

    /// The region from the start of line `first` to the end of line `last`.
    fn region(&self, first: usize, last: usize) -> Range<usize> {
        self.spans[first].start..self.spans[last].end
    }

    /// Windows of as many lines as `wanted` where every line pair is `equal`.
    fn windows(&self, wanted: &[&str], equal: impl Fn(&str, &str) -> bool) -> Vec<Range<usize>> {
        let n = wanted.len();
        if n == 0 || n > self.spans.len() {
            return Vec::new();
        }
        (0..=self.spans.len() - n)
            .filter(|&i| (0..n).all(|k| equal(self.line(i + k), wanted[k])))
            .map(|i| self.region(i, i + n - 1))
            .collect()
    }

    /// Regions whose non-blank lines equal the wanted non-blank lines, ignoring indentation.
    fn non_blank_windows(&self, wanted: &[&str]) -> Vec<Range<usize>> {
        let wanted: Vec<&str> = wanted
            .iter()
            .map(|l| l.trim())
            .filter(|l| !l.is_empty())
            .collect();
        let non_blank: Vec<usize> = (0..self.spans.len())
            .filter(|&i| !self.line(i).trim().is_empty())
            .collect();
        let n = wanted.len();
        if n == 0 || n > non_blank.len() {
            return Vec::new();
        }
        (0..=non_blank.len() - n)
            .filter(|&i| (0..n).all(|k| self.line(non_blank[i + k]).trim() == wanted[k]))
            .map(|i| self.region(non_blank[i], non_blank[i + n - 1]))
            .collect()
    }

    /// Regions whose first and last lines match the wanted ones (trimmed) and whose text is
    /// similar enough. `same_length`: the block has exactly the wanted number of lines, and
    /// only the middle lines are scored (block-anchor); otherwise any length, anchored on the
    /// first and last non-empty wanted lines, scored as a whole (context-aware).
    fn anchored(&self, wanted: &[&str], threshold: f32, same_length: bool) -> Vec<Range<usize>> {
        let significant: Vec<&str> = wanted.iter().copied().filter(|l| !l.trim().is_empty()).collect();
        if significant.len() < 3 {
            return Vec::new();
        }
        let (first, last) = (significant[0].trim(), significant[significant.len() - 1].trim());
        let mut found = Vec::new();
        for start in (0..self.spans.len()).filter(|&i| self.line(i).trim() == first) {
            let ends: Vec<usize> = if same_length {
                vec![start + wanted.len() - 1]
            } else {
                (start + 1..self.spans.len().min(start + 2 * wanted.len() + 1)).collect()
            };
            for end in ends.into_iter().filter(|&e| e < self.spans.len()) {
                if self.line(end).trim() != last {
                    continue;
                }
                let score = if same_length {
                    let middle: Vec<&str> = (start + 1..end).map(|i| self.line(i).trim()).collect();
                    let wanted_middle: Vec<&str> =
                        wanted[1..wanted.len() - 1].iter().map(|l| l.trim()).collect();
                    similarity(&middle.join("\n"), &wanted_middle.join("\n"))
                } else {
                    similarity(&self.text[self.region(start, end)], &significant.join("\n"))
                };
                if score >= threshold {
                    found.push(self.region(start, end));
                    break;
                }
            }
        }
        found
    }

    /// Widens a byte range to whole lines.
    fn widen(&self, range: Range<usize>) -> Range<usize> {
        let first = self.spans.iter().position(|s| s.end >= range.start).unwrap_or(0);
        let last = self
            .spans
            .iter()
            .rposition(|s| s.start <= range.end.saturating_sub(1))
            .unwrap_or(first);
        self.region(first, last.max(first))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn matched<'a>(content: &'a str, needle: &str) -> Option<(Pass, Vec<&'a str>)> {
        find(content, needle).map(|(pass, ranges)| (pass, ranges.into_iter().map(|r| &content[r]).collect()))
    }

    #[test]
    fn each_pass_finds_what_the_earlier_ones_miss() {
        let file = "fn main() {\n    let x = 1;   \n    println!(\"{x}\");\n}\n";
        assert_eq!(matched(file, "let x = 1;").map(|m| m.0), Some(Pass::Exact));
        assert_eq!(
            matched(file, "let x = 1;\nprintln!(\"{x}\");"),
            Some((
                Pass::LineTrimmed,
                vec!["    let x = 1;   \n    println!(\"{x}\");"]
            ))
        );
        assert_eq!(
            matched(file, "fn  main()  {\n  let   x = 1;").map(|m| m.0),
            Some(Pass::WhitespaceNormalized)
        );
        assert_eq!(
            matched(file, "    let x = 1;   \\n    println!").map(|m| m.0),
            Some(Pass::EscapeNormalized)
        );
        assert_eq!(matched(file, "nothing like it"), None);
    }

    #[test]
    fn block_anchor_tolerates_a_changed_middle_and_returns_the_file_text() {
        let file = "start\n  a = 1\n  b = 2\n  c = 3\nend\nother\n";
        let (pass, regions) =
            matched(file, "start\n  a = 1\n  b = 20\n  c = 3\nend").unwrap_or((Pass::Exact, vec![]));
        assert_eq!(pass, Pass::BlockAnchor);
        assert_eq!(regions, ["start\n  a = 1\n  b = 2\n  c = 3\nend"]);
    }

    #[test]
    fn indentation_and_blank_lines_are_flexible_and_ambiguity_is_reported() {
        let file = "if a:\n\n        go()\n        stop()\n";
        assert_eq!(
            matched(file, "if a:\n    go()\n    stop()").map(|m| m.0),
            Some(Pass::IndentationFlexible)
        );
        let twice = "x = 1\ny = 2\nx = 1\n";
        assert_eq!(matched(twice, "x = 1").map(|m| m.1.len()), Some(2));
    }
}
