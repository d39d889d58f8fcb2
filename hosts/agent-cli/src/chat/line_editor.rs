//! The chat's input editor. It is fed key events by the chat's own input task rather than
//! owning the terminal (as rustyline or reedline would), because the agent's output and
//! the spinner are drawn while an input is being typed: one writer has to own the screen.
//!
//! The input may hold several lines (Alt-Enter, Shift-Enter, Ctrl-J or `\` then Enter add
//! one; a paste keeps its own). A long paste is held whole but shown as one
//! `[pasted N lines]` token, which Backspace removes at once. Up and Down move between the
//! input's lines and, from its first or last line, through the history; Ctrl-R searches it.

use super::history::History;
use crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers};

/// A paste of more lines (or characters) than this is shown collapsed.
const COLLAPSE_LINES: usize = 10;
const COLLAPSE_CHARS: usize = 2000;
/// Characters of Unicode's plane-15 private-use area stand for collapsed pastes in the
/// buffer (typed text cannot contain them: they are dropped on insertion). Not the BMP's
/// private-use area, which fonts use for icons people paste.
const PASTE_BASE: u32 = 0xF0000;
const PASTE_LAST: u32 = 0xFFFFD;

/// What a key did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EditorAction {
    /// The input changed or the cursor moved (or nothing happened): redraw.
    Edited,
    /// Enter: the finished input, pastes expanded (for the history: [`LineEditor::remember`]).
    Submit(String),
    /// Ctrl-C.
    Interrupt,
    /// Esc (outside a Ctrl-R search): stops the agent's work, as in the peers' chats.
    Escape,
    /// Ctrl-D on an empty input.
    EndOfInput,
    /// Ctrl-L.
    ClearScreen,
    /// Tab: complete `word` (the text from `start` to the cursor; `at` when it follows `@`).
    Complete { start: usize, word: String },
    /// Ctrl-G: edit the input in `$EDITOR`.
    External,
    /// Ctrl-O: show the last tool call's whole output.
    Expand,
}

/// A reverse search through the history (Ctrl-R).
#[derive(Debug, Default)]
struct Search {
    query: String,
    /// The history entry shown, counted from the newest.
    found: Option<usize>,
}

/// The input being typed, the cursor in it, and the inputs entered before.
#[derive(Debug, Default)]
pub struct LineEditor {
    text: Vec<char>,
    cursor: usize,
    pastes: Vec<String>,
    history: History,
    /// Position while browsing the history with Up/Down (`None`: editing a new input),
    /// and the new input put aside meanwhile.
    browsing: Option<usize>,
    draft: Vec<char>,
    search: Option<Search>,
}

impl LineEditor {
    pub fn new(history: History) -> Self {
        Self {
            history,
            ..Self::default()
        }
    }

    /// The input as shown, and the cursor's byte offset in it: a collapsed paste as its
    /// token, control characters as `�`. While searching, the search's own line.
    pub fn display(&self) -> (String, usize) {
        if let Some(search) = &self.search {
            let found = search
                .found
                .and_then(|i| self.history.newest(i))
                .unwrap_or_default();
            let query = one_line(&search.query);
            let shown = format!("(search: {query}) {}", one_line(found));
            let cursor = "(search: ".len() + query.len();
            return (shown, cursor);
        }
        let mut shown = String::new();
        let mut cursor = 0;
        for (i, &c) in self.text.iter().enumerate() {
            if i == self.cursor {
                cursor = shown.len();
            }
            match self.paste_index(c) {
                Some(index) => shown.push_str(&paste_token(&self.pastes[index])),
                None if c == '\n' => shown.push('\n'),
                None if c == '\t' => shown.push(' '),
                None if c.is_control() || terminal_markdown::hides_or_reorders(c) => shown.push('�'),
                None => shown.push(c),
            }
        }
        if self.cursor == self.text.len() {
            cursor = shown.len();
        }
        (shown, cursor)
    }

    pub fn is_empty(&self) -> bool {
        self.text.is_empty() && self.search.is_none()
    }

    pub fn clear(&mut self) {
        self.text.clear();
        self.pastes.clear();
        self.cursor = 0;
        self.browsing = None;
        self.search = None;
    }

    /// The whole input with pastes expanded (for `$EDITOR`).
    pub fn text(&self) -> String {
        self.expand(&self.text)
    }

    /// Replaces the input (what `$EDITOR` left), cursor at the end.
    pub fn set_text(&mut self, text: &str) {
        self.clear();
        self.insert_str(text);
    }

    /// Pasted text: line ends of any kind become `\n`; a long paste is collapsed.
    pub fn paste(&mut self, text: &str) {
        let text = normalize_line_ends(text);
        let lines = text.lines().count();
        let collapsible = self.pastes.len() < (PASTE_LAST - PASTE_BASE) as usize;
        if collapsible && (lines > COLLAPSE_LINES || text.chars().count() > COLLAPSE_CHARS) {
            let token = char::from_u32(PASTE_BASE + self.pastes.len() as u32);
            if let Some(token) = token {
                self.pastes.push(text);
                self.insert(token);
                return;
            }
        }
        self.insert_str(&text);
    }

    /// Text typed or given as is (no collapsing).
    pub fn insert_str(&mut self, text: &str) {
        for c in normalize_line_ends(text).chars() {
            if !is_paste_char(c) {
                self.insert(c);
            }
        }
    }

    /// Puts a completion in place of the text from `start` to the cursor.
    pub fn complete(&mut self, start: usize, replacement: &str) {
        if start > self.cursor {
            return;
        }
        self.text.drain(start..self.cursor);
        self.cursor = start;
        self.insert_str(replacement);
    }

    fn insert(&mut self, c: char) {
        self.text.insert(self.cursor, c);
        self.cursor += 1;
    }

    pub fn handle(&mut self, key: KeyEvent) -> EditorAction {
        if key.kind == KeyEventKind::Release {
            return EditorAction::Edited;
        }
        if self.search.is_some() {
            return self.handle_search(key);
        }
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        let alt = key.modifiers.contains(KeyModifiers::ALT);
        let shift = key.modifiers.contains(KeyModifiers::SHIFT);
        match key.code {
            KeyCode::Char('c') if ctrl => return EditorAction::Interrupt,
            KeyCode::Esc => return EditorAction::Escape,
            KeyCode::Char('d') if ctrl => {
                if self.text.is_empty() {
                    return EditorAction::EndOfInput;
                }
                self.delete_forward();
            }
            KeyCode::Char('l') if ctrl => return EditorAction::ClearScreen,
            KeyCode::Char('g') if ctrl => return EditorAction::External,
            KeyCode::Char('o') if ctrl => return EditorAction::Expand,
            KeyCode::Char('r') if ctrl => {
                self.search = Some(Search::default());
                self.search_from(0);
            }
            KeyCode::Enter if alt || shift => self.insert('\n'),
            KeyCode::Char('j') if ctrl => self.insert('\n'),
            // `\` then Enter: a new line, as in a shell.
            KeyCode::Enter if self.cursor > 0 && self.text[self.cursor - 1] == '\\' => {
                self.text[self.cursor - 1] = '\n';
            }
            KeyCode::Enter => return self.submit(),
            KeyCode::Char('m') if ctrl => return self.submit(),
            KeyCode::Tab => {
                let start = self.word_start_for_completion();
                let word = self.text[start..self.cursor].iter().collect();
                return EditorAction::Complete { start, word };
            }
            KeyCode::Char('a') if ctrl => self.cursor = self.line_start(),
            KeyCode::Char('e') if ctrl => self.cursor = self.line_end(),
            KeyCode::Char('b') if ctrl => self.cursor = self.cursor.saturating_sub(1),
            KeyCode::Char('f') if ctrl => self.cursor = (self.cursor + 1).min(self.text.len()),
            KeyCode::Char('b') if alt => self.cursor = self.word_start(),
            KeyCode::Char('f') if alt => self.cursor = self.word_end(),
            KeyCode::Char('u') if ctrl => {
                let start = self.line_start();
                self.text.drain(start..self.cursor);
                self.cursor = start;
            }
            KeyCode::Char('k') if ctrl => {
                let end = self.line_end();
                self.text.drain(self.cursor..end);
            }
            KeyCode::Char('w') if ctrl => {
                let start = self.word_start();
                self.text.drain(start..self.cursor);
                self.cursor = start;
            }
            KeyCode::Char('p') if ctrl => self.up(),
            KeyCode::Char('n') if ctrl => self.down(),
            KeyCode::Char(c) if !ctrl && !is_paste_char(c) => self.insert(c),
            KeyCode::Backspace if self.cursor > 0 => {
                self.cursor -= 1;
                self.text.remove(self.cursor);
            }
            KeyCode::Delete => self.delete_forward(),
            KeyCode::Left if ctrl || alt => self.cursor = self.word_start(),
            KeyCode::Right if ctrl || alt => self.cursor = self.word_end(),
            KeyCode::Left => self.cursor = self.cursor.saturating_sub(1),
            KeyCode::Right => self.cursor = (self.cursor + 1).min(self.text.len()),
            KeyCode::Home => self.cursor = self.line_start(),
            KeyCode::End => self.cursor = self.line_end(),
            KeyCode::Up => self.up(),
            KeyCode::Down => self.down(),
            _ => {}
        }
        EditorAction::Edited
    }

    fn handle_search(&mut self, key: KeyEvent) -> EditorAction {
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        let Some(search) = self.search.as_mut() else {
            return EditorAction::Edited;
        };
        match key.code {
            KeyCode::Char('r') if ctrl => {
                let from = search.found.map_or(0, |i| i + 1);
                self.search_from(from);
            }
            KeyCode::Char('c' | 'g') if ctrl => self.search = None,
            KeyCode::Esc => self.search = None,
            KeyCode::Char(c) if !ctrl => {
                search.query.push(c);
                let from = search.found.unwrap_or(0);
                self.search_from(from);
            }
            KeyCode::Backspace => {
                search.query.pop();
                self.search_from(0);
            }
            // Enter runs the entry found, as in a shell; other keys take it for editing.
            KeyCode::Enter => {
                self.accept_search();
                return self.submit();
            }
            _ => self.accept_search(),
        }
        EditorAction::Edited
    }

    /// Looks for the query in the history from the `from`-th newest entry back.
    fn search_from(&mut self, from: usize) {
        let Some(search) = self.search.as_mut() else {
            return;
        };
        let found = self.history.find(&search.query, from);
        // No further match: keep the one shown.
        if found.is_some() || search.found.is_none() {
            search.found = found;
        }
    }

    fn accept_search(&mut self) {
        let Some(search) = self.search.take() else {
            return;
        };
        if let Some(entry) = search.found.and_then(|i| self.history.newest(i)) {
            let entry = entry.to_string();
            self.set_text(&entry);
        }
    }

    fn submit(&mut self) -> EditorAction {
        let input = self.expand(&self.text);
        self.clear();
        EditorAction::Submit(input)
    }

    /// Keeps a sent input in the history (an approval's answer is not kept).
    pub fn remember(&mut self, input: &str) {
        self.history.add(input);
    }

    fn expand(&self, chars: &[char]) -> String {
        let mut out = String::new();
        for &c in chars {
            match self.paste_index(c) {
                Some(index) => out.push_str(&self.pastes[index]),
                None => out.push(c),
            }
        }
        out
    }

    fn paste_index(&self, c: char) -> Option<usize> {
        let index = (c as u32).checked_sub(PASTE_BASE)? as usize;
        (index < self.pastes.len()).then_some(index)
    }

    fn delete_forward(&mut self) {
        if self.cursor < self.text.len() {
            self.text.remove(self.cursor);
        }
    }

    fn line_start(&self) -> usize {
        self.text[..self.cursor]
            .iter()
            .rposition(|&c| c == '\n')
            .map_or(0, |i| i + 1)
    }

    fn line_end(&self) -> usize {
        self.text[self.cursor..]
            .iter()
            .position(|&c| c == '\n')
            .map_or(self.text.len(), |i| self.cursor + i)
    }

    fn word_start(&self) -> usize {
        let mut i = self.cursor;
        while i > 0 && self.text[i - 1].is_whitespace() {
            i -= 1;
        }
        while i > 0 && !self.text[i - 1].is_whitespace() {
            i -= 1;
        }
        i
    }

    /// The start of the word Tab completes: after the last whitespace or `@`.
    fn word_start_for_completion(&self) -> usize {
        let mut i = self.cursor;
        while i > 0 && !self.text[i - 1].is_whitespace() && self.text[i - 1] != '@' {
            i -= 1;
        }
        if i > 0 && self.text[i - 1] == '@' {
            i - 1
        } else {
            i
        }
    }

    fn word_end(&self) -> usize {
        let mut i = self.cursor;
        while i < self.text.len() && self.text[i].is_whitespace() {
            i += 1;
        }
        while i < self.text.len() && !self.text[i].is_whitespace() {
            i += 1;
        }
        i
    }

    /// Up: to the line above, or from the first line to the previous history entry.
    fn up(&mut self) {
        let start = self.line_start();
        if start == 0 {
            return self.history_back();
        }
        let column = self.cursor - start;
        let above = self.text[..start - 1]
            .iter()
            .rposition(|&c| c == '\n')
            .map_or(0, |i| i + 1);
        self.cursor = (above + column).min(start - 1);
    }

    /// Down: to the line below, or from the last line to the next history entry.
    fn down(&mut self) {
        let end = self.line_end();
        if end == self.text.len() {
            return self.history_forward();
        }
        let column = self.cursor - self.line_start();
        let below_end = self.text[end + 1..]
            .iter()
            .position(|&c| c == '\n')
            .map_or(self.text.len(), |i| end + 1 + i);
        self.cursor = (end + 1 + column).min(below_end);
    }

    fn history_back(&mut self) {
        let next = match self.browsing {
            None if self.history.is_empty() => return,
            None => {
                self.draft = std::mem::take(&mut self.text);
                0
            }
            Some(i) if i + 1 >= self.history.len() => return,
            Some(i) => i + 1,
        };
        self.show_history(Some(next));
    }

    fn history_forward(&mut self) {
        match self.browsing {
            None => {}
            Some(0) => self.show_history(None),
            Some(i) => self.show_history(Some(i - 1)),
        }
    }

    fn show_history(&mut self, entry: Option<usize>) {
        self.browsing = entry;
        self.text = match entry.and_then(|i| self.history.newest(i)) {
            Some(text) => text.chars().filter(|&c| !is_paste_char(c)).collect(),
            None => std::mem::take(&mut self.draft),
        };
        self.cursor = self.text.len();
    }
}

/// CR LF and lone CR (what terminals paste) become LF.
pub fn normalize_line_ends(text: &str) -> String {
    text.replace("\r\n", "\n").replace('\r', "\n")
}

fn is_paste_char(c: char) -> bool {
    (PASTE_BASE..=PASTE_LAST).contains(&(c as u32))
}

fn paste_token(text: &str) -> String {
    match text.lines().count() {
        lines if lines > 1 => format!("[pasted {lines} lines]"),
        _ => format!("[pasted {} characters]", text.chars().count()),
    }
}

/// A history entry or a query on the prompt's row: escaped, as everything shown.
fn one_line(text: &str) -> String {
    crate::terminal_text::one_line(&text.replace('\n', " ↵ ")).into_owned()
}

#[cfg(test)]
#[path = "line_editor_tests.rs"]
mod tests;
