//! Untrusted text made safe to print on a terminal. The model's words, a tool's output, a
//! file's lines and a command line reach the screen through here, so none of them can
//! drive the terminal (erase or rewrite a line, move the cursor, set the title or the
//! clipboard through OSC 52, forge our colours) or hide part of itself from the reader
//! (bidi overrides, zero-width and other invisible characters).
//!
//! Such characters are not dropped but shown escaped, so the reader sees that they are
//! there and which they are: `\r`, `\x1b`, `\x7f`, `\u{9b}`, `\u{202e}`. Backslashes are
//! left alone: doubling them would make every regex and `printf '%s\n'` harder to read,
//! and a literal `\x1b` hides nothing, since it is shown as typed.
//!
//! Escaped in every mode:
//! - C0 controls (U+0000–U+001F) but `\n` and `\t` in multi-line text, DEL (U+007F) and
//!   C1 controls (U+0080–U+009F, e.g. U+009B, which some terminals take for CSI);
//! - bidi embeddings, overrides and isolates (U+202A–U+202E, U+2066–U+2069) and the
//!   direction marks (U+061C, U+200E, U+200F), which reorder what is drawn;
//! - characters that draw nothing or a blank yet change the text: the soft hyphen
//!   (U+00AD), U+034F, the Hangul fillers (U+115F, U+1160, U+3164, U+FFA0), U+17B4,
//!   U+17B5, U+180E, the zero-width space (U+200B), the line and paragraph separators
//!   (U+2028, U+2029), the word joiner and invisible operators (U+2060–U+206F), the BOM
//!   (U+FEFF), the interlinear annotation marks (U+FFF0–U+FFFB), U+1BCA0–U+1BCA3,
//!   U+1D173–U+1D17A, the tag characters (U+E0000–U+E007F, invisible ASCII) and the
//!   supplementary variation selectors (U+E0100–U+E01EF), both used to smuggle text.
//!
//! Escaped in one-line text only: the joiners (U+200C, U+200D) and the variation
//! selectors (U+FE00–U+FE0F, U+180B–U+180D, U+180F). Emoji and several scripts need them
//! to render prose, but in a command or a path, where every character counts, they only
//! make two different strings look alike.

use std::borrow::Cow;
use std::fmt::Write;

/// Text for one line (an approval question, a tool call's summary): line breaks and tabs
/// are escaped too, so the line cannot end early or be pushed aside.
pub fn one_line(text: &str) -> Cow<'_, str> {
    escape(text, Mode::OneLine)
}

/// Text that may span lines (the model's words, a tool's output): `\n`, `\t`, and `\r`
/// right before `\n` (CRLF line ends, which only return to a column about to be left)
/// are kept.
pub fn multi_line(text: &str) -> Cow<'_, str> {
    escape(text, Mode::MultiLine)
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    OneLine,
    MultiLine,
}

fn escape(text: &str, mode: Mode) -> Cow<'_, str> {
    // Most text has nothing to escape: it is only copied once something is.
    let mut escaped: Option<String> = None;
    let mut chars = text.char_indices().peekable();
    while let Some((index, c)) = chars.next() {
        let before_newline = chars.peek().is_some_and(|&(_, next)| next == '\n');
        if shown_as_is(c, before_newline, mode) {
            if let Some(out) = escaped.as_mut() {
                out.push(c);
            }
            continue;
        }
        let out = escaped.get_or_insert_with(|| {
            let mut out = String::with_capacity(text.len() + 8);
            out.push_str(&text[..index]);
            out
        });
        push_escaped(out, c);
    }
    escaped.map_or(Cow::Borrowed(text), Cow::Owned)
}

fn shown_as_is(c: char, before_newline: bool, mode: Mode) -> bool {
    match c {
        '\n' | '\t' => mode == Mode::MultiLine,
        '\r' => mode == Mode::MultiLine && before_newline,
        // C0, DEL and C1: the general category Cc.
        c if c.is_control() => false,
        c if terminal_markdown::hides_or_reorders(c) => false,
        c if joins_or_selects(c) => mode == Mode::MultiLine,
        _ => true,
    }
}

fn joins_or_selects(c: char) -> bool {
    matches!(
        c,
        '\u{200C}' | '\u{200D}' | '\u{FE00}'..='\u{FE0F}' | '\u{180B}'..='\u{180D}' | '\u{180F}'
    )
}

/// The short escapes people know for the common three, `\xNN` for the rest of ASCII and
/// `\u{N}` beyond, as Rust writes them.
fn push_escaped(out: &mut String, c: char) {
    match c {
        '\n' => out.push_str("\\n"),
        '\t' => out.push_str("\\t"),
        '\r' => out.push_str("\\r"),
        c if c.is_ascii() => {
            let _ = write!(out, "\\x{:02x}", u32::from(c));
        }
        c => {
            let _ = write!(out, "\\u{{{:x}}}", u32::from(c));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_text_is_borrowed_unchanged() {
        let text = "cargo test -- --nocapture 日本語 é ✓ \\x1b stays";
        assert!(matches!(one_line(text), Cow::Borrowed(t) if t == text));
        assert!(matches!(multi_line("a\n\tb\r\n"), Cow::Borrowed("a\n\tb\r\n")));
    }

    #[test]
    fn c0_controls_and_del_are_escaped() {
        assert_eq!(one_line("ls\r\u{1b}[2Kecho safe"), "ls\\r\\x1b[2Kecho safe");
        assert_eq!(one_line("a\u{0}b\u{7}c\u{8}d\u{7f}"), "a\\x00b\\x07c\\x08d\\x7f");
        assert_eq!(
            multi_line("\u{1b}]52;c;cm0gLXJm\u{7}\u{1b}[2J"),
            "\\x1b]52;c;cm0gLXJm\\x07\\x1b[2J"
        );
        assert_eq!(multi_line("bell\u{7}\u{1b}[H"), "bell\\x07\\x1b[H");
    }

    #[test]
    fn line_breaks_and_tabs_are_kept_only_in_multi_line_text() {
        assert_eq!(one_line("a\nb\tc"), "a\\nb\\tc");
        assert_eq!(multi_line("a\nb\tc"), "a\nb\tc");
        // A carriage return that does not end a line could overwrite it.
        assert_eq!(multi_line("a\r\nb\rc\r"), "a\r\nb\\rc\\r");
        assert_eq!(one_line("a\r\nb"), "a\\r\\nb");
    }

    #[test]
    fn c1_controls_are_escaped() {
        assert_eq!(multi_line("\u{9b}31mred"), "\\u{9b}31mred");
        assert_eq!(
            one_line("\u{80}\u{85}\u{9d}\u{9f}"),
            "\\u{80}\\u{85}\\u{9d}\\u{9f}"
        );
    }

    #[test]
    fn bidi_overrides_isolates_and_marks_are_escaped() {
        // "txt.exe" shown as "exe.txt" by a right-to-left override.
        assert_eq!(one_line("a\u{202e}txt.exe"), "a\\u{202e}txt.exe");
        for c in [
            '\u{202a}', '\u{202b}', '\u{202c}', '\u{202d}', '\u{2066}', '\u{2067}', '\u{2068}',
        ] {
            assert_eq!(
                multi_line(&format!("x{c}y")),
                format!("x\\u{{{:x}}}y", u32::from(c))
            );
        }
        assert_eq!(
            multi_line("\u{2069}\u{200e}\u{200f}\u{61c}"),
            "\\u{2069}\\u{200e}\\u{200f}\\u{61c}"
        );
    }

    #[test]
    fn invisible_characters_are_escaped() {
        assert_eq!(one_line("a\u{200b}.txt"), "a\\u{200b}.txt");
        assert_eq!(
            multi_line("\u{feff}\u{ad}\u{2060}\u{3164}"),
            "\\u{feff}\\u{ad}\\u{2060}\\u{3164}"
        );
        assert_eq!(multi_line("line\u{2028}sep"), "line\\u{2028}sep");
        // Tag characters spell invisible ASCII ("hi" here).
        assert_eq!(multi_line("ok\u{e0068}\u{e0069}"), "ok\\u{e0068}\\u{e0069}");
        assert_eq!(multi_line("x\u{e0100}"), "x\\u{e0100}");
    }

    #[test]
    fn joiners_and_variation_selectors_are_escaped_in_one_line_text_only() {
        let family = "👨\u{200d}👩\u{200d}👧 ❤\u{fe0f}";
        assert_eq!(multi_line(family), family);
        assert_eq!(one_line(family), "👨\\u{200d}👩\\u{200d}👧 ❤\\u{fe0f}");
        assert_eq!(one_line("a\u{200c}b"), "a\\u{200c}b");
    }
}
