//! Section 4 of the spec: a command printing 1 GB cannot grow the host's memory without
//! bound. agent-host runs the command through the component; its peak RSS, read from
//! getrusage of this test's children, must stay under 400 MiB (each stream keeps at most
//! 32 MiB, and the core's copy of the result is capped the same way).

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests may panic

mod common;

use nix::sys::resource::{UsageWho, getrusage};

const BOUND_KIB: i64 = 400 * 1024;

#[tokio::test]
async fn a_command_printing_a_gigabyte_is_capped_within_a_stated_memory_bound() -> anyhow::Result<()> {
    let work = tempfile::tempdir()?;
    let output = common::agent_host()
        .args([
            "tool",
            "shell",
            "--args",
            r#"{"command": "yes 0123456789abcdefghijklmnopqrstuvwxyz | head -c 1000000000", "timeout_ms": 300000}"#,
            "--cwd",
        ])
        .arg(work.path())
        .output()
        .await?;
    assert!(output.status.success(), "{}", common::stderr(&output));
    let printed = common::stdout(&output);
    assert!(
        printed.contains("further bytes were discarded"),
        "{}",
        &printed[printed.len().saturating_sub(300)..]
    );
    assert!(
        printed.len() < 40 * 1024 * 1024,
        "{} bytes came back",
        printed.len()
    );
    // ru_maxrss of reaped children is in KiB on Linux: the largest is agent-host itself.
    let peak_kib = getrusage(UsageWho::RUSAGE_CHILDREN)?.max_rss();
    eprintln!(
        "agent-host peak RSS while a command printed 1 GB: {} MiB",
        peak_kib / 1024
    );
    assert!(
        peak_kib < BOUND_KIB,
        "agent-host peaked at {} MiB",
        peak_kib / 1024
    );
    Ok(())
}
