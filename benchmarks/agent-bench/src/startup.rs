//! Benchmark 2, start-up: `agent-host run` from process start (just before spawn) to the first byte of
//! its first LLM request at a scripted server on 127.0.0.1, with the compiled-component cache
//! cold (emptied before each run) and warm. Each run completes its task, so a broken run
//! cannot pass for a fast one.

use crate::context::Context;
use crate::llm_server::{LlmServer, read_files_then_done};
use crate::stats::{median, millis};
use crate::table::{Row, Target};
use anyhow::Context as _;
use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

pub fn run(ctx: &Context) -> anyhow::Result<Vec<Row>> {
    let tokio = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()?;
    let server = tokio.block_on(LlmServer::start(Duration::ZERO, true, read_files_then_done(0)))?;
    let dir = ctx.scratch("startup")?;
    let workspace = dir.join("workspace");
    std::fs::create_dir_all(&workspace)?;
    let cache = dir.join("cache");
    let launcher = Launcher {
        ctx,
        server: &server,
        workspace: &workspace,
        cache: &cache,
        state: dir.join("state"),
        config: dir.join("config"),
    };
    std::fs::create_dir_all(&launcher.config)?;

    let (cold_runs, warm_runs) = (ctx.size(3, 1), ctx.size(15, 3));
    let mut cold = Vec::new();
    for _ in 0..cold_runs {
        if cache.exists() {
            std::fs::remove_dir_all(&cache)?;
        }
        cold.push(launcher.first_request_ms(&[])?);
    }
    // The cache is warm now (the last cold run filled it). Interleave the variants.
    let (mut warm, mut warm_no_persist, mut warm_exit) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..warm_runs {
        let run = launcher.run(&[])?;
        warm.push(run.first_request_ms);
        warm_exit.push(run.exit_ms);
        warm_no_persist.push(launcher.first_request_ms(&["--no-persist"])?);
    }
    Ok(vec![
        Row::new("start-up: first request byte, cache cold", median(&cold), "ms"),
        Row::new("start-up: first request byte, cache warm", median(&warm), "ms")
            .target(Target::AtMost(50.0)),
        Row::new(
            "start-up: first request byte, warm, --no-persist",
            median(&warm_no_persist),
            "ms",
        ),
        Row::new(
            "start-up: whole one-reply run to exit, warm",
            median(&warm_exit),
            "ms",
        ),
    ])
}

struct Launcher<'a> {
    ctx: &'a Context,
    server: &'a LlmServer,
    workspace: &'a Path,
    cache: &'a Path,
    state: std::path::PathBuf,
    config: std::path::PathBuf,
}

struct Timed {
    first_request_ms: f64,
    exit_ms: f64,
}

impl Launcher<'_> {
    fn first_request_ms(&self, extra: &[&str]) -> anyhow::Result<f64> {
        Ok(self.run(extra)?.first_request_ms)
    }

    fn run(&self, extra: &[&str]) -> anyhow::Result<Timed> {
        let before = self.server.first_bytes().len();
        let mut command = crate::context::clean_agent_host(&self.ctx.agent_host);
        command
            .args(["run", "--provider", "anthropic", "--cwd"])
            .arg(self.workspace)
            .arg("--component")
            .arg(&self.ctx.component)
            .args(extra)
            .arg("Say done.")
            .env("ANTHROPIC_BASE_URL", self.server.base_url())
            .env("ANTHROPIC_API_KEY", "bench")
            .env("AGENT_HOST_CACHE_DIR", self.cache)
            .env("AGENT_HOST_STATE_DIR", &self.state)
            .env("AGENT_HOST_CONFIG_DIR", &self.config)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let start = Instant::now();
        let child = command.spawn().with_context(|| {
            format!(
                "cannot start {} (build it with make bench)",
                self.ctx.agent_host.display()
            )
        })?;
        let output = child.wait_with_output()?;
        let exit_ms = millis(start.elapsed());
        let stdout = String::from_utf8_lossy(&output.stdout);
        if !output.status.success() || !stdout.contains("done") {
            anyhow::bail!(
                "agent-host run failed ({}):\n{stdout}\n{}",
                output.status,
                String::from_utf8_lossy(&output.stderr)
            );
        }
        let first =
            self.server.first_bytes().get(before).copied().ok_or_else(|| {
                anyhow::anyhow!("agent-host completed without a request reaching the server")
            })?;
        Ok(Timed {
            first_request_ms: millis(first.duration_since(start)),
            exit_ms,
        })
    }
}
