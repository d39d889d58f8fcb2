//! One `session/prompt`: the prompt's blocks as the chat's input, the session's events sent
//! as updates while it runs, its approval questions asked of the client, and how it ended.

use super::sessions::AcpSession;
use super::updates::Updates;
use crate::chat::agent::AgentWake;
use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema::{
    ContentBlock, EmbeddedResourceResource, SessionId, SessionNotification, StopReason,
};
use agent_client_protocol::{self as acp, Client};
use agent_host::protocol::StopReason as Ended;

pub async fn run(
    cx: &ConnectionTo<Client>,
    session_id: &SessionId,
    session: &mut AcpSession,
    prompt: Vec<ContentBlock>,
) -> Result<StopReason, acp::Error> {
    let input = input_text(session, prompt).await?;
    let AcpSession {
        agent,
        questions,
        changes,
        workspace,
    } = session;
    if !agent.submit(input) {
        return Err(acp::Error::internal_error().data("the session is not ready for input"));
    }
    let mut updates = Updates::new(changes.clone(), workspace.clone());
    let send = |update| cx.send_notification(SessionNotification::new(session_id.clone(), update));
    loop {
        tokio::select! {
            wake = agent.next() => match wake {
                AgentWake::Event(event) => {
                    for update in updates.of(&event) {
                        send(update)?;
                    }
                }
                AgentWake::Finished(finished) => {
                    for event in agent.drain_events() {
                        for update in updates.of(&event) {
                            send(update)?;
                        }
                    }
                    let settled = agent.settle(finished).await;
                    if let Some(error) = settled.error {
                        return Err(acp::Error::internal_error().data(error));
                    }
                    return Ok(settled.outcome.map_or(StopReason::EndTurn, |o| stop_reason(o.stop_reason)));
                }
            },
            Some(question) = questions.recv() => {
                let answer = super::permission::ask(cx, session_id, &question.question).await;
                question.reply(answer);
            }
        }
    }
}

/// The prompt as one input: its text, the files its resource links name attached as the
/// chat's `@path` attaches them (read through the session's sandbox), and the text of its
/// embedded resources. Images and audio are refused: the session does not take them yet.
async fn input_text(session: &AcpSession, prompt: Vec<ContentBlock>) -> Result<String, acp::Error> {
    let mut text = String::new();
    let mut embedded = String::new();
    for block in prompt {
        match block {
            ContentBlock::Text(block) => text.push_str(&block.text),
            ContentBlock::ResourceLink(link) => {
                let path = link.uri.strip_prefix("file://").unwrap_or(&link.uri);
                text.push_str(&format!(" @{path}"));
            }
            ContentBlock::Resource(resource) => match resource.resource {
                EmbeddedResourceResource::TextResourceContents(contents) => {
                    embedded.push_str(&format!(
                        "\n\n<file path=\"{}\">\n{}\n</file>",
                        contents.uri.strip_prefix("file://").unwrap_or(&contents.uri),
                        contents.text
                    ));
                }
                _ => return Err(refused("a binary embedded resource")),
            },
            ContentBlock::Image(_) => return Err(refused("an image")),
            ContentBlock::Audio(_) => return Err(refused("audio")),
            _ => return Err(refused("this kind of content")),
        }
    }
    let (mut text, _attached) = crate::chat::compose::attach_files(&session.agent.environment(), &text).await;
    text.push_str(&embedded);
    Ok(text)
}

fn refused(what: &str) -> acp::Error {
    acp::Error::invalid_params().data(format!(
        "agent-host does not take {what} in a prompt yet: send text, resource links or text resources"
    ))
}

fn stop_reason(ended: Ended) -> StopReason {
    match ended {
        Ended::Completed | Ended::AwaitingInput => StopReason::EndTurn,
        Ended::RoundLimit | Ended::TurnLimit => StopReason::MaxTurnRequests,
        Ended::Cancelled | Ended::Aborted => StopReason::Cancelled,
        Ended::ContextLength => StopReason::MaxTokens,
    }
}
