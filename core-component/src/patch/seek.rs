//! Finding a chunk's old lines in a file: exact first, then ignoring trailing whitespace,
//! then ignoring surrounding whitespace, then treating typographic punctuation (curly
//! quotes, dashes, non-breaking spaces) as its ASCII form. The first pass that matches wins.

/// How a match was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pass {
    Exact,
    TrailingWhitespace,
    Whitespace,
    Punctuation,
}

/// How a pass sees a line.
type Normalize = fn(&str) -> String;

/// The index at or after `start` where `pattern` occurs in `lines`. With `at_end`, the
/// position at the very end of the file is tried first.
pub fn seek(lines: &[String], pattern: &[String], start: usize, at_end: bool) -> Option<(usize, Pass)> {
    if pattern.is_empty() {
        return Some((start.min(lines.len()), Pass::Exact));
    }
    if pattern.len() > lines.len() {
        return None;
    }
    let passes: [(Pass, Normalize); 4] = [
        (Pass::Exact, |s| s.to_string()),
        (Pass::TrailingWhitespace, |s| s.trim_end().to_string()),
        (Pass::Whitespace, |s| s.trim().to_string()),
        (Pass::Punctuation, |s| normalize_punctuation(s.trim())),
    ];
    let last_start = lines.len() - pattern.len();
    for (pass, normalize) in passes {
        let wanted: Vec<String> = pattern.iter().map(|p| normalize(p)).collect();
        let matches_at = |i: usize| (0..pattern.len()).all(|k| normalize(&lines[i + k]) == wanted[k]);
        if at_end && last_start >= start && matches_at(last_start) {
            return Some((last_start, pass));
        }
        if let Some(i) = (start..=last_start).find(|&i| matches_at(i)) {
            return Some((i, pass));
        }
    }
    None
}

/// ASCII forms of the punctuation that editors and models substitute.
fn normalize_punctuation(s: &str) -> String {
    s.chars()
        .map(|c| match c {
            '\u{2010}' | '\u{2011}' | '\u{2012}' | '\u{2013}' | '\u{2014}' | '\u{2015}' | '\u{2212}' => '-',
            '\u{2018}' | '\u{2019}' | '\u{201A}' | '\u{201B}' => '\'',
            '\u{201C}' | '\u{201D}' | '\u{201E}' | '\u{201F}' => '"',
            '\u{00A0}' | '\u{2002}' | '\u{2003}' | '\u{2009}' | '\u{202F}' => ' ',
            other => other,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(text: &str) -> Vec<String> {
        text.lines().map(str::to_string).collect()
    }

    #[test]
    fn passes_go_from_strict_to_lenient() {
        let file = lines("a\nb  \n  c\nd \u{2014} \u{201C}e\u{201D}\n");
        assert_eq!(seek(&file, &lines("a\nb  "), 0, false), Some((0, Pass::Exact)));
        assert_eq!(
            seek(&file, &lines("b"), 0, false),
            Some((1, Pass::TrailingWhitespace))
        );
        assert_eq!(seek(&file, &lines("c"), 0, false), Some((2, Pass::Whitespace)));
        assert_eq!(
            seek(&file, &lines("d - \"e\""), 0, false),
            Some((3, Pass::Punctuation))
        );
        assert_eq!(seek(&file, &lines("x"), 0, false), None);
    }

    #[test]
    fn the_search_starts_at_start_and_end_of_file_is_tried_first() {
        let file = lines("x\ny\nx\n");
        assert_eq!(seek(&file, &lines("x"), 1, false), Some((2, Pass::Exact)));
        assert_eq!(seek(&file, &lines("x"), 0, true), Some((2, Pass::Exact)));
        assert_eq!(seek(&file, &lines("x\ny\nx\nz"), 0, false), None);
    }
}
