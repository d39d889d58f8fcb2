//! The chat's input and what surrounds it, in a real terminal (tmux) with the real binary:
//! pastes that keep their line breaks, a history that outlives the chat, `@file`, `!command`,
//! output folded to its head and tail with Ctrl-O, approvals that show the change first,
//! the status line, `chat --continue`, and a bare `agent-host` opening the chat.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests may panic

#[path = "tmux/chat.rs"]
mod chat;
mod common;
mod tmux;

use chat::{Chat, conversation, require_tmux, start_chat, start_chat_in, start_chat_with};
use scripted_llm::anthropic::{message, text, tool_use};
use serde_json::{Value, json};

/// The text of the last user turn of a request.
fn last_user_text(request: &Value) -> String {
    let messages = request["messages"].as_array().unwrap();
    let user = messages.iter().rev().find(|m| m["role"] == "user").unwrap();
    match &user["content"] {
        Value::String(text) => text.clone(),
        blocks => blocks
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|b| b["text"].as_str())
            .collect::<Vec<_>>()
            .join("\n"),
    }
}

/// A chat saved under `state` that sends `input`, gets `reply` and quits; the chat (its
/// workspace, its pane with the exit on screen) is returned.
async fn one_input_then_quit(state: &str, input: &str, reply: &str) -> Chat {
    let chat = start_chat(vec![message(&[text(reply)])], &[("AGENT_HOST_STATE_DIR", state)]).await;
    chat.pane.enter(input);
    chat.pane.wait_for(reply).await;
    chat.pane.wait_for_prompt().await;
    chat.pane.enter("/quit");
    assert_eq!(chat.pane.wait_for_exit().await, 0);
    chat
}

/// The only session folder under `state`.
fn session_dir(state: &std::path::Path) -> std::path::PathBuf {
    let sessions: Vec<_> = std::fs::read_dir(state.join("sessions"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(sessions.len(), 1, "{sessions:?}");
    sessions[0].clone()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bracketed_multi_line_paste_keeps_its_line_breaks() {
    require_tmux!();
    let state = tempfile::tempdir().unwrap();
    let state_dir = state.path().display().to_string();
    let chat = start_chat(
        vec![message(&[text("Two lines received.")])],
        &[("AGENT_HOST_STATE_DIR", &state_dir)],
    )
    .await;
    chat.pane.paste("first line\nsecond line");
    chat.pane
        .wait_until("the pasted lines", |s| s.contains("second line"))
        .await;
    chat.pane.press("Enter");
    chat.pane.wait_for("Two lines received.").await;
    let request = chat.server.requests()[0].json();
    assert_eq!(last_user_text(&request), "first line\nsecond line");
    let history = std::fs::read_to_string(session_dir(state.path()).join("history.jsonl")).unwrap();
    assert!(history.contains(r#""first line\nsecond line""#), "{history}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_long_paste_is_shown_collapsed_and_sent_whole() {
    require_tmux!();
    let chat = start_chat(vec![message(&[text("Got it all.")])], &[]).await;
    let pasted: Vec<String> = (1..=120).map(|i| format!("row {i}")).collect();
    chat.pane.type_text("look at this: ");
    chat.pane.paste(&pasted.join("\n"));
    chat.pane.wait_for("look at this: [pasted 120 lines]").await;
    chat.pane.press("Enter");
    chat.pane.wait_for("Got it all.").await;
    let sent = last_user_text(&chat.server.requests()[0].json());
    assert_eq!(sent, format!("look at this: {}", pasted.join("\n")));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ctrl_r_in_a_second_chat_finds_the_first_chats_input() {
    require_tmux!();
    let state = tempfile::tempdir().unwrap();
    let state_dir = state.path().display().to_string();
    let env = [("AGENT_HOST_STATE_DIR", state_dir.as_str())];
    one_input_then_quit(&state_dir, "remember the walrus", "Noted.").await;

    let second = start_chat(vec![message(&[text("Walrus again.")])], &env).await;
    second.pane.press("C-r");
    second.pane.type_text("walr");
    second
        .pane
        .wait_until("the search's match", |s| {
            tmux::prompt_line(s).contains("(search: walr) remember the walrus")
        })
        .await;
    second.pane.press("Enter");
    second.pane.wait_for("Walrus again.").await;
    let sent = last_user_text(&second.server.requests()[0].json());
    assert_eq!(sent, "remember the walrus");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn at_file_completes_with_tab_and_attaches_the_files_text() {
    require_tmux!();
    let chat = start_chat(vec![message(&[text("It says 42.")])], &[]).await;
    std::fs::create_dir(chat.work.path().join("docs")).unwrap();
    std::fs::write(chat.work.path().join("docs/notes.txt"), "the number is 42\n").unwrap();
    chat.pane.type_text("what does @dnot");
    chat.pane.press("Tab");
    chat.pane
        .wait_until("the completed path", |s| {
            tmux::prompt_line(s).ends_with("what does @docs/notes.txt")
        })
        .await;
    chat.pane.type_text("say?");
    chat.pane.press("Enter");
    chat.pane.wait_for("It says 42.").await;
    let screen = chat.pane.capture(false);
    assert!(
        screen.contains("@ attached docs/notes.txt (17 bytes)"),
        "{screen}"
    );
    let sent = last_user_text(&chat.server.requests()[0].json());
    assert!(
        sent.starts_with("what does @docs/notes.txt say?")
            && sent.contains("<file path=\"docs/notes.txt\">\nthe number is 42\n"),
        "{sent}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bang_command_runs_in_the_sandbox_and_goes_with_the_next_input() {
    require_tmux!();
    let chat = start_chat(vec![message(&[text("I see the listing.")])], &[]).await;
    std::fs::write(chat.work.path().join("marker.txt"), "").unwrap();
    // The sandbox keeps the command's writes inside the workspace.
    chat.pane
        .enter("!ls; touch $HOME/outside 2>&1 || echo write refused");
    chat.pane
        .wait_for("(the output goes to the model with your next input)")
        .await;
    let screen = chat.pane.wait_for_prompt().await;
    assert!(screen.contains("  marker.txt"), "{screen}");
    assert!(screen.contains("write refused"), "{screen}");
    chat.pane.enter("what is here?");
    chat.pane.wait_for("I see the listing.").await;
    let sent = last_user_text(&chat.server.requests()[0].json());
    assert!(sent.starts_with("I ran `ls; touch"), "{sent}");
    assert!(
        sent.contains("marker.txt") && sent.ends_with("what is here?"),
        "{sent}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_long_output_shows_its_tail_and_ctrl_o_shows_all_of_it() {
    require_tmux!();
    let chat = start_chat(
        vec![
            message(&[tool_use("t1", "shell", json!({"command": "seq 1 200"}))]),
            message(&[text("Counted.")]),
        ],
        &[("PAGER", "cat")],
    )
    .await;
    chat.pane.enter("count");
    chat.pane.wait_for("Counted.").await;
    let screen = chat.pane.wait_for_prompt().await;
    assert!(screen.contains("  1\n  2\n  … "), "{screen}");
    assert!(
        screen.contains("more lines (Ctrl-O shows all)\n  198\n  199\n  200"),
        "{screen}"
    );
    assert!(!screen.lines().any(|l| l == "  100"), "{screen}");
    chat.pane.press("C-o");
    let screen = chat
        .pane
        .wait_until("the whole output", |s| s.lines().any(|l| l == "100"))
        .await;
    assert!(screen.contains("shell seq 1 200"), "{screen}");
    chat.pane.wait_for_prompt().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_approval_shows_the_diff_before_the_question_and_stops_the_clock() {
    require_tmux!();
    let chat = start_chat_with(
        vec![
            message(&[tool_use(
                "t1",
                "edit_file",
                json!({"file_path": "app.py", "old_string": "print('old')", "new_string": "print('new')"}),
            )]),
            message(&[text("Written.")]),
        ],
        &[],
        &["--approval", "ask"],
    )
    .await;
    std::fs::write(chat.work.path().join("app.py"), "print('old')\n").unwrap();
    chat.pane.enter("rewrite app.py");
    let screen = chat.pane.wait_for("? allow edit_file").await;
    let diff = screen.find("- print('old')").expect("the removed line");
    let added = screen.find("+ print('new')").expect("the added line");
    let question = screen.rfind("? allow edit_file").unwrap();
    assert!(diff < question && added < question, "{screen}");
    assert_eq!(
        std::fs::read_to_string(chat.work.path().join("app.py")).unwrap(),
        "print('old')\n"
    );
    chat.pane.wait_for("waiting for your answer").await;
    chat.pane.enter("y");
    let screen = chat.pane.wait_for("Written.").await;
    assert_eq!(
        std::fs::read_to_string(chat.work.path().join("app.py")).unwrap(),
        "print('new')\n",
        "{screen}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_status_line_shows_the_modes_and_the_context_share_grows() {
    require_tmux!();
    let chat = start_chat(vec![message(&[text("Hello answer.")])], &[]).await;
    let screen = chat.pane.capture(false);
    let status = tmux::last_line(&screen);
    assert!(
        status.starts_with("claude-sonnet-4-5 · approval auto · sandbox workspace-write")
            && status.ends_with("context 0%"),
        "{status}"
    );
    chat.pane.enter("hello");
    chat.pane.wait_for("Hello answer.").await;
    let screen = chat.pane.wait_for_prompt().await;
    let status = tmux::last_line(&screen);
    assert!(
        status.contains("context 1%") && status.contains("tokens · $"),
        "{status}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn chat_continue_shows_the_earlier_turns_and_continues_the_same_session() {
    require_tmux!();
    let state = tempfile::tempdir().unwrap();
    let state_dir = state.path().display().to_string();
    let env = [("AGENT_HOST_STATE_DIR", state_dir.as_str())];
    let first = one_input_then_quit(&state_dir, "hello", "Hello answer.").await;
    let screen = first.pane.capture(false);
    assert!(
        screen.contains("come back to this chat with: agent-host chat --resume "),
        "{screen}"
    );
    let Chat { work, .. } = first;

    let second = start_chat_in(
        work,
        vec![message(&[text("Next answer.")])],
        &env,
        &["--continue"],
    )
    .await;
    let screen = second.pane.capture(false);
    for expected in [
        "> hello",
        "Hello answer.",
        "(the conversation continues from here)",
    ] {
        assert!(
            screen.contains(expected),
            "{expected:?} is missing from:\n{screen}"
        );
    }
    second.pane.enter("next");
    second.pane.wait_for("Next answer.").await;
    let request = second.server.requests()[0].json();
    assert_eq!(conversation(&request), vec!["hello", "Hello answer.", "next"]);
    let sessions = std::fs::read_dir(state.path().join("sessions")).unwrap().count();
    assert_eq!(sessions, 1, "--continue opened a new session");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bare_agent_host_on_a_terminal_opens_the_chat() {
    require_tmux!();
    let home = tempfile::tempdir().unwrap();
    let env = [
        ("HOME", home.path().display().to_string()),
        ("AGENT_CORE_COMPONENT", common::component().display().to_string()),
        ("AGENT_HOST_CACHE_DIR", common::cache_dir().display().to_string()),
        ("ANTHROPIC_BASE_URL", "http://127.0.0.1:9".to_string()),
        ("ANTHROPIC_API_KEY", "test-key".to_string()),
    ];
    // In a folder of its own: the chat's workspace is where it starts.
    let pane = tmux::ChatPane::start_command(&env, &[], r#"sh -c 'cd "$HOME" && exec "$0" "$@"'"#);
    let screen = pane.wait_for_prompt().await;
    assert!(screen.contains("agent-host chat · anthropic"), "{screen}");
    pane.press("C-d");
    assert_eq!(pane.wait_for_exit().await, 0);
    // Not on a terminal, it prints the help and says it was used wrong.
    let output = common::agent_host().output().await.unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(
        common::stdout(&output).contains("Usage: agent-host"),
        "{}",
        common::stdout(&output)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn markdown_is_rendered_a_fence_highlighted_and_no_color_gives_plain_text() {
    require_tmux!();
    let answer = "## Summary\n\nIt is **done**:\n\n```rust\nfn main() { let answer = 42; }\n```\n";
    for no_color in [false, true] {
        let env: &[(&str, &str)] = if no_color { &[("NO_COLOR", "1")] } else { &[] };
        let chat = start_chat(vec![message(&[text(answer)])], env).await;
        chat.pane.enter("summarise");
        chat.pane.wait_for("fn main() { let answer = 42; }").await;
        let screen = chat.pane.wait_for_prompt().await;
        // Rendered, not raw: no markers of headings, strong text or fences.
        assert!(
            screen.contains("\nSummary\n") && screen.contains("It is done:"),
            "{screen}"
        );
        assert!(!screen.contains("```") && !screen.contains("**"), "{screen}");
        let painted = chat.pane.capture(true);
        let code = painted.lines().find(|l| l.contains("main")).unwrap();
        if no_color {
            assert!(!painted.contains('\u{1b}'), "{painted:?}");
        } else {
            // Highlighted: the keyword and the number are painted apart from the rest.
            assert!(code.matches('\u{1b}').count() >= 3, "{code:?}");
        }
    }
}

/// A repository's link must not hide where an approved write lands: the preview names the
/// target, in red inside `.git` (whose config runs programs outside the sandbox).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_approval_names_the_target_of_a_link_the_write_goes_through() {
    require_tmux!();
    let chat = start_chat_with(
        vec![
            message(&[tool_use(
                "t1",
                "edit_file",
                json!({"file_path": "notes.md", "old_string": "[core]", "new_string": "[core]\n\tfsmonitor = touch pwned"}),
            )]),
            message(&[text("Edited.")]),
        ],
        &[],
        &["--approval", "ask"],
    )
    .await;
    std::fs::create_dir(chat.work.path().join(".git")).unwrap();
    std::fs::write(chat.work.path().join(".git/config"), "[core]\n").unwrap();
    std::os::unix::fs::symlink(".git/config", chat.work.path().join("notes.md")).unwrap();
    chat.pane.enter("tidy the notes");
    let screen = chat.pane.wait_for("? allow edit_file").await;
    let warning = screen
        .find("! notes.md is a link to .git/config")
        .unwrap_or_else(|| panic!("no warning in:\n{screen}"));
    assert!(warning < screen.rfind("? allow edit_file").unwrap(), "{screen}");
    let painted = chat.pane.capture(true);
    let line = painted.lines().find(|l| l.contains("is a link to")).unwrap();
    assert!(chat::painted(line, "red"), "{line:?}");
    chat.pane.enter("n");
    chat.pane.wait_for("Edited.").await;
    assert_eq!(
        std::fs::read_to_string(chat.work.path().join(".git/config")).unwrap(),
        "[core]\n"
    );
}

/// `/approval` changes the mode in the middle of the chat, in the same session: read-only
/// refuses a command, `ask` then asks about the next one, and the status line follows;
/// `/sandbox` says where commands may write, and `/mcp` lists the servers with their tools.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn approval_changes_mid_chat_and_sandbox_and_mcp_describe_the_session() {
    require_tmux!();
    let config = tempfile::tempdir().unwrap();
    let config_file = config.path().join("config.toml");
    std::fs::write(
        &config_file,
        format!(
            "[mcp_servers.py]\ncommand = {:?}\nargs = [{:?}]\n\n[mcp_servers.broken]\ncommand = \"/nonexistent/mcp-server\"\n",
            agent_test_support::paths::mcp_python().display().to_string(),
            agent_test_support::paths::mcp_server("py_server.py").display().to_string()
        ),
    )
    .unwrap();
    let config_arg = config_file.display().to_string();
    let chat = start_chat_with(
        vec![
            message(&[tool_use(
                "t1",
                "shell",
                json!({"command": "printf one > one.txt"}),
            )]),
            message(&[text("Refused, as read-only.")]),
            message(&[tool_use(
                "t2",
                "shell",
                json!({"command": "printf two > two.txt"}),
            )]),
            message(&[text("Made two.")]),
        ],
        &[],
        &["--approval", "read-only", "--config", &config_arg],
    )
    .await;
    chat.pane.enter("make one");
    chat.pane.wait_for("Refused, as read-only.").await;
    chat.pane.wait_for_prompt().await;
    assert!(!chat.work.path().join("one.txt").exists());

    chat.pane.enter("/approval ask");
    chat.pane.wait_for("approval: ask from the next call").await;
    let screen = chat.pane.wait_for_prompt().await;
    let status = tmux::last_line(&screen);
    assert!(status.contains("approval ask"), "{status}");
    chat.pane.enter("make two");
    chat.pane.wait_for("? allow shell").await;
    assert!(!chat.work.path().join("two.txt").exists());
    chat.pane.enter("y");
    chat.pane.wait_for("Made two.").await;
    chat.pane.wait_for_prompt().await;
    assert_eq!(
        std::fs::read_to_string(chat.work.path().join("two.txt")).unwrap(),
        "two"
    );
    // Leaving read-only started checkpoints: the input can be undone.
    chat.pane.enter("/undo");
    chat.pane.wait_for("removed").await;
    assert!(!chat.work.path().join("two.txt").exists());
    // One conversation throughout: the last request holds both inputs.
    let requests = chat.server.requests();
    let texts = conversation(&requests.last().unwrap().json()).join("\n");
    assert!(
        texts.contains("make one") && texts.contains("make two"),
        "{texts}"
    );

    chat.pane.enter("/sandbox");
    let screen = chat.pane.wait_for("network: off").await;
    assert!(
        screen.contains("sandbox: workspace-write") && screen.contains("commands may write in:"),
        "{screen}"
    );
    chat.pane.enter("/mcp");
    let screen = chat.pane.wait_for("py__echo").await;
    assert!(screen.contains("py: ready"), "{screen}");
    assert!(screen.contains("broken: failed"), "{screen}");
}
