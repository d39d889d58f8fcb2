//! Custom commands and skills end to end (issue 24): `agent-host run --command NAME` and
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

/// A workspace with a project command, and a user folder with one of its own (and one the
/// project's replaces).
fn workspace_and_user() -> (tempfile::TempDir, tempfile::TempDir) {
    let (work, user) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    write(
        &work.path().join(".agent/commands/review.md"),
        "---\ndescription: Review files\nargument-hint: FILES\n---\nReview $ARGUMENTS; start with $1.\n",
    );
    write(
        &user.path().join("commands/review.md"),
        "The user's review, replaced.",
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
