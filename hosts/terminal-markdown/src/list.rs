//! Lists, streamed an item at a time. Each item (nested ones included) is rendered alone as
//! soon as the next item, a line of its parent's text, or the list's end shows that it is
//! complete, so a long list never sits silent and never has to be parsed again. The stream
//! keeps what the parser would have known from the whole list: the nesting (from the
//! markers' columns), the numbering, and whether items were apart (a blank line between).

use crate::Output;
use crate::fence::OpenFence;
use crate::inline::width;
use crate::lines::{
    Fence, Marker, fence_closes, fence_open, indent, interrupts_paragraph, is_blank, is_thematic_break,
    list_marker, strip_columns,
};

struct Level {
    /// Source columns of the item's text.
    content: usize,
    /// Output column of the item's text.
    out_content: usize,
    number: Option<u64>,
    ch: char,
}

/// The source text held until it is complete, with where it goes.
struct Chunk {
    text: String,
    /// Source columns removed from each line: the text starts at its item's marker or text.
    strip: usize,
    /// Output columns before it.
    base: usize,
    /// The item's marker as numbered by the stream; `None` for a parent's text after a
    /// nested list.
    marker: Option<String>,
    gap: bool,
}

pub(crate) enum Step {
    Taken,
    /// The line is not the list's: the list is over, the caller handles the line.
    Ended,
}

pub(crate) struct List {
    levels: Vec<Level>,
    chunk: Option<Chunk>,
    fence: Option<OpenFence>,
    /// A fence opened on an item's marker line (`- ```sh`): held with the item, since
    /// its lines must not be read as items.
    item_fence: Option<Fence>,
    blank: bool,
    first: bool,
}

impl List {
    pub fn start(line: &str, columns: usize, marker: Marker, out: &mut Output) -> Self {
        let mut list = Self {
            levels: Vec::new(),
            chunk: None,
            fence: None,
            item_fence: None,
            blank: false,
            first: true,
        };
        list.new_item(line, columns, marker, out);
        list
    }

    pub fn holds_text(&self) -> bool {
        self.chunk.is_some()
    }

    pub fn finish(mut self, out: &mut Output) {
        self.flush(out);
    }

    pub fn line(&mut self, line: &str, out: &mut Output) -> Step {
        if let Some(fence) = self.fence.as_mut() {
            if fence.line(line, out) {
                self.fence = None;
                self.blank = false;
            }
            return Step::Taken;
        }
        if let Some(fence) = &self.item_fence {
            if fence_closes(line.trim_start(), fence) {
                self.item_fence = None;
            }
            self.append(line);
            return Step::Taken;
        }
        if is_blank(line) {
            self.blank = true;
            if let Some(chunk) = self.chunk.as_mut() {
                chunk.text.push('\n');
            }
            return Step::Taken;
        }
        let (columns, rest) = indent(line);
        let Some(deepest) = self.levels.last() else {
            return Step::Ended;
        };
        let held_text = !self.blank && self.chunk.is_some();
        if columns < deepest.content + 4
            && !is_thematic_break(rest)
            && let Some(marker) = list_marker(rest)
        {
            let nested = columns >= deepest.content;
            let interrupts = !marker.empty && marker.number.is_none_or(|n| n == 1);
            if !(nested && held_text && !interrupts) {
                self.new_item(line, columns, marker, out);
                return Step::Taken;
            }
        }
        if columns < deepest.content && held_text && !interrupts_paragraph(columns, rest) {
            // A lazy continuation line of the item's paragraph.
            self.append(line);
            return Step::Taken;
        }
        let Some(owner) = self.levels.iter().rposition(|l| columns >= l.content) else {
            self.flush(out);
            return Step::Ended;
        };
        if owner + 1 < self.levels.len() {
            self.flush(out);
            self.levels.truncate(owner + 1);
        }
        self.item_text(line, columns, rest, out);
        Step::Taken
    }

    /// A line inside the deepest open item's text: a fence streamed on its own, or more of
    /// the item's text.
    fn item_text(&mut self, line: &str, columns: usize, rest: &str, out: &mut Output) {
        let Some(level) = self.levels.last() else {
            return;
        };
        let (content, base) = (level.content, level.out_content);
        if columns - content <= 3
            && let Some(fence) = fence_open(rest)
        {
            self.flush(out);
            let gap = self.take_gap();
            self.fence = Some(OpenFence::new(fence, columns, base, gap, out.style.color));
            return;
        }
        if self.chunk.is_none() {
            let gap = self.take_gap();
            self.chunk = Some(Chunk {
                text: String::new(),
                strip: content,
                base,
                marker: None,
                gap,
            });
        }
        self.blank = false;
        self.append(line);
    }

    fn new_item(&mut self, line: &str, columns: usize, marker: Marker, out: &mut Output) {
        self.flush(out);
        let mut sibling = None;
        while self.levels.last().is_some_and(|l| columns < l.content) {
            sibling = self.levels.pop();
        }
        let number = match (marker.number, sibling) {
            (Some(_), Some(prev)) if prev.ch == marker.ch && prev.number.is_some() => {
                prev.number.map(|n| n + 1)
            }
            (number, _) => number,
        };
        let text = match number {
            Some(n) => format!("{n}. "),
            None => "• ".to_string(),
        };
        let base = self.levels.last().map_or(0, |l| l.out_content);
        self.levels.push(Level {
            content: columns + marker.content,
            out_content: base + width(&text),
            number,
            ch: marker.ch,
        });
        let gap = self.take_gap();
        self.chunk = Some(Chunk {
            text: String::new(),
            strip: columns,
            base,
            marker: Some(text),
            gap,
        });
        self.append(line);
        let (_, rest) = indent(line);
        let after = rest.get(marker.content..).unwrap_or("");
        self.item_fence = fence_open(after.trim_start());
    }

    fn take_gap(&mut self) -> bool {
        let gap = self.first || self.blank;
        self.first = false;
        self.blank = false;
        gap
    }

    fn append(&mut self, line: &str) {
        if let Some(chunk) = self.chunk.as_mut() {
            chunk.text.push_str(&strip_columns(line, chunk.strip));
            chunk.text.push('\n');
        }
    }

    fn flush(&mut self, out: &mut Output) {
        if let Some(chunk) = self.chunk.take() {
            out.render(&chunk.text, chunk.base, chunk.marker, chunk.gap);
        }
        self.item_fence = None;
    }
}
