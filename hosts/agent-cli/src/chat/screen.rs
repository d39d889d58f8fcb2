//! The terminal as the chat uses it: finished lines scroll up like any program's output,
//! and a small live area at the bottom (the assistant's unfinished line, the spinner, a
//! pending question, the prompt) is redrawn in place. One writer owns the screen, so the
//! output streamed by the agent and the line being typed never garble each other.
//!
//! Every live row is kept narrower than the terminal, so each takes exactly one row and
//! moving back up to redraw is exact. In raw mode the terminal does not turn `\n` into
//! `\r\n`, so lines end with both.

use super::style::{display_width, fit};
use crossterm::{cursor, queue, terminal};
use std::io::Write;

/// Rows of input shown at most; a longer input scrolls to keep the cursor's row in view.
const MAX_PROMPT_ROWS: usize = 10;

/// What the prompt shows: a prefix, then the text being edited (lines separated by `\n`)
/// with the cursor at a byte offset in it, or a hint (already painted) while there is no
/// text.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PromptLine {
    pub prefix: String,
    pub text: String,
    pub cursor: usize,
    pub hint: String,
}

/// The screen: lines waiting to be printed plus the live area, written by `refresh`.
pub struct Screen {
    /// A terminal with a live area (false when stdout is a pipe or a file: plain lines).
    interactive: bool,
    committed: Vec<String>,
    /// The assistant's current line, not yet ended by a newline.
    partial: String,
    /// Whether `partial` was already written (non-interactive output streams it at once).
    partial_written: usize,
    status: Option<String>,
    question: Option<String>,
    prompt: Option<PromptLine>,
    /// The status line, below the prompt.
    footer: Option<String>,
    /// Text received and not final yet (rendered markdown waits for its block's end),
    /// shown live and never printed.
    live: String,
    /// Rows of the live area on screen now, and the cursor's row within it.
    drawn_rows: usize,
    cursor_row: usize,
}

impl Screen {
    pub fn new(interactive: bool) -> Self {
        Self {
            interactive,
            committed: Vec::new(),
            partial: String::new(),
            partial_written: 0,
            status: None,
            question: None,
            prompt: None,
            footer: None,
            live: String::new(),
            drawn_rows: 0,
            cursor_row: 0,
        }
    }

    pub fn interactive(&self) -> bool {
        self.interactive
    }

    /// Prints `text` as whole lines (after ending the assistant's unfinished line).
    pub fn line(&mut self, text: &str) {
        self.end_text();
        self.committed.extend(text.split('\n').map(str::to_string));
    }

    /// Streams assistant text: whole lines are printed, the rest waits in the live area.
    pub fn stream_text(&mut self, delta: &str) {
        self.partial.push_str(delta);
        while let Some(end) = self.partial.find('\n') {
            let rest = self.partial.split_off(end + 1);
            let mut done = std::mem::replace(&mut self.partial, rest);
            done.pop();
            self.commit_partial(done);
        }
        if self.interactive {
            // A line wider than the terminal would wrap and break the live area's
            // geometry: print what fills a row, at a space where there is one.
            let width = row_width();
            while display_width(&self.partial) > width {
                let cut = wrap_point(&self.partial, width);
                let rest = self.partial.split_off(cut);
                let done = std::mem::replace(&mut self.partial, rest.trim_start().to_string());
                self.commit_partial(done.trim_end().to_string());
            }
        }
    }

    fn commit_partial(&mut self, line: String) {
        if self.interactive {
            self.committed.push(line);
        } else {
            // Already partly written as it streamed: only the rest and the line end.
            let skip = self.partial_written.min(line.len());
            self.committed.push(format!("\u{0}{}", &line[skip..]));
        }
        self.partial_written = 0;
    }

    /// Ends the assistant's unfinished line, if any.
    pub fn end_text(&mut self) {
        if !self.partial.is_empty() || self.partial_written > 0 {
            let line = std::mem::take(&mut self.partial);
            self.commit_partial(line);
        }
    }

    pub fn set_status(&mut self, status: Option<String>) {
        self.status = status;
    }

    pub fn set_question(&mut self, question: Option<String>) {
        self.question = question;
    }

    pub fn set_prompt(&mut self, prompt: Option<PromptLine>) {
        self.prompt = prompt;
    }

    pub fn set_live_text(&mut self, text: &str) {
        text.clone_into(&mut self.live);
    }

    pub fn set_footer(&mut self, footer: Option<String>) {
        self.footer = footer;
    }

    /// Clears the terminal (Ctrl-L) and redraws the live area at the top.
    pub fn clear_all(&mut self) {
        if self.interactive {
            let mut out = std::io::stdout().lock();
            let _ = queue!(
                out,
                terminal::Clear(terminal::ClearType::All),
                cursor::MoveTo(0, 0)
            );
            let _ = out.flush();
            self.drawn_rows = 0;
            self.cursor_row = 0;
        }
    }

    /// Writes the waiting lines and redraws the live area, in one write.
    pub fn refresh(&mut self) {
        let mut buf: Vec<u8> = Vec::new();
        if self.interactive {
            self.render_interactive(&mut buf);
        } else {
            self.render_plain(&mut buf);
        }
        let mut out = std::io::stdout().lock();
        let _ = out.write_all(&buf);
        let _ = out.flush();
    }

    fn render_interactive(&mut self, buf: &mut Vec<u8>) {
        let _ = queue!(buf, terminal::BeginSynchronizedUpdate);
        // Back to the live area's first row, and clear it and everything below.
        buf.push(b'\r');
        if self.cursor_row > 0 {
            let _ = queue!(buf, cursor::MoveUp(self.cursor_row as u16));
        }
        let _ = queue!(buf, terminal::Clear(terminal::ClearType::FromCursorDown));
        for line in self.committed.drain(..) {
            buf.extend_from_slice(line.as_bytes());
            buf.extend_from_slice(b"\r\n");
        }
        let width = row_width();
        let mut rows: Vec<String> = Vec::new();
        if !self.partial.is_empty() {
            rows.push(self.partial.clone());
        }
        if !self.live.is_empty() {
            rows.push(tail_that_fits(&self.live, width));
        }
        rows.extend(self.status.iter().map(|s| fit_painted(s, width)));
        rows.extend(self.question.iter().map(|q| fit_painted(q, width)));
        let mut cursor_at = None;
        if let Some(prompt) = &self.prompt {
            let (prompt_rows, row, col) = prompt_rows(prompt, width);
            cursor_at = Some((rows.len() + row, col));
            rows.extend(prompt_rows);
        }
        rows.extend(self.footer.iter().map(|f| fit_painted(f, width)));
        for (i, row) in rows.iter().enumerate() {
            if i > 0 {
                buf.extend_from_slice(b"\r\n");
            }
            buf.extend_from_slice(row.as_bytes());
        }
        self.drawn_rows = rows.len();
        let last = rows.len().saturating_sub(1);
        match cursor_at {
            Some((row, col)) => {
                if last > row {
                    let _ = queue!(buf, cursor::MoveUp((last - row) as u16));
                }
                let _ = queue!(buf, cursor::MoveToColumn(col as u16), cursor::Show);
                self.cursor_row = row;
            }
            None => {
                let _ = queue!(buf, cursor::Hide);
                self.cursor_row = last;
            }
        }
        let _ = queue!(buf, terminal::EndSynchronizedUpdate);
    }

    fn render_plain(&mut self, buf: &mut Vec<u8>) {
        for line in self.committed.drain(..) {
            // A line marked with NUL continues text already streamed onto the screen.
            match line.strip_prefix('\u{0}') {
                Some(rest) => buf.extend_from_slice(rest.as_bytes()),
                None => buf.extend_from_slice(line.as_bytes()),
            }
            buf.push(b'\n');
        }
        if self.partial.len() > self.partial_written {
            buf.extend_from_slice(&self.partial.as_bytes()[self.partial_written..]);
            self.partial_written = self.partial.len();
        }
    }

    /// Leaves the live area behind (on quit): the cursor goes below it and is shown.
    pub fn finish(&mut self) {
        self.end_text();
        self.status = None;
        self.question = None;
        self.prompt = None;
        self.footer = None;
        self.refresh();
        if self.interactive {
            let mut out = std::io::stdout().lock();
            let _ = queue!(out, cursor::Show);
            let _ = out.flush();
        }
    }
}

/// The prompt's rows within `width` columns: each line of the input broken where it
/// reaches the edge, the first row after the prefix and the others indented like it; at
/// most [`MAX_PROMPT_ROWS`], scrolled to keep the cursor in view. Returns the rows and the
/// cursor's row and column.
fn prompt_rows(prompt: &PromptLine, width: usize) -> (Vec<String>, usize, usize) {
    let prefix_width = display_width(&prompt.prefix);
    let room = width.saturating_sub(prefix_width).max(4);
    if prompt.text.is_empty() {
        let hint = fit_painted(&prompt.hint, room);
        return (vec![format!("{}{hint}", prompt.prefix)], 0, prefix_width);
    }
    let mut rows: Vec<String> = vec![String::new()];
    let mut used = 0;
    let mut cursor = (0, 0);
    for (index, c) in prompt.text.char_indices() {
        if index == prompt.cursor {
            cursor = (rows.len() - 1, used);
        }
        if c == '\n' {
            rows.push(String::new());
            used = 0;
            continue;
        }
        let w = unicode_width::UnicodeWidthChar::width(c).unwrap_or(0);
        // The cursor may sit after the last column: keep one free.
        if used + w >= room {
            rows.push(String::new());
            used = 0;
        }
        if let Some(row) = rows.last_mut() {
            row.push(c);
        }
        used += w;
    }
    if prompt.cursor >= prompt.text.len() {
        cursor = (rows.len() - 1, used);
    }
    let first = (cursor.0 + 1).saturating_sub(MAX_PROMPT_ROWS);
    let indent = " ".repeat(prefix_width);
    let shown = rows
        .into_iter()
        .enumerate()
        .skip(first)
        .take(MAX_PROMPT_ROWS)
        .map(|(i, row)| match i {
            0 => format!("{}{row}", prompt.prefix),
            _ => format!("{indent}{row}"),
        })
        .collect();
    (shown, cursor.0 - first, prefix_width + cursor.1)
}

/// The end of `text` (plain) that fits `width` columns, `…` marking the cut.
fn tail_that_fits(text: &str, width: usize) -> String {
    if display_width(text) <= width {
        return text.to_string();
    }
    let mut kept: Vec<char> = Vec::new();
    let mut used = 1;
    for c in text.chars().rev() {
        let w = unicode_width::UnicodeWidthChar::width(c).unwrap_or(0);
        if used + w > width {
            break;
        }
        used += w;
        kept.push(c);
    }
    std::iter::once('…').chain(kept.into_iter().rev()).collect()
}

/// A painted row cut to `width` columns; cutting drops its colours, which is fine for the
/// rare overlong status or question.
fn fit_painted(text: &str, width: usize) -> String {
    if display_width(text) <= width {
        text.to_string()
    } else {
        fit(&strip_escapes(text), width)
    }
}

fn strip_escapes(text: &str) -> String {
    let mut out = String::new();
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' && chars.peek() == Some(&'[') {
            chars.next();
            for c in chars.by_ref() {
                if ('@'..='~').contains(&c) {
                    break;
                }
            }
            continue;
        }
        out.push(c);
    }
    out
}

/// Where to break `text` so the first part fits `width` columns: after the last space
/// that fits, else at the width itself. A byte index on a character boundary.
fn wrap_point(text: &str, width: usize) -> usize {
    let mut used = 0;
    let mut last_space = None;
    for (index, c) in text.char_indices() {
        let w = unicode_width::UnicodeWidthChar::width(c).unwrap_or(0);
        if used + w > width {
            return last_space.filter(|&s| s > 0).unwrap_or(index);
        }
        if c == ' ' {
            last_space = Some(index + 1);
        }
        used += w;
    }
    text.len()
}

/// The columns a row may fill: one fewer than the terminal's, so no row wraps (the live
/// area's geometry depends on it).
pub fn row_width() -> usize {
    columns().saturating_sub(1).max(10)
}

/// The terminal's width in columns (80 when it cannot be asked).
pub fn columns() -> usize {
    terminal::size().map(|(c, _)| c as usize).unwrap_or(80)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_streamed_lines_break_at_a_space_that_fits() {
        assert_eq!(wrap_point("hello brave new world", 12), 12);
        assert_eq!(&"hello brave new world"[..12], "hello brave ");
        assert_eq!(wrap_point("abcdefghijkl", 5), 5);
    }

    #[test]
    fn the_prompt_breaks_long_and_multi_line_input_into_rows_and_tracks_the_cursor() {
        let prompt = PromptLine {
            prefix: "> ".into(),
            text: format!("{}\nsecond", "a".repeat(30)),
            cursor: 3,
            hint: String::new(),
        };
        let (rows, row, col) = prompt_rows(&prompt, 20);
        assert_eq!(rows.len(), 3, "{rows:?}");
        assert!(rows.iter().all(|r| display_width(r) < 20), "{rows:?}");
        assert_eq!((row, col), (0, 5));
        assert_eq!(rows[2], "  second");
        let at_end = PromptLine {
            cursor: prompt.text.len(),
            ..prompt.clone()
        };
        assert_eq!(prompt_rows(&at_end, 20).1, 2);
        let tall = PromptLine {
            text: "x\n".repeat(30),
            cursor: 60,
            ..prompt
        };
        let (rows, row, _) = prompt_rows(&tall, 20);
        assert_eq!(rows.len(), MAX_PROMPT_ROWS);
        assert_eq!(row, MAX_PROMPT_ROWS - 1);
    }

    #[test]
    fn live_text_shows_its_end_within_the_width() {
        assert_eq!(tail_that_fits("abcdefghij", 5), "…ghij");
        assert_eq!(tail_that_fits("abc", 5), "abc");
        assert!(display_width(&tail_that_fits(&"日本".repeat(10), 7)) <= 7);
    }

    #[test]
    fn plain_output_streams_text_and_ends_lines_once() {
        let mut screen = Screen::new(false);
        let mut buf = Vec::new();
        screen.stream_text("Hel");
        screen.render_plain(&mut buf);
        screen.stream_text("lo\nworld");
        screen.line("● tool");
        screen.render_plain(&mut buf);
        assert_eq!(String::from_utf8(buf).unwrap(), "Hello\nworld\n● tool\n");
    }
}
