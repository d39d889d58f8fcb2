//! Saving and restoring a session: its snapshot, and resuming a saved one from its last
//! snapshot plus the history journaled since.

use super::Session;
use crate::config::SessionConfig;
use crate::history::{HistoryEntry, ResumeRequest, ToolResult, Turn};
use crate::loop_detection::LoopDetector;
use crate::ports::Ports;
use agent_protocol::{AgentError, SessionState};
use serde::{Deserialize, Serialize};

/// What `snapshot` saves and `restore` reads.
#[derive(Debug, Serialize, Deserialize)]
struct Snapshot {
    version: u32,
    id: String,
    config: SessionConfig,
    history: Vec<Turn>,
    total_turns: u32,
    state: SessionState,
    #[serde(default)]
    loop_detector: LoopDetector,
    #[serde(default)]
    context_warned: bool,
    #[serde(default)]
    session_usage: agent_protocol::UsageTotals,
    /// The session tree's spending (it and its subagents); absent in older snapshots.
    #[serde(default)]
    tree_spent: Option<agent_protocol::Spending>,
}

const SNAPSHOT_VERSION: u32 = 1;

fn parse_snapshot(snapshot: &str) -> Result<Snapshot, AgentError> {
    let snap: Snapshot =
        serde_json::from_str(snapshot).map_err(|e| AgentError::InvalidConfig(format!("snapshot: {e}")))?;
    if snap.version != SNAPSHOT_VERSION {
        return Err(AgentError::InvalidConfig(format!(
            "snapshot: version {} is not supported (expected {SNAPSHOT_VERSION})",
            snap.version
        )));
    }
    Ok(snap)
}

/// What the model reads for a call that a crash cut short.
const INTERRUPTED_CALL: &str = "This tool call was interrupted: the agent host stopped before it finished, \
     so its outcome is unknown. Check its effects before running it again.";

impl Session {
    /// Rebuilds a session from `snapshot` output.
    pub fn restore(snapshot: &str, ports: Ports) -> Result<Self, AgentError> {
        let snap = parse_snapshot(snapshot)?;
        // A snapshot taken mid-input resumes idle: the interrupted input is in the history.
        let state = match snap.state {
            SessionState::Processing => SessionState::Idle,
            other => other,
        };
        let spent = Self::saved_spending(&snap);
        let session = Self::from_snapshot(snap, state, ports);
        session.seed_spending(spent);
        Ok(session)
    }

    /// Reopens a saved session: its last snapshot, then the history entries journaled after
    /// it (`record_history`), in order. A tool round the journal leaves open is closed, each
    /// call without a result marked as interrupted. The session is idle afterwards, even one
    /// an LLM error had closed.
    pub fn resume(request: &ResumeRequest, ports: Ports) -> Result<Self, AgentError> {
        let mut snap = parse_snapshot(&request.snapshot)?;
        if let Some(model) = &request.model {
            snap.config.model = model.clone();
        }
        let mut spent = Self::saved_spending(&snap);
        let mut session = Self::from_snapshot(snap, SessionState::Idle, ports);
        let mut pending: Vec<ToolResult> = Vec::new();
        for (n, text) in request.journal.iter().enumerate() {
            let entry = HistoryEntry::from_json(text)
                .map_err(|e| AgentError::InvalidConfig(format!("journal entry {n}: {e}")))?;
            let next = session.history.len() as u32;
            let gap = || {
                AgentError::InvalidConfig(format!(
                    "journal entry {n}: it is for history item {} but the history has {next} items",
                    entry.index()
                ))
            };
            match entry {
                HistoryEntry::Replace { turns } => {
                    pending.clear();
                    session.history = crate::history::History::new(turns);
                }
                HistoryEntry::Append { index, .. } | HistoryEntry::ToolResult { index, .. }
                    if index < next => {}
                HistoryEntry::Append { index, turn } if index == next => {
                    if let Turn::Assistant { usage, .. } = &turn {
                        session.total_turns += 1;
                        spent.add(agent_protocol::Spending::of(&session.add_usage(usage)));
                    }
                    pending.clear();
                    session.history.push(turn);
                }
                HistoryEntry::ToolResult { index, result } if index == next => {
                    pending.retain(|r| r.tool_call_id != result.tool_call_id);
                    pending.push(result);
                }
                _ => return Err(gap()),
            }
        }
        session.close_open_round(pending);
        session.seed_spending(spent);
        if let Some(more) = request.more_turns {
            session.config.limits.max_turns = if more == 0 {
                0
            } else {
                session.total_turns.saturating_add(more)
            };
        }
        Ok(session)
    }

    /// After a crash mid-round: the finished calls keep their results, the others get one
    /// saying they were interrupted.
    fn close_open_round(&mut self, mut finished: Vec<ToolResult>) {
        let Some(Turn::Assistant { message, .. }) = self.history.last() else {
            return;
        };
        let calls = message.tool_calls();
        if calls.is_empty() {
            return;
        }
        let results = calls
            .iter()
            .map(
                |call| match finished.iter().position(|r| r.tool_call_id == call.id) {
                    Some(at) => finished.swap_remove(at),
                    None => ToolResult {
                        tool_call_id: call.id.clone(),
                        content: INTERRUPTED_CALL.to_string(),
                        is_error: true,
                        images: Vec::new(),
                    },
                },
            )
            .collect();
        self.append(Turn::ToolResults {
            results,
            timestamp_ms: self.now(),
        });
    }

    fn from_snapshot(snap: Snapshot, state: SessionState, ports: Ports) -> Self {
        let mut session = Self::assemble(snap.id, snap.config, ports, snap.history, snap.total_turns, state);
        session.loop_detector = snap.loop_detector;
        session.context_warned = snap.context_warned;
        session.session_usage = snap.session_usage;
        session
    }

    /// What the tree had spent when `snap` was taken (older snapshots: the session alone).
    fn saved_spending(snap: &Snapshot) -> agent_protocol::Spending {
        snap.tree_spent
            .unwrap_or_else(|| agent_protocol::Spending::of(&snap.session_usage))
    }

    /// Tells the host what the tree has spent by `spent`, as far as it does not know it yet:
    /// a fresh host learns all of it, a host that kept the tree's total (an instance
    /// restarted in the same process) nothing twice.
    fn seed_spending(&self, spent: agent_protocol::Spending) {
        let known = self
            .ports
            .host
            .spend(&self.id, Default::default(), Default::default());
        let missing = spent.beyond(&known);
        if missing != agent_protocol::Spending::default() {
            self.ports.host.spend(&self.id, missing, Default::default());
        }
    }

    pub fn snapshot(&self) -> String {
        let snap = Snapshot {
            version: SNAPSHOT_VERSION,
            id: self.id.clone(),
            config: self.config.clone(),
            history: self.history.to_vec(),
            total_turns: self.total_turns,
            state: self.state,
            loop_detector: self.loop_detector.clone(),
            context_warned: self.context_warned,
            session_usage: self.session_usage,
            tree_spent: Some(self.tree_spending()),
        };
        serde_json::to_string(&snap).unwrap_or_default()
    }
}
