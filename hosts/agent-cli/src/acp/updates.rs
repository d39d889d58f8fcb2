//! The session's events as ACP `session/update`s: text and reasoning as chunks, each tool
//! call as `tool_call` then `tool_call_update`s (its kind, status, locations, output as it
//! streams, and every file change as a diff with both sides), the plan as `plan`.

use crate::chat::file_changes::FileChanges;
use agent_client_protocol::v1::schema::{
    ContentBlock, ContentChunk, Diff, Plan, PlanEntry, PlanEntryPriority, PlanEntryStatus, SessionUpdate,
    Terminal, ToolCall, ToolCallContent, ToolCallLocation, ToolCallStatus, ToolCallUpdate,
    ToolCallUpdateFields, ToolKind,
};
use agent_host::approval::ApprovalQuestion;
use agent_host::embed::Event;
use agent_host::protocol::ToolCategory;
use agent_host::protocol::event::{EventData, PlanStatus, ToolOutcome};
use serde_json::Value;
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How much of a running command's output a `tool_call_update` carries (the end of it,
/// as a terminal shows): each update replaces the content, so it is bounded.
const LIVE_OUTPUT: usize = 16 * 1024;
/// How much of a finished call's output or error is shown (its end, where a build's
/// error or a traceback is).
const FINAL_OUTPUT: usize = 64 * 1024;
/// The least time between two updates of a running call's output: a chatty command sends
/// its latest lines a few times a second, not once per chunk.
const LIVE_INTERVAL: Duration = Duration::from_millis(100);

/// What a command's call says when it runs in the editor's terminal.
const OUTSIDE_THE_SANDBOX: &str = "(in the editor's terminal, outside agent-host's sandbox)";

/// A call between its start and its end.
struct Running {
    category: ToolCategory,
    /// The command line, for a command's call (to find its editor terminal).
    command: Option<String>,
    /// The editor's terminal it runs in, which the editor shows instead of our output.
    terminal: Option<String>,
    changes: Vec<String>,
    output: String,
    last_sent: Option<Instant>,
}

/// The turn's calls in flight and where the workspace is.
pub struct Updates {
    changes: Arc<FileChanges>,
    /// The workspace as the environment resolved it.
    workspace: String,
    /// The folder as the editor named it: paths sent to it start from there.
    root: PathBuf,
    running: HashMap<String, Running>,
    /// Calls of subagents the client was asked about: shown from their question to their end
    /// (a subagent's other calls stay inside its own call).
    asked: std::collections::HashSet<String>,
    /// Whether commands run in the editor's terminals: their calls say so from the start.
    editor_terminals: bool,
}

impl Updates {
    pub fn new(changes: Arc<FileChanges>, workspace: String, root: PathBuf) -> Self {
        Self {
            changes,
            workspace,
            root,
            running: HashMap::new(),
            asked: Default::default(),
            editor_terminals: false,
        }
    }

    /// Commands of this session run in the editor's terminals, outside the sandbox.
    pub fn in_editor_terminals(mut self, on: bool) -> Self {
        self.editor_terminals = on;
        self
    }

    /// The id the client knows a question's call by, and, for a subagent's call it has not
    /// been shown, the `tool_call` that introduces it. A subagent's ids are its own (two
    /// responses may both have a `call_0`), so its calls are named `SESSION:CALL` here.
    pub fn introduce(
        &mut self,
        question: &ApprovalQuestion,
        own_session: &str,
    ) -> (String, Option<SessionUpdate>) {
        if question.session_id == own_session {
            return (question.call_id.clone(), None);
        }
        let id = subagent_call(&question.session_id, &question.call_id);
        if !self.asked.insert(id.clone()) {
            return (id, None);
        }
        let arguments = serde_json::from_str(&question.arguments_json).unwrap_or(Value::Null);
        let kind = match question.tool_name.as_str() {
            "shell" => ToolKind::Execute,
            "write_file" | "edit_file" | "apply_patch" => ToolKind::Edit,
            _ => ToolKind::Other,
        };
        let call = ToolCall::new(
            id.clone(),
            format!("subagent: {} {}", question.tool_name, question.summary),
        )
        .kind(kind)
        .status(ToolCallStatus::Pending)
        .locations(self.locations(&arguments, &[]))
        .raw_input(arguments);
        (id, Some(SessionUpdate::ToolCall(call)))
    }

    /// The calls still running when the turn ended (its error, a crash), ended as failed.
    pub fn unfinished(&mut self) -> Vec<SessionUpdate> {
        let asked: Vec<String> = self.asked.drain().collect();
        self.running
            .drain()
            .map(|(call_id, _)| call_id)
            .chain(asked)
            .map(|call_id| {
                update(
                    &call_id,
                    ToolCallUpdateFields::new().status(ToolCallStatus::Failed),
                )
            })
            .collect()
    }

    /// The updates an event makes (none for most); a subagent's events stay inside its call.
    pub fn of(&mut self, event: &Event) -> Vec<SessionUpdate> {
        if event.agent_id.is_some() {
            return self.subagent_call_end(event).into_iter().collect();
        }
        match &event.data {
            EventData::AssistantTextDelta { delta } => vec![SessionUpdate::AgentMessageChunk(chunk(delta))],
            EventData::ReasoningDelta { delta } => vec![SessionUpdate::AgentThoughtChunk(chunk(delta))],
            EventData::ToolCallStart {
                call_id,
                tool_name,
                arguments,
                category,
                changes,
            } => {
                self.running.insert(
                    call_id.clone(),
                    Running {
                        category: *category,
                        command: (*category == ToolCategory::Command)
                            .then(|| {
                                arguments
                                    .get("command")
                                    .and_then(Value::as_str)
                                    .map(str::to_string)
                            })
                            .flatten(),
                        terminal: None,
                        changes: changes.clone(),
                        output: String::new(),
                        last_sent: None,
                    },
                );
                let mut title = format!(
                    "{tool_name} {}",
                    crate::chat::tool_lines::summary(arguments, changes)
                );
                if self.editor_terminals && *category == ToolCategory::Command {
                    title = format!("{} {OUTSIDE_THE_SANDBOX}", title.trim_end());
                }
                vec![SessionUpdate::ToolCall(
                    ToolCall::new(call_id.clone(), title.trim_end())
                        .kind(kind(tool_name, *category))
                        .status(ToolCallStatus::InProgress)
                        .locations(self.locations(arguments, changes))
                        .raw_input(arguments.clone()),
                )]
            }
            EventData::ToolCallOutputDelta { call_id, delta, .. } => {
                let Some(running) = self.running.get_mut(call_id).filter(|r| r.terminal.is_none()) else {
                    return Vec::new();
                };
                running.output.push_str(delta);
                // Only the end is kept: each update replaces the last.
                if running.output.len() > 2 * LIVE_OUTPUT {
                    running.output = tail(&running.output, LIVE_OUTPUT).to_string();
                }
                let now = Instant::now();
                if running
                    .last_sent
                    .is_some_and(|sent| now.duration_since(sent) < LIVE_INTERVAL)
                {
                    return Vec::new();
                }
                running.last_sent = Some(now);
                let shown = tail(&running.output, LIVE_OUTPUT);
                vec![update(
                    call_id,
                    ToolCallUpdateFields::new().content(vec![text_content(shown)]),
                )]
            }
            EventData::ToolCallEnd { call_id, outcome, .. } => {
                let running = self.running.remove(call_id);
                let (status, text) = match outcome {
                    ToolOutcome::Output { output, .. } => (ToolCallStatus::Completed, output.as_str()),
                    ToolOutcome::Error { error } => (ToolCallStatus::Failed, error.as_str()),
                };
                let mut content = self.diffs(call_id, running.as_ref());
                // The editor's terminal stays the call's content: it shows the output itself.
                if let Some(terminal) = running.as_ref().and_then(|r| r.terminal.clone()) {
                    content.push(ToolCallContent::Terminal(Terminal::new(terminal)));
                } else if content.is_empty() || status == ToolCallStatus::Failed {
                    content.push(text_content(tail(text, FINAL_OUTPUT)));
                }
                vec![update(
                    call_id,
                    ToolCallUpdateFields::new()
                        .status(status)
                        .content(content)
                        .raw_output(Value::String(tail(text, FINAL_OUTPUT).to_string())),
                )]
            }
            EventData::PlanUpdated { plan, .. } => {
                let entries = plan
                    .iter()
                    .map(|step| {
                        PlanEntry::new(
                            step.step.clone(),
                            PlanEntryPriority::Medium,
                            plan_status(step.status),
                        )
                    })
                    .collect();
                vec![SessionUpdate::Plan(Plan::new(entries))]
            }
            _ => Vec::new(),
        }
    }

    /// A command now running in the editor's terminal `terminal`: its call (the first running
    /// one with that command line and no terminal yet) shows the terminal, and its title says
    /// the command runs outside the sandbox.
    pub fn in_terminal(&mut self, command: &str, terminal: &str) -> Vec<SessionUpdate> {
        let found = self
            .running
            .iter_mut()
            .find(|(_, r)| r.terminal.is_none() && r.command.as_deref() == Some(command));
        let Some((call_id, running)) = found else {
            return Vec::new();
        };
        running.terminal = Some(terminal.to_string());
        vec![update(
            call_id,
            ToolCallUpdateFields::new()
                .title(format!(
                    "shell {} {OUTSIDE_THE_SANDBOX}",
                    crate::chat::tool_lines::summary(&serde_json::json!({"command": command}), &[])
                ))
                .content(vec![ToolCallContent::Terminal(Terminal::new(
                    terminal.to_string(),
                ))]),
        )]
    }

    /// The end of a subagent's call the client was asked about.
    fn subagent_call_end(&mut self, event: &Event) -> Option<SessionUpdate> {
        let EventData::ToolCallEnd { call_id, outcome, .. } = &event.data else {
            return None;
        };
        let call_id = &subagent_call(&event.session_id, call_id);
        if !self.asked.remove(call_id) {
            return None;
        }
        let (status, text) = match outcome {
            ToolOutcome::Output { output, .. } => (ToolCallStatus::Completed, output.as_str()),
            ToolOutcome::Error { error } => (ToolCallStatus::Failed, error.as_str()),
        };
        Some(update(
            call_id,
            ToolCallUpdateFields::new()
                .status(status)
                .content(vec![text_content(tail(text, FINAL_OUTPUT))]),
        ))
    }

    /// A file-changing call's changes, each as a diff of the whole file (absolute path).
    fn diffs(&self, call_id: &str, running: Option<&Running>) -> Vec<ToolCallContent> {
        let Some(running) = running.filter(|r| r.category == ToolCategory::Write && !r.changes.is_empty())
        else {
            return Vec::new();
        };
        self.changes
            .take(call_id, &running.changes, &self.workspace)
            .into_iter()
            .filter(|change| !change.unreadable)
            .map(|change| {
                let diff = Diff::new(self.absolute(&change.path), change.after.unwrap_or_default())
                    .old_text(change.before);
                ToolCallContent::from(diff)
            })
            .collect()
    }

    /// Where a call reads or writes: the files it changes, else its `file_path` or `path`.
    fn locations(&self, arguments: &Value, changes: &[String]) -> Vec<ToolCallLocation> {
        let named: Vec<String> = match changes.is_empty() {
            false => changes.to_vec(),
            true => ["file_path", "path"]
                .iter()
                .find_map(|key| arguments.get(key).and_then(Value::as_str))
                .map(|path| vec![path.to_string()])
                .unwrap_or_default(),
        };
        named
            .iter()
            .map(|path| ToolCallLocation::new(self.absolute(path)))
            .collect()
    }

    /// `path` (relative to the workspace, or under its resolved form) from the editor's folder.
    fn absolute(&self, path: &str) -> PathBuf {
        let inside = std::path::Path::new(path)
            .strip_prefix(&self.workspace)
            .unwrap_or(std::path::Path::new(path));
        self.root.join(inside)
    }
}

pub(super) fn chunk(text: &str) -> ContentChunk {
    ContentChunk::new(ContentBlock::from(text.to_string()))
}

/// A subagent's call as the client knows it.
fn subagent_call(session: &str, call_id: &str) -> String {
    format!("{session}:{call_id}")
}

fn update(call_id: &str, fields: ToolCallUpdateFields) -> SessionUpdate {
    SessionUpdate::ToolCallUpdate(ToolCallUpdate::new(call_id.to_string(), fields))
}

fn text_content(text: &str) -> ToolCallContent {
    ToolCallContent::from(ContentBlock::from(text.to_string()))
}

/// The kind an editor shows: by the call's category, with the few tools it names apart.
fn kind(tool_name: &str, category: ToolCategory) -> ToolKind {
    match (tool_name, category) {
        ("web_fetch" | "fetch", _) => ToolKind::Fetch,
        ("update_plan", _) => ToolKind::Think,
        (_, ToolCategory::Read) => ToolKind::Read,
        (_, ToolCategory::Search) => ToolKind::Search,
        (_, ToolCategory::Write) => ToolKind::Edit,
        (_, ToolCategory::Command) => ToolKind::Execute,
        _ => ToolKind::Other,
    }
}

fn plan_status(status: PlanStatus) -> PlanEntryStatus {
    match status {
        PlanStatus::Pending => PlanEntryStatus::Pending,
        PlanStatus::InProgress => PlanEntryStatus::InProgress,
        PlanStatus::Completed => PlanEntryStatus::Completed,
    }
}

/// The last `limit` bytes of `text`, on a character boundary.
pub(super) fn tail(text: &str, limit: usize) -> &str {
    let mut start = text.len().saturating_sub(limit);
    while !text.is_char_boundary(start) {
        start += 1;
    }
    &text[start..]
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn event(data: EventData) -> Event {
        Event {
            kind: data.kind(),
            data,
            session_id: "s".into(),
            timestamp_ms: 0,
            agent_id: None,
        }
    }

    #[test]
    fn a_command_streams_its_output_and_ends_completed() {
        let mut updates = Updates::new(Arc::default(), "/w".into(), PathBuf::from("/w"));
        let start = updates.of(&event(EventData::ToolCallStart {
            call_id: "c1".into(),
            tool_name: "shell".into(),
            arguments: json!({"command": "cargo test"}),
            category: ToolCategory::Command,
            changes: Vec::new(),
        }));
        let json = serde_json::to_value(&start[0]).unwrap();
        assert_eq!(json["sessionUpdate"], "tool_call");
        assert_eq!(json["kind"], "execute");
        assert_eq!(json["title"], "shell cargo test");
        assert_eq!(json["status"], "in_progress");
        for delta in ["running 1 test\n", "ok\n"] {
            updates.of(&event(EventData::ToolCallOutputDelta {
                call_id: "c1".into(),
                stream: agent_host::protocol::event::OutputStream::Stdout,
                delta: delta.into(),
            }));
        }
        let end = updates.of(&event(EventData::ToolCallEnd {
            call_id: "c1".into(),
            tool_name: "shell".into(),
            outcome: ToolOutcome::Output {
                output: "running 1 test\nok\n".into(),
                images: Vec::new(),
            },
        }));
        let json = serde_json::to_value(&end[0]).unwrap();
        assert_eq!(json["sessionUpdate"], "tool_call_update");
        assert_eq!(json["status"], "completed");
        assert_eq!(json["content"][0]["content"]["text"], "running 1 test\nok\n");
    }

    #[test]
    fn a_subagent_s_events_are_not_the_turn_s() {
        let mut updates = Updates::new(Arc::default(), "/w".into(), PathBuf::from("/w"));
        let mut delta = event(EventData::AssistantTextDelta {
            delta: "child".into(),
        });
        delta.agent_id = Some("a1".into());
        assert!(updates.of(&delta).is_empty());
        delta.agent_id = None;
        let json = serde_json::to_value(&updates.of(&delta)[0]).unwrap();
        assert_eq!(json["sessionUpdate"], "agent_message_chunk");
        assert_eq!(json["content"]["text"], "child");
    }

    #[test]
    fn cuts_keep_whole_characters() {
        assert_eq!(tail("héllo", 4), "llo");
        assert_eq!(tail("héllo", 5), "éllo");
    }

    #[test]
    fn paths_start_from_the_folder_the_editor_named() {
        let updates = Updates::new(Arc::default(), "/private/tmp/w".into(), PathBuf::from("/tmp/w"));
        assert_eq!(updates.absolute("a.txt"), PathBuf::from("/tmp/w/a.txt"));
        assert_eq!(
            updates.absolute("/private/tmp/w/src/b.rs"),
            PathBuf::from("/tmp/w/src/b.rs")
        );
    }

    #[test]
    fn a_call_left_running_ends_failed() {
        let mut updates = Updates::new(Arc::default(), "/w".into(), PathBuf::from("/w"));
        updates.of(&event(EventData::ToolCallStart {
            call_id: "c1".into(),
            tool_name: "shell".into(),
            arguments: json!({"command": "sleep 9"}),
            category: ToolCategory::Command,
            changes: Vec::new(),
        }));
        let ended = serde_json::to_value(&updates.unfinished()[0]).unwrap();
        assert_eq!(ended["status"], "failed");
        assert!(updates.unfinished().is_empty());
    }

    #[test]
    fn a_subagent_s_call_is_introduced_by_its_question_and_ended_by_its_end() {
        let mut updates = Updates::new(Arc::default(), "/w".into(), PathBuf::from("/w"));
        let question = ApprovalQuestion {
            session_id: "child".into(),
            call_id: "call_0".into(),
            tool_name: "shell".into(),
            summary: "run `make`".into(),
            arguments_json: r#"{"command":"make"}"#.into(),
            ..ApprovalQuestion::sample(true)
        };
        // The parent's own question names its call as it is.
        let own = ApprovalQuestion {
            session_id: "parent".into(),
            ..question.clone()
        };
        assert_eq!(updates.introduce(&own, "parent"), ("call_0".to_string(), None));
        let (id, introduced) = updates.introduce(&question, "parent");
        assert_eq!(id, "child:call_0");
        let introduced = serde_json::to_value(introduced.unwrap()).unwrap();
        assert_eq!(introduced["sessionUpdate"], "tool_call");
        assert_eq!(introduced["toolCallId"], "child:call_0");
        assert_eq!(introduced["kind"], "execute");
        // Pending, the protocol's default, which is left out.
        assert!(introduced.get("status").is_none(), "{introduced}");
        assert!(
            updates.introduce(&question, "parent").1.is_none(),
            "introduced once"
        );
        let mut end = event(EventData::ToolCallEnd {
            call_id: "call_0".into(),
            tool_name: "shell".into(),
            outcome: ToolOutcome::Error {
                error: "refused".into(),
            },
        });
        end.agent_id = Some("a1".into());
        end.session_id = "child".into();
        let ended = serde_json::to_value(&updates.of(&end)[0]).unwrap();
        assert_eq!(ended["status"], "failed");
        // Another subagent call's end is not the client's business.
        assert!(updates.of(&end).is_empty());
    }
}
