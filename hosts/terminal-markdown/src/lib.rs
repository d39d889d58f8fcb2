//! Markdown for a terminal chat, rendered while it streams.
//!
//! A model's answer arrives in small pieces. [`MarkdownStream`] takes them as they come and
//! returns terminal lines as soon as they are final: a heading when its line ends, a code
//! fence line by line, a list item when the next one starts, a paragraph, quote or table
//! when a blank line (or another block) ends it. A line once returned is never changed, so
//! a chat can print it above its live area and forget it; [`MarkdownStream::pending_line`]
//! is what to show live meanwhile.
//!
//! Only the unfinished block is kept and parsed (with pulldown-cmark) once it is complete,
//! so the cost is linear in the answer's length however it is split. The price is that a
//! block cannot see the others: a reference link (`[text][ref]`) resolves only when its
//! definition is in the same block.

mod code;
mod fence;
mod inline;
mod lines;
mod list;
mod render;
mod table;
mod wrap;

use fence::OpenFence;
use lines::{
    fence_open, indent, interrupts_paragraph, is_atx_heading, is_blank, is_setext_underline,
    is_thematic_break, list_marker,
};
use list::{List, Step};

/// How lines are drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Style {
    /// Escape codes for colours and bold, italic...; `false` gives the same lines without
    /// a single escape byte.
    pub color: bool,
    /// Terminal columns that text is wrapped to (code and tables are not wrapped).
    pub width: usize,
}

/// The block being received.
enum Block {
    Idle,
    /// A paragraph, which may turn out to be a table (its second line the delimiter row) or
    /// a setext heading (its last line `===` or `---`): held until it ends.
    Paragraph {
        text: String,
        lines: usize,
    },
    IndentedCode(String),
    Quote(String),
    Fence(OpenFence),
    List(List),
}

/// Lines rendered and not yet returned, and whether a block was printed before (the next
/// one starts after a blank line).
pub(crate) struct Output {
    style: Style,
    /// Bytes of code this answer may still colour (code.rs).
    code_budget: usize,
    lines: Vec<String>,
    printed: bool,
}

impl Output {
    /// Adds a block's lines, after a blank line if `gap` and something came before.
    fn block(&mut self, lines: Vec<String>, gap: bool) {
        if lines.is_empty() {
            return;
        }
        if gap && self.printed {
            self.lines.push(String::new());
        }
        self.lines.extend(lines);
        self.printed = true;
    }

    fn render(&mut self, text: &str, base: usize, marker: Option<String>, gap: bool) {
        let lines = render::render(text, base, marker, self.style, &mut self.code_budget);
        self.block(lines, gap);
    }
}

/// One answer's markdown, rendered as it arrives.
pub struct MarkdownStream {
    out: Output,
    /// The line being received (no newline yet).
    partial: String,
    block: Block,
    /// The last line of the held block, for [`MarkdownStream::pending_line`].
    held: String,
}

impl MarkdownStream {
    pub fn new(style: Style) -> Self {
        Self {
            out: Output {
                style,
                code_budget: code::COLOR_BUDGET,
                lines: Vec::new(),
                printed: false,
            },
            partial: String::new(),
            block: Block::Idle,
            held: String::new(),
        }
    }

    /// Applies to blocks rendered from now on; lines already returned stay as they are.
    pub fn set_width(&mut self, width: usize) {
        self.out.style.width = width;
    }

    /// Adds streamed text, split anywhere. Returns the lines (no `\n`, no `\r`) that are now
    /// final, in order.
    pub fn push(&mut self, delta: &str) -> Vec<String> {
        // Control characters other than newline and tab could move the cursor or recolour
        // the terminal: the model's text must not.
        self.partial.push_str(&terminal_safe(delta));
        if delta.contains('\n') {
            let text = std::mem::take(&mut self.partial);
            let mut start = 0;
            while let Some(end) = text[start..].find('\n') {
                self.line(&text[start..start + end]);
                start += end + 1;
            }
            self.partial = text[start..].to_string();
        }
        std::mem::take(&mut self.out.lines)
    }

    /// The end of the answer: renders and returns everything still held back (an
    /// unterminated fence stays code). The stream is then ready for another answer.
    pub fn finish(&mut self) -> Vec<String> {
        if !self.partial.is_empty() {
            let line = std::mem::take(&mut self.partial);
            self.line(&line);
        }
        self.end_block();
        self.out.printed = false;
        self.out.code_budget = code::COLOR_BUDGET;
        self.held.clear();
        std::mem::take(&mut self.out.lines)
    }

    /// What a chat shows live while the answer streams: the line being received, or when
    /// it is empty, the last line of a block still held back (a paragraph waits for its
    /// end). Raw markdown, without control characters.
    pub fn pending_line(&self) -> &str {
        if self.partial.is_empty() {
            &self.held
        } else {
            &self.partial
        }
    }

    fn line(&mut self, line: &str) {
        self.block_line(line);
        let holds = match &self.block {
            Block::Idle | Block::Fence(_) => false,
            Block::List(list) => list.holds_text(),
            _ => true,
        };
        if !holds {
            self.held.clear();
        } else if !is_blank(line) {
            line.clone_into(&mut self.held);
        }
    }

    fn block_line(&mut self, line: &str) {
        let (columns, rest) = indent(line);
        match &mut self.block {
            Block::Idle => self.start(line),
            Block::Fence(fence) => {
                if fence.line(line, &mut self.out) {
                    self.block = Block::Idle;
                }
            }
            Block::List(list) => {
                if let Step::Ended = list.line(line, &mut self.out) {
                    self.block = Block::Idle;
                    self.start(line);
                }
            }
            Block::Paragraph { text, lines } => {
                if is_blank(line) {
                    self.end_block();
                } else if columns < 4 && is_setext_underline(rest) && !is_table(text, *lines) {
                    push_line(text, line);
                    self.end_block();
                } else if interrupts_paragraph(columns, rest) {
                    self.end_block();
                    self.start(line);
                } else {
                    push_line(text, line);
                    *lines += 1;
                }
            }
            Block::Quote(text) => {
                if is_blank(line) {
                    self.end_block();
                } else if columns < 4 && rest.starts_with('>') || !interrupts_paragraph(columns, rest) {
                    push_line(text, line);
                } else {
                    self.end_block();
                    self.start(line);
                }
            }
            Block::IndentedCode(text) => {
                if is_blank(line) || columns >= 4 {
                    push_line(text, line);
                } else {
                    self.end_block();
                    self.start(line);
                }
            }
        }
    }

    /// A line after the end of a block.
    fn start(&mut self, line: &str) {
        if is_blank(line) {
            return;
        }
        let (columns, rest) = indent(line);
        let own_line = |line: &str| format!("{line}\n");
        self.block = if columns >= 4 {
            Block::IndentedCode(own_line(line))
        } else if let Some(fence) = fence_open(rest) {
            Block::Fence(OpenFence::new(fence, columns, 0, true, self.out.style.color))
        } else if is_atx_heading(rest) || is_thematic_break(rest) {
            self.out.render(line, 0, None, true);
            Block::Idle
        } else if rest.starts_with('>') {
            Block::Quote(own_line(line))
        } else if let Some(marker) = list_marker(rest) {
            Block::List(List::start(line, columns, marker, &mut self.out))
        } else {
            Block::Paragraph {
                text: own_line(line),
                lines: 1,
            }
        };
    }

    /// Renders the held block: it is complete.
    fn end_block(&mut self) {
        match std::mem::replace(&mut self.block, Block::Idle) {
            Block::Idle | Block::Fence(_) => {}
            Block::Paragraph { text, .. } | Block::IndentedCode(text) | Block::Quote(text) => {
                self.out.render(&text, 0, None, true);
            }
            Block::List(list) => list.finish(&mut self.out),
        }
    }
}

fn push_line(text: &mut String, line: &str) {
    text.push_str(line);
    text.push('\n');
}

/// Whether the held paragraph is a table's head (a `---` line is then one of its rows).
fn is_table(text: &str, lines: usize) -> bool {
    lines >= 2
        && text
            .lines()
            .nth(1)
            .is_some_and(|l| l.contains('-') && l.chars().all(|c| matches!(c, '|' | '-' | ':' | ' ' | '\t')))
}

/// `text` without what could drive a terminal or hide text: control characters (C0, DEL,
/// C1) but newline and tab, and every character [`hides_or_reorders`]. Applied to the raw
/// stream and again to every piece of text the parser hands back, because the parser
/// decodes character references (`&#27;`, `&#x9b;`, `&#x200b;`) into the very characters
/// the stream dropped.
pub fn terminal_safe(text: &str) -> std::borrow::Cow<'_, str> {
    let unsafe_char = |c: char| (c.is_control() && c != '\n' && c != '\t') || hides_or_reorders(c);
    if text.chars().any(unsafe_char) {
        std::borrow::Cow::Owned(text.chars().filter(|&c| !unsafe_char(c)).collect())
    } else {
        std::borrow::Cow::Borrowed(text)
    }
}

/// Characters that reorder what is drawn (bidi embeddings, overrides, isolates and marks)
/// or draw nothing yet change the text (zero-width and invisible characters, the tag
/// characters): the one list every text agent-host prints is checked against (the CLI's
/// escaping names them; this renderer drops them).
pub fn hides_or_reorders(c: char) -> bool {
    matches!(
        c,
        '\u{00AD}'
            | '\u{034F}'
            | '\u{061C}'
            | '\u{115F}'
            | '\u{1160}'
            | '\u{17B4}'
            | '\u{17B5}'
            | '\u{180E}'
            | '\u{200B}'
            | '\u{200E}'
            | '\u{200F}'
            | '\u{2028}'..='\u{202E}'
            | '\u{2060}'..='\u{206F}'
            | '\u{3164}'
            | '\u{FEFF}'
            | '\u{FFA0}'
            | '\u{FFF0}'..='\u{FFFB}'
            | '\u{1BCA0}'..='\u{1BCA3}'
            | '\u{1D173}'..='\u{1D17A}'
            | '\u{E0000}'..='\u{E007F}'
            | '\u{E0100}'..='\u{E01EF}'
    )
}

/// Renders a whole document at once (what [`MarkdownStream::push`] and
/// [`MarkdownStream::finish`] return for it together).
pub fn render(text: &str, style: Style) -> Vec<String> {
    let mut stream = MarkdownStream::new(style);
    let mut lines = stream.push(text);
    lines.extend(stream.finish());
    lines
}
