//! The core as a component in wasmtime, through agent-host's runtime: the same files through
//! the `execution-environment` import (agent-host's local environment), the same replies
//! through the `llm-transport` import served in-process.

use super::script::{RunResult, Timeline};
use agent_host::protocol::ports::TransportError;
use agent_host::{AgentRuntime, InProcessReply, InProcessTransport, LocalEnvironment};
use bytes::Bytes;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

pub async fn run(
    runtime: &AgentRuntime,
    dir: &Path,
    replies: &[Vec<String>],
    prompt: &str,
) -> anyhow::Result<RunResult> {
    let timeline = Arc::new(Timeline::default());
    let replies: Arc<Vec<Vec<Bytes>>> = Arc::new(
        replies
            .iter()
            .map(|chunks| chunks.iter().map(|c| Bytes::from(c.clone())).collect())
            .collect(),
    );
    let mut runtime = runtime.clone();
    let served = timeline.clone();
    runtime.set_transport(InProcessTransport::new(move |request| {
        let index = served.record(request.body.len());
        let chunks = replies
            .get(index)
            .ok_or_else(|| TransportError::Connect(format!("no reply scripted for request {}", index + 1)))?;
        Ok(InProcessReply::event_stream(chunks.iter().cloned()))
    }));
    let config = super::session_config();
    let env: Arc<dyn agent_host::Environment> = Arc::new(LocalEnvironment::new(dir)?);
    let (mut session, mut events) = runtime.start_session(config, env).await?;
    let counted = Arc::new(AtomicUsize::new(0));
    let counter = counted.clone();
    let drain = tokio::spawn(async move {
        while let Some(event) = events.recv().await {
            std::hint::black_box(&event);
            counter.fetch_add(1, Ordering::Relaxed);
        }
    });
    let outcome = session.submit(prompt).await?.map_err(|e| {
        anyhow::anyhow!(
            "component session: {}",
            agent_host::runtime::describe_agent_error(&e)
        )
    })?;
    super::check_history(
        &session.history_json().await?,
        replies_len(&timeline),
        "component",
    )?;
    session.close().await?;
    drop(session);
    drain.await?;
    Ok(RunResult {
        rounds: outcome.rounds,
        final_text: outcome.final_text,
        round_costs_ms: timeline.round_costs_ms(),
        body_sizes: timeline.body_sizes(),
        events: counted.load(Ordering::Relaxed),
    })
}

/// Rounds run so far: one request more than rounds.
fn replies_len(timeline: &Timeline) -> usize {
    timeline.body_sizes().len().saturating_sub(1)
}
