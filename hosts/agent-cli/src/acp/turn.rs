//! One `session/prompt`: the prompt's blocks as the chat's input, the session's events sent
//! as updates while it runs, its approval questions asked of the client, and how it ended.

use super::sessions::AcpSession;
use super::updates::Updates;
use crate::chat::agent::AgentWake;
use crate::chat::compose;
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
        root,
        credential_hint,
        terminals,
        editor_terminals,
        ..
    } = session;
    // A question an earlier turn's cancel withdrew must not be asked now, nor an earlier
    // turn's terminal be shown in this one's calls.
    while let Ok(stale) = questions.try_recv() {
        stale.refuse("its input ended");
    }
    while terminals.try_recv().is_ok() {}
    if !agent.submit(input) {
        return Err(acp::Error::internal_error().data("the session is not ready for input"));
    }
    let mut updates =
        Updates::new(changes.clone(), workspace.clone(), root.clone()).in_editor_terminals(*editor_terminals);
    let send = |update| cx.send_notification(SessionNotification::new(session_id.clone(), update));
    loop {
        tokio::select! {
            // Events first: a call's `tool_call` reaches the client before its question.
            biased;
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
                    // A call the turn left behind (an error, a crash) is not left running.
                    for update in updates.unfinished() {
                        send(update)?;
                    }
                    if let Some(error) = settled.error {
                        return Err(match (settled.auth_error, credential_hint.as_deref()) {
                            (true, Some(hint)) => super::sessions::auth_required(format!("{error}: {hint}")),
                            (true, None) => super::sessions::auth_required(error),
                            (false, _) => acp::Error::internal_error().data(error),
                        });
                    }
                    return Ok(settled.outcome.map_or(StopReason::EndTurn, |o| stop_reason(o.stop_reason)));
                }
            },
            Some((command, terminal)) = terminals.recv() => {
                for update in updates.in_terminal(&command, &terminal) {
                    send(update)?;
                }
            }
            Some(question) = questions.recv() => {
                if question.withdrawn() {
                    continue;
                }
                let (call_id, introduced) = updates.introduce(&question.question, &session_id.0);
                if let Some(introduced) = introduced {
                    send(introduced)?;
                }
                let answer =
                    super::permission::ask(cx, session_id, &call_id, &question.question, *editor_terminals).await;
                question.reply(answer);
            }
        }
    }
}

/// The prompt as one input: its text, the files its resource links name (read as the file
/// tools read, through the session's environment and its rules), the text of its embedded
/// resources, and its images as files the model opens with read_file. Audio is refused.
async fn input_text(session: &AcpSession, prompt: Vec<ContentBlock>) -> Result<String, acp::Error> {
    let env = session.agent.environment();
    let mut text = String::new();
    let mut attached = String::new();
    for (number, block) in prompt.into_iter().enumerate() {
        match block {
            ContentBlock::Text(block) => text.push_str(&block.text),
            ContentBlock::ResourceLink(link) => attached.push_str(&linked_file(&env, &link.uri).await),
            ContentBlock::Resource(resource) => match resource.resource {
                EmbeddedResourceResource::TextResourceContents(contents) => {
                    attached.push_str(&compose::file_block(
                        &file_path(&contents.uri),
                        &contents.text,
                        None,
                    ));
                }
                _ => return Err(refused("a binary embedded resource")),
            },
            ContentBlock::Image(image) => {
                let scratch = env.scratch_directory();
                attached.push_str(&super::prompt_images::attach(scratch.as_deref(), &image, number)?);
            }
            ContentBlock::Audio(_) => return Err(refused("audio")),
            _ => return Err(refused("this kind of content")),
        }
    }
    // `/NAME arguments`, from the editor's commands menu: that command's prompt.
    if let Some(typed) = text.strip_prefix('/') {
        let (name, arguments) = typed.split_once(char::is_whitespace).unwrap_or((typed, ""));
        if let Some(command) = agent_host::extensions::commands::find(&session.commands, name) {
            text = command.expand(arguments);
        }
    }
    text.push_str(&attached);
    Ok(text)
}

/// A linked file as a block of the input, cut at [`compose::ATTACH_LIMIT`]; one that cannot be read
/// (outside the workspace, denied, missing) is named with why, so the model and the user
/// know it was not attached.
async fn linked_file(env: &std::sync::Arc<dyn agent_host::Environment>, uri: &str) -> String {
    let path = file_path(uri);
    match env.read_file(&path, None).await {
        Ok(bytes) => {
            let cut = (bytes.len() > compose::ATTACH_LIMIT).then_some(bytes.len());
            let text = String::from_utf8_lossy(&bytes[..bytes.len().min(compose::ATTACH_LIMIT)]);
            compose::file_block(&path, &text, cut)
        }
        Err(error) => format!("\n\n[{path} was not attached: {error}]"),
    }
}

/// The path a `file://` URI names, decoded (any other URI is taken as a path).
fn file_path(uri: &str) -> String {
    url::Url::parse(uri)
        .ok()
        .filter(|url| url.scheme() == "file")
        .and_then(|url| url.to_file_path().ok())
        .map_or_else(|| uri.to_string(), |path| path.to_string_lossy().into_owned())
}

fn refused(what: &str) -> acp::Error {
    acp::Error::invalid_params().data(format!(
        "agent-host does not take {what} in a prompt yet: send text, images, resource links or text resources"
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_uris_are_decoded() {
        assert_eq!(file_path("file:///w/my%20notes.txt"), "/w/my notes.txt");
        assert_eq!(file_path("file:///w/100%"), "/w/100%");
        assert_eq!(file_path("notes.txt"), "notes.txt");
    }
}
