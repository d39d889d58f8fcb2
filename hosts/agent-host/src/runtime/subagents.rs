//! Subagents (spec section 7) as concurrent component instances: each child is a session of
//! its own instance, driven by its own task, sharing the parent's environment (scoped to a
//! subdirectory when asked). Its events join the parent's stream tagged with its id; closing
//! or dropping the parent aborts every child.

use super::instance::{AgentSession, describe_agent_error};
use crate::environments::environment::Environment;
use crate::environments::policy::scoped::Scoped;
use crate::session_host::control::{AgentEvent, SessionControl};
use crate::session_host::state::SubagentHost;
use agent_protocol::ports::{SubagentRequest, SubagentResult};
use agent_protocol::{SessionConfig, StopReason};
use async_trait::async_trait;
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::{mpsc, watch};
use tokio::task::JoinHandle;

/// How long a closed child may take to wind down (kill its commands, end its session)
/// before its task is dropped.
const CLOSE_GRACE: Duration = Duration::from_secs(10);

/// Children of one session that may be alive at once: each is a component instance with
/// its own LLM requests, so a model spawning in a loop must hit a wall.
pub const MAX_LIVE_SUBAGENTS: usize = 8;

/// A child's turn limit: what it asked for (0: unlimited), never above its parent's.
fn child_turn_limit(requested: u32, parent: u32) -> u32 {
    match (requested, parent) {
        (_, 0) => requested,
        (0, parent) => parent,
        (requested, parent) => requested.min(parent),
    }
}

/// Starts a child's session in a fresh instance: what [`Subagents`] needs of the runtime.
#[async_trait]
pub trait ChildStarter: Send + Sync {
    async fn start_child(
        &self,
        config: SessionConfig,
        env: Arc<dyn Environment>,
    ) -> anyhow::Result<(AgentSession, mpsc::UnboundedReceiver<AgentEvent>)>;
}

/// The children of one session.
pub struct Subagents {
    runtime: Arc<dyn ChildStarter>,
    parent_config: SessionConfig,
    env: Arc<dyn Environment>,
    events: mpsc::UnboundedSender<AgentEvent>,
    children: Mutex<BTreeMap<String, Child>>,
    spawned: Mutex<u32>,
    /// Children being started (counted against [`MAX_LIVE_SUBAGENTS`] with the live ones).
    starting: Mutex<usize>,
}

/// One child being started: its slot is given back when the start ends either way.
struct Starting<'a>(&'a Mutex<usize>);

impl<'a> Starting<'a> {
    fn take(count: &'a Mutex<usize>) -> Self {
        *lock(count) += 1;
        Self(count)
    }
}

impl Drop for Starting<'_> {
    fn drop(&mut self) {
        let mut count = lock(self.0);
        *count = count.saturating_sub(1);
    }
}

struct Child {
    control: Arc<SessionControl>,
    inputs: mpsc::UnboundedSender<String>,
    state: Arc<watch::Sender<ChildState>>,
    task: JoinHandle<()>,
}

#[derive(Debug, Clone, Default)]
struct ChildState {
    /// Working on an input.
    busy: bool,
    /// The result of the latest finished input.
    last: Option<SubagentResult>,
    /// Why the child can take no more input (its instance failed or it was closed).
    ended: Option<String>,
}

impl Subagents {
    pub fn new(
        runtime: Arc<dyn ChildStarter>,
        parent_config: SessionConfig,
        env: Arc<dyn Environment>,
        events: mpsc::UnboundedSender<AgentEvent>,
    ) -> Self {
        Self {
            runtime,
            parent_config,
            env,
            events,
            children: Mutex::new(BTreeMap::new()),
            spawned: Mutex::new(0),
            starting: Mutex::new(0),
        }
    }

    /// Starts a child on its own task and returns its id at once.
    pub async fn spawn(&self, request: SubagentRequest) -> Result<String, String> {
        // The slot is taken before the awaits below, so parallel spawns of one response
        // cannot all pass the check.
        let _slot = {
            let children = lock(&self.children);
            let live = children
                .values()
                .filter(|child| child.state.borrow().ended.is_none())
                .count();
            let starting = *lock(&self.starting);
            if live + starting >= MAX_LIVE_SUBAGENTS {
                return Err(format!(
                    "{MAX_LIVE_SUBAGENTS} subagents are already running or starting, the most a \
                     session may have; wait for one or close one (close_agent) before spawning another"
                ));
            }
            Starting::take(&self.starting)
        };
        let env = match request.working_dir.as_deref() {
            Some(dir) => Arc::new(
                Scoped::new(self.env.clone(), dir)
                    .await
                    .map_err(|e| format!("cannot scope a subagent to {dir}: {e}"))?,
            ) as Arc<dyn Environment>,
            None => self.env.clone(),
        };
        let mut config = self.parent_config.clone();
        if let Some(model) = request.model {
            config.model = model;
        }
        config.limits.max_turns = child_turn_limit(request.max_turns, self.parent_config.limits.max_turns);
        config.depth = request.depth;
        config.session_id = None;
        // The shape asked of the session's final answer is not a subagent's: its report is
        // prose for its parent.
        config.output_schema = None;
        let id = {
            let mut spawned = lock(&self.spawned);
            *spawned += 1;
            format!("agent-{}", *spawned)
        };
        let (session, events) = self
            .runtime
            .start_child(config, env)
            .await
            .map_err(|e| format!("the subagent's instance failed to start: {e:#}"))?;
        forward_events(events, self.events.clone(), id.clone());
        let control = session.controller();
        let state = Arc::new(watch::Sender::new(ChildState {
            busy: true,
            ..ChildState::default()
        }));
        let (inputs, pending) = mpsc::unbounded_channel();
        let task = tokio::spawn(drive(session, request.task, pending, state.clone()));
        lock(&self.children).insert(
            id.clone(),
            Child {
                control,
                inputs,
                state,
                task,
            },
        );
        Ok(id)
    }

    /// Steers a working child, or starts a new input for an idle one.
    pub fn send(&self, id: &str, message: String) -> Result<(), String> {
        let children = lock(&self.children);
        let child = children.get(id).ok_or_else(|| unknown(id))?;
        if let Some(why) = &child.state.borrow().ended {
            return Err(format!("subagent {id} has ended: {why}"));
        }
        let mut started = false;
        child.state.send_modify(|state| {
            started = !state.busy;
            state.busy = true;
        });
        if started {
            child
                .inputs
                .send(message)
                .map_err(|_| format!("subagent {id} has ended"))
        } else {
            child.control.steer(message);
            Ok(())
        }
    }

    /// Waits until the child is done with its current input.
    pub async fn wait(&self, id: &str) -> Result<SubagentResult, String> {
        let mut state = lock(&self.children)
            .get(id)
            .ok_or_else(|| unknown(id))?
            .state
            .subscribe();
        let state = state
            .wait_for(|s| !s.busy || s.ended.is_some())
            .await
            .map_err(|_| format!("subagent {id} is gone"))?
            .clone();
        match (state.last, state.ended) {
            (Some(result), _) => Ok(result),
            (None, Some(why)) => Err(format!("subagent {id} ended without a result: {why}")),
            (None, None) => Err(format!("subagent {id} has no result yet")),
        }
    }

    /// Aborts a child (its commands are killed) and forgets it.
    pub async fn close(&self, id: &str) -> Result<(), String> {
        let child = lock(&self.children).remove(id).ok_or_else(|| unknown(id))?;
        stop(child).await;
        Ok(())
    }

    /// Aborts every child and waits for each to wind down.
    pub async fn close_all(&self) {
        let children: Vec<Child> = std::mem::take(&mut *lock(&self.children)).into_values().collect();
        futures_util::future::join_all(children.into_iter().map(stop)).await;
    }
}

#[async_trait]
impl SubagentHost for Subagents {
    async fn spawn(&self, request: SubagentRequest) -> Result<String, String> {
        Subagents::spawn(self, request).await
    }
    fn send(&self, agent_id: &str, message: String) -> Result<(), String> {
        Subagents::send(self, agent_id, message)
    }
    async fn wait(&self, agent_id: &str) -> Result<SubagentResult, String> {
        Subagents::wait(self, agent_id).await
    }
    async fn close(&self, agent_id: &str) -> Result<(), String> {
        Subagents::close(self, agent_id).await
    }
    async fn close_all(&self) {
        Subagents::close_all(self).await
    }
}

impl Drop for Subagents {
    fn drop(&mut self) {
        // Without an async context, abort: the dropped sessions kill their processes.
        for child in lock(&self.children).values() {
            child.control.abort();
            child.task.abort();
        }
    }
}

async fn stop(child: Child) {
    child.control.abort();
    drop(child.inputs);
    let mut task = child.task;
    if tokio::time::timeout(CLOSE_GRACE, &mut task).await.is_err() {
        task.abort();
    }
}

/// Runs the child's inputs one after another until it is closed.
async fn drive(
    mut session: AgentSession,
    task: String,
    mut pending: mpsc::UnboundedReceiver<String>,
    state: Arc<watch::Sender<ChildState>>,
) {
    let mut input = task;
    loop {
        let result = match session.submit(&input).await {
            Ok(Ok(outcome)) => SubagentResult {
                success: outcome.stop_reason == StopReason::Completed,
                turns_used: outcome.turns,
                output: outcome.final_text,
            },
            Ok(Err(error)) => SubagentResult {
                output: format!("the subagent failed: {}", describe_agent_error(&error)),
                success: false,
                turns_used: 0,
            },
            Err(trap) => {
                let why = format!("its instance trapped: {trap:#}");
                state.send_modify(|s| {
                    s.busy = false;
                    s.ended = Some(why);
                });
                return;
            }
        };
        state.send_modify(|s| {
            s.busy = false;
            s.last = Some(result);
        });
        match pending.recv().await {
            Some(next) => input = next,
            None => break,
        }
    }
    let _ = session.close().await;
    state.send_modify(|s| s.ended = Some("closed".to_string()));
}

/// Passes a child's events on to the parent's stream, tagged with the child's id.
fn forward_events(
    mut events: mpsc::UnboundedReceiver<AgentEvent>,
    parent: mpsc::UnboundedSender<AgentEvent>,
    id: String,
) {
    tokio::spawn(async move {
        while let Some(mut event) = events.recv().await {
            event.agent_id.get_or_insert_with(|| id.clone());
            if parent.send(event).is_err() {
                break;
            }
        }
    });
}

fn unknown(id: &str) -> String {
    format!("no subagent {id} (it was never spawned or is already closed)")
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

#[cfg(test)]
mod tests {
    use super::child_turn_limit;

    /// A child's `max_turns` of 0 once meant unlimited whatever the parent's.
    #[test]
    fn a_child_never_gets_more_turns_than_its_parent() {
        assert_eq!(child_turn_limit(0, 3), 3);
        assert_eq!(child_turn_limit(10, 3), 3);
        assert_eq!(child_turn_limit(2, 3), 2);
        assert_eq!(child_turn_limit(0, 0), 0);
        assert_eq!(child_turn_limit(5, 0), 5);
    }
}
