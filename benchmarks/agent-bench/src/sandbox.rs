//! The command sandbox's cost: `true` started through the local environment with and
//! without the default sandbox (workspace-write, network off), interleaved. The difference
//! is what every sandboxed command pays: Landlock's rules (built per command), the mount,
//! PID (and, for an ordinary user, user) namespaces with everything outside the workspace
//! read-only and `.git` protected, the sandbox's init (PID 1, started from memory, which then
//! starts the command), the seccomp filter and `setsid`.
//!
//! It is timed twice: in a bare process, and in a process like agent-host's, with the
//! component loaded and a session's instance alive, since a start that copied the parent's
//! page tables (`fork`) would grow with its resident memory (a row says how much there was).
//! The sandboxed start shares the parent's memory until its `exec` (`clone(CLONE_VM |
//! CLONE_VFORK)`, as `posix_spawn` does).

use crate::context::Context;
use crate::stats::{median, millis};
use crate::table::{Row, Target};
use agent_host::LocalEnvironment;
use agent_host::sandbox::{Sandbox, SandboxConfig};
use anyhow::Context as _;
use std::sync::Arc;
use std::time::Instant;

/// At most 2 ms added per command.
const TARGET_MS: f64 = 2.0;

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
    let mut rows = time_both(&runtime, &plain, &sandboxed, runs, "")?;
    let agent = runtime.block_on(load_a_session(ctx, &work))?;
    rows.extend(time_both(
        &runtime,
        &plain,
        &sandboxed,
        runs,
        ", with a session in the process",
    )?);
    drop(agent);
    Ok(rows)
}

/// The component loaded and one session started in this process, as in agent-host.
async fn load_a_session(ctx: &Context, work: &std::path::Path) -> anyhow::Result<impl Sized> {
    let transport = agent_host::HttpTransport::new(agent_host::Endpoints::default())?;
    let runtime =
        agent_host::AgentRuntime::load(&ctx.component, Some(&ctx.out.join("component-cache")), transport)?;
    let env: Arc<dyn agent_host::Environment> = Arc::new(LocalEnvironment::new(work)?);
    let config = agent_host::protocol::SessionConfig::new("anthropic", "claude-sonnet-4-5");
    let session = runtime.start_session(config, env).await?;
    Ok((runtime, session))
}

fn time_both(
    runtime: &tokio::runtime::Runtime,
    plain: &LocalEnvironment,
    sandboxed: &LocalEnvironment,
    runs: usize,
    situation: &str,
) -> anyhow::Result<Vec<Row>> {
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
    time(plain)?;
    time(sandboxed)?;
    for i in 0..runs {
        // The side that goes first alternates.
        if i % 2 == 0 {
            without.push(time(plain)?);
            with.push(time(sandboxed)?);
        } else {
            with.push(time(sandboxed)?);
            without.push(time(plain)?);
        }
    }
    let (without, with) = (median(&without), median(&with));
    let resident = crate::concurrency::proc_status_kib("VmRSS")? as f64 / 1024.0;
    Ok(vec![
        Row::new(
            format!("sandbox: this process's resident memory while timed{situation}"),
            resident,
            "MiB",
        ),
        Row::new(
            format!("sandbox: command `true` without the sandbox (median){situation}"),
            without,
            "ms",
        ),
        Row::new(
            format!("sandbox: command `true` in workspace-write (median){situation}"),
            with,
            "ms",
        ),
        Row::new(
            format!("sandbox: cost added per command{situation}"),
            with - without,
            "ms",
        )
        .target(Target::AtMost(TARGET_MS)),
    ])
}
