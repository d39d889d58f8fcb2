//! A small line editor for the chat prompt. It is fed key events by the chat's own input
//! task rather than owning the terminal (as rustyline or reedline would), because the
//! agent's output and the spinner are drawn while a line is being typed: one writer has
//! to own the screen.

use crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers};

/// What a key did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EditorAction {
    /// The line changed or the cursor moved (or nothing happened): redraw.
    Edited,
    /// Enter: the finished line (already added to the history).
    Submit(String),
    /// Ctrl-C.
    Interrupt,
    /// Ctrl-D on an empty line.
    EndOfInput,
    /// Ctrl-L.
    ClearScreen,
}

/// The line being typed, the cursor in it, and the lines entered before.
#[derive(Debug, Default)]
pub struct LineEditor {
    line: Vec<char>,
    cursor: usize,
    history: Vec<String>,
    /// Position while browsing the history with Up/Down (`None`: editing a new line),
    /// and the new line put aside meanwhile.
    browsing: Option<usize>,
    draft: Vec<char>,
}

impl LineEditor {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn before_cursor(&self) -> String {
        self.line[..self.cursor].iter().map(|&c| visible(c)).collect()
    }

    pub fn after_cursor(&self) -> String {
        self.line[self.cursor..].iter().map(|&c| visible(c)).collect()
    }

    pub fn is_empty(&self) -> bool {
        self.line.is_empty()
    }

    pub fn clear(&mut self) {
        self.line.clear();
        self.cursor = 0;
        self.browsing = None;
    }

    /// Pasted text goes in as typed, newlines included (they are sent as they are).
    pub fn insert_str(&mut self, text: &str) {
        for c in text.chars().filter(|&c| c != '\r') {
            self.insert(c);
        }
    }

    fn insert(&mut self, c: char) {
        self.line.insert(self.cursor, c);
        self.cursor += 1;
    }

    pub fn handle(&mut self, key: KeyEvent) -> EditorAction {
        if key.kind == KeyEventKind::Release {
            return EditorAction::Edited;
        }
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        let alt = key.modifiers.contains(KeyModifiers::ALT);
        match key.code {
            KeyCode::Char('c') if ctrl => return EditorAction::Interrupt,
            KeyCode::Char('d') if ctrl => {
                if self.line.is_empty() {
                    return EditorAction::EndOfInput;
                }
                self.delete_forward();
            }
            KeyCode::Char('l') if ctrl => return EditorAction::ClearScreen,
            KeyCode::Enter => return self.submit(),
            KeyCode::Char('j' | 'm') if ctrl => return self.submit(),
            KeyCode::Char('a') if ctrl => self.cursor = 0,
            KeyCode::Char('e') if ctrl => self.cursor = self.line.len(),
            KeyCode::Char('b') if ctrl => self.cursor = self.cursor.saturating_sub(1),
            KeyCode::Char('f') if ctrl => self.cursor = (self.cursor + 1).min(self.line.len()),
            KeyCode::Char('b') if alt => self.cursor = self.word_start(),
            KeyCode::Char('f') if alt => self.cursor = self.word_end(),
            KeyCode::Char('u') if ctrl => {
                self.line.drain(..self.cursor);
                self.cursor = 0;
            }
            KeyCode::Char('k') if ctrl => self.line.truncate(self.cursor),
            KeyCode::Char('w') if ctrl => {
                let start = self.word_start();
                self.line.drain(start..self.cursor);
                self.cursor = start;
            }
            KeyCode::Char('p') if ctrl => self.history_back(),
            KeyCode::Char('n') if ctrl => self.history_forward(),
            KeyCode::Char(c) if !ctrl => self.insert(c),
            KeyCode::Tab => self.insert(' '),
            KeyCode::Backspace if self.cursor > 0 => {
                self.cursor -= 1;
                self.line.remove(self.cursor);
            }
            KeyCode::Delete => self.delete_forward(),
            KeyCode::Left if ctrl || alt => self.cursor = self.word_start(),
            KeyCode::Right if ctrl || alt => self.cursor = self.word_end(),
            KeyCode::Left => self.cursor = self.cursor.saturating_sub(1),
            KeyCode::Right => self.cursor = (self.cursor + 1).min(self.line.len()),
            KeyCode::Home => self.cursor = 0,
            KeyCode::End => self.cursor = self.line.len(),
            KeyCode::Up => self.history_back(),
            KeyCode::Down => self.history_forward(),
            _ => {}
        }
        EditorAction::Edited
    }

    fn submit(&mut self) -> EditorAction {
        let line: String = self.line.iter().collect();
        if !line.trim().is_empty() && self.history.last() != Some(&line) {
            self.history.push(line.clone());
        }
        self.clear();
        EditorAction::Submit(line)
    }

    fn delete_forward(&mut self) {
        if self.cursor < self.line.len() {
            self.line.remove(self.cursor);
        }
    }

    fn word_start(&self) -> usize {
        let mut i = self.cursor;
        while i > 0 && self.line[i - 1].is_whitespace() {
            i -= 1;
        }
        while i > 0 && !self.line[i - 1].is_whitespace() {
            i -= 1;
        }
        i
    }

    fn word_end(&self) -> usize {
        let mut i = self.cursor;
        while i < self.line.len() && self.line[i].is_whitespace() {
            i += 1;
        }
        while i < self.line.len() && !self.line[i].is_whitespace() {
            i += 1;
        }
        i
    }

    fn history_back(&mut self) {
        let next = match self.browsing {
            None if self.history.is_empty() => return,
            None => {
                self.draft = std::mem::take(&mut self.line);
                self.history.len() - 1
            }
            Some(0) => return,
            Some(i) => i - 1,
        };
        self.show_history(Some(next));
    }

    fn history_forward(&mut self) {
        match self.browsing {
            None => {}
            Some(i) if i + 1 < self.history.len() => self.show_history(Some(i + 1)),
            Some(_) => self.show_history(None),
        }
    }

    fn show_history(&mut self, entry: Option<usize>) {
        self.browsing = entry;
        self.line = match entry {
            Some(i) => self.history[i].chars().collect(),
            None => std::mem::take(&mut self.draft),
        };
        self.cursor = self.line.len();
    }
}

/// How a character of the line is shown: a pasted newline as `↵`, other controls as `�`.
fn visible(c: char) -> char {
    match c {
        '\n' => '↵',
        c if c.is_control() => '�',
        c => c,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(code: KeyCode) -> KeyEvent {
        KeyEvent::new(code, KeyModifiers::NONE)
    }

    fn ctrl(c: char) -> KeyEvent {
        KeyEvent::new(KeyCode::Char(c), KeyModifiers::CONTROL)
    }

    fn typed(editor: &mut LineEditor, text: &str) {
        for c in text.chars() {
            editor.handle(key(KeyCode::Char(c)));
        }
    }

    #[test]
    fn typing_moving_and_deleting_edit_the_line_at_the_cursor() {
        let mut editor = LineEditor::new();
        typed(&mut editor, "helo world");
        for _ in 0..7 {
            editor.handle(key(KeyCode::Left));
        }
        typed(&mut editor, "l");
        assert_eq!(editor.before_cursor(), "hell");
        editor.handle(ctrl('e'));
        editor.handle(ctrl('w'));
        assert_eq!(editor.before_cursor(), "hello ");
        editor.handle(key(KeyCode::Backspace));
        assert_eq!(
            editor.handle(key(KeyCode::Enter)),
            EditorAction::Submit("hello".into())
        );
        assert!(editor.is_empty());
    }

    #[test]
    fn up_and_down_browse_the_history_and_restore_the_draft() {
        let mut editor = LineEditor::new();
        for line in ["first", "second"] {
            typed(&mut editor, line);
            editor.handle(key(KeyCode::Enter));
        }
        typed(&mut editor, "dra");
        editor.handle(key(KeyCode::Up));
        assert_eq!(editor.before_cursor(), "second");
        editor.handle(key(KeyCode::Up));
        editor.handle(key(KeyCode::Up));
        assert_eq!(editor.before_cursor(), "first");
        editor.handle(key(KeyCode::Down));
        editor.handle(key(KeyCode::Down));
        assert_eq!(editor.before_cursor(), "dra");
    }

    #[test]
    fn control_keys_interrupt_end_input_and_kill() {
        let mut editor = LineEditor::new();
        assert_eq!(editor.handle(ctrl('c')), EditorAction::Interrupt);
        assert_eq!(editor.handle(ctrl('d')), EditorAction::EndOfInput);
        typed(&mut editor, "abc def");
        editor.handle(ctrl('a'));
        editor.handle(ctrl('k'));
        assert!(editor.is_empty());
        editor.insert_str("one\r\ntwo");
        assert_eq!(editor.before_cursor(), "one↵two");
        assert_eq!(
            editor.handle(key(KeyCode::Enter)),
            EditorAction::Submit("one\ntwo".into())
        );
    }
}
