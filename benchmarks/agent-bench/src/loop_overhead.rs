//! Benchmark 1, loop overhead: a session of N rounds (each a scripted reply with one small
//! `read_file` call, served in-process without network) run by the core linked natively and
//! by the core as a component in wasmtime. Figures: per-round cost at rounds 1, 50 and N,
//! the wasm/native ratios, and how per-round cost grows next to the serialised history.

mod component;
mod native;
mod script;

use crate::context::Context;
use crate::stats::median;
use crate::table::{Row, Target};
use script::RunResult;
pub use script::seed_workspace;

const MODEL: &str = "claude-sonnet-4-5";

/// The sessions both sides run: the default round limit per input (200) would stop a
/// 200-round session one request short of its answer.
fn session_config() -> agent_host::protocol::SessionConfig {
    let mut config = agent_host::protocol::SessionConfig::new("anthropic", MODEL);
    config.limits.max_tool_rounds_per_input = 0;
    config
}

/// Rounds averaged at each end of the session for the growth figures.
const GROWTH_WINDOW: usize = 10;

pub fn run(ctx: &Context) -> anyhow::Result<Vec<Row>> {
    let rounds = ctx.size(200, 12);
    let repetitions = ctx.size(21, 2);
    let dir = ctx.scratch("loop")?;
    script::seed_workspace(&dir, rounds)?;
    let replies = script::replies(rounds);
    let prompt = format!("Read notes/f000.txt to notes/f{:03}.txt one by one.", rounds - 1);

    let tokio = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let runtime = tokio.block_on(load_runtime(ctx))?;
    let (mut natives, mut components) = (Vec::new(), Vec::new());
    // Interleaved, so that a noisy moment of the machine hits both sides.
    for _ in 0..repetitions {
        let native = native::run(&dir, &replies, &prompt)?;
        native.check(rounds, "native")?;
        natives.push(native);
        let wasm = tokio.block_on(component::run(&runtime, &dir, &replies, &prompt))?;
        wasm.check(rounds, "component")?;
        components.push(wasm);
    }
    if natives[0].events != components[0].events {
        anyhow::bail!(
            "the two sides emitted different numbers of events ({} native, {} component)",
            natives[0].events,
            components[0].events
        );
    }
    Ok(rows(rounds, &natives, &components))
}

async fn load_runtime(ctx: &Context) -> anyhow::Result<agent_host::AgentRuntime> {
    let cache = ctx.out.join("component-cache");
    // Placeholder transport: each run sets its own in-process one.
    let transport = agent_host::HttpTransport::new(agent_host::Endpoints::default())?;
    agent_host::AgentRuntime::load(&ctx.component, Some(&cache), transport)
}

fn rows(rounds: usize, natives: &[RunResult], components: &[RunResult]) -> Vec<Row> {
    let at = |runs: &[RunResult], round: usize| {
        median(
            &runs
                .iter()
                .map(|r| r.round_costs_ms[round - 1])
                .collect::<Vec<_>>(),
        )
    };
    let total = |runs: &[RunResult]| {
        median(
            &runs
                .iter()
                .map(|r| r.round_costs_ms.iter().sum())
                .collect::<Vec<f64>>(),
        )
    };
    let mid = if rounds >= 100 { 50 } else { rounds / 2 };
    let mut rows = Vec::new();
    for round in [1, mid, rounds] {
        let (native, wasm) = (at(natives, round), at(components, round));
        rows.push(Row::new(
            format!("loop: native core, round {round}"),
            native,
            "ms",
        ));
        rows.push(Row::new(format!("loop: component, round {round}"), wasm, "ms"));
        rows.push(
            Row::new(format!("loop: wasm/native, round {round}"), wasm / native, "x")
                .target(Target::AtMost(1.3)),
        );
    }
    let (native_total, wasm_total) = (total(natives), total(components));
    rows.push(Row::new(
        format!("loop: native core, {rounds} rounds"),
        native_total,
        "ms",
    ));
    rows.push(Row::new(
        format!("loop: component, {rounds} rounds"),
        wasm_total,
        "ms",
    ));
    rows.push(
        Row::new(
            format!("loop: wasm/native, {rounds} rounds"),
            wasm_total / native_total,
            "x",
        )
        .target(Target::AtMost(1.3)),
    );

    let window = GROWTH_WINDOW.min(rounds / 2);
    let first = 1..=window;
    let last = rounds - window + 1..=rounds;
    let sizes = &components[0].body_sizes;
    // Round k builds request k + 1 (index k), whose body is the serialised history.
    let mean_size = |range: std::ops::RangeInclusive<usize>| {
        let picked: Vec<f64> = range.map(|k| sizes[k] as f64).collect();
        picked.iter().sum::<f64>() / picked.len() as f64
    };
    let size_growth = mean_size(last.clone()) / mean_size(first.clone());
    let window_cost = |runs: &[RunResult], range: std::ops::RangeInclusive<usize>| {
        median(
            &runs
                .iter()
                .flat_map(|r| range.clone().map(|k| r.round_costs_ms[k - 1]))
                .collect::<Vec<_>>(),
        )
    };
    let span = format!(
        "rounds {}-{} to {}-{}",
        first.start(),
        first.end(),
        last.start(),
        last.end()
    );
    rows.push(Row::new(
        format!("loop: request body, round {rounds}"),
        sizes[rounds] as f64 / 1024.0,
        "KiB",
    ));
    rows.push(Row::new(
        format!("loop: history size growth, {span}"),
        size_growth,
        "x",
    ));
    for (side, runs) in [("native core", natives), ("component", components)] {
        let growth = window_cost(runs, last.clone()) / window_cost(runs, first.clone());
        rows.push(
            Row::new(format!("loop: {side} per-round cost growth, {span}"), growth, "x")
                .target(Target::AtMost(size_growth)),
        );
    }
    rows
}

/// Every file's last line must be in the history: each round's tool really read its file.
fn check_history(history_json: &str, rounds: usize, side: &str) -> anyhow::Result<()> {
    for round in 0..rounds {
        let needle = format!("note {round} line 11");
        if !history_json.contains(&needle) {
            anyhow::bail!(
                "{side}: the history lacks {:?}: read_file of round {} failed",
                needle,
                round + 1
            );
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn quick_context(out: &std::path::Path) -> Context {
        crate::context::quick_for_tests(out)
    }

    #[test]
    fn both_sides_run_every_round_and_report_each_figure() {
        let out = std::env::temp_dir().join(format!("agent-bench-loop-test-{}", std::process::id()));
        let rows = run(&quick_context(&out)).unwrap();
        let figures: Vec<&str> = rows.iter().map(|r| r.figure.as_str()).collect();
        for expected in [
            "loop: wasm/native, round 1",
            "loop: wasm/native, round 12",
            "loop: wasm/native, 12 rounds",
            "loop: component per-round cost growth, rounds 1-6 to 7-12",
        ] {
            assert!(figures.contains(&expected), "{expected} missing from {figures:?}");
        }
        assert!(
            rows.iter().all(|r| r.value.is_finite() && r.value > 0.0),
            "{rows:?}"
        );
        let _ = std::fs::remove_dir_all(out);
    }

    #[test]
    fn a_history_without_a_round_s_file_is_refused() {
        let history = "note 0 line 11 ... note 2 line 11";
        let error = check_history(history, 3, "native").unwrap_err().to_string();
        assert!(
            error.contains("note 1 line 11") && error.contains("round 2"),
            "{error}"
        );
    }
}
