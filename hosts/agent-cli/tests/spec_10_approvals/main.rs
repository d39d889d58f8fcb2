//! Approvals: the `ask` mode through the library with a scripted prompt (once,
//! always per tool, always per command prefix but not for a later command that writes a
//! file through a redirection, a refusal's reason reaching the model),
//! dangerous commands asked about in every mode and even after "always", and `agent-host
//! run --approval ask` without a terminal refusing writes with a clear message. The offer
//! to run a command the sandbox refused again without it is in [`sandbox_rerun`].

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests may panic

#[path = "../common/mod.rs"]
mod common;
mod sandbox_rerun;

use agent_host::approval::{
    AlwaysScope, ApprovalAnswer, ApprovalMode, ApprovalPolicy, ApprovalPrompt, ApprovalQuestion,
};
use agent_host::config::AgentConfig;
use agent_host::config::session_config;
use agent_host::host_tools::HostTools;
use agent_host::protocol::StopReason;
use agent_host::{AgentRuntime, Endpoints, HttpTransport, LocalEnvironment};
use async_trait::async_trait;
use common::{agent_host, stderr, stdout};
use scripted_llm::anthropic::{message, text, tool_use};
use scripted_llm::{RecordedRequest, Reply, Script, ScriptedServer};
use serde_json::{Value, json};
use std::collections::VecDeque;
use std::path::Path;
use std::sync::{Arc, Mutex};

/// Answers from a list, recording every question.
#[derive(Default)]
struct ScriptedPrompt {
    answers: Mutex<VecDeque<ApprovalAnswer>>,
    asked: Mutex<Vec<ApprovalQuestion>>,
}

impl ScriptedPrompt {
    fn new(answers: Vec<ApprovalAnswer>) -> Arc<Self> {
        Arc::new(Self {
            answers: Mutex::new(answers.into()),
            asked: Mutex::default(),
        })
    }

    fn asked(&self) -> Vec<ApprovalQuestion> {
        self.asked.lock().unwrap().clone()
    }
}

#[async_trait]
impl ApprovalPrompt for ScriptedPrompt {
    async fn ask(&self, question: &ApprovalQuestion) -> ApprovalAnswer {
        self.asked.lock().unwrap().push(question.clone());
        self.answers
            .lock()
            .unwrap()
            .pop_front()
            .unwrap_or(ApprovalAnswer::Deny {
                reason: Some(format!("unexpected question: {}", question.summary)),
            })
    }
}

fn deny(reason: &str) -> ApprovalAnswer {
    ApprovalAnswer::Deny {
        reason: Some(reason.to_string()),
    }
}

/// A scripted server and a runtime approving with `policy`, offering `config`'s tools.
async fn start(
    replies: Vec<Reply>,
    policy: ApprovalPolicy,
    tools: Option<(&str, &Path)>,
) -> (ScriptedServer, AgentRuntime) {
    let server = ScriptedServer::start(Script {
        replies,
        require_api_key: None,
    })
    .await
    .unwrap();
    let url = server.base_url();
    let endpoints = Endpoints::from_lookup(move |name| (name == "ANTHROPIC_BASE_URL").then(|| url.clone()));
    let mut runtime = AgentRuntime::load(
        &common::component(),
        Some(&common::cache_dir()),
        HttpTransport::new(endpoints).unwrap(),
    )
    .unwrap();
    if let Some((config, work)) = tools {
        let config = AgentConfig::parse(config, &work.join(".agent/config.toml")).unwrap();
        let options = agent_host::environments::EnvOptions {
            cwd: Some(work.to_path_buf()),
            ..Default::default()
        };
        runtime.set_host_tools(HostTools::new(config.command_tools(&options).unwrap(), &[]).unwrap());
    }
    runtime.set_approval_policy(policy);
    (server, runtime)
}

/// One input to completion in a new session over `work`.
/// Runs `replies` in `work` in ask mode, `prompt` answering; the server and the questions.
async fn run_asking(
    replies: Vec<Reply>,
    prompt: &Arc<ScriptedPrompt>,
    work: &Path,
) -> (ScriptedServer, Vec<ApprovalQuestion>) {
    let policy = ApprovalPolicy::new(ApprovalMode::Ask).with_prompt(prompt.clone());
    let (server, runtime) = start(replies, policy, None).await;
    submit(&runtime, work).await;
    (server, prompt.asked())
}

async fn submit(runtime: &AgentRuntime, work: &Path) {
    submit_in(runtime, Arc::new(LocalEnvironment::new(work).unwrap())).await;
}

/// One input to completion in a new session over `env`.
async fn submit_in(runtime: &AgentRuntime, env: Arc<dyn agent_host::Environment>) {
    let (mut session, _events) = runtime
        .start_session(session_config("anthropic", "m"), env)
        .await
        .unwrap();
    let outcome = session.submit("do it").await.unwrap().unwrap();
    assert_eq!(outcome.stop_reason, StopReason::Completed);
}

/// Every tool result the model received, by call id, as (error?, text).
fn results(requests: &[RecordedRequest]) -> Vec<(String, bool, String)> {
    let last = requests.last().unwrap();
    last.tool_results()
        .iter()
        .map(|r| {
            (
                r["tool_use_id"].as_str().unwrap().to_string(),
                r["is_error"].as_bool().unwrap_or(false),
                match &r["content"] {
                    Value::String(text) => text.clone(),
                    other => other.to_string(),
                },
            )
        })
        .collect()
}

fn shell(id: &str, command: &str) -> Reply {
    message(&[tool_use(id, "shell", json!({"command": command}))])
}

fn write(id: &str, path: &str) -> Reply {
    message(&[tool_use(
        id,
        "write_file",
        json!({"file_path": path, "content": "x\n"}),
    )])
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ask_mode_asks_before_each_write_and_once_means_once() {
    let work = tempfile::tempdir().unwrap();
    std::fs::write(work.path().join("notes.txt"), "hello\n").unwrap();
    let prompt = ScriptedPrompt::new(vec![ApprovalAnswer::Once, ApprovalAnswer::Once]);
    let replies = vec![
        message(&[
            tool_use("r1", "read_file", json!({"file_path": "notes.txt"})),
            tool_use(
                "w1",
                "write_file",
                json!({"file_path": "a.txt", "content": "a\n"}),
            ),
        ]),
        write("w2", "b.txt"),
        message(&[text("done")]),
    ];
    let policy = ApprovalPolicy::new(ApprovalMode::Ask).with_prompt(prompt.clone());
    let (_server, runtime) = start(replies, policy, None).await;
    submit(&runtime, work.path()).await;
    let asked = prompt.asked();
    assert_eq!(asked.len(), 2, "reads are not asked about: {asked:?}");
    assert_eq!(asked[0].tool_name, "write_file");
    assert_eq!(asked[0].summary, "write a.txt");
    assert_eq!(asked[0].always, Some(AlwaysScope::Tool("write_file".into())));
    assert_eq!(asked[0].danger, None);
    assert_eq!(asked[1].summary, "write b.txt");
    assert!(work.path().join("a.txt").is_file() && work.path().join("b.txt").is_file());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn always_is_remembered_per_tool_for_the_session_only() {
    let work = tempfile::tempdir().unwrap();
    std::fs::write(work.path().join("f.txt"), "old\n").unwrap();
    let prompt = ScriptedPrompt::new(vec![
        ApprovalAnswer::Always,
        ApprovalAnswer::Once,
        ApprovalAnswer::Once,
    ]);
    let replies = vec![
        write("w1", "a.txt"),
        write("w2", "b.txt"),
        message(&[tool_use(
            "e1",
            "edit_file",
            json!({"file_path": "f.txt", "old_string": "old", "new_string": "new"}),
        )]),
        message(&[text("done")]),
        // The next session asks again.
        write("w3", "c.txt"),
        message(&[text("done")]),
    ];
    let policy = ApprovalPolicy::new(ApprovalMode::Ask).with_prompt(prompt.clone());
    let (_server, runtime) = start(replies, policy, None).await;
    submit(&runtime, work.path()).await;
    let tools: Vec<String> = prompt.asked().iter().map(|q| q.summary.clone()).collect();
    assert_eq!(
        tools,
        ["write a.txt", "call edit_file"],
        "always covers write_file only"
    );
    assert_eq!(
        std::fs::read_to_string(work.path().join("f.txt")).unwrap(),
        "new\n"
    );
    submit(&runtime, work.path()).await;
    assert_eq!(prompt.asked().len(), 3, "a new session has its own memory");
    assert!(work.path().join("c.txt").is_file());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn always_for_a_command_covers_its_prefix_and_a_refusal_reason_reaches_the_model() {
    let work = tempfile::tempdir().unwrap();
    let prompt = ScriptedPrompt::new(vec![
        ApprovalAnswer::Always,
        deny("not that one, say hello instead"),
        ApprovalAnswer::Deny { reason: None },
    ]);
    let replies = vec![
        shell("s1", "echo hello world"),
        shell("s2", "echo hello again 2>&1"),
        message(&[
            tool_use("s3", "shell", json!({"command": "echo goodbye"})),
            tool_use("s4", "shell", json!({"command": "echo hello && touch pwned"})),
        ]),
        message(&[text("done")]),
    ];
    let (server, asked) = run_asking(replies, &prompt, work.path()).await;
    let summaries: Vec<&str> = asked.iter().map(|q| q.summary.as_str()).collect();
    assert_eq!(
        summaries,
        [
            "run `echo hello world`",
            "run `echo goodbye`",
            "run `echo hello && touch pwned`"
        ],
        "`echo hello again 2>&1` is covered by `echo hello`; `touch pwned` is not"
    );
    assert_eq!(
        asked[0].always.as_ref().unwrap().to_string(),
        "commands `echo hello`"
    );
    let requests = server.requests();
    let second = results(&requests[..3]);
    assert!(second[1].2.starts_with("hello again"), "{second:?}");
    let last = results(&requests);
    let (_, error, goodbye) = &last[last.len() - 2];
    assert!(*error);
    assert_eq!(
        goodbye,
        "The user denied this shell call: the user said: not that one, say hello instead"
    );
    let (_, _, compound) = last.last().unwrap();
    assert!(
        compound.contains("declined it without giving a reason"),
        "{compound}"
    );
    assert!(!work.path().join("pwned").exists());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn always_for_ls_does_not_cover_a_later_ls_that_writes_a_file() {
    let work = tempfile::tempdir().unwrap();
    let prompt = ScriptedPrompt::new(vec![ApprovalAnswer::Always, deny("no files")]);
    let replies = vec![
        shell("s1", "ls -la"),
        shell("s2", "ls -a 2>&1"),
        shell("s3", "ls > out.txt"),
        message(&[text("done")]),
    ];
    let (server, asked) = run_asking(replies, &prompt, work.path()).await;
    let summaries: Vec<&str> = asked.iter().map(|q| q.summary.as_str()).collect();
    assert_eq!(
        summaries,
        ["run `ls -la`", "run `ls > out.txt`"],
        "`ls -a 2>&1` is covered by `ls`; a redirection that writes a file is not"
    );
    assert_eq!(
        asked[1].always.as_ref().unwrap().to_string(),
        "commands exactly `ls > out.txt`",
        "a command writing a file is offered as its exact line only"
    );
    let (_, error, denied) = results(&server.requests()).last().unwrap().clone();
    assert!(error && denied.ends_with("the user said: no files"), "{denied}");
    assert!(!work.path().join("out.txt").exists());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dangerous_commands_are_asked_about_in_auto_mode_and_even_after_always() {
    let work = tempfile::tempdir().unwrap();
    let prompt = ScriptedPrompt::new(vec![ApprovalAnswer::Always, deny("no reboots")]);
    // `echo reboot` is harmless but the command guard classifies it as dangerous.
    let replies = vec![
        message(&[
            tool_use("w1", "write_file", json!({"file_path": "a.txt", "content": "a"})),
            tool_use("d1", "shell", json!({"command": "echo reboot now"})),
        ]),
        shell("d2", "echo reboot now"),
        message(&[text("done")]),
    ];
    let policy = ApprovalPolicy::new(ApprovalMode::Auto).with_prompt(prompt.clone());
    let (server, runtime) = start(replies, policy, None).await;
    submit(&runtime, work.path()).await;
    let asked = prompt.asked();
    assert_eq!(asked.len(), 2, "writes are not asked in auto mode: {asked:?}");
    for question in &asked {
        assert_eq!(question.tool_name, "shell");
        assert!(
            question
                .danger
                .as_deref()
                .unwrap()
                .contains("shuts the machine down")
        );
        assert_eq!(
            question.always, None,
            "always is not offered for a dangerous command"
        );
    }
    let requests = server.requests();
    assert!(results(&requests[..2])[1].2.starts_with("reboot now"));
    let (_, error, denied) = results(&requests)[2].clone();
    assert!(error && denied.ends_with("the user said: no reboots"), "{denied}");

    // Without anyone to ask, dangerous commands are refused unless allowed.
    let replies = vec![shell("d1", "echo reboot now"), message(&[text("done")])];
    let (server, runtime) = start(replies, ApprovalPolicy::new(ApprovalMode::Auto), None).await;
    submit(&runtime, work.path()).await;
    let (_, error, refused) = results(&server.requests())[0].clone();
    assert!(
        error && refused.contains("not run") && refused.contains("--allow-dangerous-commands"),
        "{refused}"
    );
    let replies = vec![shell("d1", "echo reboot now"), message(&[text("done")])];
    let allowed = ApprovalPolicy::new(ApprovalMode::Auto).allow_dangerous_commands(true);
    let (server, runtime) = start(replies, allowed, None).await;
    submit(&runtime, work.path()).await;
    assert!(results(&server.requests())[0].2.starts_with("reboot now"));
}

const TOOLS: &str = r#"
[[tools]]
name = "stamp"
description = "Mark the workspace"
category = "write"
cmd = "touch"
args = ["stamped"]

[[tools]]
name = "look"
description = "Look around"
category = "read"
cmd = "echo"
args = ["looked"]
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn host_tools_of_the_write_category_are_asked_about_and_read_ones_are_not() {
    let work = tempfile::tempdir().unwrap();
    let prompt = ScriptedPrompt::new(vec![ApprovalAnswer::Deny { reason: None }]);
    let replies = vec![
        message(&[
            tool_use("l1", "look", json!({})),
            tool_use("t1", "stamp", json!({})),
        ]),
        message(&[text("done")]),
    ];
    let policy = ApprovalPolicy::new(ApprovalMode::Ask).with_prompt(prompt.clone());
    let (server, runtime) = start(replies, policy, Some((TOOLS, work.path()))).await;
    submit(&runtime, work.path()).await;
    let asked = prompt.asked();
    assert_eq!(asked.len(), 1);
    assert_eq!(asked[0].tool_name, "stamp");
    let results = results(&server.requests());
    assert_eq!(results[0].2.trim(), "looked");
    assert!(results[1].1 && !work.path().join("stamped").exists());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn run_in_ask_mode_without_a_terminal_refuses_writes_and_says_how_to_allow_them() {
    let server = ScriptedServer::start(Script {
        replies: vec![
            write("w1", "hello.txt"),
            shell("d1", "echo reboot now"),
            message(&[text("I could not write it.")]),
        ],
        require_api_key: None,
    })
    .await
    .unwrap();
    let work = tempfile::tempdir().unwrap();
    let output = agent_host()
        .args(["run", "write hello.txt", "--approval", "ask", "--cwd"])
        .arg(work.path())
        .env("ANTHROPIC_BASE_URL", server.base_url())
        .output()
        .await
        .unwrap();
    assert!(
        output.status.success(),
        "{}\n{}",
        stdout(&output),
        stderr(&output)
    );
    assert!(
        stderr(&output).contains("no terminal to ask on") && stderr(&output).contains("--approval auto"),
        "{}",
        stderr(&output)
    );
    assert!(!work.path().join("hello.txt").exists());
    let requests = server.requests();
    let (_, error, refused) = results(&requests[..2])[0].clone();
    assert!(
        error && refused.contains("nobody to ask") && refused.contains("--approval auto"),
        "{refused}"
    );
    let (_, error, dangerous) = results(&requests)[1].clone();
    assert!(
        error && dangerous.contains("--allow-dangerous-commands"),
        "{dangerous}"
    );
}
