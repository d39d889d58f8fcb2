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

/// Enter, and the input kept in the history as the chat keeps what it sends.
fn send(editor: &mut LineEditor) -> EditorAction {
    let action = editor.handle(key(KeyCode::Enter));
    if let EditorAction::Submit(input) = &action {
        editor.remember(input);
    }
    action
}

fn before_cursor(editor: &LineEditor) -> String {
    let (shown, cursor) = editor.display();
    shown[..cursor].to_string()
}

#[test]
fn typing_moving_and_deleting_edit_the_line_at_the_cursor() {
    let mut editor = LineEditor::default();
    typed(&mut editor, "helo world");
    for _ in 0..7 {
        editor.handle(key(KeyCode::Left));
    }
    typed(&mut editor, "l");
    assert_eq!(before_cursor(&editor), "hell");
    editor.handle(ctrl('e'));
    editor.handle(ctrl('w'));
    assert_eq!(before_cursor(&editor), "hello ");
    editor.handle(key(KeyCode::Backspace));
    assert_eq!(
        editor.handle(key(KeyCode::Enter)),
        EditorAction::Submit("hello".into())
    );
    assert!(editor.is_empty());
}

#[test]
fn up_and_down_browse_the_history_and_restore_the_draft() {
    let mut editor = LineEditor::default();
    for line in ["first", "second"] {
        typed(&mut editor, line);
        send(&mut editor);
    }
    typed(&mut editor, "dra");
    editor.handle(key(KeyCode::Up));
    assert_eq!(before_cursor(&editor), "second");
    editor.handle(key(KeyCode::Up));
    editor.handle(key(KeyCode::Up));
    assert_eq!(before_cursor(&editor), "first");
    editor.handle(key(KeyCode::Down));
    editor.handle(key(KeyCode::Down));
    assert_eq!(before_cursor(&editor), "dra");
}

#[test]
fn a_pasted_text_keeps_its_line_breaks_whatever_their_kind() {
    let mut editor = LineEditor::default();
    editor.paste("one\r\ntwo\rthree\nfour");
    assert_eq!(editor.display().0, "one\ntwo\nthree\nfour");
    assert_eq!(
        editor.handle(key(KeyCode::Enter)),
        EditorAction::Submit("one\ntwo\nthree\nfour".into())
    );
}

#[test]
fn new_lines_come_from_alt_enter_ctrl_j_and_a_backslash() {
    let mut editor = LineEditor::default();
    typed(&mut editor, "a");
    editor.handle(KeyEvent::new(KeyCode::Enter, KeyModifiers::ALT));
    typed(&mut editor, "b");
    editor.handle(ctrl('j'));
    typed(&mut editor, "c\\");
    editor.handle(key(KeyCode::Enter));
    typed(&mut editor, "d");
    assert_eq!(editor.display().0, "a\nb\nc\nd");
    // Up moves within the input before it reaches the history.
    editor.handle(key(KeyCode::Up));
    typed(&mut editor, "!");
    assert_eq!(
        editor.handle(key(KeyCode::Enter)),
        EditorAction::Submit("a\nb\nc!\nd".into())
    );
}

#[test]
fn a_long_paste_is_shown_collapsed_and_sent_whole() {
    let mut editor = LineEditor::default();
    let pasted: String = (1..=120).map(|i| format!("line {i}\n")).collect();
    typed(&mut editor, "look: ");
    editor.paste(&pasted);
    assert_eq!(editor.display().0, "look: [pasted 120 lines]");
    typed(&mut editor, " ok");
    assert_eq!(
        editor.handle(key(KeyCode::Enter)),
        EditorAction::Submit(format!("look: {pasted} ok"))
    );
    // One Backspace takes the whole paste away.
    editor.paste(&pasted);
    editor.handle(key(KeyCode::Backspace));
    assert!(editor.is_empty());
}

#[test]
fn ctrl_r_finds_an_earlier_input_and_enter_sends_it() {
    let mut editor = LineEditor::default();
    for line in ["deploy staging", "list the tests", "deploy production\u{1b}[2J"] {
        typed(&mut editor, line);
        send(&mut editor);
    }
    editor.handle(ctrl('r'));
    typed(&mut editor, "depl");
    // Shown escaped: an entry cannot drive the terminal from the prompt's row.
    let shown = editor.display().0;
    assert!(
        shown.contains("deploy production") && !shown.contains('\u{1b}'),
        "{shown:?}"
    );
    editor.handle(ctrl('r'));
    assert!(editor.display().0.ends_with("deploy staging"));
    assert_eq!(
        editor.handle(key(KeyCode::Enter)),
        EditorAction::Submit("deploy staging".into())
    );
    // Escape leaves the search with the input as it was.
    typed(&mut editor, "draft");
    editor.handle(ctrl('r'));
    editor.handle(key(KeyCode::Esc));
    assert_eq!(editor.display().0, "draft");
}

#[test]
fn pasted_icons_from_the_private_use_area_are_kept() {
    let mut editor = LineEditor::default();
    editor.paste("\u{e0b0} \u{f8ff}");
    assert_eq!(
        editor.handle(key(KeyCode::Enter)),
        EditorAction::Submit("\u{e0b0} \u{f8ff}".into())
    );
}

#[test]
fn tab_asks_to_complete_the_word_or_the_at_path_before_the_cursor() {
    let mut editor = LineEditor::default();
    typed(&mut editor, "read @src/ma");
    assert_eq!(
        editor.handle(key(KeyCode::Tab)),
        EditorAction::Complete {
            start: 5,
            word: "@src/ma".into()
        }
    );
    editor.complete(5, "@src/main.rs ");
    assert_eq!(editor.display().0, "read @src/main.rs ");
}

#[test]
fn control_keys_interrupt_end_input_and_kill() {
    let mut editor = LineEditor::default();
    assert_eq!(editor.handle(ctrl('c')), EditorAction::Interrupt);
    assert_eq!(editor.handle(key(KeyCode::Esc)), EditorAction::Escape);
    assert_eq!(editor.handle(ctrl('d')), EditorAction::EndOfInput);
    typed(&mut editor, "abc def");
    editor.handle(ctrl('a'));
    editor.handle(ctrl('k'));
    assert!(editor.is_empty());
    assert_eq!(editor.handle(ctrl('g')), EditorAction::External);
    assert_eq!(editor.handle(ctrl('o')), EditorAction::Expand);
}
