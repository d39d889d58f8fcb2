//! The command sandbox's cost (issue 20): `true` started through the local environment with
//! and without the default sandbox (workspace-write, network off), interleaved. The
//! difference is what Landlock's rules (built per command), the mount namespace for `.git`,
//! the seccomp filter and `setsid` add to every command.

use crate::context::Context;
use crate::stats::{median, millis};
use crate::table::{Row, Target};
use agent_host::LocalEnvironment;
use agent_host::sandbox::{Sandbox, SandboxConfig};
use anyhow::Context as _;
use std::sync::Arc;
use std::time::Instant;

/// Issue 20: under 5 ms added per command.
const TARGET_MS: f64 = 5.0;

pub fn run(ctx: &Context) -> anyhow::Result<Vec<Row>> {
    let runs = if ctx.quick { 5 } else { 200 };
    let work = ctx.out.join("sandbox-workspace");
    std::fs::create_dir_all(work.join(".git")).context("creating the workspace")?;
    let plain = LocalEnvironment::new(&work)?;
    let sandbox = Sandbox::new(&SandboxConfig::default(), &plain.root_paths())?
        .context("the default sandbox mode made no sandbox")?;
    let sandboxed = plain.clone().with_sandbox(Some(Arc::new(sandbox)));
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let time = |env: &LocalEnvironment| -> anyhow::Result<f64> {
        let started = Instant::now();
        let result = runtime.block_on(async {
            let mut process = env.spawn("true", None, 10_000, &[])?;
            anyhow::Ok(process.wait().await)
        })?;
        anyhow::ensure!(result.exit_code == 0, "`true` failed: {}", result.stderr);
        Ok(millis(started.elapsed()))
    };
    let (mut without, mut with) = (Vec::new(), Vec::new());
    time(&plain)?;
    time(&sandboxed)?;
    for i in 0..runs {
        // The side that goes first alternates.
        if i % 2 == 0 {
            without.push(time(&plain)?);
            with.push(time(&sandboxed)?);
        } else {
            with.push(time(&sandboxed)?);
            without.push(time(&plain)?);
        }
    }
    let (without, with) = (median(&without), median(&with));
    Ok(vec![
        Row::new(
            "sandbox: command `true` without the sandbox (median)",
            without,
            "ms",
        ),
        Row::new("sandbox: command `true` in workspace-write (median)", with, "ms"),
        Row::new("sandbox: cost added per command", with - without, "ms").target(Target::AtMost(TARGET_MS)),
    ])
}
