//! Benchmark 11, editors over ACP: `agent-host acp` driven over its standard input and output
//! (newline-delimited JSON-RPC, written here as an editor writes it) against the scripted
//! server on 127.0.0.1. Figures: the time from sending `session/prompt` to the first
//! `session/update` back, and the cost each tool call adds over ACP (with the client reading
//! files, and without) against `agent-host run`. A call's cost is the slope between a session
//! of no calls and one of N `read_file` calls, so start-up and the final answer cancel out.

use crate::context::Context;
use crate::llm_server::{LlmServer, read_files_then_done};
use crate::stats::{median, millis};
use crate::table::{Row, Target};
use anyhow::{Context as _, bail};
use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, channel};
use std::time::{Duration, Instant};

/// The longest a reply may take before the benchmark gives up (a hang, not a figure).
const PATIENCE: Duration = Duration::from_secs(60);

pub fn run(ctx: &Context) -> anyhow::Result<Vec<Row>> {
    let rounds = ctx.size(40, 3);
    let repetitions = ctx.size(9, 2);
    let dir = ctx.scratch("acp")?;
    let workspace = dir.join("workspace");
    std::fs::create_dir_all(&workspace)?;
    crate::loop_overhead::seed_workspace(&workspace, rounds)?;
    let tokio = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()?;
    let none = tokio.block_on(LlmServer::start(Duration::ZERO, false, read_files_then_done(0)))?;
    let many = tokio.block_on(LlmServer::start(
        Duration::ZERO,
        false,
        read_files_then_done(rounds),
    ))?;
    let launch = |server: &LlmServer, args: &[&str]| launcher(ctx, &dir, &workspace, server, args);

    let (mut run_none, mut run_many) = (Vec::new(), Vec::new());
    for _ in 0..repetitions {
        run_none.push(whole_run(launch(&none, &["run"]))?);
        run_many.push(whole_run(launch(&many, &["run"]))?);
    }
    let mut first_update = Vec::new();
    let mut acp_slopes = Vec::new();
    for editor_files in [false, true] {
        let mut agent_none = Acp::start(launch(&none, &["acp"]), editor_files)?;
        let mut agent_many = Acp::start(launch(&many, &["acp"]), editor_files)?;
        let (mut prompt_none, mut prompt_many) = (Vec::new(), Vec::new());
        for _ in 0..repetitions {
            let timed = agent_none.prompt(&workspace, 0)?;
            if !editor_files {
                first_update.push(timed.first_update_ms);
            }
            prompt_none.push(timed.answer_ms);
            prompt_many.push(agent_many.prompt(&workspace, rounds)?.answer_ms);
        }
        acp_slopes.push((median(&prompt_many) - median(&prompt_none)) / rounds as f64);
    }
    let run_slope = (median(&run_many) - median(&run_none)) / rounds as f64;
    Ok(vec![
        Row::new("acp: session/prompt to first update", median(&first_update), "ms")
            .target(Target::AtMost(50.0)),
        Row::new("acp: run, per tool call", run_slope, "ms"),
        Row::new("acp: acp, per tool call", acp_slopes[0], "ms"),
        Row::new(
            "acp: acp, added per tool call over run",
            acp_slopes[0] - run_slope,
            "ms",
        )
        .target(Target::AtMost(2.0)),
        Row::new(
            "acp: acp reading through the editor, per tool call",
            acp_slopes[1],
            "ms",
        ),
    ])
}

/// `agent-host ARGS` in `workspace` against `server`, the sessions saved under `dir`.
fn launcher(ctx: &Context, dir: &Path, workspace: &Path, server: &LlmServer, args: &[&str]) -> Command {
    // Absolute (clean_agent_host makes it so): the command runs in the workspace.
    let mut command = crate::context::clean_agent_host(&ctx.agent_host);
    command
        .args(args)
        .args(["--provider", "anthropic", "--approval", "auto", "--component"])
        .arg(crate::context::absolute(&ctx.component))
        .current_dir(workspace)
        .env("ANTHROPIC_BASE_URL", server.base_url())
        .env("ANTHROPIC_API_KEY", "bench")
        .env("AGENT_HOST_CACHE_DIR", dir.join("cache"))
        .env("AGENT_HOST_STATE_DIR", dir.join("state"))
        .env("AGENT_HOST_CONFIG_DIR", dir.join("config"))
        .stderr(Stdio::null());
    command
}

/// A whole `agent-host run` of the task, spawn to exit, in milliseconds.
fn whole_run(mut command: Command) -> anyhow::Result<f64> {
    command
        .arg("Read the notes.")
        .stdin(Stdio::null())
        .stdout(Stdio::piped());
    let start = Instant::now();
    let output = command
        .output()
        .context("cannot start agent-host (build it with make bench)")?;
    let took = millis(start.elapsed());
    if !output.status.success() || !String::from_utf8_lossy(&output.stdout).contains("done") {
        bail!("agent-host run failed ({})", output.status);
    }
    Ok(took)
}

/// One prompt's times.
struct Timed {
    first_update_ms: f64,
    answer_ms: f64,
}

/// A running `agent-host acp` and the messages it sends, as they arrive.
struct Acp {
    child: Child,
    input: ChildStdin,
    messages: Receiver<(Instant, Value)>,
    next_id: u64,
}

impl Acp {
    fn start(mut command: Command, editor_files: bool) -> anyhow::Result<Self> {
        command.stdin(Stdio::piped()).stdout(Stdio::piped());
        let mut child = command.spawn().context("cannot start agent-host acp")?;
        let input = child.stdin.take().context("no standard input")?;
        let output = child.stdout.take().context("no standard output")?;
        let (send, messages) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(output).lines() {
                let Ok(line) = line else { break };
                let Ok(message) = serde_json::from_str::<Value>(&line) else {
                    continue;
                };
                if send.send((Instant::now(), message)).is_err() {
                    break;
                }
            }
        });
        let mut acp = Self {
            child,
            input,
            messages,
            next_id: 0,
        };
        let capabilities = json!({"fs": {"readTextFile": editor_files, "writeTextFile": editor_files}});
        acp.request(
            "initialize",
            json!({"protocolVersion": 1, "clientCapabilities": capabilities}),
        )?;
        Ok(acp)
    }

    /// Sends a request; its result, with when the first update came (if one did).
    fn request(&mut self, method: &str, params: Value) -> anyhow::Result<(Value, Option<Instant>)> {
        let id = self.next_id;
        self.next_id += 1;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))?;
        let mut first_update = None;
        loop {
            let (at, message) = self
                .messages
                .recv_timeout(PATIENCE)
                .with_context(|| format!("agent-host acp did not answer {method}"))?;
            match message.get("method").and_then(Value::as_str) {
                Some("session/update") => {
                    let kind = &message["params"]["update"]["sessionUpdate"];
                    if kind != "available_commands_update" {
                        first_update.get_or_insert(at);
                    }
                }
                Some("fs/read_text_file") => self.read_for_agent(&message)?,
                Some(other) => bail!("agent-host acp asked {other}, which this client does not answer"),
                None if message["id"] == id => {
                    if let Some(error) = message.get("error") {
                        bail!("{method} failed: {error}");
                    }
                    return Ok((message["result"].clone(), first_update));
                }
                None => {}
            }
        }
    }

    /// A new session in `workspace` and one prompt there, which `rounds` tool calls answer.
    fn prompt(&mut self, workspace: &Path, rounds: usize) -> anyhow::Result<Timed> {
        let (session, _) = self.request("session/new", json!({"cwd": workspace, "mcpServers": []}))?;
        let session_id = session["sessionId"].clone();
        let prompt =
            json!({"sessionId": session_id, "prompt": [{"type": "text", "text": "Read the notes."}]});
        let start = Instant::now();
        let (answer, first_update) = self.request("session/prompt", prompt)?;
        let answer_ms = millis(start.elapsed());
        if answer["stopReason"] != "end_turn" {
            bail!("the prompt ended {answer} after {rounds} rounds");
        }
        let first_update = first_update.context("the prompt was answered without an update")?;
        Ok(Timed {
            first_update_ms: millis(first_update.duration_since(start)),
            answer_ms,
        })
    }

    /// Answers the agent's `fs/read_text_file` from the disk, as an editor with no unsaved
    /// buffer for the file does.
    fn read_for_agent(&mut self, message: &Value) -> anyhow::Result<()> {
        let path = message["params"]["path"].as_str().unwrap_or_default();
        let reply = match std::fs::read_to_string(path) {
            Ok(content) => json!({"jsonrpc": "2.0", "id": message["id"], "result": {"content": content}}),
            Err(e) => json!({"jsonrpc": "2.0", "id": message["id"],
                "error": {"code": -32002, "message": e.to_string()}}),
        };
        self.send(&reply)
    }

    fn send(&mut self, message: &Value) -> anyhow::Result<()> {
        writeln!(self.input, "{message}").context("agent-host acp closed its input")?;
        Ok(self.input.flush()?)
    }
}

impl Drop for Acp {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[cfg(test)]
mod tests {
    /// Runs the real binary of this checkout (target/debug/agent-host).
    #[test]
    fn quick_sizes_measure_every_figure() {
        let out = std::env::temp_dir().join(format!("agent-bench-acp-test-{}", std::process::id()));
        let rows = super::run(&crate::context::quick_for_tests(&out)).unwrap();
        assert_eq!(rows.len(), 5, "{rows:?}");
        assert!(
            rows[0].value > 0.0 && rows.iter().all(|r| r.value.is_finite()),
            "{rows:?}"
        );
        let _ = std::fs::remove_dir_all(out);
    }
}
