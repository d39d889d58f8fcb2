//! A core snapshot brought up to date from the events logged after it (see the module
//! documentation of `persist` for what events carry and what they do not).

use super::PersistError;
use crate::control::AgentEvent;
use agent_core::SessionConfig;
use agent_core::history::{ToolResult, Turn};
use agent_core::llm::{ContentPart, Message, Role, Usage};
use agent_core::truncation;
use serde_json::{Value, json};

/// The snapshot format of the core this host understands (the core checks it too).
const SNAPSHOT_VERSION: u64 = 1;

/// What the model reads for a call the crash cut short.
const INTERRUPTED_CALL: &str = "This tool call was interrupted: the agent host stopped before it finished, \
     so its outcome is unknown. Check its effects before running it again.";

/// Rebuilds a snapshot the core can restore: `base` (the last snapshot's JSON, `None` when
/// no input had completed yet) plus the history the session's `events` after it record.
/// Subagents' events are skipped (each child has its own history). The result is idle,
/// whatever the session was doing, so it takes the next input.
pub fn rebuild_snapshot(base: Option<&Value>, events: &[AgentEvent]) -> Result<String, PersistError> {
    let own: Vec<&AgentEvent> = events.iter().filter(|e| e.agent_id.is_none()).collect();
    let mut snapshot = match base {
        Some(base) => base.clone(),
        None => snapshot_from_start(&own)?,
    };
    let version = snapshot["version"].as_u64().unwrap_or_default();
    if version != SNAPSHOT_VERSION {
        return Err(PersistError::Rebuild(format!(
            "the snapshot has version {version}; this agent-host reads version {SNAPSHOT_VERSION}"
        )));
    }
    let config: SessionConfig = serde_json::from_value(snapshot["config"].clone())
        .map_err(|e| PersistError::Rebuild(format!("the snapshot's configuration: {e}")))?;
    let mut history = HistoryBuilder::new(&config);
    for event in own {
        history.apply(event);
    }
    let (turns, assistant_turns) = history.finish();
    let turns = turns
        .iter()
        .map(serde_json::to_value)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| PersistError::Rebuild(e.to_string()))?;
    match snapshot["history"].as_array_mut() {
        Some(existing) => existing.extend(turns),
        None => snapshot["history"] = Value::Array(turns),
    }
    let total = snapshot["total_turns"].as_u64().unwrap_or_default() + assistant_turns;
    snapshot["total_turns"] = json!(total);
    snapshot["state"] = json!("idle");
    Ok(snapshot.to_string())
}

/// A snapshot with an empty history, from the configuration SESSION_START reports.
fn snapshot_from_start(events: &[&AgentEvent]) -> Result<Value, PersistError> {
    let start = events.iter().find(|e| e.kind == "SESSION_START").ok_or_else(|| {
        PersistError::Rebuild("there is no snapshot and the log has no SESSION_START".into())
    })?;
    Ok(json!({
        "version": SNAPSHOT_VERSION,
        "id": start.session_id,
        "config": start.data["config"],
        "history": [],
        "total_turns": 0,
        "state": "idle",
    }))
}

/// Replays the history-making events in the order the core made its entries.
struct HistoryBuilder<'a> {
    config: &'a SessionConfig,
    turns: Vec<Turn>,
    assistant_turns: u64,
    /// The tool round under way: its calls (id, name) and the results so far.
    round: Option<Round>,
}

struct Round {
    calls: Vec<(String, String)>,
    results: Vec<Option<ToolResult>>,
    timestamp_ms: u64,
}

impl<'a> HistoryBuilder<'a> {
    fn new(config: &'a SessionConfig) -> Self {
        Self {
            config,
            turns: Vec::new(),
            assistant_turns: 0,
            round: None,
        }
    }

    fn apply(&mut self, event: &AgentEvent) {
        let data = &event.data;
        let text = |field: &str| data[field].as_str().unwrap_or_default().to_string();
        let timestamp_ms = event.timestamp_ms;
        match event.kind.as_str() {
            "USER_INPUT" => {
                self.close_round();
                self.turns.push(Turn::User {
                    content: text("content"),
                    timestamp_ms,
                });
            }
            "STEERING_INJECTED" => {
                self.close_round();
                self.turns.push(Turn::Steering {
                    content: text("content"),
                    timestamp_ms,
                });
            }
            "LOOP_DETECTION" => {
                self.close_round();
                self.turns.push(Turn::Steering {
                    content: text("message"),
                    timestamp_ms,
                });
            }
            "ASSISTANT_TEXT_END" => self.assistant(event),
            "TOOL_CALL_END" => self.tool_result(event),
            "PROCESSING_END" | "ERROR" | "SESSION_END" => self.close_round(),
            _ => {}
        }
    }

    fn assistant(&mut self, event: &AgentEvent) {
        self.close_round();
        let data = &event.data;
        let mut parts = Vec::new();
        let text = data["text"].as_str().unwrap_or_default();
        if !text.is_empty() {
            parts.push(ContentPart::Text {
                text: text.to_string(),
                signature: None,
            });
        }
        let mut calls = Vec::new();
        for call in data["tool_calls"].as_array().into_iter().flatten() {
            let id = call["id"].as_str().unwrap_or_default().to_string();
            let name = call["name"].as_str().unwrap_or_default().to_string();
            parts.push(ContentPart::ToolCall {
                id: id.clone(),
                name: name.clone(),
                arguments: call["arguments"].clone(),
                signature: None,
            });
            calls.push((id, name));
        }
        self.assistant_turns += 1;
        self.turns.push(Turn::Assistant {
            message: Message {
                role: Role::Assistant,
                parts,
            },
            usage: serde_json::from_value::<Usage>(data["usage"].clone()).unwrap_or_default(),
            response_id: None,
            timestamp_ms: event.timestamp_ms,
        });
        if !calls.is_empty() {
            self.round = Some(Round {
                results: vec![None; calls.len()],
                calls,
                timestamp_ms: event.timestamp_ms,
            });
        }
    }

    /// A call's result as the core puts it in the history: truncated by the session's
    /// limits for that tool.
    fn tool_result(&mut self, event: &AgentEvent) {
        let Some(round) = &mut self.round else { return };
        let data = &event.data;
        let id = data["call_id"].as_str().unwrap_or_default();
        let Some(index) = round.calls.iter().position(|(call, _)| call == id) else {
            return;
        };
        let (max_chars, max_lines) = self.config.output_limits(&round.calls[index].1);
        let result = match data.get("error").and_then(Value::as_str) {
            Some(error) => ToolResult {
                tool_call_id: id.to_string(),
                content: truncation::truncate_chars(error, max_chars, truncation::Mode::HeadTail),
                is_error: true,
                images: Vec::new(),
            },
            None => ToolResult {
                tool_call_id: id.to_string(),
                content: truncation::truncate_tool_output(
                    data["output"].as_str().unwrap_or_default(),
                    &round.calls[index].1,
                    max_chars,
                    max_lines,
                ),
                is_error: false,
                images: Vec::new(),
            },
        };
        round.results[index] = Some(result);
        round.timestamp_ms = event.timestamp_ms;
        if round.results.iter().all(Option::is_some) {
            self.close_round();
        }
    }

    /// Ends the round under way; calls without a result were cut short.
    fn close_round(&mut self) {
        let Some(round) = self.round.take() else { return };
        let results = round
            .calls
            .iter()
            .zip(round.results)
            .map(|((id, _), result)| {
                result.unwrap_or_else(|| ToolResult {
                    tool_call_id: id.clone(),
                    content: INTERRUPTED_CALL.to_string(),
                    is_error: true,
                    images: Vec::new(),
                })
            })
            .collect();
        self.turns.push(Turn::ToolResults {
            results,
            timestamp_ms: round.timestamp_ms,
        });
    }

    fn finish(mut self) -> (Vec<Turn>, u64) {
        self.close_round();
        (self.turns, self.assistant_turns)
    }
}

/// The input the session was working on when its log ends, if it never finished (the
/// process died or the instance trapped).
pub fn interrupted_input(events: &[AgentEvent]) -> Option<String> {
    let mut current = None;
    for event in events.iter().filter(|e| e.agent_id.is_none()) {
        match event.kind.as_str() {
            "USER_INPUT" => current = event.data["content"].as_str().map(str::to_string),
            "PROCESSING_END" | "ERROR" => current = None,
            _ => {}
        }
    }
    current
}

/// A session's history in a few numbers and lines, from its events.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct HistorySummary {
    pub inputs: Vec<String>,
    pub tool_calls: usize,
    pub turns: usize,
    pub last_answer: Option<String>,
}

pub fn summarize(events: &[AgentEvent]) -> HistorySummary {
    let mut summary = HistorySummary::default();
    for event in events.iter().filter(|e| e.agent_id.is_none()) {
        match event.kind.as_str() {
            "USER_INPUT" => summary
                .inputs
                .push(event.data["content"].as_str().unwrap_or_default().to_string()),
            "ASSISTANT_TEXT_END" => {
                summary.turns += 1;
                let text = event.data["text"].as_str().unwrap_or_default();
                if !text.trim().is_empty() {
                    summary.last_answer = Some(text.to_string());
                }
            }
            "TOOL_CALL_END" => summary.tool_calls += 1,
            _ => {}
        }
    }
    summary
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    fn event(kind: &str, data: Value) -> AgentEvent {
        AgentEvent {
            kind: kind.to_string(),
            session_id: "s1".to_string(),
            timestamp_ms: 7,
            data,
            agent_id: None,
        }
    }

    fn start() -> AgentEvent {
        let config = serde_json::to_value(SessionConfig::new("anthropic", "m")).unwrap();
        event("SESSION_START", json!({"config": config}))
    }

    #[test]
    fn a_round_cut_short_keeps_finished_results_and_marks_the_others_interrupted() {
        let mut child = event("USER_INPUT", json!({"content": "child's own input"}));
        child.agent_id = Some("agent-1".to_string());
        let events = [
            start(),
            event("USER_INPUT", json!({"content": "do two things"})),
            event("STEERING_INJECTED", json!({"content": "and be quick"})),
            event(
                "ASSISTANT_TEXT_END",
                json!({"text": "", "reasoning": "hidden", "tool_calls": [
                    {"id": "a", "name": "shell", "arguments": {"command": "true"}},
                    {"id": "b", "name": "shell", "arguments": {"command": "sleep 100"}},
                ]}),
            ),
            child,
            event(
                "TOOL_CALL_END",
                json!({"call_id": "a", "tool_name": "shell", "output": "ok"}),
            ),
        ];
        let snapshot: Value = serde_json::from_str(&rebuild_snapshot(None, &events).unwrap()).unwrap();
        assert_eq!(snapshot["id"], "s1");
        assert_eq!(snapshot["state"], "idle");
        assert_eq!(snapshot["total_turns"], 1);
        let history: Vec<Turn> = serde_json::from_value(snapshot["history"].clone()).unwrap();
        assert_eq!(history.len(), 4, "{history:#?}");
        assert!(matches!(&history[0], Turn::User { content, .. } if content == "do two things"));
        assert!(matches!(&history[1], Turn::Steering { content, .. } if content == "and be quick"));
        let Turn::Assistant { message, .. } = &history[2] else {
            panic!("{history:#?}")
        };
        // Unsigned reasoning cannot be replayed: only the calls are kept.
        assert_eq!(message.tool_calls().len(), 2);
        assert_eq!(message.parts.len(), 2);
        let Turn::ToolResults { results, .. } = &history[3] else {
            panic!("{history:#?}")
        };
        assert_eq!((results[0].content.as_str(), results[0].is_error), ("ok", false));
        assert_eq!(
            (results[1].content.as_str(), results[1].is_error),
            (INTERRUPTED_CALL, true)
        );
        assert_eq!(interrupted_input(&events).as_deref(), Some("do two things"));
    }

    #[test]
    fn a_snapshot_is_extended_and_an_unknown_version_refused() {
        let base = rebuild_snapshot(None, &[start()]).unwrap();
        let base: Value = serde_json::from_str(&base).unwrap();
        let later = [
            event("USER_INPUT", json!({"content": "next"})),
            event("ASSISTANT_TEXT_END", json!({"text": "done", "tool_calls": []})),
            event("LOOP_DETECTION", json!({"message": "Loop detected"})),
            event("PROCESSING_END", json!({"stop_reason": "completed"})),
        ];
        let snapshot: Value = serde_json::from_str(&rebuild_snapshot(Some(&base), &later).unwrap()).unwrap();
        assert_eq!(snapshot["history"].as_array().unwrap().len(), 3);
        assert_eq!(snapshot["history"][2]["type"], "steering");
        assert_eq!(interrupted_input(&later), None);

        let mut future = base;
        future["version"] = json!(2);
        let error = rebuild_snapshot(Some(&future), &later).unwrap_err().to_string();
        assert!(error.contains("version 2"), "{error}");
        let error = rebuild_snapshot(None, &later).unwrap_err().to_string();
        assert!(error.contains("no SESSION_START"), "{error}");
    }
}
