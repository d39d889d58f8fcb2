//! What a source line can start, by CommonMark's block rules: only as much as the stream
//! needs to know where a block ends. The block's own text is parsed by pulldown-cmark.

/// Columns of leading whitespace (a tab to the next stop of 4), and the rest of the line.
pub(crate) fn indent(line: &str) -> (usize, &str) {
    let mut columns = 0;
    for (i, c) in line.char_indices() {
        match c {
            ' ' => columns += 1,
            '\t' => columns += 4 - columns % 4,
            _ => return (columns, &line[i..]),
        }
    }
    (columns, "")
}

pub(crate) fn is_blank(line: &str) -> bool {
    line.trim().is_empty()
}

/// Removes up to `n` columns of leading whitespace (tabs become spaces first).
pub(crate) fn strip_columns(line: &str, n: usize) -> String {
    let (columns, rest) = indent(line);
    let keep = columns.saturating_sub(n);
    let mut out = " ".repeat(keep);
    out.push_str(rest);
    out
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Fence {
    pub ch: char,
    pub len: usize,
    pub info: String,
}

/// A code fence's opening (``` or ~~~, three or more), from the line after its indent.
pub(crate) fn fence_open(rest: &str) -> Option<Fence> {
    let ch = rest.chars().next().filter(|c| *c == '`' || *c == '~')?;
    let len = rest.chars().take_while(|c| *c == ch).count();
    let info = rest[len..].trim();
    if len < 3 || (ch == '`' && info.contains('`')) {
        return None;
    }
    Some(Fence {
        ch,
        len,
        info: info.to_string(),
    })
}

pub(crate) fn fence_closes(line: &str, fence: &Fence) -> bool {
    let (columns, rest) = indent(line);
    let len = rest.chars().take_while(|c| *c == fence.ch).count();
    columns < 4 && len >= fence.len && rest[len * fence.ch.len_utf8()..].trim().is_empty()
}

pub(crate) fn is_atx_heading(rest: &str) -> bool {
    let hashes = rest.chars().take_while(|c| *c == '#').count();
    (1..=6).contains(&hashes)
        && rest[hashes..]
            .chars()
            .next()
            .is_none_or(|c| c == ' ' || c == '\t')
}

/// `---`, `***`, `___`, spaces allowed between.
pub(crate) fn is_thematic_break(rest: &str) -> bool {
    let Some(ch) = rest.chars().next().filter(|c| matches!(c, '-' | '*' | '_')) else {
        return false;
    };
    let mut count = 0;
    for c in rest.trim_end().chars() {
        match c {
            c if c == ch => count += 1,
            ' ' | '\t' => {}
            _ => return false,
        }
    }
    count >= 3
}

/// `===` or `---` under a paragraph: it makes the paragraph a heading.
pub(crate) fn is_setext_underline(rest: &str) -> bool {
    let body = rest.trim_end();
    let Some(ch) = body.chars().next().filter(|c| *c == '=' || *c == '-') else {
        return false;
    };
    body.chars().all(|c| c == ch)
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Marker {
    /// The number of an ordered item, `None` for a bullet.
    pub number: Option<u64>,
    /// The bullet (`-`, `*`, `+`) or the number's delimiter (`.`, `)`): another one starts
    /// a new list.
    pub ch: char,
    /// Columns from the marker's start to the item's text.
    pub content: usize,
    pub empty: bool,
}

pub(crate) fn list_marker(rest: &str) -> Option<Marker> {
    let digits = rest.chars().take_while(char::is_ascii_digit).count();
    let (number, ch, width) = if digits > 0 {
        if digits > 9 {
            return None;
        }
        let ch = rest[digits..].chars().next().filter(|c| *c == '.' || *c == ')')?;
        (rest[..digits].parse().ok(), ch, digits + 1)
    } else {
        let ch = rest.chars().next().filter(|c| matches!(c, '-' | '*' | '+'))?;
        (None, ch, 1)
    };
    let after = &rest[width..];
    if !after.is_empty() && !after.starts_with([' ', '\t']) {
        return None;
    }
    let empty = after.trim().is_empty();
    let (spaces, _) = indent(after);
    // Five spaces or more after the marker: the text is indented code, one space belongs
    // to the marker.
    let gap = if empty || spaces > 4 { 1 } else { spaces };
    Some(Marker {
        number,
        ch,
        content: width + gap,
        empty,
    })
}

/// Whether a line ends the paragraph before it (rather than continuing it).
pub(crate) fn interrupts_paragraph(columns: usize, rest: &str) -> bool {
    if columns > 3 {
        return false;
    }
    rest.starts_with('>')
        || is_atx_heading(rest)
        || fence_open(rest).is_some()
        || is_thematic_break(rest)
        || list_marker(rest).is_some_and(|m| !m.empty && m.number.is_none_or(|n| n == 1))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markers() {
        let m = list_marker("- x");
        assert_eq!(m.map(|m| (m.number, m.content)), Some((None, 2)));
        let m = list_marker("12. x");
        assert_eq!(m.map(|m| (m.number, m.content)), Some((Some(12), 4)));
        assert!(list_marker("-x").is_none());
        assert!(list_marker("1.5 apples").is_none());
        assert!(list_marker("-").is_some_and(|m| m.empty));
    }

    #[test]
    fn fences_breaks_and_headings() {
        let fence = fence_open("```rust").map(|f| f.info);
        assert_eq!(fence.as_deref(), Some("rust"));
        assert!(fence_open("``").is_none());
        let open = Fence {
            ch: '`',
            len: 3,
            info: String::new(),
        };
        assert!(fence_closes("````  ", &open));
        assert!(!fence_closes("```x", &open));
        assert!(is_thematic_break("* * *"));
        assert!(!is_thematic_break("- x"));
        assert!(is_atx_heading("## x") && !is_atx_heading("#x"));
        assert!(interrupts_paragraph(0, "- item") && !interrupts_paragraph(0, "2. item"));
        assert_eq!(strip_columns("\t  x", 2), "    x");
    }
}
