//! The hostile-plugin suite: a plugin that loops forever, allocates without bound, panics,
//! reaches outside the workspace, uses what it was not granted, and returns huge outputs.
//! Each is stopped within the stated bound, reported in words, and the plugin's next call
//! succeeds on a fresh instance.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests may panic

mod common;

use agent_host::LocalEnvironment;
use agent_host::environments::Environment;
use agent_host::host_tools::plugin::{Capability, PluginHost, PluginLimits};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The bounds this suite holds the host to.
const LIMITS: PluginLimits = PluginLimits {
    memory_bytes: 64 << 20,
    table_elements: 10_000,
    cpu: Duration::from_millis(1000),
    wall: Duration::from_secs(5),
    output_bytes: 1 << 20,
};
/// A hostile call must be over within this much wall time. It guards against a hang only:
/// measured alone, the endless loop stops after about 1.0 s (the CPU limit counts only the
/// time the plugin's code runs, so a machine busy with other tests stretches it), and what
/// stopped each call is checked in its error.
const STOPPED_WITHIN: Duration = Duration::from_secs(10);

struct Fixture {
    _outside: tempfile::TempDir,
    workspace: tempfile::TempDir,
    plugin: Arc<agent_host::host_tools::plugin::Plugin>,
    _host: PluginHost,
}

async fn fixture() -> Fixture {
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("secret.txt"), "top secret").unwrap();
    let root = tempfile::tempdir().unwrap();
    let workspace = root.path().join("ws");
    std::fs::create_dir(&workspace).unwrap();
    std::fs::write(root.path().join("outside.txt"), "outside").unwrap();
    std::os::unix::fs::symlink(outside.path(), workspace.join("link-out")).unwrap();
    let env: Arc<dyn Environment> = Arc::new(LocalEnvironment::new(&workspace).unwrap());
    let host = PluginHost::new(Some(&common::cache_dir()), LIMITS).unwrap();
    let plugin = host
        .load(
            &common::plugin("hostile"),
            &BTreeMap::from([("hostile".to_string(), BTreeSet::from([Capability::Read]))]),
            env,
        )
        .await
        .unwrap();
    Fixture {
        _outside: outside,
        workspace: root,
        plugin,
        _host: host,
    }
}

async fn healthy_after(fixture: &Fixture) {
    let echoed = fixture.plugin.execute("echo", r#"{"text":"still here"}"#).await;
    assert_eq!(echoed, Ok("still here".to_string()));
}

async fn timed(fixture: &Fixture, tool: &str) -> (Result<String, String>, Duration) {
    let started = Instant::now();
    let result = fixture.plugin.execute(tool, "{}").await;
    let elapsed = started.elapsed();
    eprintln!("{tool}: over after {elapsed:?}");
    (result, elapsed)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_endless_loop_is_stopped_by_the_cpu_limit() {
    let fixture = fixture().await;
    let (result, elapsed) = timed(&fixture, "spin").await;
    let error = result.unwrap_err();
    assert!(error.contains("CPU limit of 1000 ms"), "{error}");
    assert!(error.contains("restarted"), "{error}");
    assert!(elapsed < STOPPED_WITHIN, "{elapsed:?}");
    healthy_after(&fixture).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unbounded_allocation_is_stopped_by_the_memory_limit() {
    let fixture = fixture().await;
    let (result, elapsed) = timed(&fixture, "hog").await;
    let error = result.unwrap_err();
    assert!(error.contains("memory limit of 64 MiB"), "{error}");
    assert!(elapsed < STOPPED_WITHIN, "{elapsed:?}");
    healthy_after(&fixture).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_panic_fails_the_call_only() {
    let fixture = fixture().await;
    let (result, _) = timed(&fixture, "crash").await;
    let error = result.unwrap_err();
    assert!(error.contains("crashed") && error.contains("panic"), "{error}");
    healthy_after(&fixture).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reads_outside_the_workspace_are_refused() {
    let fixture = fixture().await;
    let report = fixture.plugin.execute("escape", "{}").await.unwrap();
    assert_eq!(report.lines().count(), 3, "{report}");
    for line in report.lines() {
        assert!(line.contains("refused"), "{report}");
        assert!(!line.contains("READ"), "{report}");
    }
    healthy_after(&fixture).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ungranted_writes_and_commands_are_errors_naming_the_grant() {
    let fixture = fixture().await;
    let report = fixture.plugin.execute("sneak", "{}").await.unwrap();
    assert!(
        report.contains("write: refused: plugin hostile was not granted `write`"),
        "{report}"
    );
    assert!(report.contains("--grant hostile=write"), "{report}");
    assert!(
        report.contains("run: refused: plugin hostile was not granted `run`"),
        "{report}"
    );
    let ws = fixture.workspace.path().join("ws");
    assert!(!ws.join("sneaked.txt").exists() && !ws.join("ran.txt").exists());
    healthy_after(&fixture).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_huge_output_is_cut_to_the_output_limit() {
    let fixture = fixture().await;
    let (result, elapsed) = timed(&fixture, "flood").await;
    let text = result.unwrap();
    assert!(text.len() < (1 << 20) + 200, "{}", text.len());
    assert!(text.ends_with(&format!(
        "[plugin output cut: {} of {} bytes shown]",
        1 << 20,
        40 << 20
    )));
    assert!(elapsed < STOPPED_WITHIN, "{elapsed:?}");
    healthy_after(&fixture).await;
}
