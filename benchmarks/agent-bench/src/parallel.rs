//! Benchmark 9, parallelism: what running at the same time costs over the ideal, through
//! `agent-host run --json` against a scripted server on 127.0.0.1, timed by the events' own
//! timestamps. Three `sleep 1` shell calls of one response (ideal: 1 s from the first call's
//! start to the last one's end), and two subagents each running `sleep 1` (ideal: 1 s from
//! the last spawn to the last wait). The tests prove that both overlap, by the order of their
//! events; how long they take is measured here. Every run must end each call well.

use crate::context::Context;
use crate::llm_server::LlmServer;
use crate::stats::median;
use crate::table::Row;
use anyhow::Context as _;
use serde_json::{Value, json};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

const SLEEP: &str = "sleep 1";
/// What only a subagent's system prompt says.
const CHILD_MARKER: &str = "You are a subagent";
const CALLS_TASK: &str = "Sleep three times at once.";
const SUBAGENTS_TASK: &str = "Split the sleeping between two subagents.";

pub fn run(ctx: &Context) -> anyhow::Result<Vec<Row>> {
    let tokio = tokio::runtime::Runtime::new()?;
    let server = tokio.block_on(LlmServer::start(Duration::ZERO, false, respond))?;
    let dir = ctx.scratch("parallel")?;
    std::fs::create_dir_all(dir.join("workspace"))?;
    std::fs::create_dir_all(dir.join("config"))?;
    // Fills the compiled-component cache, so every measured run starts warm.
    calls_ms(ctx, &server, &dir)?;
    let runs = ctx.size(5, 1);
    let (mut three_calls, mut two_children) = (Vec::new(), Vec::new());
    for _ in 0..runs {
        three_calls.push(calls_ms(ctx, &server, &dir)?);
        two_children.push(subagents_ms(ctx, &server, &dir)?);
    }
    Ok(vec![
        Row::new(
            "parallel: three `sleep 1` calls of one response, first start to last end",
            median(&three_calls),
            "ms",
        ),
        Row::new(
            "parallel: two subagents running `sleep 1` each, last spawn to last wait",
            median(&two_children),
            "ms",
        ),
    ])
}

/// The scripted model of both runs, chosen from the request (the round is the number of
/// tool results so far): a subagent runs `sleep 1` and answers; the subagents run's parent
/// spawns two, waits for both and answers; the other run's model calls `sleep 1` three times.
fn respond(body: &str) -> Vec<String> {
    use scripted_llm::anthropic::{message, text, tool_use};
    let round = body.matches("\"tool_result\"").count();
    let sleep = |id: &str| tool_use(id, "shell", json!({ "command": SLEEP }));
    let reply = if body.contains(CHILD_MARKER) {
        match round {
            0 => message(&[sleep("c1")]),
            _ => message(&[text("Slept.")]),
        }
    } else if body.contains(SUBAGENTS_TASK) {
        match round {
            0 => message(&[
                tool_use("s1", "spawn_agent", json!({"task": "Sleep for a second."})),
                tool_use("s2", "spawn_agent", json!({"task": "Sleep for a second too."})),
            ]),
            2 => message(&[
                tool_use("w1", "wait", json!({"agent_id": "agent-1"})),
                tool_use("w2", "wait", json!({"agent_id": "agent-2"})),
            ]),
            _ => message(&[text("done")]),
        }
    } else {
        match round {
            0 => message(&[sleep("a"), sleep("b"), sleep("c")]),
            _ => message(&[text("done")]),
        }
    };
    reply.chunks
}

/// Milliseconds from the first of the three calls' starts to the last of their ends.
fn calls_ms(ctx: &Context, server: &LlmServer, dir: &Path) -> anyhow::Result<f64> {
    let events = run_events(ctx, server, dir, CALLS_TASK)?;
    let starts = calls(&events, "TOOL_CALL_START", "shell", false);
    let ends = calls(&events, "TOOL_CALL_END", "shell", false);
    anyhow::ensure!(
        starts.len() == 3 && ends.len() == 3,
        "expected three shell calls, got {} starts and {} ends",
        starts.len(),
        ends.len()
    );
    succeeded(&ends)?;
    let first = stamps(&starts)?.into_iter().min().context("no call started")?;
    let last = stamps(&ends)?.into_iter().max().context("no call ended")?;
    Ok(last.saturating_sub(first) as f64)
}

/// Milliseconds from the last spawn's end to the last wait's end.
fn subagents_ms(ctx: &Context, server: &LlmServer, dir: &Path) -> anyhow::Result<f64> {
    let events = run_events(ctx, server, dir, SUBAGENTS_TASK)?;
    let commands = calls(&events, "TOOL_CALL_END", "shell", true);
    let spawns = calls(&events, "TOOL_CALL_END", "spawn_agent", false);
    let waits = calls(&events, "TOOL_CALL_END", "wait", false);
    anyhow::ensure!(
        commands.len() == 2 && spawns.len() == 2 && waits.len() == 2,
        "expected two subagents running one command each, got {} commands, {} spawns, {} waits",
        commands.len(),
        spawns.len(),
        waits.len()
    );
    succeeded(&commands)?;
    succeeded(&spawns)?;
    succeeded(&waits)?;
    for wait in &waits {
        let output = wait["data"]["output"].as_str().unwrap_or_default();
        anyhow::ensure!(
            output.contains("completed"),
            "a subagent did not complete: {wait}"
        );
    }
    let spawned = stamps(&spawns)?.into_iter().max().context("no spawn")?;
    let waited = stamps(&waits)?.into_iter().max().context("no wait")?;
    Ok(waited.saturating_sub(spawned) as f64)
}

/// The events of one `agent-host run --json` of `task` in the scratch workspace.
fn run_events(ctx: &Context, server: &LlmServer, dir: &Path, task: &str) -> anyhow::Result<Vec<Value>> {
    let mut command = Command::new(&ctx.agent_host);
    for (name, _) in std::env::vars() {
        if ["ANTHROPIC_", "OPENAI_", "GEMINI_", "AGENT_"]
            .iter()
            .any(|prefix| name.starts_with(prefix))
        {
            command.env_remove(name);
        }
    }
    let output = command
        .args(["run", "--provider", "anthropic", "--json", "--cwd"])
        .arg(dir.join("workspace"))
        .arg("--component")
        .arg(&ctx.component)
        .arg(task)
        .env("ANTHROPIC_BASE_URL", server.base_url())
        .env("ANTHROPIC_API_KEY", "bench")
        .env("AGENT_HOST_CACHE_DIR", dir.join("cache"))
        .env("AGENT_HOST_STATE_DIR", dir.join("state"))
        .env("AGENT_HOST_CONFIG_DIR", dir.join("config"))
        .stdin(Stdio::null())
        .output()
        .with_context(|| {
            format!(
                "cannot start {} (build it with make bench)",
                ctx.agent_host.display()
            )
        })?;
    let stdout = String::from_utf8_lossy(&output.stdout);
    if !output.status.success() {
        anyhow::bail!(
            "agent-host run failed ({}):\n{stdout}\n{}",
            output.status,
            String::from_utf8_lossy(&output.stderr)
        );
    }
    stdout
        .lines()
        .map(|line| serde_json::from_str::<Value>(line).with_context(|| format!("not an event: {line}")))
        .collect()
}

/// The `kind` events of calls of `tool`: the parent's, or (`by_subagents`) its children's.
fn calls<'a>(events: &'a [Value], kind: &str, tool: &str, by_subagents: bool) -> Vec<&'a Value> {
    events
        .iter()
        .filter(|e| e["kind"] == kind && e["data"]["tool_name"] == tool)
        .filter(|e| e["agent_id"].is_string() == by_subagents)
        .collect()
}

fn succeeded(ends: &[&Value]) -> anyhow::Result<()> {
    for end in ends {
        anyhow::ensure!(end["data"]["error"].is_null(), "a call failed: {end}");
    }
    Ok(())
}

fn stamps(events: &[&Value]) -> anyhow::Result<Vec<u64>> {
    events
        .iter()
        .map(|e| {
            e["timestamp_ms"]
                .as_u64()
                .context("an event without timestamp_ms")
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_request_gets_its_runs_next_reply() {
        let calls_of = |body: &str, tool: &str| {
            let name = format!("\"name\":\"{tool}\"");
            respond(body).concat().matches(name.as_str()).count()
        };
        let answers = |body: &str| respond(body).concat().contains("end_turn");
        let result = "{\"type\":\"tool_result\"}";
        assert_eq!(calls_of(CALLS_TASK, "shell"), 3);
        assert!(answers(format!("{CALLS_TASK}{result}{result}{result}").as_str()));
        assert_eq!(calls_of(SUBAGENTS_TASK, "spawn_agent"), 2);
        let spawned = format!("{SUBAGENTS_TASK}{result}{result}");
        assert_eq!(calls_of(spawned.as_str(), "wait"), 2);
        assert!(answers(format!("{spawned}{result}{result}").as_str()));
        let child = format!("{CHILD_MARKER} {SUBAGENTS_TASK}");
        assert_eq!(calls_of(child.as_str(), "shell"), 1);
        assert!(answers(format!("{child}{result}").as_str()));
    }
}
