//! In `ask` mode, a command the sandbox refused is offered to run again without it, every
//! time, with no "always"; approved, it runs with the user's rights and the model sees that
//! run's result; declined, nothing more runs and the model reads why. Other modes never
//! offer it. Real sandboxed commands through the library, a scripted model and prompt.

use super::{ScriptedPrompt, deny, results, start, submit_in};
use agent_host::approval::{ApprovalAnswer, ApprovalMode, ApprovalPolicy};
use agent_host::environments::EnvOptions;
use agent_host::sandbox::SandboxMode;
use scripted_llm::anthropic::{message, text, tool_use};
use serde_json::json;
use std::path::Path;
use std::sync::Arc;

/// The workspace-write sandbox over `work`, as `agent-host run` builds it.
async fn sandboxed(work: &Path) -> Arc<dyn agent_host::Environment> {
    EnvOptions {
        cwd: Some(work.to_path_buf()),
        sandbox: Some(SandboxMode::WorkspaceWrite),
        ..Default::default()
    }
    .build()
    .await
    .unwrap()
}

/// Runs a response of shell `calls` per round, then "done", in `mode` with `prompt`
/// answering; every tool result, in order.
async fn run(
    rounds: Vec<Vec<(&str, String)>>,
    mode: ApprovalMode,
    prompt: &Arc<ScriptedPrompt>,
    work: &Path,
) -> Vec<(String, bool, String)> {
    let mut replies: Vec<_> = rounds
        .iter()
        .map(|calls| {
            let uses: Vec<_> = calls
                .iter()
                .map(|(id, command)| tool_use(id, "shell", json!({ "command": command })))
                .collect();
            message(&uses)
        })
        .collect();
    replies.push(message(&[text("done")]));
    let policy = ApprovalPolicy::new(mode).with_prompt(prompt.clone());
    let (server, runtime) = start(replies, policy, None).await;
    submit_in(&runtime, sandboxed(work).await).await;
    results(&server.requests())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_command_the_sandbox_refused_runs_again_without_it_once_the_user_approves() {
    let work = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    let target = outside.path().join("made");
    let refused = format!("echo first-run; echo x > {} && echo WROTE", target.display());
    // Two calls of one response: both approved and started before either is waited for,
    // so the rerun question must name the call its process belongs to.
    // The second round repeats the command, which "always" covers: its rerun is asked
    // about all the same.
    let prompt = ScriptedPrompt::new(vec![
        ApprovalAnswer::Always,
        ApprovalAnswer::Once,
        ApprovalAnswer::Once,
        deny("stay inside"),
    ]);
    let results = run(
        vec![
            vec![("r1", refused.clone()), ("ok", "echo inside > in.txt".into())],
            vec![("r2", refused.clone())],
        ],
        ApprovalMode::Ask,
        &prompt,
        work.path(),
    )
    .await;
    let asked = prompt.asked();
    assert_eq!(asked.len(), 4, "{asked:#?}");
    let rerun = &asked[2];
    assert_eq!(rerun.call_id, "r1");
    assert_eq!(rerun.tool_name, "shell");
    assert_eq!(
        rerun.summary,
        format!("run `{refused}` again without the sandbox")
    );
    assert_eq!(
        rerun.always, None,
        "a rerun without the sandbox is never remembered"
    );
    let refusal = rerun.unsandboxed.as_deref().unwrap();
    assert!(
        refusal.starts_with("workspace-write (network off): ") && refusal.contains("Read-only file system"),
        "{refusal}"
    );
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "x\n");
    let (id, error, output) = &results[0];
    assert_eq!(id, "r1");
    assert!(!error, "{output}");
    assert!(
        output.contains("first-run") && output.contains("WROTE"),
        "{output}"
    );
    assert!(
        output.contains("result of running the command again without the sandbox"),
        "the model is told which run it sees: {output}"
    );
    assert!(
        !output.contains("agent-host sandbox:"),
        "the refused run's note is gone: {output}"
    );
    assert_eq!(
        std::fs::read_to_string(work.path().join("in.txt")).unwrap(),
        "inside\n"
    );
    assert_eq!(asked[3].call_id, "r2");
    assert!(asked[3].unsandboxed.is_some(), "{:#?}", asked[3]);
    let (_, _, output) = &results[2];
    assert!(
        output.contains("declined: the user said: stay inside"),
        "{output}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_declined_rerun_runs_nothing_and_the_model_reads_why() {
    let work = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    let target = outside.path().join("made");
    let refused = format!("echo x > {}", target.display());
    let prompt = ScriptedPrompt::new(vec![
        ApprovalAnswer::Once,
        ApprovalAnswer::Once,
        deny("keep it in the workspace"),
    ]);
    let results = run(
        vec![vec![("missing", "cat no-such-file".into()), ("r1", refused)]],
        ApprovalMode::Ask,
        &prompt,
        work.path(),
    )
    .await;
    let asked = prompt.asked();
    assert_eq!(
        asked.iter().filter(|q| q.unsandboxed.is_some()).count(),
        1,
        "a failure the sandbox does not explain is not offered: {asked:#?}"
    );
    assert!(!target.exists());
    let (_, _, output) = &results[1];
    assert!(output.contains("Read-only file system"), "{output}");
    assert!(output.contains("agent-host sandbox:"), "{output}");
    assert!(
        output.contains("declined: the user said: keep it in the workspace"),
        "{output}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn auto_mode_never_offers_a_rerun_without_the_sandbox() {
    let work = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    let target = outside.path().join("made");
    // Auto mode with a prompt (as chat has, for dangerous commands): nothing is asked.
    let prompt = ScriptedPrompt::new(vec![]);
    let results = run(
        vec![vec![("r1", format!("echo x > {}", target.display()))]],
        ApprovalMode::Auto,
        &prompt,
        work.path(),
    )
    .await;
    assert!(prompt.asked().is_empty(), "{:#?}", prompt.asked());
    assert!(!target.exists());
    let (_, _, output) = &results[0];
    assert!(output.contains("agent-host sandbox:"), "{output}");
    assert!(!output.contains("declined"), "{output}");
}

/// In `ask` mode a host the network allow-list refused a failed command is offered for
/// every later command, the command running again in the sandbox; once allowed, the next
/// command reaches it without a question. A host refused for another reason (a listed name
/// resolving to an address the list does not name) is not offered.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_host_the_allow_list_refused_is_allowed_for_the_session_when_the_user_approves() {
    use agent_host::sandbox::{
        AllowList, NameResolution, NetworkAccess, Sandbox, SandboxConfig, StaticResolver,
    };
    let work = tempfile::tempdir().unwrap();
    let hello = agent_test_support::http::HelloServer::start().unwrap();
    let port = hello.port;
    let loopback = vec![std::net::IpAddr::from([127, 0, 0, 1])];
    let config = SandboxConfig {
        network: NetworkAccess::AllowList,
        network_allow: AllowList::parse(&[
            format!("ok.test:{port}"),
            format!("127.0.0.1:{port}"),
            format!("inner.test:{port}"),
        ])
        .unwrap(),
        resolution: NameResolution::fixed(Arc::new(StaticResolver::new([
            ("ok.test".to_string(), loopback.clone()),
            ("more.test".to_string(), loopback.clone()),
            (
                "inner.test".to_string(),
                vec![std::net::IpAddr::from([127, 0, 0, 9])],
            ),
        ]))),
        ..SandboxConfig::default()
    };
    let options = EnvOptions {
        cwd: Some(work.path().to_path_buf()),
        sandbox: Some(SandboxMode::WorkspaceWrite),
        ..Default::default()
    };
    let sandbox = Sandbox::new(&config, &[work.path().to_path_buf()])
        .unwrap()
        .map(Arc::new);
    options.made_sandbox.set(sandbox).unwrap();
    let env = options.build().await.unwrap();
    let fetch = format!("curl -sSf http://more.test:{port}/");
    let inner = format!("curl -sSf http://inner.test:{port}/");
    let prompt = ScriptedPrompt::new(vec![
        ApprovalAnswer::Once,
        ApprovalAnswer::Once,
        ApprovalAnswer::Once,
        ApprovalAnswer::Once,
    ]);
    let replies = vec![
        message(&[tool_use("n1", "shell", json!({ "command": fetch }))]),
        message(&[tool_use("n2", "shell", json!({ "command": fetch }))]),
        message(&[tool_use("n3", "shell", json!({ "command": inner }))]),
        message(&[text("done")]),
    ];
    let policy = ApprovalPolicy::new(ApprovalMode::Ask).with_prompt(prompt.clone());
    let (server, runtime) = start(replies, policy, None).await;
    submit_in(&runtime, env).await;
    let asked = prompt.asked();
    let summaries: Vec<&str> = asked.iter().map(|q| q.summary.as_str()).collect();
    assert_eq!(asked.len(), 4, "{summaries:#?}");
    assert_eq!(asked[1].call_id, "n1");
    assert_eq!(
        asked[1].summary,
        format!(
            "allow more.test:{port} (the network allow-list refused it) for every later command \
             until agent-host exits, and run `{fetch}` again in the sandbox"
        )
    );
    assert_eq!(asked[1].always, None);
    assert_eq!(
        (asked[2].call_id.as_str(), asked[3].call_id.as_str()),
        ("n2", "n3")
    );
    let requests = server.requests();
    let output = |request: usize| {
        let results = results(&requests[..=request]);
        results.last().unwrap().2.clone()
    };
    let first = output(1);
    assert!(
        first.contains("hello") && first.contains("user allowed more.test"),
        "{first}"
    );
    let second = output(2);
    assert!(
        second.contains("hello") && !second.contains("refused"),
        "{second}"
    );
    let third = output(3);
    assert!(
        third.contains("127.0.0.9") && third.contains("loopback"),
        "{third}"
    );
}
