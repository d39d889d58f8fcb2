//! Approval questions as `session/request_permission`: allow once, allow always (what the
//! question's "always" covers: a tool, or commands of one shape), reject, reject always (the
//! same scope refused for the rest of the session). A client that cancels the question (its
//! user cancelled the turn) is a refusal.

use agent_client_protocol::Client;
use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema::{
    PermissionOption, PermissionOptionKind, RequestPermissionOutcome, RequestPermissionRequest, SessionId,
    ToolCallUpdate, ToolCallUpdateFields,
};
use agent_host::approval::{ApprovalAnswer, ApprovalQuestion};

const ALLOW_ONCE: &str = "allow_once";
const ALLOW_ALWAYS: &str = "allow_always";
const REJECT: &str = "reject_once";
const REJECT_ALWAYS: &str = "reject_always";

/// Asks the client; its answer, or a refusal saying why there was none.
pub async fn ask(
    cx: &ConnectionTo<Client>,
    session_id: &SessionId,
    call_id: &str,
    question: &ApprovalQuestion,
    editor_terminals: bool,
) -> ApprovalAnswer {
    let mut call = tool_call(call_id, question);
    if editor_terminals && question.tool_name == "shell" {
        // The command would run unsandboxed, with the editor's environment: the question says so.
        let title = call.fields.title.take().unwrap_or_default();
        call.fields.title = Some(format!(
            "In the editor's terminal, OUTSIDE agent-host's sandbox: {title}"
        ));
    }
    let request = RequestPermissionRequest::new(session_id.clone(), call, options(question));
    // Awaited, never dropped: a dropped request is cancelled with a message clients may not know.
    match cx.send_request(request).block_task().await {
        Ok(response) => answer(&response.outcome),
        Err(error) => ApprovalAnswer::Deny {
            reason: Some(format!("the editor could not be asked ({error})")),
        },
    }
}

/// The call the question is about (the editor has it from its `tool_call`), with a title
/// saying what is asked: a dangerous command or a rerun without the sandbox says so.
fn tool_call(call_id: &str, question: &ApprovalQuestion) -> ToolCallUpdate {
    let call = format!("{}: {}", question.tool_name, question.summary);
    let title = match (&question.unsandboxed, &question.danger) {
        (Some(refusal), _) => {
            format!("Run WITHOUT THE SANDBOX, with all your rights? {call} (the sandbox refused: {refusal})")
        }
        (None, Some(why)) => format!("DANGEROUS ({why}): {call}"),
        (None, None) => call,
    };
    let raw_input = serde_json::from_str(&question.arguments_json).unwrap_or(serde_json::Value::Null);
    ToolCallUpdate::new(
        call_id.to_string(),
        ToolCallUpdateFields::new().raw_input(raw_input).title(title),
    )
}

fn options(question: &ApprovalQuestion) -> Vec<PermissionOption> {
    let mut options = vec![PermissionOption::new(
        ALLOW_ONCE,
        "Allow once",
        PermissionOptionKind::AllowOnce,
    )];
    if let Some(always) = &question.always {
        options.push(PermissionOption::new(
            ALLOW_ALWAYS,
            format!("Always allow {always} in this session"),
            PermissionOptionKind::AllowAlways,
        ));
    }
    options.push(PermissionOption::new(
        REJECT,
        "Reject",
        PermissionOptionKind::RejectOnce,
    ));
    if let Some(always) = &question.always {
        options.push(PermissionOption::new(
            REJECT_ALWAYS,
            format!("Always reject {always} in this session"),
            PermissionOptionKind::RejectAlways,
        ));
    }
    options
}

fn answer(outcome: &RequestPermissionOutcome) -> ApprovalAnswer {
    match outcome {
        RequestPermissionOutcome::Selected(selected) => match &*selected.option_id.0 {
            ALLOW_ONCE => ApprovalAnswer::Once,
            ALLOW_ALWAYS => ApprovalAnswer::Always,
            REJECT_ALWAYS => ApprovalAnswer::Never { reason: None },
            _ => ApprovalAnswer::Deny { reason: None },
        },
        _ => ApprovalAnswer::Deny {
            reason: Some("the user cancelled the question".to_string()),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use agent_client_protocol::v1::schema::SelectedPermissionOutcome;

    #[test]
    fn always_is_offered_only_where_the_question_has_a_scope() {
        let names = |q: &ApprovalQuestion| -> Vec<String> {
            options(q).iter().map(|o| o.option_id.0.to_string()).collect()
        };
        assert_eq!(
            names(&ApprovalQuestion::sample(true)),
            [ALLOW_ONCE, ALLOW_ALWAYS, REJECT, REJECT_ALWAYS]
        );
        assert_eq!(names(&ApprovalQuestion::sample(false)), [ALLOW_ONCE, REJECT]);
    }

    #[test]
    fn the_client_s_choice_becomes_the_answer() {
        let chosen =
            |id: &'static str| RequestPermissionOutcome::Selected(SelectedPermissionOutcome::new(id));
        assert_eq!(answer(&chosen(ALLOW_ONCE)), ApprovalAnswer::Once);
        assert_eq!(answer(&chosen(ALLOW_ALWAYS)), ApprovalAnswer::Always);
        assert_eq!(answer(&chosen(REJECT)), ApprovalAnswer::Deny { reason: None });
        assert_eq!(
            answer(&chosen(REJECT_ALWAYS)),
            ApprovalAnswer::Never { reason: None }
        );
        assert!(matches!(
            answer(&RequestPermissionOutcome::Cancelled),
            ApprovalAnswer::Deny { reason: Some(_) }
        ));
    }
}
