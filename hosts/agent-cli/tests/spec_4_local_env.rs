//! Section 4 of the spec: the local execution environment with real files, searches and
//! processes (process groups, timeouts, output capture, environment filtering).

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests may panic

mod common;

use agent_host::LocalEnvironment;
use agent_host::protocol::ports::{EntryKind, FsError, GrepOptions, GrepOutputMode};
use std::time::{Duration, Instant};

fn env() -> (tempfile::TempDir, LocalEnvironment) {
    let dir = tempfile::tempdir().unwrap();
    let env = LocalEnvironment::new(dir.path()).unwrap();
    (dir, env)
}

#[tokio::test]
async fn output_streams_in_chunks_and_the_result_keeps_all_of_it() {
    let (_dir, env) = env();
    let mut process = env
        .spawn(
            "for i in 1 2 3; do echo $i; sleep 0.2; done; echo oops >&2; exit 4",
            None,
            10_000,
            &[],
        )
        .unwrap();
    let mut chunks = Vec::new();
    while let Some(chunk) = process.read_output().await {
        chunks.push(chunk);
    }
    assert!(chunks.len() >= 3, "output arrived in {} chunk(s)", chunks.len());
    let result = process.wait().await;
    assert_eq!(
        (result.stdout.as_str(), result.stderr.as_str()),
        ("1\n2\n3\n", "oops\n")
    );
    assert_eq!((result.exit_code, result.timed_out), (4, false));
    assert!(result.duration_ms >= 400);
}

#[tokio::test]
async fn timeout_kills_the_whole_process_group_and_keeps_partial_output() {
    let (dir, env) = env();
    let started = Instant::now();
    let mut process = env
        .spawn(
            "sleep 30 & echo $! > bg.pid; echo started; sleep 30",
            None,
            2000,
            &[],
        )
        .unwrap();
    let result = process.wait().await;
    assert!(result.timed_out);
    assert_eq!((result.exit_code, result.stdout.as_str()), (-1, "started\n"));
    // Guards against a hang only: 10x the 2 s timeout.
    assert!(started.elapsed() < Duration::from_secs(20));
    // The backgrounded child was in the group: it is gone too.
    let pid = std::fs::read_to_string(dir.path().join("bg.pid")).unwrap();
    assert_eq!(
        common::still_running_after_kill(&pid).await,
        None,
        "the background process survived the timeout"
    );
}

#[tokio::test]
async fn a_command_ignoring_sigterm_is_killed_after_the_grace_period() {
    let (_dir, env) = env();
    let started = Instant::now();
    let mut process = env
        .spawn("trap '' TERM; echo waiting; sleep 60", None, 200, &[])
        .unwrap();
    let result = process.wait().await;
    assert!(result.timed_out);
    let elapsed = started.elapsed();
    assert!(
        elapsed >= Duration::from_millis(2_000),
        "SIGKILL came before the 2 s grace: {elapsed:?}"
    );
    // More than 10x the 2.2 s of timeout and grace, so it fails only on a hang or when no
    // SIGKILL comes (the command would run 60 s).
    assert!(elapsed < Duration::from_secs(30), "{elapsed:?}");
}

#[tokio::test]
async fn output_is_capped_so_a_runaway_command_cannot_exhaust_memory() {
    let (_dir, env) = env();
    let mut process = env
        .spawn("head -c 40000000 /dev/zero | tr '\\0' x", None, 30_000, &[])
        .unwrap();
    let result = process.wait().await;
    assert!(result.stdout.len() < agent_host::environments::OUTPUT_CAP + 200);
    assert!(
        result.stdout.ends_with("further bytes were discarded]\n"),
        "{}",
        &result.stdout[result.stdout.len() - 80..]
    );
}

#[tokio::test]
async fn stdin_is_closed_and_extra_variables_are_applied() {
    let (_dir, env) = env();
    let mut process = env
        .spawn(
            "cat; echo \"[$GREETING]\"",
            None,
            5_000,
            &[("GREETING".into(), "hi".into())],
        )
        .unwrap();
    assert_eq!(process.wait().await.stdout, "[hi]\n");
}

#[tokio::test]
async fn commands_do_not_see_the_hosts_credentials() -> anyhow::Result<()> {
    let work = tempfile::tempdir()?;
    let output = common::agent_host()
        .args(["tool", "shell", "--args", r#"{"command":"env"}"#, "--cwd"])
        .arg(work.path())
        .env("ANTHROPIC_API_KEY", "sk-very-secret")
        .env("my_service_token", "tok-secret")
        .env("PLAIN_SETTING", "visible")
        .output()
        .await?;
    let out = common::stdout(&output);
    assert!(out.contains("PLAIN_SETTING=visible"), "{out}");
    assert!(
        !out.contains("sk-very-secret") && !out.contains("tok-secret"),
        "{out}"
    );
    Ok(())
}

#[test]
fn files_are_relative_to_the_working_directory_with_clear_errors() {
    let (dir, env) = env();
    env.write_file("a/b/c.txt", b"0123456789").unwrap();
    assert_eq!(
        std::fs::read(dir.path().join("a/b/c.txt")).unwrap(),
        b"0123456789"
    );
    assert_eq!(env.read_file("a/b/c.txt", Some((2, 3))).unwrap(), b"234");
    assert!(matches!(env.read_file("a/b", None), Err(FsError::IsDirectory(m)) if m.contains("a/b")));
    assert!(matches!(env.read_file("nope.txt", None), Err(FsError::NotFound(m)) if m.contains("nope.txt")));
    env.rename_file("a/b/c.txt", "moved/c.txt").unwrap();
    assert!(!env.file_exists("a/b/c.txt") && env.file_exists("moved/c.txt"));
    assert_eq!(env.stat("moved/c.txt").unwrap().size, 10);
    env.delete_file("moved/c.txt").unwrap();
    assert!(matches!(env.delete_file("moved"), Err(FsError::IsDirectory(_))));
}

#[test]
fn listing_grep_and_glob_use_ignore_rules_and_skip_binary_files() {
    let (dir, env) = env();
    env.write_file("src/main.rs", b"fn main() {\n    println!(\"Hello\");\n}\n")
        .unwrap();
    env.write_file("src/lib.rs", b"pub fn hello() {}\n").unwrap();
    env.write_file("data.bin", b"hello\0\x01\x02").unwrap();
    env.write_file("notes.txt", b"HELLO world\n").unwrap();
    env.write_file(".ignore", b"notes.txt\n").unwrap();
    std::thread::sleep(Duration::from_millis(20));
    env.write_file("src/new.rs", b"// newest\n").unwrap();

    let listing = env.list_directory(".", 2).unwrap();
    let paths: Vec<&str> = listing.iter().map(|e| e.path.as_str()).collect();
    assert!(paths.contains(&"src") && paths.contains(&"src/main.rs") && !paths.contains(&"notes.txt"));
    assert_eq!(
        listing.iter().find(|e| e.path == "src").unwrap().kind,
        EntryKind::Directory
    );

    let options = |pattern: &str, mode| GrepOptions {
        pattern: pattern.to_string(),
        path: None,
        glob_filter: None,
        case_insensitive: true,
        fixed_strings: false,
        max_results: 0,
        output_mode: mode,
    };
    let hits = env.grep(&options("hel+o", GrepOutputMode::Content)).unwrap();
    let found: Vec<(String, u32)> = hits.iter().map(|m| (m.path.clone(), m.line_number)).collect();
    assert_eq!(
        found,
        [("src/lib.rs".to_string(), 1), ("src/main.rs".to_string(), 2)]
    );
    assert_eq!(hits[1].line, "    println!(\"Hello\");");
    let mut filtered = options("hello", GrepOutputMode::FilesWithMatches);
    filtered.glob_filter = Some("main.rs".to_string());
    assert_eq!(env.grep(&filtered).unwrap().len(), 1);
    assert!(matches!(
        env.grep(&options("(", GrepOutputMode::Content)),
        Err(FsError::InvalidInput(_))
    ));

    let rs = env.glob("**/*.rs", None).unwrap();
    assert_eq!(rs[0], "src/new.rs", "newest first: {rs:?}");
    assert_eq!(rs.len(), 3);
    drop(dir);
}
