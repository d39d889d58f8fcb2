//! Colours for the chat, and only where they belong: on a terminal, unless `NO_COLOR` asks
//! for none (https://no-color.org: any non-empty value).

use crossterm::style::Stylize;
use std::io::IsTerminal;

/// Paints text, or leaves it plain.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Palette {
    enabled: bool,
}

impl Palette {
    /// Colours when stdout is a terminal and `NO_COLOR` is unset or empty.
    pub fn detect() -> Self {
        let no_color = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
        Self {
            enabled: std::io::stdout().is_terminal() && !no_color,
        }
    }

    #[cfg(test)]
    pub fn plain() -> Self {
        Self { enabled: false }
    }

    #[cfg(test)]
    pub fn colored() -> Self {
        Self { enabled: true }
    }

    /// Whether colours are drawn.
    pub fn enabled(&self) -> bool {
        self.enabled
    }

    pub fn red(&self, text: &str) -> String {
        self.paint(text, |t| t.red().to_string())
    }

    pub fn green(&self, text: &str) -> String {
        self.paint(text, |t| t.green().to_string())
    }

    pub fn yellow(&self, text: &str) -> String {
        self.paint(text, |t| t.yellow().to_string())
    }

    pub fn cyan(&self, text: &str) -> String {
        self.paint(text, |t| t.cyan().to_string())
    }

    pub fn dim(&self, text: &str) -> String {
        self.paint(text, |t| t.dim().to_string())
    }

    pub fn bold(&self, text: &str) -> String {
        self.paint(text, |t| t.bold().to_string())
    }

    fn paint(&self, text: &str, style: impl Fn(&str) -> String) -> String {
        if self.enabled && !text.is_empty() {
            style(text)
        } else {
            text.to_string()
        }
    }
}

/// The width of `text` on a terminal: escape sequences take none, wide characters two.
pub fn display_width(text: &str) -> usize {
    let mut width = 0;
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' {
            // CSI sequences (ESC [ ... final byte in @..~) are the only ones we write.
            if chars.peek() == Some(&'[') {
                chars.next();
                for c in chars.by_ref() {
                    if ('@'..='~').contains(&c) {
                        break;
                    }
                }
            }
            continue;
        }
        width += unicode_width::UnicodeWidthChar::width(c).unwrap_or(0);
    }
    width
}

/// The longest prefix of `text` (without escape sequences) that fits `width` columns, with
/// `…` marking a cut.
pub fn fit(text: &str, width: usize) -> String {
    if display_width(text) <= width {
        return text.to_string();
    }
    let mut out = String::new();
    let mut used = 0;
    for c in text.chars() {
        let w = unicode_width::UnicodeWidthChar::width(c).unwrap_or(0);
        if used + w + 1 > width {
            break;
        }
        used += w;
        out.push(c);
    }
    out.push('…');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn width_ignores_colours_and_counts_wide_characters_twice() {
        let painted = Palette::colored().red("abc");
        assert_ne!(painted, "abc");
        assert_eq!(display_width(&painted), 3);
        assert_eq!(display_width("日本"), 4);
    }

    #[test]
    fn fit_cuts_with_an_ellipsis() {
        assert_eq!(fit("hello world", 6), "hello…");
        assert_eq!(fit("hello", 6), "hello");
    }

    #[test]
    fn plain_palette_adds_no_escapes() {
        assert_eq!(Palette::plain().green("+ x"), "+ x");
    }
}
