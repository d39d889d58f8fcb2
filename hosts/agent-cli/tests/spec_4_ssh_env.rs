//! Section 4 of the spec over SSH: a real OpenSSH sshd on 127.0.0.1 (started per test with
//! generated keys), commands over exec channels and files over SFTP, with the local
//! environment's semantics; then the same create-a-file task end to end with `--env local`
//! and `--env ssh://...`.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests may panic

mod common;

use agent_host::environments::{EnvOptions, Environment};
use agent_host::protocol::ports::SpawnRequest;
use agent_host::protocol::ports::{FsError, GrepOptions, GrepOutputMode};
use common::sshd::Sshd;
use common::{agent_host, stderr, stdout, still_running_after_kill};
use scripted_llm::anthropic::{message, text, tool_use};
use scripted_llm::{Script, ScriptedServer};
use serde_json::json;
use std::sync::Arc;
use std::time::{Duration, Instant};

fn options(sshd: &Sshd, work: &std::path::Path) -> EnvOptions {
    EnvOptions {
        env: Some(sshd.url(work)),
        ssh_key: Some(sshd.key.clone()),
        known_hosts: Some(sshd.known_hosts.clone()),
        ..EnvOptions::default()
    }
}

fn request(command: &str, timeout_ms: u64) -> SpawnRequest {
    SpawnRequest {
        command: command.to_string(),
        working_dir: None,
        timeout_ms,
        env: vec![("GREETING".to_string(), "hi there".to_string())],
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn commands_run_over_ssh_with_separate_streams_exit_codes_and_variables() -> anyhow::Result<()> {
    let sshd = Sshd::start()?;
    let work = tempfile::tempdir()?;
    let env: Arc<dyn Environment> = options(&sshd, work.path())
        .build()
        .await
        .map_err(anyhow::Error::msg)?;
    assert_eq!(
        env.working_directory(),
        std::fs::canonicalize(work.path())?.to_string_lossy()
    );
    let mut process = env
        .spawn(request(
            "pwd; echo \"[$GREETING]\"; cat; echo oops >&2; exit 3",
            10_000,
        ))
        .await
        .unwrap();
    let mut streamed = 0;
    while process.read_output().await.is_some() {
        streamed += 1;
    }
    let result = process.wait().await;
    assert!(streamed >= 2);
    assert_eq!(
        result.stdout,
        format!("{}\n[hi there]\n", std::fs::canonicalize(work.path())?.display())
    );
    assert_eq!(
        (result.stderr.as_str(), result.exit_code, result.timed_out),
        ("oops\n", 3, false)
    );
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_ssh_timeout_kills_the_remote_group_and_keeps_partial_output() -> anyhow::Result<()> {
    let sshd = Sshd::start()?;
    let work = tempfile::tempdir()?;
    let env = options(&sshd, work.path())
        .build()
        .await
        .map_err(anyhow::Error::msg)?;
    let started = Instant::now();
    let mut process = env
        .spawn(request(
            "sleep 30 & echo $! > bg.pid; echo started; sleep 30",
            // Generous: a loaded CI machine can take a second to start an sshd session.
            3000,
        ))
        .await
        .unwrap();
    let result = process.wait().await;
    assert!(result.timed_out, "{result:?}");
    assert_eq!((result.exit_code, result.stdout.as_str()), (-1, "started\n"));
    // Guards against a hang only: more than 10x the 3 s timeout and the session's start.
    assert!(started.elapsed() < Duration::from_secs(60));
    // sshd runs on this machine, so /proc shows whether the background child survived.
    let pid = std::fs::read_to_string(work.path().join("bg.pid"))?;
    assert_eq!(
        still_running_after_kill(&pid).await,
        None,
        "the background process survived"
    );
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_timeout_before_the_remote_command_started_still_stops_it() -> anyhow::Result<()> {
    let sshd = Sshd::start()?;
    let work = tempfile::tempdir()?;
    let env = options(&sshd, work.path())
        .build()
        .await
        .map_err(anyhow::Error::msg)?;
    let started = Instant::now();
    // 1 ms runs out before the remote wrapper can report its process group, so the TERM is
    // delivered only when the group becomes known.
    let mut process = env.spawn(request("echo $$ > sh.pid; sleep 30", 1)).await.unwrap();
    let result = process.wait().await;
    assert!(result.timed_out, "{result:?}");
    // Guards against a hang only: the session starts and the command is stopped within a
    // second or two.
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "{:?}",
        started.elapsed()
    );
    if let Ok(pid) = std::fs::read_to_string(work.path().join("sh.pid")) {
        assert_eq!(still_running_after_kill(&pid).await, None, "the command survived");
    }
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn files_go_over_sftp_and_escapes_are_refused() -> anyhow::Result<()> {
    let sshd = Sshd::start()?;
    let work = tempfile::tempdir()?;
    let env = options(&sshd, work.path())
        .build()
        .await
        .map_err(anyhow::Error::msg)?;
    env.write_file("src/deep/lib.rs", b"pub fn needle() {}\n")
        .await
        .unwrap();
    assert_eq!(
        std::fs::read(work.path().join("src/deep/lib.rs"))?,
        b"pub fn needle() {}\n"
    );
    assert_eq!(
        env.read_file("src/deep/lib.rs", Some((4, 2))).await.unwrap(),
        b"fn"
    );
    assert_eq!(env.stat("src/deep/lib.rs").await.unwrap().size, 19);
    env.rename_file("src/deep/lib.rs", "src/lib.rs").await.unwrap();
    assert!(env.file_exists("src/lib.rs").await && !env.file_exists("src/deep/lib.rs").await);
    let listing = env.list_directory(".", 2).await.unwrap();
    let paths: Vec<&str> = listing.iter().map(|e| e.path.as_str()).collect();
    assert!(
        paths.contains(&"src") && paths.contains(&"src/lib.rs"),
        "{paths:?}"
    );
    let hits = env
        .grep(&GrepOptions {
            pattern: "needle".into(),
            path: None,
            glob_filter: None,
            case_insensitive: false,
            fixed_strings: true,
            max_results: 0,
            output_mode: GrepOutputMode::Content,
        })
        .await
        .unwrap();
    assert_eq!((hits[0].path.as_str(), hits[0].line_number), ("src/lib.rs", 1));
    assert_eq!(env.glob("**/*.rs", None).await.unwrap(), ["src/lib.rs"]);
    assert!(
        matches!(env.read_file("missing.txt", None).await, Err(FsError::NotFound(m)) if m.contains("missing.txt"))
    );
    env.delete_file("src/lib.rs").await.unwrap();
    // The working directory is the boundary: `..` and links out of it are refused.
    std::os::unix::fs::symlink("/etc", work.path().join("etc-link"))?;
    for path in ["../outside.txt", "etc-link/hostname", "/etc/hostname"] {
        assert!(
            matches!(env.read_file(path, None).await, Err(FsError::Denied(_))),
            "{path}"
        );
    }
    assert!(matches!(
        env.write_file("../planted.txt", b"x").await,
        Err(FsError::Denied(_))
    ));
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unknown_host_key_is_refused_with_the_fix() -> anyhow::Result<()> {
    let sshd = Sshd::start()?;
    let work = tempfile::tempdir()?;
    let empty = sshd.dir.path().join("empty_known_hosts");
    std::fs::write(&empty, "")?;
    let mut options = options(&sshd, work.path());
    options.known_hosts = Some(empty);
    let error = options.build().await.err().expect("an unknown host was accepted");
    assert!(
        error.contains("is not in") && error.contains("ssh-keyscan"),
        "{error}"
    );
    Ok(())
}

/// The scripted create-a-file-and-run-it task with the given `--env` arguments.
async fn create_and_run(env_args: &[String], work: &std::path::Path) -> anyhow::Result<Vec<String>> {
    let server = ScriptedServer::start(Script {
        replies: vec![
            message(&[tool_use(
                "toolu_1",
                "write_file",
                json!({"file_path": "hello.py", "content": "print(\"Hello\")\n"}),
            )]),
            message(&[tool_use(
                "toolu_2",
                "shell",
                json!({"command": "python3 hello.py"}),
            )]),
            message(&[text("Created hello.py; it prints Hello.")]),
        ],
        require_api_key: None,
    })
    .await?;
    let output = agent_host()
        .args(["run", "Create hello.py that prints Hello"])
        .args(env_args)
        .env("ANTHROPIC_BASE_URL", server.base_url())
        .output()
        .await?;
    assert!(
        output.status.success(),
        "stdout:\n{}\nstderr:\n{}",
        stdout(&output),
        stderr(&output)
    );
    assert_eq!(
        std::fs::read_to_string(work.join("hello.py"))?,
        "print(\"Hello\")\n"
    );
    let requests = server.requests();
    Ok(requests
        .iter()
        .skip(1)
        .map(|r| {
            let body = r.json();
            let last = body["messages"].as_array().unwrap().last().unwrap().clone();
            let result = last["content"].as_array().unwrap().last().unwrap().clone();
            // The first line: "Created hello.py (...)" or the program's output.
            result["content"]
                .as_str()
                .unwrap()
                .lines()
                .next()
                .unwrap_or_default()
                .to_string()
        })
        .collect())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_same_task_passes_with_env_local_and_env_ssh() -> anyhow::Result<()> {
    let local_work = tempfile::tempdir()?;
    let local = create_and_run(
        &[
            "--env".into(),
            "local".into(),
            "--cwd".into(),
            local_work.path().display().to_string(),
        ],
        local_work.path(),
    )
    .await?;
    let sshd = Sshd::start()?;
    let remote_work = tempfile::tempdir()?;
    let remote = create_and_run(
        &[
            "--env".into(),
            sshd.url(remote_work.path()),
            "--ssh-key".into(),
            sshd.key.display().to_string(),
            "--known-hosts".into(),
            sshd.known_hosts.display().to_string(),
        ],
        remote_work.path(),
    )
    .await?;
    assert_eq!(local, ["Created hello.py (15 bytes)", "Hello"]);
    assert_eq!(remote, local);
    Ok(())
}
