//! Custom commands and skills end to end: `agent-host run --command NAME` and
//! `/NAME` in chat send the command's prompt with its arguments; skills are listed in the
//! system prompt and the model loads one with `load_skill`.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests may panic

mod common;

use common::{agent_host, stderr, stdout};
use scripted_llm::anthropic::{message, text, tool_use};
use serde_json::json;
use std::path::Path;

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// The text blocks of the request's messages, in order.
fn texts(request: &serde_json::Value) -> Vec<String> {
    request["messages"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|m| m["content"].as_array().cloned().unwrap_or_default())
        .filter_map(|b| b["text"].as_str().map(str::to_string))
        .collect()
}

/// A workspace with a project command, and a user folder with one of its own.
fn workspace_and_user() -> (tempfile::TempDir, tempfile::TempDir) {
    let (work, user) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    write(
        &work.path().join(".agent/commands/review.md"),
        "---\ndescription: Review files\nargument-hint: FILES\n---\nReview $ARGUMENTS; start with $1.\n",
    );
    write(&user.path().join("commands/explain.md"), "Explain the code.");
    (work, user)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn run_command_sends_the_commands_prompt_with_its_arguments() {
    let (work, user) = workspace_and_user();
    let server = common::scripted_server(vec![
        message(&[text("Reviewed.")]),
        message(&[text("Explained.")]),
    ])
    .await;
    let run = |args: &[&str]| {
        let mut command = agent_host();
        command
            .arg("run")
            .args(args)
            .args(["--cwd", &work.path().display().to_string()])
            .env("ANTHROPIC_BASE_URL", server.base_url())
            .env("AGENT_HOST_CONFIG_DIR", user.path());
        command.output()
    };
    let output = run(&["--command", "review", "a.rs b.rs"]).await.unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
    let output = run(&["--command", "/explain", "main.rs"]).await.unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
    let requests = server.requests();
    assert_eq!(texts(&requests[0].json()), ["Review a.rs b.rs; start with a.rs."]);
    assert_eq!(
        texts(&requests[1].json()),
        ["Explain the code.\n\nArguments: main.rs"]
    );
    let output = run(&["--command", "deploy"]).await.unwrap();
    assert_eq!(output.status.code(), Some(2));
    let err = stderr(&output);
    assert!(
        err.contains("there is no custom command \"deploy\"") && err.contains("explain, review"),
        "{err}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_slash_command_in_chat_sends_the_prompt_and_help_lists_it() {
    let (work, user) = workspace_and_user();
    let server = common::scripted_server(vec![message(&[text("Reviewed in chat.")])]).await;
    let mut chat = agent_host();
    chat.args(["chat", "--cwd"])
        .arg(work.path())
        .env("ANTHROPIC_BASE_URL", server.base_url())
        .env("AGENT_HOST_CONFIG_DIR", user.path());
    let output = common::with_input(chat, b"/help\n/review lib.rs\n").await;
    assert!(output.status.success(), "{}", stderr(&output));
    let printed = stdout(&output);
    assert!(
        printed.contains("/review FILES") && printed.contains("Review files (project)"),
        "{printed}"
    );
    assert!(
        printed.contains("/explain") && printed.contains("(no description) (user)"),
        "{printed}"
    );
    assert!(
        printed.lines().any(|l| l.trim_start().starts_with("/explain")),
        "one line per command: {printed}"
    );
    assert!(printed.contains("Reviewed in chat."), "{printed}");
    let requests = server.requests();
    assert_eq!(texts(&requests[0].json()), ["Review lib.rs; start with lib.rs."]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn skills_are_listed_in_the_system_prompt_and_loaded_on_demand() {
    let (work, user) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    write(
        &work.path().join(".agent/skills/changelog/SKILL.md"),
        "---\nname: changelog\ndescription: Write a changelog entry in this project's style.\n---\n\
         Entries go under ## Unreleased, one line each, past tense.\n",
    );
    write(
        &work.path().join(".agent/skills/changelog/template.md"),
        "- Fixed: WHAT.\n",
    );
    write(
        &user.path().join("skills/commits/SKILL.md"),
        "---\nname: commits\ndescription: Write commit messages.\n---\nImperative mood.\n",
    );
    let server = common::scripted_server(vec![
        message(&[tool_use("s1", "load_skill", json!({"name": "changelog"}))]),
        message(&[tool_use(
            "s2",
            "load_skill",
            json!({"name": "changelog", "file": "template.md"}),
        )]),
        message(&[text("Done.")]),
    ])
    .await;
    let output = agent_host()
        .args([
            "run",
            "Add a changelog entry",
            "--cwd",
            &work.path().display().to_string(),
        ])
        .env("ANTHROPIC_BASE_URL", server.base_url())
        .env("AGENT_HOST_CONFIG_DIR", user.path())
        .output()
        .await
        .unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
    let requests = server.requests();
    let system = requests[0].json()["system"].to_string();
    assert!(
        system.contains("- changelog: Write a changelog entry in this project's style."),
        "{system}"
    );
    assert!(system.contains("- commits: Write commit messages."), "{system}");
    assert!(
        !system.contains("Entries go under"),
        "the body waits until it is loaded: {system}"
    );
    let offered = requests[0].json()["tools"].to_string();
    assert!(offered.contains("\"load_skill\""), "{offered}");
    let results = common::last_tool_results(&requests);
    let result = |id: &str| results.iter().find(|(i, _, _)| i == id).unwrap().2.clone();
    assert_eq!(
        result("s1"),
        "Entries go under ## Unreleased, one line each, past tense.\n\n[Files of this skill, loaded with load_skill and file: template.md]"
    );
    assert_eq!(result("s2"), "- Fixed: WHAT.\n");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_skill_cannot_lead_load_skill_into_a_denied_folder() {
    let work = tempfile::tempdir().unwrap();
    write(
        &work.path().join(".agent/skills/notes/SKILL.md"),
        "---\nname: notes\ndescription: Read the team's notes.\n---\nSee notes/keys.md.\n",
    );
    write(&work.path().join("private/keys.md"), "deploy-key-5150\n");
    // The repository commits a link from the skill's folder into the workspace's private/.
    std::os::unix::fs::symlink("../../../private", work.path().join(".agent/skills/notes/notes")).unwrap();
    let server = common::scripted_server(vec![
        message(&[tool_use(
            "s1",
            "load_skill",
            json!({"name": "notes", "file": "notes/keys.md"}),
        )]),
        message(&[text("Done.")]),
    ])
    .await;
    let private = work.path().join("private").display().to_string();
    let output = agent_host()
        .args([
            "run",
            "Read the notes",
            "--cwd",
            &work.path().display().to_string(),
        ])
        .args(["--deny-dir", &private])
        .env("ANTHROPIC_BASE_URL", server.base_url())
        .env("AGENT_HOST_CONFIG_DIR", work.path().join("user-config"))
        .output()
        .await
        .unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
    let (_, is_error, text) = common::last_tool_results(&server.requests())[0].clone();
    assert!(is_error, "{text}");
    assert!(
        text.contains("which this session may not read (--deny-dir)"),
        "{text}"
    );
    assert!(!text.contains("deploy-key-5150"), "{text}");
}

/// A project whose hooks log every event they get to `hooks.log` and whose before_tool hook
/// refuses shell commands that delete.
fn hooked_workspace() -> tempfile::TempDir {
    let work = tempfile::tempdir().unwrap();
    let log = r#"read -r event; printf '%s\n' "$event" >> hooks.log"#;
    let guard = r#"read -r event; printf '%s\n' "$event" >> hooks.log; case "$event" in *'rm '*) echo 'deleting is not allowed here' >&2; exit 2;; esac"#;
    write(
        &work.path().join(".agent/config.toml"),
        &format!(
            "[[hooks.session_start]]\ncommand = [\"sh\", \"-c\", {log:?}]\n\
             [[hooks.before_tool]]\nmatcher = \"shell\"\ncommand = [\"sh\", \"-c\", {guard:?}]\n\
             [[hooks.after_tool]]\ncommand = [\"sh\", \"-c\", {log:?}]\n\
             [[hooks.stop]]\ncommand = [\"sh\", \"-c\", {log:?}]\n"
        ),
    );
    work
}

/// `run "Tidy up"` in `work`, next to a file `precious.txt` the model will try to delete.
async fn tidy_up(work: &Path, server: &scripted_llm::ScriptedServer) -> std::process::Output {
    std::fs::write(work.join("precious.txt"), "keep me").unwrap();
    agent_host()
        .args(["run", "Tidy up", "--approval", "auto"])
        .args(["--cwd", &work.display().to_string()])
        .env("ANTHROPIC_BASE_URL", server.base_url())
        .output()
        .await
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hooks_see_each_event_and_a_before_tool_hook_refuses_a_call() {
    let work = hooked_workspace();
    common::trust_project(work.path());
    let server = common::scripted_server(vec![
        message(&[
            tool_use("c1", "shell", json!({"command": "echo kept"})),
            tool_use("c2", "shell", json!({"command": "rm -f precious.txt"})),
        ]),
        message(&[text("Done.")]),
    ])
    .await;
    let output = tidy_up(work.path(), &server).await;
    assert!(
        output.status.success(),
        "{}\n{}",
        stdout(&output),
        stderr(&output)
    );
    assert!(
        work.path().join("precious.txt").exists(),
        "the refused command did not run"
    );
    let results = common::last_tool_results(&server.requests());
    assert!(!results[0].1 && results[0].2.starts_with("kept\n"), "{results:?}");
    assert_eq!(results[1].0, "c2");
    assert!(results[1].1, "{results:?}");
    assert!(
        results[1]
            .2
            .contains("a before_tool hook (sh) refused this call: deleting is not allowed here"),
        "{results:?}"
    );
    // Every hook got its event as one JSON line, in the order things happened.
    let log = std::fs::read_to_string(work.path().join("hooks.log")).unwrap();
    let events: Vec<serde_json::Value> = log.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let names: Vec<&str> = events
        .iter()
        .map(|e| e["hook_event_name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "session_start",
            "before_tool",
            "before_tool",
            "after_tool",
            "after_tool",
            "stop"
        ],
        "{log}"
    );
    assert_eq!(events[1]["tool_input"]["command"], "echo kept");
    assert_eq!(events[1]["tool_name"], "shell");
    assert!(
        events[3]["tool_output"].as_str().unwrap().starts_with("kept\n"),
        "{log}"
    );
    assert!(
        events[4]["tool_error"]
            .as_str()
            .unwrap()
            .contains("deleting is not allowed"),
        "{log}"
    );
    assert_eq!(events[5]["stop_reason"], "completed");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_untrusted_projects_hooks_do_not_run() {
    let work = hooked_workspace();
    let server = common::scripted_server(vec![
        message(&[tool_use("c1", "shell", json!({"command": "rm -f precious.txt"}))]),
        message(&[text("Done.")]),
    ])
    .await;
    let output = tidy_up(work.path(), &server).await;
    let err = stderr(&output);
    assert!(output.status.success(), "{err}");
    assert!(err.contains("[hooks]"), "the ignored hooks are named: {err}");
    assert!(!work.path().join("hooks.log").exists());
    assert!(
        !work.path().join("precious.txt").exists(),
        "no hook stood in the way"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn run_shows_the_models_plan() {
    let work = tempfile::tempdir().unwrap();
    let plan = json!({"plan": [
        {"step": "Read the parser", "status": "completed"},
        {"step": "Fix the escapes", "status": "in_progress"},
        {"step": "Run the tests", "status": "pending"}
    ]});
    let server = common::scripted_server(vec![
        message(&[tool_use("p1", "update_plan", plan)]),
        message(&[text("Done.")]),
    ])
    .await;
    let output = agent_host()
        .args([
            "run",
            "Fix the parser",
            "--cwd",
            &work.path().display().to_string(),
        ])
        .env("ANTHROPIC_BASE_URL", server.base_url())
        .output()
        .await
        .unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
    let shown = format!("{}{}", stdout(&output), stderr(&output));
    let expected = "[plan]\n  [x] Read the parser\n  [>] Fix the escapes\n  [ ] Run the tests\n";
    assert!(shown.contains(expected), "{shown}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn trusting_a_project_names_its_servers_the_variables_they_read_and_its_hooks() {
    let (work, user) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    write(
        &work.path().join(".agent/config.toml"),
        "[mcp_servers.docs]\ncommand = \"node\"\nargs = [\"docs.js\"]\nenv_vars = [\"ANTHROPIC_API_KEY\"]\n\
         [[hooks.before_tool]]\ncommand = [\"./guard.sh\", \"--strict\"]\n",
    );
    let output = agent_host()
        .args(["trust", &work.path().display().to_string()])
        .env("AGENT_HOST_CONFIG_DIR", user.path())
        .output()
        .await
        .unwrap();
    let out = stdout(&output);
    assert!(output.status.success(), "{out}{}", stderr(&output));
    assert!(
        out.contains("MCP server docs (runs node reading ANTHROPIC_API_KEY)"),
        "{out}"
    );
    assert!(out.contains("hooks (before_tool: ./guard.sh --strict)"), "{out}");
    // Trust pins the file, not the scripts it names, which commands can rewrite.
    assert!(
        out.contains("its hooks and MCP servers run in each session's command sandbox"),
        "{out}"
    );
}
