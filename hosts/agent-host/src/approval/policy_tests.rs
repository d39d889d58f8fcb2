//! Decisions on host tools by their declared category, in read-only mode.

#![allow(clippy::unwrap_used)]
use super::*;

fn host_call(tool: &str) -> ApprovalRequest {
    ApprovalRequest {
        session_id: "s".to_string(),
        call_id: "c".to_string(),
        tool_name: tool.to_string(),
        arguments_json: "{}".to_string(),
        summary: format!("call {tool}"),
        category: Kind::Host,
    }
}

#[tokio::test]
async fn in_read_only_mode_only_a_host_tool_declared_read_runs() {
    let policy = ApprovalPolicy::new(ApprovalMode::ReadOnly);
    let read = policy
        .decide(Some(ToolCategory::Read), &host_call("srv__list"))
        .await;
    assert_eq!(read, Approval::Allow);
    let write = policy
        .decide(Some(ToolCategory::Write), &host_call("srv__push"))
        .await;
    assert!(matches!(write, Approval::Deny(why) if why.contains("is a `write` tool")));
    // A tool the host does not know now (its list changed since the call was made) is not
    // taken for a read.
    let unknown = policy.decide(None, &host_call("srv__gone")).await;
    assert!(
        matches!(&unknown, Approval::Deny(why) if why.contains("not a tool this host offers now")),
        "{unknown:?}"
    );
}

/// Answers every question with `answer`, counting the questions.
struct Answering(ApprovalAnswer, std::sync::atomic::AtomicUsize);

#[async_trait]
impl ApprovalPrompt for Answering {
    async fn ask(&self, _: &ApprovalQuestion) -> ApprovalAnswer {
        self.1.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        self.0.clone()
    }
}

fn shell_call(command: &str) -> ApprovalRequest {
    ApprovalRequest {
        tool_name: "shell".to_string(),
        arguments_json: serde_json::json!({ "command": command }).to_string(),
        summary: command.to_string(),
        category: Kind::Command,
        ..host_call("shell")
    }
}

#[tokio::test]
async fn never_refuses_commands_of_the_same_shape_without_asking_again() {
    let prompt = Arc::new(Answering(
        ApprovalAnswer::Never { reason: None },
        std::sync::atomic::AtomicUsize::new(0),
    ));
    let policy = ApprovalPolicy::new(ApprovalMode::Ask).with_prompt(prompt.clone());
    let first = policy.decide(None, &shell_call("cargo test -p a")).await;
    assert!(matches!(first, Approval::Deny(_)), "{first:?}");
    let again = policy.decide(None, &shell_call("cargo test -p b")).await;
    assert!(
        matches!(&again, Approval::Deny(why) if why.contains("for the rest of the session")),
        "{again:?}"
    );
    // Another shape is still asked about.
    let other = policy.decide(None, &shell_call("make build")).await;
    assert!(matches!(other, Approval::Deny(_)));
    assert_eq!(prompt.1.load(std::sync::atomic::Ordering::SeqCst), 2);
}
