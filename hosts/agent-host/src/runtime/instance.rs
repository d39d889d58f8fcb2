//! One session in its own instance: its store, and the typed calls of its `agent` export.

use crate::session_host::control::SessionControl;
use crate::session_host::state::HostState;
use crate::wit::agent::{CoreInstance, CoreSession};
use agent_protocol::{AgentError, CompactionReport, ReasoningEffort, SessionState, SubmitOutcome};
use std::sync::Arc;
use wasmtime::Store;

/// One session in its own instance. `submit` borrows it mutably for the whole input;
/// steer, follow up and interrupt through `controller()` meanwhile. Every call's outer
/// error is a trap of the component.
pub struct AgentSession {
    store: Store<HostState>,
    instance: CoreInstance,
    session: CoreSession,
    control: Arc<SessionControl>,
    id: String,
}

impl AgentSession {
    pub(crate) async fn new(
        mut store: Store<HostState>,
        instance: CoreInstance,
        session: CoreSession,
        control: Arc<SessionControl>,
    ) -> anyhow::Result<Self> {
        let id = instance.id(&mut store, session).await?;
        Ok(Self {
            store,
            instance,
            session,
            control,
            id,
        })
    }

    pub fn id(&self) -> &str {
        &self.id
    }

    /// The handle through which the application steers, follows up and interrupts.
    pub fn controller(&self) -> Arc<SessionControl> {
        self.control.clone()
    }

    /// Runs the agentic loop on an input; the inner error is the agent's own.
    pub async fn submit(&mut self, input: &str) -> anyhow::Result<Result<SubmitOutcome, AgentError>> {
        let result = self.instance.submit(&mut self.store, self.session, input).await;
        self.control.clear_cancel();
        result
    }

    /// Changes the reasoning effort; the next LLM call uses it.
    pub async fn set_reasoning_effort(&mut self, effort: Option<ReasoningEffort>) -> anyhow::Result<()> {
        self.instance
            .set_reasoning_effort(&mut self.store, self.session, effort)
            .await
    }

    pub async fn state(&mut self) -> anyhow::Result<SessionState> {
        self.instance.state(&mut self.store, self.session).await
    }

    pub async fn snapshot(&mut self) -> anyhow::Result<String> {
        self.instance.snapshot(&mut self.store, self.session).await
    }

    /// What the session and its subagents have spent together (what the budgets bound).
    pub fn tree_spending(&self) -> agent_protocol::Spending {
        self.store.data().spending.total()
    }

    /// The total itself, for an instance that takes this one's place.
    pub(crate) fn spending_ledger(&self) -> Arc<crate::session_host::SpendingLedger> {
        self.store.data().spending.clone()
    }

    pub async fn history_json(&mut self) -> anyhow::Result<String> {
        self.instance.history_json(&mut self.store, self.session).await
    }

    /// The profile as the session uses it (capabilities, tools, system prompt), as JSON.
    pub async fn describe(&mut self) -> anyhow::Result<String> {
        self.instance.describe(&mut self.store, self.session).await
    }

    /// Compacts the history now (see the WIT's `session.compact`).
    pub async fn compact(&mut self) -> anyhow::Result<Result<CompactionReport, AgentError>> {
        let result = self.instance.compact(&mut self.store, self.session).await;
        // A cancel meant for the summary must not stop the next input.
        self.control.clear_cancel();
        result
    }

    /// Closes the session (SESSION_END is emitted) and its subagents.
    pub async fn close(&mut self) -> anyhow::Result<()> {
        let closed = self.instance.close(&mut self.store, self.session).await;
        if let Some(subagents) = self.store.data().subagents.clone() {
            subagents.close_all().await;
        }
        closed
    }
}

/// An agent error in words, for people and for a parent agent reading a subagent's result.
pub fn describe_agent_error(error: &AgentError) -> String {
    match error {
        AgentError::Closed => "the session is closed".to_string(),
        AgentError::Busy => "the session is busy".to_string(),
        AgentError::InvalidConfig(m) => format!("invalid configuration: {m}"),
        AgentError::Llm(m) => format!("the LLM request failed: {m}"),
        AgentError::Internal(m) => format!("internal error: {m}"),
    }
}
