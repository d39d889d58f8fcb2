//! A session's events, typed: [`Event`] with accessors for the common payloads, and
//! [`Events`], the stream of them.

use crate::control::AgentEvent;
use futures_util::Stream;
use serde_json::Value;
use std::pin::Pin;
use std::task::{Context, Poll};
use tokio::sync::mpsc::UnboundedReceiver;

/// What happened (the spec's event kinds, section 2.9): the core's own enum, whose
/// `as_str()` is the spec's name (`TOOL_CALL_END`).
pub use agent_core::events::EventKind;

/// The kind whose spec name is `name`.
fn kind_named(name: &str) -> Option<EventKind> {
    serde_json::from_value(Value::String(name.to_string())).ok()
}

/// One event of a session (or of one of its subagents, see [`Event::agent_id`]).
#[derive(Debug, Clone, PartialEq)]
pub struct Event {
    pub kind: EventKind,
    pub session_id: String,
    pub timestamp_ms: u64,
    /// The subagent the event comes from; `None` for the session's own events.
    pub agent_id: Option<String>,
    /// The payload as the core emitted it; the accessors below read the common fields.
    pub data: Value,
}

/// A tool call the model made (`TOOL_CALL_START`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ToolCall<'a> {
    pub call_id: &'a str,
    pub name: &'a str,
    pub arguments: &'a Value,
}

/// A finished tool call (`TOOL_CALL_END`): its full output, or the error the model got.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ToolResult<'a> {
    pub call_id: &'a str,
    pub name: &'a str,
    pub output: Result<&'a str, &'a str>,
}

impl Event {
    fn from_agent_event(event: AgentEvent) -> Option<Self> {
        Some(Self {
            kind: kind_named(&event.kind)?,
            session_id: event.session_id,
            timestamp_ms: event.timestamp_ms,
            agent_id: event.agent_id,
            data: event.data,
        })
    }

    fn str_field(&self, field: &str) -> Option<&str> {
        self.data.get(field).and_then(Value::as_str)
    }

    /// Whether a subagent emitted it.
    pub fn is_from_subagent(&self) -> bool {
        self.agent_id.is_some()
    }

    /// A piece of the assistant's answer as it streams (`ASSISTANT_TEXT_DELTA`).
    pub fn text_delta(&self) -> Option<&str> {
        (self.kind == EventKind::AssistantTextDelta)
            .then(|| self.str_field("delta"))
            .flatten()
    }

    /// A piece of the model's reasoning (`REASONING_DELTA`).
    pub fn reasoning_delta(&self) -> Option<&str> {
        (self.kind == EventKind::ReasoningDelta)
            .then(|| self.str_field("delta"))
            .flatten()
    }

    /// The whole text of one assistant turn (`ASSISTANT_TEXT_END`).
    pub fn assistant_text(&self) -> Option<&str> {
        (self.kind == EventKind::AssistantTextEnd)
            .then(|| self.str_field("text"))
            .flatten()
    }

    /// The call the model made (`TOOL_CALL_START`).
    pub fn tool_call(&self) -> Option<ToolCall<'_>> {
        if self.kind != EventKind::ToolCallStart {
            return None;
        }
        Some(ToolCall {
            call_id: self.str_field("call_id")?,
            name: self.str_field("tool_name")?,
            arguments: self.data.get("arguments")?,
        })
    }

    /// A piece of a running command's output (`TOOL_CALL_OUTPUT_DELTA`).
    pub fn tool_output_delta(&self) -> Option<&str> {
        (self.kind == EventKind::ToolCallOutputDelta)
            .then(|| self.str_field("delta"))
            .flatten()
    }

    /// A finished call (`TOOL_CALL_END`).
    pub fn tool_result(&self) -> Option<ToolResult<'_>> {
        if self.kind != EventKind::ToolCallEnd {
            return None;
        }
        let output = match (self.str_field("output"), self.str_field("error")) {
            (Some(output), _) => Ok(output),
            (None, Some(error)) => Err(error),
            (None, None) => return None,
        };
        Some(ToolResult {
            call_id: self.str_field("call_id")?,
            name: self.str_field("tool_name")?,
            output,
        })
    }

    /// The message of a `WARNING` or `ERROR`.
    pub fn message(&self) -> Option<&str> {
        matches!(self.kind, EventKind::Warning | EventKind::Error)
            .then(|| self.str_field("message"))
            .flatten()
    }
}

/// The events of one session, in order, as they happen. Ends after the session's own
/// `SESSION_END` (close or abort), or when the session is dropped.
///
/// Read it with [`Events::next`] or as a [`futures_util::Stream`].
pub struct Events {
    receiver: Option<UnboundedReceiver<AgentEvent>>,
}

impl Events {
    pub(crate) fn new(receiver: Option<UnboundedReceiver<AgentEvent>>) -> Self {
        Self { receiver }
    }

    /// The next event; `None` once the session has ended.
    pub async fn next(&mut self) -> Option<Event> {
        std::future::poll_fn(|cx| self.poll_event(cx)).await
    }

    fn poll_event(&mut self, cx: &mut Context<'_>) -> Poll<Option<Event>> {
        loop {
            let Some(receiver) = &mut self.receiver else {
                return Poll::Ready(None);
            };
            let Some(raw) = std::task::ready!(receiver.poll_recv(cx)) else {
                self.receiver = None;
                return Poll::Ready(None);
            };
            let Some(event) = Event::from_agent_event(raw) else {
                continue;
            };
            if event.kind == EventKind::SessionEnd && event.agent_id.is_none() {
                self.receiver = None;
            }
            return Poll::Ready(Some(event));
        }
    }
}

impl Stream for Events {
    type Item = Event;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Event>> {
        self.get_mut().poll_event(cx)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use serde_json::json;

    fn event(kind: &str, data: Value) -> Event {
        Event::from_agent_event(AgentEvent {
            kind: kind.to_string(),
            session_id: "s".to_string(),
            timestamp_ms: 1,
            data,
            agent_id: None,
        })
        .unwrap()
    }

    #[test]
    fn accessors_read_their_own_kind_only() {
        let delta = event("ASSISTANT_TEXT_DELTA", json!({"delta": "Hel"}));
        assert_eq!(delta.text_delta(), Some("Hel"));
        assert_eq!(delta.reasoning_delta(), None);
        let call = event(
            "TOOL_CALL_START",
            json!({"call_id": "c1", "tool_name": "shell", "arguments": {"command": "ls"}}),
        );
        assert_eq!(call.tool_call().unwrap().arguments["command"], "ls");
        let failed = event(
            "TOOL_CALL_END",
            json!({"call_id": "c1", "tool_name": "shell", "error": "boom"}),
        );
        assert_eq!(failed.tool_result().unwrap().output, Err("boom"));
        for kind in [
            EventKind::SessionStart,
            EventKind::ToolCallOutputDelta,
            EventKind::Error,
        ] {
            assert_eq!(kind_named(kind.as_str()), Some(kind));
        }
        assert_eq!(kind_named("NOT_A_KIND"), None);
    }
}
