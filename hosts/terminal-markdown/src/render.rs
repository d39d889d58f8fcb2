//! One block of markdown (a paragraph, a heading, a table, a quote, one list item...) from
//! pulldown-cmark's events to terminal lines. The stream (lib.rs) decides where blocks end
//! and hands each here once; nothing here knows about streaming.

use crate::Style;
use crate::code::{CODE_INDENT, Highlighter};
use crate::inline::{Color, Look, Piece, Runs, paint, paint_runs, width};
use crate::table::{self, Table};
use crate::wrap::{plain, wrap};
use pulldown_cmark::{CodeBlockKind, Event, HeadingLevel, Options, Parser, Tag, TagEnd};

/// Below this many columns for text, wrapping would leave a word or two per line; past it
/// the terminal folds the line instead.
const MIN_TEXT_WIDTH: usize = 10;

const INLINE_CODE: Color = Color::Ansi(6);

pub(crate) fn options() -> Options {
    Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH | Options::ENABLE_TASKLISTS
}

/// What a line's start owes to the blocks around it.
enum Container {
    /// Columns to the left of everything: the list item this block continues.
    Base(usize),
    Quote,
    /// A list item: its marker on its first line, as many spaces on the others.
    Item {
        marker: String,
        pending: bool,
    },
}

struct TableBuild {
    table: Table,
    row: Vec<Runs>,
    cell: Vec<Piece>,
}

/// Renders `text`, indented by `base` columns. `marker` replaces the marker of the first
/// item of an outermost list: the stream numbers items it renders one at a time.
pub(crate) fn render(
    text: &str,
    base: usize,
    marker: Option<String>,
    style: Style,
    code_budget: &mut usize,
) -> Vec<String> {
    let mut r = Renderer {
        code_budget,
        color: style.color,
        width: style.width,
        out: Vec::new(),
        containers: Vec::new(),
        lists: Vec::new(),
        looks: Vec::new(),
        inline: Vec::new(),
        pending_blank: false,
        marker,
        links: Vec::new(),
        code: None,
        html_block: false,
        table: None,
    };
    if base > 0 {
        r.containers.push(Container::Base(base));
    }
    for event in Parser::new_ext(text, options()) {
        r.event(event);
    }
    r.flush_inline();
    r.out
}

struct Renderer<'a> {
    /// Bytes of code this answer may still colour (code.rs).
    code_budget: &'a mut usize,
    color: bool,
    width: usize,
    out: Vec<String>,
    containers: Vec<Container>,
    /// The next number of each open list, `None` for bullets.
    lists: Vec<Option<u64>>,
    looks: Vec<Look>,
    inline: Vec<Piece>,
    /// A block ended: the next one starts after a blank line.
    pending_blank: bool,
    marker: Option<String>,
    /// Open links: address, and where their text starts among the pieces.
    links: Vec<(String, usize)>,
    code: Option<(Highlighter, String)>,
    html_block: bool,
    table: Option<TableBuild>,
}

impl Renderer<'_> {
    fn look(&self) -> Look {
        self.looks.last().copied().unwrap_or_default()
    }

    fn with_look(&mut self, change: impl Fn(&mut Look)) {
        let mut look = self.look();
        change(&mut look);
        self.looks.push(look);
    }

    /// Where inline pieces go: the table cell being read, or the paragraph.
    fn sink(&mut self) -> &mut Vec<Piece> {
        match self.table.as_mut() {
            Some(build) => &mut build.cell,
            None => &mut self.inline,
        }
    }

    fn text(&mut self, text: &str, look: Look) {
        let piece = Piece::Text(crate::terminal_safe(text).into_owned(), look);
        self.sink().push(piece);
    }

    fn event(&mut self, event: Event<'_>) {
        match event {
            Event::Start(tag) => self.start(tag),
            Event::End(tag) => self.end(tag),
            Event::Text(text) => {
                if let Some((_, code)) = self.code.as_mut() {
                    code.push_str(&crate::terminal_safe(&text));
                } else {
                    self.text(&text, self.look());
                }
            }
            Event::Code(text) => {
                let look = Look {
                    fg: Some(INLINE_CODE),
                    ..self.look()
                };
                self.text(&text, look);
            }
            Event::Html(text) | Event::InlineHtml(text) if self.html_block => {
                for line in crate::terminal_safe(&text).lines() {
                    self.emit(line.to_string());
                }
            }
            Event::Html(text)
            | Event::InlineHtml(text)
            | Event::InlineMath(text)
            | Event::DisplayMath(text)
            | Event::FootnoteReference(text) => self.text(&text, self.look()),
            Event::SoftBreak => self.text(" ", self.look()),
            Event::HardBreak => self.sink().push(Piece::Break),
            Event::Rule => {
                self.block_start();
                let rule = "─".repeat(self.text_width());
                self.emit(paint(&rule, Look::DIM, self.color));
                self.pending_blank = true;
            }
            Event::TaskListMarker(done) => {
                self.text(if done { "[x] " } else { "[ ] " }, self.look());
            }
        }
    }

    fn start(&mut self, tag: Tag<'_>) {
        match tag {
            Tag::Paragraph => self.block_start(),
            Tag::Heading { level, .. } => {
                self.block_start();
                let underline = matches!(level, HeadingLevel::H1 | HeadingLevel::H2);
                self.with_look(|l| {
                    l.bold = true;
                    l.underline |= underline;
                });
            }
            Tag::BlockQuote(_) => {
                self.block_start();
                self.containers.push(Container::Quote);
            }
            Tag::CodeBlock(kind) => {
                self.block_start();
                let info = match &kind {
                    CodeBlockKind::Fenced(info) => info.as_ref(),
                    CodeBlockKind::Indented => "",
                };
                self.code = Some((Highlighter::new(info, self.color), String::new()));
            }
            Tag::HtmlBlock => {
                self.block_start();
                self.html_block = true;
            }
            Tag::List(start) => {
                self.block_start();
                self.lists.push(start);
            }
            Tag::Item => {
                self.flush_inline();
                if self.pending_blank {
                    self.emit_blank();
                    self.pending_blank = false;
                }
                let next = self.lists.last_mut().and_then(Option::as_mut);
                let own = match next {
                    Some(n) => {
                        *n += 1;
                        format!("{}. ", *n - 1)
                    }
                    None => "• ".to_string(),
                };
                let marker = match self.lists.len() {
                    1 => self.marker.take().unwrap_or(own),
                    _ => own,
                };
                self.containers.push(Container::Item {
                    marker,
                    pending: true,
                });
            }
            Tag::Table(alignments) => {
                self.block_start();
                self.table = Some(TableBuild {
                    table: Table {
                        alignments,
                        head: Vec::new(),
                        rows: Vec::new(),
                    },
                    row: Vec::new(),
                    cell: Vec::new(),
                });
            }
            Tag::TableHead => self.with_look(|l| l.bold = true),
            Tag::TableRow | Tag::TableCell => {}
            Tag::Emphasis => self.with_look(|l| l.italic = true),
            Tag::Strong => self.with_look(|l| l.bold = true),
            Tag::Strikethrough => self.with_look(|l| l.strike = true),
            Tag::Link { dest_url, .. } | Tag::Image { dest_url, .. } => {
                let start = self.sink().len();
                // A character reference in the address (`&#27;`) is decoded by the parser.
                self.links
                    .push((crate::terminal_safe(&dest_url).into_owned(), start));
            }
            _ => {}
        }
    }

    fn end(&mut self, tag: TagEnd) {
        match tag {
            TagEnd::Paragraph => {
                self.flush_inline();
                self.pending_blank = true;
            }
            TagEnd::Heading(_) => {
                self.flush_inline();
                self.looks.pop();
                self.pending_blank = true;
            }
            TagEnd::BlockQuote(_) => {
                self.flush_inline();
                self.containers.pop();
                self.pending_blank = true;
            }
            TagEnd::CodeBlock => {
                if let Some((mut highlighter, code)) = self.code.take() {
                    for line in code.strip_suffix('\n').unwrap_or(&code).split('\n') {
                        let painted = highlighter.line(line, self.code_budget);
                        self.emit(format!("{CODE_INDENT}{painted}"));
                    }
                }
                self.pending_blank = true;
            }
            TagEnd::HtmlBlock => {
                self.html_block = false;
                self.pending_blank = true;
            }
            TagEnd::List(_) => {
                self.flush_inline();
                self.lists.pop();
                // A list inside an item is part of the item's text, tight as it is.
                self.pending_blank = !matches!(self.containers.last(), Some(Container::Item { .. }));
            }
            TagEnd::Item => {
                self.flush_inline();
                if matches!(
                    self.containers.last(),
                    Some(Container::Item { pending: true, .. })
                ) {
                    self.emit(String::new());
                }
                self.containers.pop();
            }
            TagEnd::TableHead => {
                self.looks.pop();
                if let Some(build) = self.table.as_mut() {
                    build.table.head = std::mem::take(&mut build.row);
                }
            }
            TagEnd::TableRow => {
                if let Some(build) = self.table.as_mut() {
                    let row = std::mem::take(&mut build.row);
                    build.table.rows.push(row);
                }
            }
            TagEnd::TableCell => {
                if let Some(build) = self.table.as_mut() {
                    let cell = cell_runs(std::mem::take(&mut build.cell));
                    build.row.push(cell);
                }
            }
            TagEnd::Table => {
                if let Some(build) = self.table.take() {
                    for line in table::render(&build.table, self.color) {
                        self.emit(line);
                    }
                }
                self.pending_blank = true;
            }
            TagEnd::Emphasis | TagEnd::Strong | TagEnd::Strikethrough => {
                self.looks.pop();
            }
            TagEnd::Link | TagEnd::Image => self.end_link(),
            _ => {}
        }
    }

    /// `text (address)`, or just the address when that is the text (an autolink).
    fn end_link(&mut self) {
        let Some((url, start)) = self.links.pop() else {
            return;
        };
        let look = Look {
            dim: true,
            ..self.look()
        };
        let sink = self.sink();
        let text = plain(sink.get(start..).unwrap_or_default());
        let same = text == url || url.strip_prefix("mailto:") == Some(text.as_str());
        if text.trim().is_empty() {
            sink.push(Piece::Text(url, look));
        } else if !same {
            sink.push(Piece::Text(format!(" ({url})"), look));
        }
    }

    /// A block starts: text waiting (an item's first words) goes out first, then the blank
    /// line owed to the block before.
    fn block_start(&mut self) {
        self.flush_inline();
        if self.pending_blank && !self.out.is_empty() {
            self.emit_blank();
        }
        self.pending_blank = false;
    }

    fn flush_inline(&mut self) {
        if self.inline.is_empty() {
            return;
        }
        let pieces = std::mem::take(&mut self.inline);
        if plain(&pieces).trim().is_empty() {
            return;
        }
        for line in wrap(&pieces, self.text_width()) {
            let painted = paint_runs(&line, self.color);
            self.emit(painted);
        }
    }

    fn prefix_width(&self) -> usize {
        self.containers
            .iter()
            .map(|c| match c {
                Container::Base(n) => *n,
                Container::Quote => 2,
                Container::Item { marker, .. } => width(marker),
            })
            .sum()
    }

    fn text_width(&self) -> usize {
        self.width.saturating_sub(self.prefix_width()).max(MIN_TEXT_WIDTH)
    }

    /// A line after the containers' prefixes; the first line of an item gets its marker.
    fn emit(&mut self, content: String) {
        let mut line = self.prefix(true);
        line.push_str(&content);
        if content.is_empty() {
            line.truncate(line.trim_end().len());
        }
        self.out.push(line);
    }

    /// A blank line inside the containers (a quote's gutter goes on), keeping a marker
    /// that has not been shown yet for the item's first text.
    fn emit_blank(&mut self) {
        let mut line = self.prefix(false);
        line.truncate(line.trim_end().len());
        self.out.push(line);
    }

    fn prefix(&mut self, take_markers: bool) -> String {
        let mut line = String::new();
        for container in &mut self.containers {
            match container {
                Container::Base(n) => line.push_str(&" ".repeat(*n)),
                Container::Quote => {
                    line.push_str(&paint("│", Look::DIM, self.color));
                    line.push(' ');
                }
                Container::Item { marker, pending } => {
                    if *pending && take_markers {
                        line.push_str(marker);
                        *pending = false;
                    } else {
                        line.push_str(&" ".repeat(width(marker)));
                    }
                }
            }
        }
        line
    }
}

/// A cell's pieces as one line of runs: cells are not wrapped.
fn cell_runs(pieces: Vec<Piece>) -> Runs {
    let mut runs = Runs::new();
    for piece in pieces {
        match piece {
            Piece::Text(text, look) => runs.push((text, look)),
            Piece::Break => runs.push((" ".to_string(), Look::default())),
        }
    }
    runs
}
