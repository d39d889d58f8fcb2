//! Benchmark 8, the distributed batch: scripted tasks (one model reply each, the scripted
//! server answering after 100 ms like a fast model) run by 1, 2 and 4 `agent-host worker`s on
//! a real redis-server, against the same tasks run by `agent-host batch --jobs 1` on this
//! machine; the queue's overhead per task is the 1-worker time less the local one, per task.
//! Every run must leave every task completed, so a broken run cannot pass for a fast one.

use crate::context::Context;
use crate::llm_server::{LlmServer, read_files_then_done};
use crate::table::Row;
use anyhow::Context as _;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

pub fn run(ctx: &Context) -> anyhow::Result<Vec<Row>> {
    let tokio = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()?;
    let server = tokio.block_on(LlmServer::start(
        Duration::from_millis(100),
        false,
        read_files_then_done(0),
    ))?;
    let dir = ctx.scratch("queue")?;
    let tasks = ctx.size(24, 4);
    write_tasks(&dir, tasks)?;
    let redis = Redis::start(&dir)?;
    let bench = Bench {
        ctx,
        dir: &dir,
        llm: server.base_url(),
        tasks,
    };
    // The first run compiles the component into the (empty) cache: not what is measured.
    bench.timed_batch(&["--jobs", "1"], "out-warm-up")?;
    let local = bench.local()?;
    let mut rows = Vec::new();
    let mut one = 0.0;
    for workers in [1, 2, 4] {
        let seconds = bench.queued(&redis, workers)?;
        if workers == 1 {
            one = seconds;
        }
        rows.push(Row::new(
            format!(
                "queue: {tasks} scripted tasks, {workers} worker{}",
                if workers == 1 { "" } else { "s" }
            ),
            tasks as f64 / seconds,
            "tasks/s",
        ));
    }
    rows.push(Row::new(
        "queue: the same tasks by batch --jobs 1",
        tasks as f64 / local,
        "tasks/s",
    ));
    rows.push(Row::new(
        "queue: overhead per task (1 worker vs batch --jobs 1)",
        (one - local) * 1000.0 / tasks as f64,
        "ms",
    ));
    Ok(rows)
}

fn write_tasks(dir: &Path, tasks: usize) -> anyhow::Result<()> {
    std::fs::create_dir_all(dir.join("proj"))?;
    std::fs::write(dir.join("proj/readme.md"), "hello\n")?;
    let lines: Vec<String> = (0..tasks)
        .map(|n| serde_json::json!({"id": format!("t{n}"), "instruction": "Say done.", "workspace": {"dir": "proj"}}).to_string())
        .collect();
    std::fs::write(dir.join("tasks.jsonl"), lines.join("\n") + "\n")?;
    Ok(())
}

struct Bench<'a> {
    ctx: &'a Context,
    dir: &'a Path,
    llm: String,
    tasks: usize,
}

impl Bench<'_> {
    /// agent-host with the scripted endpoint and private state, config and cache folders.
    fn agent_host(&self) -> Command {
        // Absolute: the processes run in the scratch folder.
        let mut command = Command::new(crate::context::absolute(&self.ctx.agent_host));
        for (name, _) in std::env::vars() {
            if ["ANTHROPIC_", "OPENAI_", "GEMINI_", "AGENT_"]
                .iter()
                .any(|p| name.starts_with(p))
            {
                command.env_remove(name);
            }
        }
        command
            .arg("--component")
            .arg(crate::context::absolute(&self.ctx.component))
            .env("ANTHROPIC_BASE_URL", &self.llm)
            .env("ANTHROPIC_API_KEY", "bench")
            .env("AGENT_HOST_CACHE_DIR", self.dir.join("cache"))
            .env("AGENT_HOST_STATE_DIR", self.dir.join("state"))
            .env("AGENT_HOST_CONFIG_DIR", self.dir.join("config"))
            .current_dir(self.dir)
            .stdin(Stdio::null());
        command
    }

    /// Seconds `batch` took, after checking that every task completed in `out`.
    fn timed_batch(&self, args: &[&str], out: &str) -> anyhow::Result<f64> {
        let start = Instant::now();
        let output = self
            .agent_host()
            .args(["batch", "tasks.jsonl", "--approval", "auto", "--out", out])
            .args(args)
            .output()
            .with_context(|| {
                format!(
                    "cannot start {} (build it with make bench)",
                    self.ctx.agent_host.display()
                )
            })?;
        let seconds = start.elapsed().as_secs_f64();
        let stdout = String::from_utf8_lossy(&output.stdout);
        let expected = format!("{0} tasks: {0} completed", self.tasks);
        if !output.status.success() || !stdout.contains(&expected) {
            anyhow::bail!(
                "agent-host batch failed ({}):\n{stdout}\n{}",
                output.status,
                String::from_utf8_lossy(&output.stderr)
            );
        }
        Ok(seconds)
    }

    fn local(&self) -> anyhow::Result<f64> {
        self.timed_batch(&["--jobs", "1"], "out-local")
    }

    /// Seconds for the tasks through the queue with `workers` workers, started (and ready)
    /// before the batch's clock starts.
    fn queued(&self, redis: &Redis, workers: usize) -> anyhow::Result<f64> {
        let name = format!("bench-{workers}");
        let mut running = Vec::new();
        for n in 0..workers {
            let mut child = self
                .agent_host()
                .args(["worker", "--queue", &redis.url(), "--queue-name", &name])
                .args(["--name", &format!("w{n}"), "--approval", "auto", "--work-dir"])
                .arg(self.dir.join(format!("work-{name}-{n}")))
                .stdout(Stdio::null())
                .stderr(Stdio::piped())
                .spawn()?;
            wait_ready(&mut child)?;
            running.push(Killed(child));
        }
        let out = format!("out-{name}");
        self.timed_batch(&["--queue", &redis.url(), "--queue-name", &name], &out)
    }
}

/// Waits for a worker's first line ("taking tasks from ...").
fn wait_ready(child: &mut Child) -> anyhow::Result<()> {
    let stderr = child.stderr.take().context("no stderr")?;
    let mut lines = BufReader::new(stderr).lines();
    match lines.next() {
        Some(Ok(line)) if line.contains("taking tasks") => {
            // Its later lines are read, so that a full pipe never stalls it.
            std::thread::spawn(move || lines.for_each(drop));
            Ok(())
        }
        other => anyhow::bail!("a worker did not start: {other:?}"),
    }
}

/// A child killed when dropped.
struct Killed(Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// A redis-server of the benchmark's own, on a Unix socket, without persistence.
struct Redis {
    socket: PathBuf,
    _child: Killed,
}

impl Redis {
    fn start(dir: &Path) -> anyhow::Result<Self> {
        let socket = dir.join("redis.sock");
        let child = Command::new("redis-server")
            .args(["--port", "0", "--unixsocket"])
            .arg(&socket)
            .args(["--save", "", "--appendonly", "no", "--dir"])
            .arg(dir)
            .stdout(Stdio::null())
            .spawn()
            .context("cannot start redis-server (scripts/ensure-bench-tools.sh installs it)")?;
        let redis = Self {
            socket,
            _child: Killed(child),
        };
        let deadline = Instant::now() + Duration::from_secs(20);
        while !redis.socket.exists() {
            anyhow::ensure!(Instant::now() < deadline, "redis-server did not start");
            std::thread::sleep(Duration::from_millis(20));
        }
        Ok(redis)
    }

    fn url(&self) -> String {
        format!("redis+unix://{}", self.socket.display())
    }
}
