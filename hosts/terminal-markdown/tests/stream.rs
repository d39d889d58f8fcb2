//! The stream's promises, on a sample with every kind of block: the same lines however the
//! text is split, code shown while its fence is open, the same layout with colour off and
//! not one escape byte, columns and wrapping by display width.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests may panic

use terminal_markdown::{MarkdownStream, Style, render};
use unicode_width::UnicodeWidthStr;

const SAMPLE: &str = include_str!("sample.md");

fn plain(width: usize) -> Style {
    Style { color: false, width }
}

fn colored(width: usize) -> Style {
    Style { color: true, width }
}

/// The text without its SGR sequences.
fn strip(line: &str) -> String {
    let mut out = String::new();
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' {
            for c in chars.by_ref() {
                if c == 'm' {
                    break;
                }
            }
        } else {
            out.push(c);
        }
    }
    out
}

fn streamed(pieces: &[&str], style: Style) -> Vec<String> {
    let mut stream = MarkdownStream::new(style);
    let mut lines = Vec::new();
    for piece in pieces {
        lines.extend(stream.push(piece));
    }
    lines.extend(stream.finish());
    lines
}

#[test]
fn the_same_lines_however_the_text_is_split() {
    for style in [plain(48), colored(72)] {
        let whole = render(SAMPLE, style);
        assert!(whole.len() > 40, "{whole:#?}");
        for (i, _) in SAMPLE.char_indices().skip(1) {
            let split = streamed(&[&SAMPLE[..i], "", &SAMPLE[i..]], style);
            assert_eq!(split, whole, "split at byte {i}");
        }
        let chars: Vec<String> = SAMPLE.chars().map(String::from).collect();
        let one_by_one: Vec<&str> = chars.iter().map(String::as_str).collect();
        assert_eq!(streamed(&one_by_one, style), whole);
    }
}

#[test]
fn every_block_is_rendered_without_its_markup() {
    let lines = render(SAMPLE, plain(48));
    let text = lines.join("\n");
    for gone in ["**", "```", "## ", "~~", "|---", "> "] {
        assert!(!text.contains(gone), "{gone:?} left in:\n{text}");
    }
    for line in [
        "Terminal markdown",
        "• second item",
        "  • nested one",
        "    1. deep ordered",
        "    2. deep ordered again",
        "• [ ] a task to do",
        "• [x] a task done",
        "3. three",
        "4. four",
        "   A second paragraph of item four.",
        "5. five:",
        "     make install",
        "│ • and a list inside",
        "  fn main() {",
        "      println!(\"hello\");",
        "      return x * 2",
        "  some text",
        "Setext heading",
        "Final paragraph.",
    ] {
        assert!(lines.iter().any(|l| l == line), "no line {line:?} in:\n{text}");
    }
    assert!(text.contains("a link (https://example.com/docs)"), "{text}");
    assert!(text.contains("autolink https://example.com."), "{text}");
    assert!(
        lines.iter().any(|l| !l.is_empty() && l.chars().all(|c| c == '─')),
        "{text}"
    );
    // Blocks are apart, but never by two blank lines, nor one at either end.
    assert!(
        lines.windows(2).all(|w| !(w[0].is_empty() && w[1].is_empty())),
        "{text}"
    );
    assert!(!lines[0].is_empty() && !lines[lines.len() - 1].is_empty());
    assert!(lines.iter().all(|l| !l.contains(['\n', '\r'])));
}

#[test]
fn colour_off_is_the_same_layout_without_an_escape_byte() {
    for width in [30, 48, 100] {
        let painted = render(SAMPLE, colored(width));
        let bare = render(SAMPLE, plain(width));
        assert!(painted.iter().any(|l| l.contains('\u{1b}')));
        assert!(bare.iter().all(|l| !l.contains('\u{1b}')), "{bare:#?}");
        let unpainted: Vec<String> = painted.iter().map(|l| strip(l)).collect();
        assert_eq!(unpainted, bare);
    }
    // Nor from the model's own text.
    let hostile = render("red \u{1b}[31mtext\u{7}\r\n", plain(40));
    assert_eq!(hostile, ["red [31mtext"]);
}

#[test]
fn fence_lines_come_out_before_the_fence_closes() {
    for style in [plain(60), colored(60)] {
        let mut stream = MarkdownStream::new(style);
        assert!(stream.push("Intro.\n\n```rust\nfn main() {\n").len() >= 2);
        let line = stream.push("    let x = 1;\n");
        assert_eq!(
            line.iter().map(|l| strip(l)).collect::<Vec<_>>(),
            ["      let x = 1;"]
        );
        assert_eq!(stream.push("    let y"), Vec::<String>::new());
        assert_eq!(stream.pending_line(), "    let y");
        assert_eq!(stream.push(" = 2;\n").len(), 1);
        assert_eq!(stream.push("```\n"), Vec::<String>::new());
        assert_eq!(stream.finish(), Vec::<String>::new());
    }
    // Inside a list item too, at the item's text column.
    let mut stream = MarkdownStream::new(plain(60));
    assert_eq!(stream.push("1. Run:\n"), Vec::<String>::new());
    assert_eq!(stream.push("   ```sh\n"), ["1. Run:"]);
    assert_eq!(stream.push("   make\n"), ["     make"]);
    assert_eq!(stream.push("   ```\n2. Next\n"), Vec::<String>::new());
    assert_eq!(stream.finish(), ["2. Next"]);
}

#[test]
fn blocks_wait_until_they_are_complete() {
    let mut stream = MarkdownStream::new(plain(60));
    assert_eq!(stream.push("## Head"), Vec::<String>::new());
    assert_eq!(stream.push("ing\nSome text\n"), ["Heading"]);
    assert_eq!(stream.pending_line(), "Some text");
    // The next line could still make it a heading (`---`) or a table.
    assert_eq!(stream.push("more text\n"), Vec::<String>::new());
    assert_eq!(stream.push("\n"), ["", "Some text more text"]);
    assert_eq!(stream.push("- one\n"), Vec::<String>::new());
    assert_eq!(stream.push("  - two\n"), ["", "• one"]);
    assert_eq!(stream.push("- three\n"), ["  • two"]);
    assert_eq!(stream.finish(), ["• three"]);

    let setext = render("Title\n---\nbody\n", colored(60));
    assert_eq!(setext[0], "\u{1b}[1;4mTitle\u{1b}[0m");
    assert_eq!(setext.len(), 3);
}

#[test]
fn tables_align_by_display_width() {
    let text = "| 名前 | n |\n|---|---:|\n| 日本語テキスト | 1 |\n| ab | 12345 |\n";
    for style in [plain(80), colored(80)] {
        let lines: Vec<String> = render(text, style).iter().map(|l| strip(l)).collect();
        assert_eq!(lines.len(), 4, "{lines:#?}");
        let bar = |l: &str| UnicodeWidthStr::width(&l[..l.find(['│', '┼']).unwrap()]);
        assert!(lines.iter().all(|l| bar(l) == bar(&lines[0])), "{lines:#?}");
        let widths: Vec<usize> = lines.iter().map(|l| UnicodeWidthStr::width(l.as_str())).collect();
        assert!(widths.iter().all(|w| *w == widths[0]), "{lines:#?}");
        assert!(
            lines[2].ends_with(" 1") && lines[0].starts_with("名前 "),
            "{lines:#?}"
        );
    }
}

#[test]
fn text_wraps_to_the_width_with_hanging_indents() {
    let words = "word ".repeat(40) + "日本語の文章も折り返される";
    let text = format!("{words}\n\n- {words}\n  1. {words}\n\n> {words}\n");
    for width in [20, 33, 61] {
        let lines = render(&text, colored(width));
        for line in &lines {
            let w = UnicodeWidthStr::width(strip(line).as_str());
            assert!(w <= width, "{w} > {width}: {line:?}");
        }
        let bare: Vec<String> = lines.iter().map(|l| strip(l)).collect();
        let item = bare.iter().position(|l| l.starts_with("• ")).unwrap();
        assert!(bare[item + 1].starts_with("  word"), "{bare:#?}");
        let nested = bare.iter().position(|l| l.starts_with("  1. ")).unwrap();
        assert!(bare[nested + 1].starts_with("     word"), "{bare:#?}");
        assert!(bare.iter().filter(|l| l.starts_with("│ ")).count() > 2);
    }
}

#[test]
fn a_long_code_line_is_not_wrapped() {
    let long = "x".repeat(300);
    let lines = render(&format!("```\n{long}\n```\n"), plain(40));
    assert_eq!(lines, [format!("  {long}")]);
}

#[test]
fn an_unterminated_fence_is_code_at_the_end() {
    let mut stream = MarkdownStream::new(plain(40));
    assert_eq!(stream.push("```python\nx = 1\ny"), ["  x = 1"]);
    assert_eq!(stream.finish(), ["  y"]);
    let painted = render("```python\nimport os", colored(40));
    assert!(painted[0].starts_with("  \u{1b}[38;2;"), "{painted:?}");
}

#[test]
fn a_stream_starts_afresh_after_finish() {
    let mut stream = MarkdownStream::new(plain(40));
    stream.push("first\n");
    assert_eq!(stream.finish(), ["first"]);
    stream.push("second\n");
    assert_eq!(stream.finish(), ["second"]);
}

#[test]
fn code_past_the_colour_budget_is_plain() {
    let big = "let x = 1;\n".repeat(8000);
    let text = format!("```rust\n{big}```\n\n```rust\nlet last = 2;\n```\n");
    let lines = render(&text, colored(80));
    assert!(lines[0].contains('\u{1b}'), "{:?}", lines[0]);
    assert_eq!(lines[lines.len() - 1], "  let last = 2;");
    assert_eq!(lines.len(), 8002);
    // Each answer has its own.
    let mut stream = MarkdownStream::new(colored(80));
    stream.push(&text);
    stream.finish();
    let again = stream.push("```rust\nlet again = 3;\n```\n");
    assert!(again[0].contains('\u{1b}'), "{again:?}");
}

/// The parser decodes character references: `&#27;` would become ESC after the stream had
/// dropped every raw one. Each kind of block, a table cell, a link's address and text.
#[test]
fn character_references_cannot_smuggle_escape_sequences() {
    let attack = "# t&#27;[2J\n\npara &#x1b;]52;c;aGk=&#7; &#x9b;31m &#8238;rtl\n\n- item &#27;[H\n\n\
                  > quote &#27;[K\n\n| a | b |\n|---|---|\n| &#27;[31m | x |\n\n\
                  [link&#27;[2J](http://x/&#27;[2J) <http://y/&#x1b;]0;t&#7;>\n\n\
                  zw&#x200B;sp &#x200F;rlm &#x61C;alm &#xFEFF;bom &#xE0041;tag\n";
    for style in [plain(80), colored(80)] {
        let lines = render(attack, style);
        let text = lines.join("\n");
        let raw = strip(&text);
        assert!(
            !raw.chars()
                .any(|c| c.is_control() && c != '\n' || terminal_markdown::hides_or_reorders(c)),
            "{raw:?}"
        );
        assert!(
            raw.contains("para ]52;c;aGk=") && raw.contains("item [H"),
            "{raw:?}"
        );
        // Streamed, the same.
        assert_eq!(streamed(&[attack], style), lines);
    }
}
