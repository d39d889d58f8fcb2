//! Benchmark 3, concurrency: N sessions in one agent-host process (a worker process that embeds the
//! agent-host library, so its peak RSS is the sessions' alone), each running 5 LLM rounds
//! against a scripted server on 127.0.0.1 that answers every request after 200 ms. The ideal
//! wall time is 5 x 200 ms = 1 s whatever N is.

use crate::context::Context;
use crate::llm_server::{LlmServer, read_files_then_done};
use crate::stats::median;
use crate::table::{Row, Target};
use anyhow::Context as _;
use serde::{Deserialize, Serialize};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// LLM requests per session: four `read_file` rounds, then the final answer.
const REQUESTS: usize = 5;
const DELAY: Duration = Duration::from_millis(200);

pub fn run(ctx: &Context) -> anyhow::Result<Vec<Row>> {
    let tokio = tokio::runtime::Runtime::new()?;
    let server = tokio.block_on(LlmServer::start(DELAY, false, read_files_then_done(REQUESTS - 1)))?;
    let dir = ctx.scratch("concurrency")?;
    crate::loop_overhead::seed_workspace(&dir.join("workspace"), REQUESTS)?;
    let worker = |sessions: usize| -> anyhow::Result<WorkerReport> {
        let output = Command::new(std::env::current_exe()?)
            .arg("--component")
            .arg(&ctx.component)
            .args([
                "concurrency-worker",
                "--sessions",
                &sessions.to_string(),
                "--base-url",
            ])
            .arg(server.base_url())
            .arg("--workspace")
            .arg(dir.join("workspace"))
            .arg("--cache")
            .arg(dir.join("cache"))
            .stdin(Stdio::null())
            .stderr(Stdio::inherit())
            .output()?;
        if !output.status.success() {
            anyhow::bail!("the worker for {sessions} sessions failed ({})", output.status);
        }
        serde_json::from_slice(&output.stdout).context("the worker's report is not JSON")
    };
    // Fills the compiled-component cache, so every measured worker starts warm.
    worker(1)?;
    let repetitions = ctx.size(3, 1);
    let mut rows = Vec::new();
    for sessions in [1, ctx.size(100, 5), ctx.size(1000, 20)] {
        let reports = (0..repetitions)
            .map(|_| worker(sessions))
            .collect::<anyhow::Result<Vec<_>>>()?;
        let wall = median(&reports.iter().map(|r| r.wall_ms).collect::<Vec<_>>());
        let peak_mib = median(
            &reports
                .iter()
                .map(|r| r.peak_rss_kib as f64 / 1024.0)
                .collect::<Vec<_>>(),
        );
        let idle_mib = median(
            &reports
                .iter()
                .map(|r| r.loaded_rss_kib as f64 / 1024.0)
                .collect::<Vec<_>>(),
        );
        let is_target = sessions == ctx.size(1000, 20);
        let ideal_ms = (REQUESTS as u64 * DELAY.as_millis() as u64) as f64;
        let mut wall_row = Row::new(
            format!("concurrency: {sessions} sessions x {REQUESTS} rounds, wall"),
            wall,
            "ms",
        );
        let mut per_session = Row::new(
            format!("concurrency: {sessions} sessions, peak RSS per session"),
            peak_mib / sessions as f64,
            "MiB",
        );
        if is_target {
            wall_row = wall_row.target(Target::AtMost(2.0 * ideal_ms));
            per_session = per_session.target(Target::AtMost(2.0));
        }
        rows.push(wall_row);
        rows.push(Row::new(
            format!("concurrency: {sessions} sessions, peak RSS"),
            peak_mib,
            "MiB",
        ));
        rows.push(per_session);
        if sessions == 1 {
            rows.push(Row::new(
                "concurrency: process RSS with the component loaded, no session",
                idle_mib,
                "MiB",
            ));
        }
    }
    Ok(rows)
}

#[derive(clap::Args)]
pub struct WorkerArgs {
    #[arg(long)]
    sessions: usize,
    #[arg(long)]
    base_url: String,
    #[arg(long)]
    workspace: PathBuf,
    #[arg(long)]
    cache: PathBuf,
}

#[derive(Serialize, Deserialize)]
struct WorkerReport {
    wall_ms: f64,
    loaded_rss_kib: u64,
    peak_rss_kib: u64,
}

/// The worker process: loads the component, runs the sessions concurrently, prints a
/// [`WorkerReport`] as JSON.
pub fn worker(component: &std::path::Path, args: WorkerArgs) -> anyhow::Result<()> {
    let tokio = tokio::runtime::Runtime::new()?;
    let report = tokio.block_on(async move {
        let base_url = args.base_url.clone();
        let endpoints = agent_host::Endpoints::from_lookup(|name| match name {
            "ANTHROPIC_BASE_URL" => Some(base_url.clone()),
            "ANTHROPIC_API_KEY" => Some("bench".to_string()),
            _ => None,
        });
        let transport = agent_host::HttpTransport::new(endpoints)?;
        let runtime = Arc::new(agent_host::AgentRuntime::load(
            component,
            Some(&args.cache),
            transport,
        )?);
        let loaded_rss_kib = proc_status_kib("VmRSS")?;
        let start = Instant::now();
        let tasks: Vec<_> = (0..args.sessions)
            .map(|_| tokio::spawn(one_session(runtime.clone(), args.workspace.clone())))
            .collect();
        for task in tasks {
            task.await??;
        }
        let wall_ms = crate::stats::millis(start.elapsed());
        anyhow::Ok(WorkerReport {
            wall_ms,
            loaded_rss_kib,
            peak_rss_kib: proc_status_kib("VmHWM")?,
        })
    })?;
    println!("{}", serde_json::to_string(&report)?);
    Ok(())
}

async fn one_session(runtime: Arc<agent_host::AgentRuntime>, workspace: PathBuf) -> anyhow::Result<()> {
    let config = agent_host::config::session_config("anthropic", "claude-sonnet-4-5");
    let env: Arc<dyn agent_host::Environment> = Arc::new(agent_host::LocalEnvironment::new(&workspace)?);
    let (mut session, mut events) = runtime.start_session(config, env).await?;
    // A host consumes events as they come; so does this one.
    let drain = tokio::spawn(async move { while events.recv().await.is_some() {} });
    let outcome = session
        .submit("Read the notes.")
        .await?
        .map_err(|e| anyhow::anyhow!("{}", agent_host::runtime::describe_agent_error(&e)))?;
    if outcome.rounds as usize != REQUESTS - 1 || outcome.final_text != "done" {
        anyhow::bail!(
            "a session ran {} rounds and ended with {:?}; expected {} rounds and \"done\"",
            outcome.rounds,
            outcome.final_text,
            REQUESTS - 1
        );
    }
    session.close().await?;
    drop(session);
    drain.await?;
    Ok(())
}

/// A `kB` figure of /proc/self/status (VmRSS: now; VmHWM: the peak).
pub fn proc_status_kib(field: &str) -> anyhow::Result<u64> {
    let status = std::fs::read_to_string("/proc/self/status")?;
    status
        .lines()
        .find_map(|line| line.strip_prefix(field)?.strip_prefix(':'))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .ok_or_else(|| anyhow::anyhow!("/proc/self/status has no {field}"))
}
