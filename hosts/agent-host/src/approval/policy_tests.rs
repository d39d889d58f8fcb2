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
