//! Coming back into a chat: `chat --continue` (the last session of the workspace) and
//! `chat --resume [ID]` (a numbered list to pick from without an id) load the saved
//! session, and the chat opens with its earlier turns shown.

use super::style::Palette;
use super::tool_lines::summary;
use crate::exit;
use crate::sessions::{default_store, latest_session_of, picker_lines, sessions_of};
use crate::terminal_text::one_line;
use agent_host::embed::Session;
use agent_host::persist::{PersistError, StoredSession};
use agent_protocol::{ContentPart, Turn};
use std::io::{BufRead, IsTerminal, Write};
use std::path::Path;

/// Turns of the earlier conversation shown at most (the oldest are counted).
const SHOWN_TURNS: usize = 30;
/// Sessions the picker lists.
const PICKED_FROM: usize = 20;

/// The saved session to re-enter, if the flags ask for one.
pub fn choose(
    continue_last: bool,
    resume: Option<&str>,
    workspace: &Path,
) -> Result<Option<StoredSession>, (u8, String)> {
    let id = match (continue_last, resume) {
        (true, _) => latest_session_of(Some(workspace)).map_err(|m| (exit::USAGE, m))?,
        (false, Some("")) => pick(workspace)?,
        (false, Some(id)) => id.to_string(),
        (false, None) => return Ok(None),
    };
    let store = default_store().map_err(|m| (exit::USAGE, m))?;
    let stored = match store.load(&id) {
        Ok(stored) => stored,
        Err(e @ (PersistError::NotFound(_) | PersistError::Ambiguous { .. })) => {
            return Err((exit::USAGE, e.to_string()));
        }
        Err(e) => return Err((exit::AGENT_ERROR, format!("cannot read session {id}: {e}"))),
    };
    if stored.meta.endpoint.is_empty() {
        return Err((
            exit::AGENT_ERROR,
            format!(
                "session {} never started: there is nothing to resume",
                stored.id()
            ),
        ));
    }
    Ok(Some(stored))
}

/// The picker: the workspace's sessions, newest first, numbered; the user types a number.
fn pick(workspace: &Path) -> Result<String, (u8, String)> {
    let sessions = sessions_of(workspace).map_err(|m| (exit::USAGE, m))?;
    if sessions.is_empty() {
        return Err((
            exit::USAGE,
            format!(
                "no saved session of {}: `agent-host sessions --all` lists every workspace's",
                workspace.display()
            ),
        ));
    }
    if !std::io::stdin().is_terminal() {
        return Err((
            exit::USAGE,
            "--resume without an id asks which session on a terminal: name one (`agent-host sessions` lists them)"
                .to_string(),
        ));
    }
    let mut err = std::io::stderr().lock();
    let _ = writeln!(err, "sessions of {}, newest first:", workspace.display());
    for (n, line) in picker_lines(&sessions, PICKED_FROM).iter().enumerate() {
        let _ = writeln!(err, "  {:>2}) {line}", n + 1);
    }
    let shown = sessions.len().min(PICKED_FROM);
    loop {
        let _ = write!(err, "which one (1-{shown}, Enter for 1)? ");
        let _ = err.flush();
        let mut answer = String::new();
        match std::io::stdin().lock().read_line(&mut answer) {
            Ok(0) | Err(_) => return Err((exit::USAGE, "no session chosen".to_string())),
            Ok(_) => {}
        }
        let answer = answer.trim();
        let index = match answer {
            "" => Some(0),
            n => n.parse::<usize>().ok().and_then(|n| n.checked_sub(1)),
        };
        if let Some(session) = index.filter(|&i| i < shown).and_then(|i| sessions.get(i)) {
            return Ok(session.id.clone());
        }
        let _ = writeln!(err, "type a number from 1 to {shown}");
    }
}

/// The earlier conversation as the chat would have shown it, shortly: the inputs, the
/// answers and one line per tool call.
pub async fn earlier_turns(session: &Session, palette: &Palette) -> Vec<String> {
    let Ok(history) = session.history_json().await else {
        return Vec::new();
    };
    let Ok(turns) = serde_json::from_str::<Vec<Turn>>(&history) else {
        return Vec::new();
    };
    let shown_from = turns.len().saturating_sub(SHOWN_TURNS);
    let mut lines = Vec::new();
    if shown_from > 0 {
        lines.push(palette.dim(&format!("(… {shown_from} earlier turns)")));
    }
    for turn in &turns[shown_from..] {
        match turn {
            Turn::User { content, .. } => {
                lines.push(String::new());
                lines.push(palette.bold(&format!("> {}", one_line(first_line(content)))));
            }
            Turn::Steering { content, .. } => {
                lines.push(palette.cyan(&format!("↳ steering: {}", one_line(first_line(content)))));
            }
            Turn::Assistant { message, .. } => {
                for part in &message.parts {
                    match part {
                        ContentPart::Text { text, .. } if !text.trim().is_empty() => {
                            lines.extend(text.trim().lines().map(|l| one_line(l).into_owned()));
                        }
                        ContentPart::ToolCall { name, arguments, .. } => lines.push(format!(
                            "{} {} {}",
                            palette.cyan("●"),
                            palette.bold(&one_line(name)),
                            summary(arguments, &[])
                        )),
                        _ => {}
                    }
                }
            }
            Turn::ToolResults { .. } | Turn::System { .. } => {}
        }
    }
    lines.push(palette.dim("(the conversation continues from here)"));
    lines
}

fn first_line(text: &str) -> &str {
    text.trim().lines().next().unwrap_or_default()
}
