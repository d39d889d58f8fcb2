//! The same tool calls through the real component's `run-tool` export on a real scratch
//! directory: instantiation, argument passing, file reads and writes through the host and
//! the tool itself. Informative (no target): the targets are for the tools themselves.

use super::{WARM_UP_RUNS, label};
use crate::context::Context;
use crate::stats::{median, millis};
use crate::table::Row;
use agent_host::{AgentRuntime, Endpoints, Environment, HttpTransport, LocalEnvironment};
use anyhow::Context as _;
use bench_probe::cases::{Case, Sizes, tool_inputs, verify_tool};
use std::sync::Arc;
use std::time::Instant;

pub fn run(ctx: &Context, sizes: Sizes, runs: usize, cases: &[Case]) -> anyhow::Result<Vec<Row>> {
    let tokio = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let runtime = tokio.block_on(async {
        let transport = HttpTransport::new(Endpoints::default())?;
        AgentRuntime::load(&ctx.component, Some(&ctx.out.join("component-cache")), transport)
    })?;
    let mut rows = Vec::new();
    for &case in cases {
        let inputs = tool_inputs(case, sizes).context("not a tool case")?;
        let dir = ctx.scratch(&format!("tools-{}", inputs.tool))?;
        let file = dir.join(inputs.path);
        if let Some(parent) = file.parent() {
            std::fs::create_dir_all(parent)?;
        }
        let env: Arc<dyn Environment> = Arc::new(LocalEnvironment::new(&dir)?);
        let mut samples = Vec::with_capacity(runs);
        for run in 0..WARM_UP_RUNS + runs {
            std::fs::write(&file, &inputs.original)?;
            let start = Instant::now();
            let output = tokio
                .block_on(runtime.run_tool(
                    env.clone(),
                    inputs.provider,
                    inputs.tool,
                    &inputs.arguments_json,
                ))?
                .map_err(|e| anyhow::anyhow!("{} through the component failed: {e}", inputs.tool))?;
            let elapsed = millis(start.elapsed());
            let written = std::fs::read(&file)?;
            verify_tool(&inputs, &output, Some(&written))
                .map_err(|e| anyhow::anyhow!("through the component: {e}"))?;
            if run >= WARM_UP_RUNS {
                samples.push(elapsed);
            }
        }
        rows.push(Row::new(
            format!("{}, run-tool export end to end", label(case, sizes)),
            median(&samples),
            "ms",
        ));
    }
    Ok(rows)
}
