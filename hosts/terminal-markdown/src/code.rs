//! Code blocks: highlighted line by line with syntect, so a fence can be shown while it is
//! still streaming. Syntaxes and theme are loaded once, on the first highlighted block: a
//! chat that never shows code never pays for them.

use crate::inline::{Color, Look, paint};
use std::sync::OnceLock;
use syntect::easy::HighlightLines;
use syntect::highlighting::{Theme, ThemeSet};
use syntect::parsing::SyntaxSet;

/// Dark, but with its plain-text colour left to the terminal (below), its token colours
/// read on light backgrounds too.
const THEME: &str = "base16-ocean.dark";

/// Bytes of code coloured per answer; code past them is printed plain. Syntect's pure-Rust
/// regexes take about 7 µs a byte (BENCHMARKS.md section 10): this bounds an answer's
/// highlighting to about half a second, while no answer a person reads has that much code.
pub(crate) const COLOR_BUDGET: usize = 64 << 10;

struct Assets {
    syntaxes: SyntaxSet,
    theme: Theme,
}

fn assets() -> Option<&'static Assets> {
    static ASSETS: OnceLock<Option<Assets>> = OnceLock::new();
    ASSETS
        .get_or_init(|| {
            let mut themes = ThemeSet::load_defaults();
            let theme = themes.themes.remove(THEME)?;
            Some(Assets {
                syntaxes: SyntaxSet::load_defaults_newlines(),
                theme,
            })
        })
        .as_ref()
}

/// Paints the lines of one code block, keeping the parser's state from line to line.
pub(crate) struct Highlighter {
    state: Option<(HighlightLines<'static>, &'static Assets)>,
    color: bool,
}

impl Highlighter {
    /// `info` is the fence's info string (`rust`, `py title=x`, `rust,ignore`); an unknown or
    /// missing language gives plain lines.
    pub fn new(info: &str, color: bool) -> Self {
        let lang = info
            .split(|c: char| c.is_whitespace() || c == ',' || c == '{')
            .next()
            .unwrap_or("")
            .trim();
        let state = if color && !lang.is_empty() {
            assets().and_then(|assets| {
                let syntax = assets.syntaxes.find_syntax_by_token(lang)?;
                Some((HighlightLines::new(syntax, &assets.theme), assets))
            })
        } else {
            None
        };
        Self { state, color }
    }

    /// One line of code (without its newline), painted while `budget` (bytes of code left
    /// to colour in this answer) lasts.
    pub fn line(&mut self, line: &str, budget: &mut usize) -> String {
        let line = expand_tabs(line);
        if self.state.is_some() {
            match budget.checked_sub(line.len() + 1) {
                Some(left) => *budget = left,
                // Plain to the end of the block: a grammar's state cannot skip lines.
                None => self.state = None,
            }
        }
        let Some((lines, assets)) = self.state.as_mut() else {
            return line;
        };
        // The syntaxes are the `newlines` set: each line must end with one.
        let with_newline = format!("{line}\n");
        let Ok(regions) = lines.highlight_line(&with_newline, &assets.syntaxes) else {
            // A grammar that fails once would be out of step for the rest: plain from here.
            self.state = None;
            return line;
        };
        let default_fg = assets.theme.settings.foreground;
        let mut out = String::new();
        let mut run = String::new();
        let mut run_look = Look::default();
        for (style, text) in regions {
            let text = text.trim_end_matches('\n');
            if text.is_empty() {
                continue;
            }
            let fg = style.foreground;
            let look = Look {
                fg: (Some(fg) != default_fg).then_some(Color::Rgb(fg.r, fg.g, fg.b)),
                ..Look::default()
            };
            // Whitespace takes no colour: merging it into the run around saves escapes.
            if look != run_look && !text.trim().is_empty() {
                out.push_str(&paint(&run, run_look, self.color));
                run.clear();
                run_look = look;
            }
            run.push_str(text);
        }
        out.push_str(&paint(&run, run_look, self.color));
        out
    }
}

/// Code sits this far right of the text around it: with colour off, indentation is what
/// tells code from prose.
pub(crate) const CODE_INDENT: &str = "  ";

/// Tabs to spaces at stops of 4: a tab's width is the terminal's guess otherwise, and
/// indentation is what code is read by.
pub(crate) fn expand_tabs(line: &str) -> String {
    if !line.contains('\t') {
        return line.to_string();
    }
    let mut out = String::with_capacity(line.len() + 8);
    let mut column = 0;
    for c in line.chars() {
        if c == '\t' {
            let n = 4 - column % 4;
            out.extend(std::iter::repeat_n(' ', n));
            column += n;
        } else {
            out.push(c);
            column += crate::inline::width(c.encode_utf8(&mut [0; 4]));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_languages_are_coloured_and_unknown_ones_are_not() {
        let budget = &mut COLOR_BUDGET.clone();
        let mut rust = Highlighter::new("rust", true);
        let painted = rust.line("fn main() { let x = 1; }", budget);
        assert!(painted.contains("\u{1b}[38;2;"), "{painted:?}");
        let mut unknown = Highlighter::new("no-such-language", true);
        assert_eq!(unknown.line("fn main() {}", budget), "fn main() {}");
        let mut off = Highlighter::new("rust", false);
        assert_eq!(off.line("fn main() {}", budget), "fn main() {}");
        assert_eq!(*budget, COLOR_BUDGET - 25);
    }

    #[test]
    fn state_carries_from_line_to_line() {
        // The second line is inside a block comment only because of the first.
        let budget = &mut COLOR_BUDGET.clone();
        let mut h = Highlighter::new("rust", true);
        h.line("/* start", budget);
        let inside = h.line("let x = 1;", budget);
        let mut fresh = Highlighter::new("rust", true);
        assert_ne!(inside, fresh.line("let x = 1;", budget));
    }

    #[test]
    fn colour_stops_when_the_budget_is_spent() {
        let mut h = Highlighter::new("rust", true);
        let budget = &mut 20;
        assert!(h.line("let x = 1;", budget).contains('\u{1b}'));
        assert_eq!(*budget, 9);
        assert_eq!(h.line("let y = 2;", budget), "let y = 2;");
        assert_eq!(h.line("let", budget), "let");
    }

    #[test]
    fn tabs_become_spaces() {
        assert_eq!(expand_tabs("\tx\ty"), "    x   y");
    }
}
