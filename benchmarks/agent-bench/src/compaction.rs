//! Compaction of a long history: a session that read one 4 KB file per round until its
//! history holds about 150k tokens is saved once; each repetition restores it in a fresh
//! component instance with Claude's 200k window and asks for `compact()`, which elides the
//! old tool outputs and has the older turns summarised. The summary's reply is served
//! in-process at once, so the figure is the component's own work: estimating, eliding,
//! writing the transcript request, reading the reply and rebuilding the history.

use crate::context::Context;
use crate::stats::median;
use crate::table::Row;
use agent_host::protocol::CompactionStage;
use agent_host::{AgentRuntime, InProcessReply, InProcessTransport, LocalEnvironment};
use bytes::Bytes;
use serde_json::json;
use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

const MODEL: &str = "claude-sonnet-4-5";
/// The window the history is compacted against (Claude's).
const WINDOW: u64 = 200_000;
/// Characters of each file read: about 1,000 tokens at 4 characters a token.
const FILE_CHARS: usize = 4_000;

pub fn run(ctx: &Context) -> anyhow::Result<Vec<Row>> {
    let rounds = ctx.size(140, 8);
    let repetitions = ctx.size(11, 2);
    let dir = ctx.scratch("compaction")?;
    seed_workspace(&dir, rounds)?;
    let tokio = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let cache = ctx.out.join("component-cache");
    let transport = agent_host::HttpTransport::new(agent_host::Endpoints::default())?;
    let runtime = AgentRuntime::load(&ctx.component, Some(&cache), transport)?;
    let snapshot = tokio.block_on(long_session(&runtime, &dir, rounds))?;
    let mut times = Vec::new();
    let mut report = None;
    for _ in 0..repetitions {
        let (ms, compacted) = tokio.block_on(compact_once(&runtime, &dir, &snapshot))?;
        times.push(ms);
        report = Some(compacted);
    }
    let report = report.ok_or_else(|| anyhow::anyhow!("no repetition ran"))?;
    Ok(vec![
        Row::new(
            "compaction: history before, estimated",
            report.tokens_before as f64 / 1e3,
            "k tokens",
        ),
        Row::new(
            "compaction: history after",
            report.tokens_after as f64 / 1e3,
            "k tokens",
        ),
        Row::new("compaction: time in the component", median(&times), "ms"),
    ])
}

fn file_name(round: usize) -> String {
    format!("big/f{round:03}.txt")
}

fn seed_workspace(dir: &Path, rounds: usize) -> anyhow::Result<()> {
    std::fs::create_dir_all(dir.join("big"))?;
    for round in 0..rounds {
        let line = format!("file {round}: the quick brown fox jumps over the lazy dog, again and again\n");
        let text: String = line.chars().cycle().take(FILE_CHARS).collect();
        std::fs::write(dir.join(file_name(round)), text)?;
    }
    Ok(())
}

/// Runs the session that reads every file (with a window too large for any compaction on
/// the way) and returns its snapshot with the window set to [`WINDOW`].
async fn long_session(runtime: &AgentRuntime, dir: &Path, rounds: usize) -> anyhow::Result<String> {
    use scripted_llm::anthropic::{message, text, tool_use};
    let mut replies: Vec<Vec<Bytes>> = (0..rounds)
        .map(|round| {
            let call = tool_use(
                &format!("toolu_{round:04}"),
                "read_file",
                json!({"file_path": file_name(round)}),
            );
            message(&[call]).chunks.into_iter().map(Bytes::from).collect()
        })
        .collect();
    replies.push(
        message(&[text("Every file read.")])
            .chunks
            .into_iter()
            .map(Bytes::from)
            .collect(),
    );
    let replies = Arc::new(replies);
    let next = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let mut runtime = runtime.clone();
    runtime.set_transport(InProcessTransport::new(move |_request| {
        let index = next.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        let chunks = replies.get(index).cloned().unwrap_or_default();
        Ok(InProcessReply::event_stream(chunks))
    }));
    let mut config = agent_host::config::session_config("anthropic", MODEL);
    config.context_window_size = Some(10 * WINDOW);
    config.limits.max_tool_rounds_per_input = 0;
    let env: Arc<dyn agent_host::Environment> = Arc::new(LocalEnvironment::new(dir)?);
    let (mut session, events) = runtime.start_session(config, env).await?;
    drop(events);
    let outcome = session
        .submit("Read every file under big/, one a turn.")
        .await?
        .map_err(|e| anyhow::anyhow!("{}", agent_host::runtime::describe_agent_error(&e)))?;
    if outcome.rounds as usize != rounds {
        anyhow::bail!("the long session ran {} rounds, not {rounds}", outcome.rounds);
    }
    let mut snapshot: serde_json::Value = serde_json::from_str(&session.snapshot().await?)?;
    snapshot["config"]["context_window_size"] = json!(WINDOW);
    session.close().await?;
    Ok(snapshot.to_string())
}

/// Restores the saved session and compacts it: milliseconds and the report.
async fn compact_once(
    runtime: &AgentRuntime,
    dir: &Path,
    snapshot: &str,
) -> anyhow::Result<(f64, agent_host::protocol::CompactionReport)> {
    use scripted_llm::anthropic::{message, text};
    let summary: Vec<Bytes> = message(&[text(
        "## Task\nRead every file under big/.\n## State\nAll files read; nothing is left to do.",
    )])
    .chunks
    .into_iter()
    .map(Bytes::from)
    .collect();
    let mut runtime = runtime.clone();
    runtime.set_transport(InProcessTransport::new(move |_request| {
        Ok(InProcessReply::event_stream(summary.clone()))
    }));
    let env: Arc<dyn agent_host::Environment> = Arc::new(LocalEnvironment::new(dir)?);
    let (mut session, events) = runtime
        .restore_session(snapshot, env)
        .await?
        .map_err(|e| anyhow::anyhow!("{}", agent_host::runtime::describe_agent_error(&e)))?;
    drop(events);
    let started = Instant::now();
    let report = session
        .compact()
        .await?
        .map_err(|e| anyhow::anyhow!("{}", agent_host::runtime::describe_agent_error(&e)))?;
    let ms = started.elapsed().as_secs_f64() * 1e3;
    session.close().await?;
    if report.stage != CompactionStage::Summarised || report.tokens_after >= report.tokens_before {
        anyhow::bail!("the history was not summarised: {report:?}");
    }
    Ok((ms, report))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_history_is_summarised_and_each_figure_reported() {
        let out = std::env::temp_dir().join(format!("agent-bench-compaction-test-{}", std::process::id()));
        let ctx = crate::context::quick_for_tests(&out);
        let rows = run(&ctx).unwrap();
        assert_eq!(rows.len(), 3, "{rows:?}");
        assert!(rows[1].value < rows[0].value, "{rows:?}");
        assert!(
            rows.iter().all(|r| r.value.is_finite() && r.value > 0.0),
            "{rows:?}"
        );
        let _ = std::fs::remove_dir_all(out);
    }
}
