//! Styled text: a look (bold, colour, ...) per run of text, and the escape codes that paint
//! it. Layout never looks at escape codes: widths are counted on the plain runs, so the same
//! lines come out with colour on or off, only without the codes.

use unicode_width::UnicodeWidthChar;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Color {
    /// One of the terminal's own 8 colours, so it follows the user's scheme.
    Ansi(u8),
    Rgb(u8, u8, u8),
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Look {
    pub bold: bool,
    pub italic: bool,
    pub underline: bool,
    pub strike: bool,
    pub dim: bool,
    pub fg: Option<Color>,
}

impl Look {
    pub const DIM: Look = Look {
        bold: false,
        italic: false,
        underline: false,
        strike: false,
        dim: true,
        fg: None,
    };

    pub fn is_plain(self) -> bool {
        self == Look::default()
    }

    /// The SGR sequence that switches from the terminal's default to this look.
    fn sgr(self) -> String {
        let mut codes: Vec<String> = Vec::new();
        for (on, code) in [
            (self.bold, "1"),
            (self.dim, "2"),
            (self.italic, "3"),
            (self.underline, "4"),
            (self.strike, "9"),
        ] {
            if on {
                codes.push(code.to_string());
            }
        }
        match self.fg {
            Some(Color::Ansi(n)) => codes.push(format!("{}", 30 + u32::from(n))),
            Some(Color::Rgb(r, g, b)) => codes.push(format!("38;2;{r};{g};{b}")),
            None => {}
        }
        format!("\u{1b}[{}m", codes.join(";"))
    }
}

/// `text` in `look`, reset after; plain text when colour is off or the look is plain.
pub(crate) fn paint(text: &str, look: Look, color: bool) -> String {
    if !color || look.is_plain() || text.is_empty() {
        return text.to_string();
    }
    format!("{}{text}\u{1b}[0m", look.sgr())
}

/// Terminal columns of plain text: wide characters take two, control characters none.
pub(crate) fn width(text: &str) -> usize {
    text.chars().map(|c| c.width().unwrap_or(0)).sum()
}

/// One piece of a paragraph before it is wrapped.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Piece {
    Text(String, Look),
    /// A hard line break (two trailing spaces or a backslash in the source).
    Break,
}

/// A line made of styled runs, painted in one go once its place on screen is known.
pub(crate) type Runs = Vec<(String, Look)>;

/// The runs painted and joined, neighbours of the same look merged so each change of look
/// costs one escape sequence.
pub(crate) fn paint_runs(runs: &[(String, Look)], color: bool) -> String {
    let mut out = String::new();
    let mut pending = String::new();
    let mut pending_look = Look::default();
    for (text, look) in runs {
        if *look != pending_look && !pending.is_empty() {
            out.push_str(&paint(&pending, pending_look, color));
            pending.clear();
        }
        pending_look = *look;
        pending.push_str(text);
    }
    out.push_str(&paint(&pending, pending_look, color));
    out
}

pub(crate) fn runs_width(runs: &[(String, Look)]) -> usize {
    runs.iter().map(|(t, _)| width(t)).sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_when_colour_is_off() {
        let bold = Look {
            bold: true,
            ..Look::default()
        };
        assert_eq!(paint("x", bold, false), "x");
        assert_eq!(paint("x", bold, true), "\u{1b}[1mx\u{1b}[0m");
    }

    #[test]
    fn runs_of_one_look_are_painted_once() {
        let runs = vec![("a".to_string(), Look::DIM), ("b".to_string(), Look::DIM)];
        assert_eq!(paint_runs(&runs, true), "\u{1b}[2mab\u{1b}[0m");
        assert_eq!(runs_width(&runs), 2);
        assert_eq!(width("日本"), 4);
    }
}
