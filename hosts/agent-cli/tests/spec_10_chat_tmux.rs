//! `agent-host chat` driven in a real terminal (tmux): the real binary, the real component,
//! real files, and real HTTP to the scripted server on 127.0.0.1. Keys go in with
//! `send-keys`, the screen comes back with `capture-pane`.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests may panic

#[path = "tmux/chat.rs"]
mod chat;
mod common;
mod tmux;

use chat::{conversation, painted, require_tmux, slow, start_chat, start_chat_with};
use scripted_llm::anthropic::{Shape, message, message_shaped, text, tool_use};
use scripted_llm::{Script, ScriptedServer};
use serde_json::{Value, json};
use tmux::ChatPane;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_that_edits_a_file_shows_compact_calls_and_a_coloured_diff() {
    require_tmux!();
    let chat = start_chat(
        vec![
            message(&[
                text("I'll create hello.py."),
                tool_use(
                    "t1",
                    "write_file",
                    json!({"file_path": "hello.py", "content": "print(\"Hello\")\nprint(\"World\")\n"}),
                ),
            ]),
            message(&[tool_use(
                "t2",
                "edit_file",
                json!({"file_path": "hello.py", "old_string": "print(\"World\")", "new_string": "print(\"Rust\")"}),
            )]),
            message(&[tool_use("t3", "shell", json!({"command": "seq 1 10"}))]),
            message(&[text("Done: hello.py greets Rust.")]),
        ],
        &[],
    )
    .await;
    chat.pane.enter("create hello.py");
    chat.pane.wait_for("Done: hello.py greets Rust.").await;
    let screen = chat.pane.wait_for_prompt().await;
    assert_eq!(
        std::fs::read_to_string(chat.work.path().join("hello.py")).unwrap(),
        "print(\"Hello\")\nprint(\"Rust\")\n"
    );
    for expected in [
        "> create hello.py",
        "I'll create hello.py.",
        "● write_file hello.py",
        "hello.py: new file, 2 lines",
        "● edit_file hello.py",
        "hello.py: +1 -1",
        "● shell seq 1 10",
        "  2\n  … 5 more lines (Ctrl-O shows all)\n  8",
    ] {
        assert!(
            screen.contains(expected),
            "{expected:?} is missing from:\n{screen}"
        );
    }
    // The command's output is folded to its first and last lines.
    assert!(!screen.lines().any(|l| l == "  5"), "{screen}");
    assert!(screen.lines().any(|l| l == "  10"), "{screen}");
    // The diff: the removed line red, the added one green.
    let coloured = chat.pane.capture(true);
    let line_with = |needle: &str| {
        coloured
            .lines()
            .rev()
            .find(|l| l.contains(needle))
            .unwrap_or_else(|| panic!("no line with {needle:?} in:\n{coloured}"))
    };
    assert!(painted(line_with("- print(\"World\")"), "red"), "{coloured}");
    assert!(painted(line_with("+ print(\"Rust\")"), "green"), "{coloured}");
}

/// A write and an edit of one file in one response run back to back, before the
/// chat shows either end: each line still gets its own call's diff.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_write_then_an_edit_in_one_response_each_show_their_own_diff() {
    require_tmux!();
    let chat = start_chat(
        vec![
            message(&[
                tool_use(
                    "t1",
                    "write_file",
                    json!({"file_path": "hello.py", "content": "print(\"Hello\")\nprint(\"World\")\n"}),
                ),
                tool_use(
                    "t2",
                    "edit_file",
                    json!({"file_path": "hello.py", "old_string": "print(\"World\")", "new_string": "print(\"Rust\")"}),
                ),
            ]),
            message(&[text("Both done.")]),
        ],
        &[],
    )
    .await;
    chat.pane.enter("write then edit");
    chat.pane.wait_for("Both done.").await;
    let screen = chat.pane.wait_for_prompt().await;
    // Both calls start before either ends (one response's calls run together): the two
    // tool lines, then each call's diff in order.
    let at = |needle: &str| {
        screen
            .find(needle)
            .unwrap_or_else(|| panic!("no {needle:?} in:\n{screen}"))
    };
    assert!(
        at("● write_file hello.py") < at("● edit_file hello.py"),
        "{screen}"
    );
    let (write, edit) = (at("hello.py: new file, 2 lines"), at("hello.py: +1 -1"));
    assert!(write < edit, "{screen}");
    let (write_diff, edit_diff) = (&screen[write..edit], &screen[edit..at("Both done.")]);
    assert!(
        write_diff.contains("2 + print(\"World\")"),
        "the write shows what it wrote: {screen}"
    );
    assert!(
        !write_diff.contains("Rust"),
        "the edit is not the write's: {screen}"
    );
    assert!(edit_diff.contains("2 - print(\"World\")"), "{screen}");
    assert!(edit_diff.contains("2 + print(\"Rust\")"), "{screen}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_color_turns_the_colours_off() {
    require_tmux!();
    let chat = start_chat(
        vec![
            message(&[tool_use(
                "t1",
                "write_file",
                json!({"file_path": "a.txt", "content": "a\n"}),
            )]),
            message(&[text("Written.")]),
        ],
        &[("NO_COLOR", "1")],
    )
    .await;
    chat.pane.enter("write a.txt");
    chat.pane.wait_for("Written.").await;
    let coloured = chat.pane.capture(true);
    let added = coloured.lines().find(|l| l.contains("+ a")).unwrap();
    assert!(!painted(added, "green") && !added.contains('\u{1b}'), "{added:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_line_typed_during_a_slow_reply_steers_the_agent() {
    require_tmux!();
    // ~20 pieces 250 ms apart: several seconds to type into.
    let chat = start_chat(
        vec![
            slow(
                message(&[
                    text("Working on it, slowly and carefully, one piece at a time."),
                    // The steering is taken after the tool round: time to type it in.
                    tool_use("t1", "shell", json!({"command": "sleep 2; echo ran"})),
                ]),
                250,
            ),
            message(&[text("Steered answer.")]),
        ],
        &[],
    )
    .await;
    chat.pane.enter("do the task");
    chat.pane.wait_for("Working on").await;
    chat.pane.enter("also add a test");
    chat.pane.wait_for("↳ steering: also add a test").await;
    chat.pane.wait_for("Steered answer.").await;
    chat.pane.wait_for_prompt().await;
    let requests = chat.server.requests();
    assert_eq!(requests.len(), 2);
    let second = conversation(&requests[1].json());
    assert_eq!(
        second.last().map(String::as_str),
        Some("also add a test"),
        "{second:?}"
    );
}

/// A chat whose first answer streams slowly, shown up to its first words: ten pieces 1.2 s
/// apart, the first "A very", leave about ten seconds to cut it before its end shows.
async fn chat_in_a_slow_first_answer() -> chat::Chat {
    let answer = message_shaped(
        &[text("A very slow answer that will never finish streaming here.")],
        Shape {
            text_pieces: 10,
            ..Shape::API
        },
    );
    let chat = start_chat(vec![slow(answer, 1_200), message(&[text("Second answer.")])], &[]).await;
    chat.pane.enter("first");
    chat.pane.wait_for("A very").await;
    chat
}

/// Esc cancels as the peers' chats do, and never arms quitting: the next line goes straight on.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn esc_cancels_a_slow_reply_and_the_next_line_goes_on_at_once() {
    require_tmux!();
    let chat = chat_in_a_slow_first_answer().await;
    chat.pane.press("Escape");
    chat.pane.wait_for("cancelled").await;
    let screen = chat.pane.wait_for_prompt().await;
    assert!(!screen.contains("never finish streaming here"), "{screen}");
    chat.pane.press("Escape");
    chat.pane.enter("second");
    chat.pane.wait_for("Second answer.").await;
    let screen = chat.pane.wait_for_prompt().await;
    assert!(!screen.contains("chat exited"), "{screen}");
    let requests = chat.server.requests();
    let texts = conversation(&requests[1].json());
    assert_eq!(texts.last().map(String::as_str), Some("second"), "{texts:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ctrl_c_cancels_a_slow_reply_and_the_session_stays_usable() {
    require_tmux!();
    let chat = chat_in_a_slow_first_answer().await;
    chat.pane.press("C-c");
    chat.pane.wait_for("cancelled").await;
    let screen = chat.pane.wait_for_prompt().await;
    assert!(!screen.contains("never finish streaming here"), "{screen}");
    // Past the double-Ctrl-C window: the session goes on.
    tokio::time::sleep(std::time::Duration::from_millis(2_100)).await;
    chat.pane.enter("second");
    chat.pane.wait_for("Second answer.").await;
    chat.pane.wait_for_prompt().await;
    let requests = chat.server.requests();
    assert_eq!(requests.len(), 2);
    let texts = conversation(&requests[1].json());
    assert_eq!(texts.first().map(String::as_str), Some("first"), "{texts:?}");
    assert_eq!(texts.last().map(String::as_str), Some("second"), "{texts:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_input_continues_the_conversation_and_up_recalls_the_first() {
    require_tmux!();
    let chat = start_chat(
        vec![
            message(&[text("First answer.")]),
            message(&[text("Second answer.")]),
        ],
        &[],
    )
    .await;
    chat.pane.enter("first question");
    chat.pane.wait_for("First answer.").await;
    chat.pane.wait_for_prompt().await;
    chat.pane.press("Up");
    chat.pane
        .wait_until("the recalled line", |s| {
            tmux::prompt_line(s) == "> first question"
        })
        .await;
    chat.pane.press("C-u");
    chat.pane.wait_for_prompt().await;
    chat.pane.enter("second question");
    chat.pane.wait_for("Second answer.").await;
    let requests = chat.server.requests();
    assert_eq!(requests.len(), 2);
    assert_eq!(
        conversation(&requests[1].json()),
        vec!["first question", "First answer.", "second question"]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn help_lists_the_commands_and_an_unknown_one_is_named() {
    require_tmux!();
    let chat = start_chat(Vec::new(), &[]).await;
    chat.pane.enter("/help");
    let screen = chat.pane.wait_for("/quit").await;
    for command in ["/help", "/model [NAME]", "/effort", "/reset", "/quit"] {
        assert!(screen.contains(command), "{command} is missing from:\n{screen}");
    }
    chat.pane.enter("/frobnicate");
    let screen = chat.pane.wait_for("unknown command /frobnicate").await;
    assert!(
        screen.matches("/reset").count() >= 2,
        "the commands are listed again:\n{screen}"
    );
    assert!(chat.server.requests().is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn effort_and_model_changes_reach_the_next_request() {
    require_tmux!();
    let chat = start_chat(
        vec![
            message(&[text("First answer.")]),
            message(&[text("Second answer.")]),
        ],
        &[],
    )
    .await;
    chat.pane.enter("/effort high");
    chat.pane.wait_for("reasoning effort: high").await;
    chat.pane.enter("first");
    chat.pane.wait_for("First answer.").await;
    chat.pane.wait_for_prompt().await;
    chat.pane.enter("/model claude-opus-4-1");
    chat.pane.wait_for("model: claude-opus-4-1").await;
    chat.pane.enter("second");
    chat.pane.wait_for("Second answer.").await;
    let requests = chat.server.requests();
    let first = requests[0].json();
    // The Anthropic adapter sends an effort as a thinking budget (high: 24576 tokens).
    assert_eq!(first["thinking"]["type"], "enabled", "{first}");
    assert_eq!(first["thinking"]["budget_tokens"], 24_576);
    let second = requests[1].json();
    assert_eq!(second["model"], "claude-opus-4-1");
    assert_eq!(second["thinking"]["budget_tokens"], 24_576, "the effort is kept");
    assert_eq!(conversation(&second), vec!["first", "First answer.", "second"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn undo_and_rewind_put_the_files_back_and_the_model_is_told() {
    require_tmux!();
    let write = |id: &str, path: &str, content: &str| {
        message(&[tool_use(
            id,
            "write_file",
            json!({"file_path": path, "content": content}),
        )])
    };
    let chat = start_chat(
        vec![
            write("t1", "one.txt", "1"),
            message(&[text("Wrote one.")]),
            write("t2", "two.txt", "2"),
            message(&[text("Wrote two.")]),
            message(&[text("Understood.")]),
        ],
        &[],
    )
    .await;
    std::fs::write(chat.work.path().join("mine.txt"), b"the user's").unwrap();
    chat.pane.enter("write one");
    chat.pane.wait_for("Wrote one.").await;
    chat.pane.wait_for_prompt().await;
    chat.pane.enter("write two");
    chat.pane.wait_for("Wrote two.").await;
    chat.pane.wait_for_prompt().await;
    chat.pane.enter("/rewind");
    let screen = chat.pane.wait_for("`/rewind N` puts the files back").await;
    assert!(
        screen.contains("write one") && screen.contains("write two"),
        "{screen}"
    );
    chat.pane.enter("/undo");
    chat.pane.wait_for("removed   two.txt").await;
    assert!(!chat.work.path().join("two.txt").exists());
    assert!(chat.work.path().join("one.txt").exists());
    chat.pane.enter("/rewind 1");
    chat.pane.wait_for("removed   one.txt").await;
    chat.pane.enter("/undo");
    chat.pane.wait_for("no checkpoint to go back to").await;
    assert_eq!(
        std::fs::read(chat.work.path().join("mine.txt")).unwrap(),
        b"the user's"
    );
    chat.pane.enter("what changed?");
    chat.pane.wait_for("Understood.").await;
    let last = conversation(&chat.server.requests()[4].json()).pop().unwrap();
    assert!(
        last.contains("before input 2 (\"two.txt\")") && last.contains("before input 1 (\"one.txt\")"),
        "{last}"
    );
    assert!(last.ends_with("what changed?"), "{last}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reset_starts_a_new_conversation() {
    require_tmux!();
    let chat = start_chat(
        vec![
            message(&[text("First answer.")]),
            message(&[text("Fresh answer.")]),
        ],
        &[],
    )
    .await;
    chat.pane.enter("first");
    chat.pane.wait_for("First answer.").await;
    chat.pane.wait_for_prompt().await;
    chat.pane.enter("/reset");
    chat.pane.wait_for("new session").await;
    chat.pane.enter("again");
    chat.pane.wait_for("Fresh answer.").await;
    let requests = chat.server.requests();
    assert_eq!(conversation(&requests[1].json()), vec!["again"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn quit_closes_the_session_and_exits_cleanly() {
    require_tmux!();
    let chat = start_chat(Vec::new(), &[]).await;
    chat.pane.enter("/quit");
    assert_eq!(chat.pane.wait_for_exit().await, 0);
    // Raw mode was undone: the terminal is back to reading lines.
    chat.pane.wait_for(tmux::CANONICAL).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_closes_the_chat_and_restores_the_terminal() {
    require_tmux!();
    let chat = start_chat(Vec::new(), &[]).await;
    let pid = chat.pane.chat_pid();
    let status = std::process::Command::new("kill")
        .args(["-TERM", &pid.to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    assert_eq!(chat.pane.wait_for_exit().await, 0);
    chat.pane.wait_for(tmux::CANONICAL).await;
}

/// A chat outside the terminal's session gets no SIGHUP when the terminal closes; it must
/// notice by itself and leave, rather than live on spinning on the dead terminal.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_chat_whose_terminal_closes_without_a_hangup_signal_exits() {
    require_tmux!();
    let server = ScriptedServer::start(Script::default()).await.unwrap();
    let work = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    let env = vec![
        ("HOME", home.path().display().to_string()),
        ("XDG_STATE_HOME", home.path().join("state").display().to_string()),
        ("AGENT_CORE_COMPONENT", common::component().display().to_string()),
        ("AGENT_HOST_CACHE_DIR", common::cache_dir().display().to_string()),
        ("ANTHROPIC_BASE_URL", server.base_url()),
    ];
    let pane = ChatPane::start_via(work.path(), &env, &[], "setsid");
    pane.wait_for_prompt().await;
    let pid = pane.chat_pid().to_string();
    pane.kill_server();
    // The deadline guards against a hang only: the chat leaves as soon as it notices that its
    // terminal is gone.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while common::still_running(&pid).is_some() {
        assert!(
            std::time::Instant::now() < deadline,
            "the chat {pid} outlived its terminal"
        );
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ctrl_c_twice_while_working_kills_the_command_and_exits() {
    require_tmux!();
    // The command is found by this mark: its pid is its PID namespace's.
    let mark = format!("chat-ctrl-c-{}", std::process::id());
    let chat = start_chat(
        vec![message(&[tool_use(
            "t1",
            "shell",
            json!({"command": format!("echo long; sh -c 'sleep 60; : {mark}'")}),
        )])],
        &[],
    )
    .await;
    chat.pane.enter("run something long");
    chat.pane.wait_for("● shell echo").await;
    chat.pane
        .wait_until("the command to start", |_| {
            !common::processes_with(&mark).is_empty()
        })
        .await;
    chat.pane.press("C-c");
    chat.pane.press("C-c");
    assert_eq!(chat.pane.wait_for_exit().await, 0);
    assert_eq!(
        common::processes_with_after_kill(&mark).await,
        [],
        "the command still runs"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ctrl_d_at_the_prompt_exits_cleanly() {
    require_tmux!();
    let chat = start_chat(Vec::new(), &[]).await;
    chat.pane.press("C-d");
    assert_eq!(chat.pane.wait_for_exit().await, 0);
}

/// A command padded so that its tail lies past the terminal's edge. When the sandbox
/// refuses its tail, the question to run it again without the sandbox is written
/// out whole, so the user sees what would run before saying yes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_rerun_question_shows_the_whole_command_however_long() {
    require_tmux!();
    let outside = tempfile::tempdir().unwrap();
    let command = format!(
        "echo tests pass{}; echo x > {}/HIDDEN-TAIL",
        " ".repeat(200),
        outside.path().display()
    );
    let chat = start_chat_with(
        vec![
            message(&[tool_use("t1", "shell", json!({ "command": command }))]),
            message(&[text("Done.")]),
        ],
        &[],
        &["--approval", "ask"],
    )
    .await;
    chat.pane.enter("run the tests");
    chat.pane.wait_for("? allow shell: run").await;
    chat.pane.enter("y");
    chat.pane.wait_for("RUN WITHOUT THE SANDBOX").await;
    // Only the rerun question says this, and its end is past the row's edge.
    let screen = chat.pane.wait_for("HIDDEN-TAIL` again without the sandbox").await;
    assert!(screen.contains("Read-only file system"), "{screen}");
    chat.pane.enter("n");
    chat.pane.wait_for("Done.").await;
    assert!(!outside.path().join("HIDDEN-TAIL").exists());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn in_ask_mode_a_typed_line_answers_the_approval_question() {
    require_tmux!();
    let write =
        |id: &str, file: &str| tool_use(id, "write_file", json!({"file_path": file, "content": "x\n"}));
    let chat = start_chat_with(
        vec![
            message(&[write("t1", "a.txt")]),
            message(&[write("t2", "b.txt")]),
            message(&[write("t3", "c.txt")]),
            message(&[text("Done writing.")]),
        ],
        &[],
        &["--approval", "ask"],
    )
    .await;
    chat.pane.enter("write the files");
    chat.pane.wait_for("? allow write_file: write a.txt?").await;
    chat.pane.enter("perhaps");
    chat.pane.wait_for("answer y, a or n").await;
    chat.pane.enter("n not now");
    chat.pane.wait_for("? allow write_file: write b.txt?").await;
    chat.pane.enter("a");
    chat.pane.wait_for("Done writing.").await;
    let screen = chat.pane.wait_for_prompt().await;
    assert!(
        screen.contains("? write_file: write a.txt → denied: not now"),
        "{screen}"
    );
    assert!(
        screen.contains("? write_file: write b.txt → allowed always"),
        "{screen}"
    );
    // "always" covers the third call: it was not asked about.
    assert!(!screen.contains("write c.txt →"), "{screen}");
    let work = chat.work.path();
    assert!(!work.join("a.txt").exists());
    assert!(work.join("b.txt").is_file() && work.join("c.txt").is_file());
    let refused = &chat.server.requests()[1].tool_results()[0];
    assert_eq!(refused["is_error"], true);
    assert!(
        refused["content"].as_str().unwrap().contains("not now"),
        "{refused}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn steering_typed_during_the_final_answer_becomes_the_next_input() {
    require_tmux!();
    let chat = start_chat(
        vec![
            slow(
                message(&[text("A final answer without tools, streamed slowly.")]),
                600,
            ),
            message(&[text("Handled the late remark.")]),
        ],
        &[],
    )
    .await;
    chat.pane.enter("answer me");
    chat.pane.wait_for("A final").await;
    chat.pane.enter("one more thing");
    chat.pane.wait_for("↳ steering: one more thing").await;
    chat.pane.wait_for("steering sent as the next input").await;
    chat.pane.wait_for("Handled the late remark.").await;
    let requests = chat.server.requests();
    assert_eq!(requests.len(), 2);
    assert_eq!(
        conversation(&requests[1].json()),
        vec![
            "answer me",
            "A final answer without tools, streamed slowly.",
            "one more thing"
        ]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_chat_is_saved_and_resume_continues_it_with_its_history_and_model() {
    require_tmux!();
    let state = tempfile::tempdir().unwrap();
    let state_dir = state.path().display().to_string();
    let chat = start_chat(
        vec![message(&[text("Hello answer.")])],
        &[("AGENT_HOST_STATE_DIR", &state_dir)],
    )
    .await;
    let screen = chat.pane.capture(false);
    assert!(
        screen.contains("(come back with: agent-host chat --resume "),
        "{screen}"
    );
    chat.pane.enter("hello");
    chat.pane.wait_for("Hello answer.").await;
    chat.pane.wait_for_prompt().await;
    chat.pane.enter("/model claude-opus-4-1");
    chat.pane.wait_for("model: claude-opus-4-1").await;
    chat.pane.enter("/quit");
    assert_eq!(chat.pane.wait_for_exit().await, 0);

    let output = common::agent_host()
        .env("AGENT_HOST_STATE_DIR", state.path())
        .args(["sessions", "--json", "--all"])
        .output()
        .await
        .unwrap();
    assert!(output.status.success(), "{}", common::stderr(&output));
    let sessions: Vec<Value> = serde_json::from_str(&common::stdout(&output)).unwrap();
    assert_eq!(sessions.len(), 1, "{sessions:?}");
    assert_eq!(sessions[0]["first_input"], "hello");
    assert_eq!(sessions[0]["model"], "claude-opus-4-1");
    let id = sessions[0]["id"].as_str().unwrap();
    assert!(screen.contains(&format!("session {}…", &id[..8])), "{screen}");

    let next = ScriptedServer::start(Script {
        replies: vec![message(&[text("Next answer.")])],
        require_api_key: None,
    })
    .await
    .unwrap();
    let output = common::agent_host()
        .env("AGENT_HOST_STATE_DIR", state.path())
        .env("ANTHROPIC_BASE_URL", next.base_url())
        .env("ANTHROPIC_API_KEY", "test-key")
        .args(["resume", id, "next"])
        .output()
        .await
        .unwrap();
    assert!(output.status.success(), "{}", common::stderr(&output));
    let first = next.requests()[0].json();
    assert_eq!(conversation(&first), vec!["hello", "Hello answer.", "next"]);
    assert_eq!(first["model"], "claude-opus-4-1");
}
