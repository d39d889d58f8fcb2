//! A session's events, typed: [`Event`] with accessors for the common payloads, and
//! [`Events`], the stream of them.

use crate::session_host::control::AgentEvent;
use futures_util::Stream;
use serde_json::Value;
use std::pin::Pin;
use std::task::{Context, Poll};
use tokio::sync::mpsc::UnboundedReceiver;

/// What happened (the spec's event kinds, section 2.9), whose `as_str()` is the spec's name
/// (`TOOL_CALL_END`); and each kind's typed payload, to match on.
pub use agent_protocol::event::{
    EndReason, EventData, EventKind, ImageInfo, LimitName, OutputStream, TokenSource, ToolOutcome, Warning,
};

/// One event of a session (or of one of its subagents, see [`Event::agent_id`]).
#[derive(Debug, Clone, PartialEq)]
pub struct Event {
    pub kind: EventKind,
    pub session_id: String,
    pub timestamp_ms: u64,
    /// The subagent the event comes from; `None` for the session's own events.
    pub agent_id: Option<String>,
    /// The payload, typed; the accessors below read the common fields.
    pub data: EventData,
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

impl From<AgentEvent> for Event {
    fn from(event: AgentEvent) -> Self {
        Self {
            kind: event.kind(),
            session_id: event.session_id,
            timestamp_ms: event.timestamp_ms,
            agent_id: event.agent_id,
            data: event.data,
        }
    }
}

impl Event {
    /// Whether a subagent emitted it.
    pub fn is_from_subagent(&self) -> bool {
        self.agent_id.is_some()
    }

    /// The event as one JSON line (`agent-host run --json` prints these).
    pub fn to_json(&self) -> String {
        AgentEvent {
            data: self.data.clone(),
            session_id: self.session_id.clone(),
            timestamp_ms: self.timestamp_ms,
            agent_id: self.agent_id.clone(),
        }
        .to_json()
    }

    /// A piece of the assistant's answer as it streams (`ASSISTANT_TEXT_DELTA`).
    pub fn text_delta(&self) -> Option<&str> {
        match &self.data {
            EventData::AssistantTextDelta { delta } => Some(delta),
            _ => None,
        }
    }

    /// A piece of the model's reasoning (`REASONING_DELTA`).
    pub fn reasoning_delta(&self) -> Option<&str> {
        match &self.data {
            EventData::ReasoningDelta { delta } => Some(delta),
            _ => None,
        }
    }

    /// The whole text of one assistant turn (`ASSISTANT_TEXT_END`).
    pub fn assistant_text(&self) -> Option<&str> {
        match &self.data {
            EventData::AssistantTextEnd { text, .. } => Some(text),
            _ => None,
        }
    }

    /// The call the model made (`TOOL_CALL_START`).
    pub fn tool_call(&self) -> Option<ToolCall<'_>> {
        match &self.data {
            EventData::ToolCallStart {
                call_id,
                tool_name,
                arguments,
                ..
            } => Some(ToolCall {
                call_id,
                name: tool_name,
                arguments,
            }),
            _ => None,
        }
    }

    /// A piece of a running command's output (`TOOL_CALL_OUTPUT_DELTA`).
    pub fn tool_output_delta(&self) -> Option<&str> {
        match &self.data {
            EventData::ToolCallOutputDelta { delta, .. } => Some(delta),
            _ => None,
        }
    }

    /// A finished call (`TOOL_CALL_END`).
    pub fn tool_result(&self) -> Option<ToolResult<'_>> {
        match &self.data {
            EventData::ToolCallEnd {
                call_id,
                tool_name,
                outcome,
            } => Some(ToolResult {
                call_id,
                name: tool_name,
                output: outcome.as_result(),
            }),
            _ => None,
        }
    }

    /// The message of a `WARNING` or `ERROR`.
    pub fn message(&self) -> Option<&str> {
        match &self.data {
            EventData::Warning(warning) => Some(warning.message()),
            EventData::Error { message, .. } => Some(message),
            _ => None,
        }
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

    /// The next event if one is already there.
    pub fn try_next(&mut self) -> Option<Event> {
        let raw = self.receiver.as_mut()?.try_recv().ok()?;
        if raw.ends_session() {
            self.receiver = None;
        }
        Some(Event::from(raw))
    }

    fn poll_event(&mut self, cx: &mut Context<'_>) -> Poll<Option<Event>> {
        let Some(receiver) = &mut self.receiver else {
            return Poll::Ready(None);
        };
        let Some(raw) = std::task::ready!(receiver.poll_recv(cx)) else {
            self.receiver = None;
            return Poll::Ready(None);
        };
        if raw.ends_session() {
            self.receiver = None;
        }
        Poll::Ready(Some(Event::from(raw)))
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

    fn event(kind: EventKind, data: Value) -> Event {
        Event::from(AgentEvent::new(
            "s",
            1,
            EventData::from_value(kind, data).unwrap(),
        ))
    }

    #[test]
    fn accessors_read_their_own_kind_only() {
        let delta = event(EventKind::AssistantTextDelta, json!({"delta": "Hel"}));
        assert_eq!(delta.text_delta(), Some("Hel"));
        assert_eq!(delta.reasoning_delta(), None);
        let call = event(
            EventKind::ToolCallStart,
            json!({"call_id": "c1", "tool_name": "shell", "arguments": {"command": "ls"}, "category": "command"}),
        );
        assert_eq!(call.tool_call().unwrap().arguments["command"], "ls");
        let failed = event(
            EventKind::ToolCallEnd,
            json!({"call_id": "c1", "tool_name": "shell", "error": "boom"}),
        );
        assert_eq!(failed.tool_result().unwrap().output, Err("boom"));
        let warning = event(
            EventKind::Warning,
            json!({"kind": "persistence", "message": "disk full"}),
        );
        assert_eq!(warning.message(), Some("disk full"));
        assert_eq!(warning.kind, EventKind::Warning);
        for kind in [
            EventKind::SessionStart,
            EventKind::ToolCallOutputDelta,
            EventKind::Error,
        ] {
            assert_eq!(EventKind::parse(kind.as_str()), Some(kind));
        }
        assert_eq!(EventKind::parse("NOT_A_KIND"), None);
    }
}
