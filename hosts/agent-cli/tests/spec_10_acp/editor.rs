//! The editor as the session's environment (its unsaved buffers read, its writes made by it;
//! what agent-host refuses before the editor is asked is in [`super::editor_attacks`]),
//! `session/load` replaying a saved session, an MCP server the editor passes in
//! `session/new`, a prompt's image, and commands in the editor's terminals.

use super::{client, client_with_state, last_results, updates_of};
use scripted_llm::ScriptedServer;
use scripted_llm::anthropic::{message, text, tool_use};
use serde_json::{Value, json};

pub(super) fn strings(list: &Value) -> Vec<String> {
    list.as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap().to_string())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_model_reads_the_editor_s_unsaved_buffer_and_its_writes_go_to_the_editor() {
    let work = tempfile::tempdir().unwrap();
    std::fs::write(work.path().join("hello.py"), "print('disk')\n").unwrap();
    let llm = ScriptedServer::replying(vec![
        message(&[tool_use("t1", "read_file", json!({"file_path": "hello.py"}))]),
        message(&[tool_use(
            "t2",
            "edit_file",
            json!({"file_path": "hello.py", "old_string": "print('buffer')", "new_string": "print('edited')"}),
        )]),
        message(&[tool_use(
            "t3",
            "write_file",
            json!({"file_path": "docs/notes.md", "content": "# Notes\n"}),
        )]),
        message(&[text("Edited.")]),
    ])
    .await;
    let seen = client(
        work.path(),
        &llm,
        &["edit hello.py", "--buffer", "hello.py=print('buffer')\n"],
        &["--approval", "auto"],
    )
    .await;
    assert_eq!(seen["stop_reason"], "end_turn", "{seen}");
    let hello = work.path().join("hello.py").display().to_string();
    let notes = work.path().join("docs/notes.md").display().to_string();
    // The read returned the editor's buffer, not the disk's text.
    let read = &common_result(&llm, "t1");
    assert!(
        read.contains("print('buffer')") && !read.contains("disk"),
        "{read}"
    );
    assert!(strings(&seen["reads"]).contains(&hello), "{seen}");
    // Both writes went to the editor, none to the disk.
    assert_eq!(
        seen["writes"],
        json!([
            {"path": hello, "content": "print('edited')\n"},
            {"path": notes, "content": "# Notes\n"},
        ]),
        "{seen}"
    );
    assert_eq!(
        std::fs::read_to_string(work.path().join("hello.py")).unwrap(),
        "print('disk')\n"
    );
    assert!(!work.path().join("docs/notes.md").exists());
    // The edit is shown as a diff of the buffer.
    let diff = updates_of(&seen, "tool_call_update")
        .into_iter()
        .find(|u| u["toolCallId"] == "t2" && u["status"] == "completed")
        .map(|u| u["content"][0].clone())
        .unwrap();
    assert_eq!(diff["type"], "diff", "{seen}");
    assert_eq!(diff["oldText"], "print('buffer')\n");
    assert_eq!(diff["newText"], "print('edited')\n");
}

/// The tool result the model got for `id`, in whichever request.
pub(super) fn common_result(llm: &ScriptedServer, id: &str) -> String {
    llm.requests()
        .iter()
        .flat_map(|r| super::common::last_tool_results(std::slice::from_ref(r)))
        .find(|(call, _, _)| call == id)
        .map(|(_, _, text)| text)
        .unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn session_load_replays_a_saved_session_and_it_goes_on() {
    let work = tempfile::tempdir().unwrap();
    let state = tempfile::tempdir().unwrap();
    let llm = ScriptedServer::replying(vec![
        message(&[tool_use("t1", "shell", json!({"command": "echo kiwi-was-said"}))]),
        message(&[text("Noted: kiwi.")]),
        message(&[text("The word was kiwi.")]),
    ])
    .await;
    let auto = ["--approval", "auto"];
    let first = client_with_state(
        state.path(),
        work.path(),
        &llm,
        &["remember the word kiwi"],
        &auto,
    )
    .await;
    assert_eq!(first["stop_reason"], "end_turn", "{first}");
    let id = first["session_id"].as_str().unwrap().to_string();

    let second = client_with_state(
        state.path(),
        work.path(),
        &llm,
        &["which word?", "--load", &id],
        &auto,
    )
    .await;
    assert_eq!(second["stop_reason"], "end_turn", "{second}");
    assert_eq!(second["session_id"], id.as_str());
    // The conversation so far came back as updates before the load's answer.
    let replayed = second["loaded_updates"].as_array().unwrap();
    let kinds: Vec<&str> = replayed
        .iter()
        .map(|u| u["sessionUpdate"].as_str().unwrap())
        .collect();
    assert_eq!(
        kinds,
        [
            "user_message_chunk",
            "tool_call",
            "tool_call_update",
            "agent_message_chunk",
            "available_commands_update"
        ],
        "{second}"
    );
    assert_eq!(replayed[0]["content"]["text"], "remember the word kiwi");
    assert_eq!(replayed[1]["title"], "shell echo kiwi-was-said");
    assert_eq!(replayed[2]["status"], "completed");
    assert!(
        replayed[2]["content"][0]["content"]["text"]
            .as_str()
            .unwrap()
            .contains("kiwi-was-said")
    );
    assert_eq!(replayed[3]["content"]["text"], "Noted: kiwi.");
    // The model got the earlier conversation with the new input.
    let last = llm.requests().last().unwrap().json().to_string();
    assert!(
        last.contains("remember the word kiwi") && last.contains("which word?"),
        "{last}"
    );

    // A session that was never saved is named as not found.
    let missing = client_with_state(
        state.path(),
        work.path(),
        &llm,
        &["x", "--load", "no-such-session", "--expect-error"],
        &auto,
    )
    .await;
    let error = missing["error"].to_string();
    assert!(error.contains("no-such-session"), "{missing}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_model_calls_an_mcp_server_the_editor_passed() {
    let work = tempfile::tempdir().unwrap();
    let llm = ScriptedServer::replying(vec![
        message(&[tool_use(
            "t1",
            "editor_py__echo",
            json!({"text": "from-the-editor"}),
        )]),
        message(&[text("Echoed.")]),
    ])
    .await;
    let server = json!({
        "name": "editor py",
        "command": agent_test_support::paths::mcp_python(),
        "args": [agent_test_support::paths::mcp_server("py_server.py")],
    })
    .to_string();
    let seen = client(
        work.path(),
        &llm,
        &["echo", "--mcp", &server],
        &["--approval", "auto"],
    )
    .await;
    assert_eq!(seen["stop_reason"], "end_turn", "{seen}");
    let offered = llm.requests()[0].json()["tools"].clone();
    assert!(
        offered
            .as_array()
            .unwrap()
            .iter()
            .any(|t| t["name"] == "editor_py__echo"),
        "{offered}"
    );
    assert_eq!(last_results(&llm), "py:from-the-editor");
}

/// A 1×1 PNG.
const PNG: [u8; 69] = [
    137, 80, 78, 71, 13, 10, 26, 10, 0, 0, 0, 13, 73, 72, 68, 82, 0, 0, 0, 1, 0, 0, 0, 1, 8, 2, 0, 0, 0, 144,
    119, 83, 222, 0, 0, 0, 12, 73, 68, 65, 84, 120, 156, 99, 248, 207, 192, 0, 0, 3, 1, 1, 0, 201, 254, 146,
    239, 0, 0, 0, 0, 73, 69, 78, 68, 174, 66, 96, 130,
];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_prompt_s_image_is_kept_for_the_model_to_open() {
    let work = tempfile::tempdir().unwrap();
    let picture = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(picture.path(), PNG).unwrap();
    let llm = ScriptedServer::replying(vec![message(&[text("A green pixel.")])]).await;
    let seen = client(
        work.path(),
        &llm,
        &["what is this?", "--image", &picture.path().display().to_string()],
        &["--approval", "auto"],
    )
    .await;
    assert_eq!(seen["stop_reason"], "end_turn", "{seen}");
    assert_eq!(
        seen["agent_capabilities"]["promptCapabilities"]["image"], true,
        "{seen}"
    );
    let request = llm.requests()[0].json().to_string();
    assert!(
        request.contains("The user attached an image (image/png, 69 bytes), saved as ")
            && request.contains("open it with read_file to see it"),
        "{request}"
    );
}

/// With `--editor-terminals` (and a client that offers terminals) a command runs in the
/// editor's terminal, which its call shows, its title saying it is outside the sandbox; the
/// model gets its output and exit code. Without the flag the client's terminals go unused.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn commands_run_in_the_editor_s_terminals_only_when_the_user_opts_in() {
    let work = tempfile::tempdir().unwrap();
    let command = "echo in-a-terminal; pwd; exit 3";
    let llm = ScriptedServer::replying(vec![
        message(&[tool_use("t1", "shell", json!({"command": command}))]),
        message(&[text("Ran it.")]),
        message(&[tool_use("t2", "shell", json!({"command": command}))]),
        message(&[text("Ran it here.")]),
        message(&[tool_use("t3", "shell", json!({"command": command}))]),
        message(&[text("Asked first.")]),
    ])
    .await;
    let seen = client(
        work.path(),
        &llm,
        &["run it", "--terminals"],
        &["--approval", "auto", "--editor-terminals"],
    )
    .await;
    assert_eq!(seen["stop_reason"], "end_turn", "{seen}");
    let created = seen["terminals"].as_array().unwrap();
    assert_eq!(created.len(), 1, "{seen}");
    assert_eq!(
        created[0]["args"],
        json!(["-c", format!("exec </dev/null\n{command}")]),
        "{seen}"
    );
    let shown = updates_of(&seen, "tool_call_update")
        .into_iter()
        .find(|u| {
            u["title"]
                .as_str()
                .is_some_and(|t| t.contains("outside agent-host's sandbox"))
        })
        .unwrap_or_else(|| panic!("no call says it runs outside the sandbox: {seen}"));
    assert_eq!(shown["content"][0]["type"], "terminal", "{seen}");
    let result = last_results(&llm);
    let folder = std::fs::canonicalize(work.path()).unwrap().display().to_string();
    assert!(
        result.contains("in-a-terminal") && result.contains(&folder),
        "{result}"
    );
    assert!(result.contains("Exit code: 3"), "{result}");

    let seen = client(
        work.path(),
        &llm,
        &["run it", "--terminals"],
        &["--approval", "auto"],
    )
    .await;
    assert_eq!(seen["terminals"], json!([]), "{seen}");
    assert!(last_results(&llm).contains("in-a-terminal"));

    // In ask mode the question says where the command would run, before it runs.
    let seen = client(
        work.path(),
        &llm,
        &["run it", "--terminals", "--option", "allow_once"],
        &["--approval", "ask", "--editor-terminals"],
    )
    .await;
    let asked = seen["permissions"][0]["tool_call"]["title"]
        .as_str()
        .unwrap_or_default();
    assert!(
        asked.starts_with("In the editor's terminal, OUTSIDE agent-host's sandbox"),
        "{seen}"
    );
    let started = updates_of(&seen, "tool_call")[0]["title"]
        .as_str()
        .unwrap_or_default();
    assert!(started.ends_with("outside agent-host's sandbox)"), "{seen}");
    assert_eq!(seen["terminals"].as_array().unwrap().len(), 1, "{seen}");
}
