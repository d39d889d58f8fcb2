//! `agent-host batch` and `worker` over hostile workspaces: a process the task left running
//! swaps a folder for a look-alike whose entries link to a key while the patch is taken;
//! ignore files that are `/dev/zero` or a FIFO; a self-hiding `.ignore`; a task that never
//! ends; a queue password on the command line.

use crate::common::{agent_host, stderr, stdout};
use scripted_llm::anthropic::{message, text, tool_use};
use scripted_llm::{Reply, ScriptedServer};
use serde_json::{Value, json};
use std::path::Path;
use std::process::Output;
use std::time::Duration;

/// What the key files outside the workspace hold; never to be seen in a patch or a result.
const CANARY: &str = "CANARY-PRIVATE-KEY-MATERIAL";
/// Files in the swapped folder: enough that a reader racing the swaps loses many times.
const SWAPPED_FILES: usize = 300;

/// Writes `tasks` as `root/tasks.jsonl` and runs `agent-host batch` over it into `root/out`
/// with `flags`, against the model at `server`.
async fn batch(root: &Path, tasks: &[Value], server: &ScriptedServer, flags: &[&str]) -> Output {
    let lines: Vec<String> = tasks.iter().map(Value::to_string).collect();
    std::fs::write(root.join("tasks.jsonl"), lines.join("\n") + "\n").unwrap();
    let run = agent_host()
        .args(["batch", "tasks.jsonl", "--out", "out", "--approval", "auto"])
        .args(flags)
        .current_dir(root)
        .env("ANTHROPIC_BASE_URL", server.base_url())
        .output();
    // Guards against a hang only: a batch here takes seconds (the first compiles the
    // component, the slowest part).
    tokio::time::timeout(Duration::from_secs(300), run)
        .await
        .expect("the batch finished")
        .unwrap()
}

fn read(root: &Path, id: &str, file: &str) -> String {
    std::fs::read_to_string(root.join("out").join(id).join(file)).unwrap_or_default()
}

fn result(root: &Path, id: &str) -> Value {
    serde_json::from_str(&read(root, id, "result.json")).unwrap()
}

/// A model that runs `command` with the shell tool, then is done.
fn running(command: &str) -> Vec<Reply> {
    vec![
        message(&[tool_use("c1", "shell", json!({ "command": command }))]),
        message(&[text("Done.")]),
    ]
}

fn python() -> &'static str {
    // Outside the home folder, which the sandbox hides (a pyenv shim lives there).
    if Path::new("/usr/bin/python3").exists() {
        "/usr/bin/python3"
    } else {
        "python3"
    }
}

/// Exchanges `d` and `decoy` in its folder (`renameat2(RENAME_EXCHANGE)`) until
/// `stop-swapping` appears, a swap fails (the folder is gone) or two minutes pass; writes
/// `swapping` once the first exchange is made.
const SWAPPER: &str = r#"
import ctypes, os, time
libc = ctypes.CDLL(None, use_errno=True)
AT_FDCWD, RENAME_EXCHANGE = -100, 2
end = time.monotonic() + 120
swaps = 0
while time.monotonic() < end:
    if libc.renameat2(AT_FDCWD, b"d", AT_FDCWD, b"decoy", RENAME_EXCHANGE) != 0:
        break
    swaps += 1
    if swaps == 1:
        open("swapping", "w").close()
    if swaps % 500 == 0 and os.path.exists("stop-swapping"):
        break
"#;

/// The source folder of the race: `d/sub/` holds the files, `decoy/sub` is a link to a
/// folder of keys by the same names outside the sources, and the swapper.
fn racing_sources(root: &Path, keys: &Path) {
    let proj = root.join("proj");
    std::fs::create_dir_all(proj.join("d/sub")).unwrap();
    std::fs::create_dir_all(proj.join("decoy")).unwrap();
    std::fs::create_dir_all(keys).unwrap();
    for n in 0..SWAPPED_FILES {
        std::fs::write(proj.join(format!("d/sub/f{n:03}")), format!("original {n}\n")).unwrap();
        std::fs::write(keys.join(format!("f{n:03}")), format!("{CANARY} {n}\n")).unwrap();
    }
    std::os::unix::fs::symlink(keys, proj.join("decoy/sub")).unwrap();
    std::fs::write(proj.join("swap.py"), SWAPPER).unwrap();
}

/// The attack: the task's command starts a process that leaves its call (its own session,
/// its call's tag removed from its environment) and keeps exchanging `d` with `decoy` while
/// the batch takes the patch. Neither the patch nor the result may hold a key's bytes: every
/// folder and file is opened without following a link, and the patch is taken only once the
/// task's session and commands have ended. Unsandboxed, the swapper runs through the whole
/// patch; in the sandbox it ends with its call (and the sandbox may refuse the exchange).
async fn swapping_during_the_patch(flags: &[&str], outlives_its_call: bool) {
    let root = tempfile::tempdir().unwrap();
    let keys = tempfile::tempdir().unwrap();
    racing_sources(root.path(), &keys.path().join("ssh"));
    let command = format!(
        "setsid env -u AGENT_HOST_CALL {} swap.py </dev/null >/dev/null 2>&1 & \
         for i in $(seq 500); do [ -e swapping ] && break; sleep 0.01; done; echo started",
        python()
    );
    let server = crate::llm(running(&command)).await;
    let tasks = [json!({"id": "race", "instruction": "RACE-TASK", "workspace": {"dir": "proj"}})];
    let output = batch(root.path(), &tasks, &server, flags).await;
    let workspace = root.path().join("out/race/workspace");
    // Stops the swapper if it is still there (unsandboxed, it is).
    std::fs::write(workspace.join("stop-swapping"), "").unwrap();
    let (patch, result_text) = (
        read(root.path(), "race", "changes.patch"),
        read(root.path(), "race", "result.json"),
    );
    assert!(
        !result_text.is_empty(),
        "{}\n{}",
        stdout(&output),
        stderr(&output)
    );
    assert!(
        !outlives_its_call || workspace.join("swapping").exists(),
        "the swapper never ran: {}",
        read(root.path(), "race", "events.jsonl")
    );
    assert_eq!(result(root.path(), "race")["state"], "completed", "{result_text}");
    let leaked = patch.matches(CANARY).count();
    assert_eq!(leaked, 0, "{leaked} keys in the patch:\n{patch}");
    assert!(!result_text.contains(CANARY), "{result_text}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_folder_swapped_for_links_to_keys_while_the_patch_is_taken_leaks_no_key_unsandboxed() {
    swapping_during_the_patch(&["--sandbox", "danger-full-access"], true).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_folder_swapped_for_links_to_keys_while_the_patch_is_taken_leaks_no_key_sandboxed() {
    swapping_during_the_patch(&[], false).await;
}

/// `.gitignore` as a link to `/dev/zero` (read without bound: gigabytes) and as a FIFO
/// (opened blocking: a batch stuck for ever): each task completes with its patch; the
/// hostile file's rules are not applied, the link is shown as a link, the FIFO not at all.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gitignore_files_that_are_dev_zero_or_a_fifo_neither_hang_nor_exhaust_the_batch() {
    let root = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(root.path().join("proj")).unwrap();
    std::fs::write(root.path().join("proj/readme.md"), "hi\n").unwrap();
    let server = ScriptedServer::start_routed(
        scripted_llm::Script {
            replies: Vec::new(),
            require_api_key: None,
        },
        vec![
            scripted_llm::Route {
                marker: "ZERO-TASK".to_string(),
                replies: running("ln -s /dev/zero .gitignore && echo kept > kept.txt"),
            },
            scripted_llm::Route {
                marker: "FIFO-TASK".to_string(),
                replies: running("mkfifo .gitignore && echo kept > kept.txt"),
            },
        ],
    )
    .await
    .unwrap();
    let tasks = [
        json!({"id": "zero", "instruction": "ZERO-TASK", "workspace": {"dir": "proj"}}),
        json!({"id": "fifo", "instruction": "FIFO-TASK", "workspace": {"dir": "proj"}}),
    ];
    let output = batch(root.path(), &tasks, &server, &["--sandbox", "danger-full-access"]).await;
    assert!(
        output.status.success(),
        "{}\n{}",
        stdout(&output),
        stderr(&output)
    );
    for id in ["zero", "fifo"] {
        let patch = read(root.path(), id, "changes.patch");
        assert!(
            patch.contains("--- /dev/null\n+++ b/kept.txt\n@@ -0,0 +1 @@\n+kept\n"),
            "{id}: {patch}"
        );
        assert!(patch.len() < 4096, "{id}: {patch}");
    }
    assert!(
        read(root.path(), "zero", "changes.patch")
            .contains("new file mode 120000\n--- /dev/null\n+++ b/.gitignore\n@@ -0,0 +1 @@\n+/dev/zero"),
        "{}",
        read(root.path(), "zero", "changes.patch")
    );
    assert_eq!(result(root.path(), "fifo")["changed_files"], json!(["kept.txt"]));
}

/// git does not read `.ignore`: a task's self-hiding one (`*`) keeps nothing out of the
/// patch, which shows what `git status` would, the `.ignore` itself included.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_self_hiding_ignore_file_keeps_nothing_out_of_the_patch() {
    let root = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(root.path().join("proj")).unwrap();
    std::fs::write(root.path().join("proj/readme.md"), "hi\n").unwrap();
    let server = crate::llm(vec![
        message(&[
            tool_use(
                "w1",
                "write_file",
                json!({"file_path": "new.txt", "content": "new\n"}),
            ),
            tool_use(
                "w2",
                "write_file",
                json!({"file_path": ".ignore", "content": "*\n"}),
            ),
        ]),
        message(&[text("Done.")]),
    ])
    .await;
    let tasks = [json!({"id": "hide", "instruction": "HIDE-TASK", "workspace": {"dir": "proj"}})];
    let output = batch(root.path(), &tasks, &server, &[]).await;
    assert!(
        output.status.success(),
        "{}\n{}",
        stdout(&output),
        stderr(&output)
    );
    let patch = read(root.path(), "hide", "changes.patch");
    assert!(patch.contains("+++ b/new.txt\n@@ -0,0 +1 @@\n+new\n"), "{patch}");
    assert!(patch.contains("+++ b/.ignore\n@@ -0,0 +1 @@\n+*\n"), "{patch}");
    assert_eq!(
        result(root.path(), "hide")["changed_files"],
        json!([".ignore", "new.txt"])
    );
}

/// Whether a process whose command line holds `needle` (its arguments joined by spaces)
/// is running.
fn running_with(needle: &str) -> Option<String> {
    std::fs::read_dir("/proc").unwrap().flatten().find_map(|entry| {
        let line = std::fs::read(entry.path().join("cmdline")).ok()?;
        let line = String::from_utf8_lossy(&line).replace('\0', " ");
        let stat = std::fs::read_to_string(entry.path().join("stat")).ok()?;
        (line.contains(needle) && !stat.contains(") Z ")).then_some(line)
    })
}

/// A task whose command never ends is given up at its deadline (a task may only lower the
/// batch's): failed with the reason, its command killed, and the next task runs.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_past_its_deadline_is_given_up_and_the_batch_moves_on() {
    let root = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(root.path().join("proj")).unwrap();
    std::fs::write(root.path().join("proj/readme.md"), "hi\n").unwrap();
    // An unusual length, to find the process by.
    let sleeper = "sleep 600.25";
    let server = ScriptedServer::start_routed(
        scripted_llm::Script {
            replies: Vec::new(),
            require_api_key: None,
        },
        vec![
            scripted_llm::Route {
                marker: "STUCK-TASK".to_string(),
                replies: running(sleeper),
            },
            scripted_llm::Route {
                marker: "NEXT-TASK".to_string(),
                replies: vec![message(&[text("Next done.")])],
            },
        ],
    )
    .await
    .unwrap();
    let tasks = [
        json!({"id": "stuck", "instruction": "STUCK-TASK", "workspace": {"dir": "proj"}, "timeout_sec": 3}),
        json!({"id": "next", "instruction": "NEXT-TASK", "workspace": {"dir": "proj"}}),
    ];
    let flags = ["--task-timeout-sec", "3600", "--sandbox", "danger-full-access"];
    let output = batch(root.path(), &tasks, &server, &flags).await;
    let (out, err) = (stdout(&output), stderr(&output));
    assert_eq!(output.status.code(), Some(1), "{out}\n{err}");
    let stuck = result(root.path(), "stuck");
    assert_eq!(stuck["state"], "failed", "{stuck}");
    let reason = stuck["error"].as_str().unwrap();
    assert!(
        reason.starts_with("given up at its deadline of 3 s") && reason.contains("commands were killed"),
        "{reason}"
    );
    assert!(!root.path().join("out/stuck/changes.patch").exists());
    assert_eq!(result(root.path(), "next")["state"], "completed");
    assert!(err.contains("stuck: failed: given up at its deadline"), "{err}");
    assert_eq!(running_with(sleeper), None, "the command still runs");
}

/// A loopback server speaking just enough of Redis's protocol: every command is answered
/// `+OK` (a worker then keeps retrying, taking no task) and its arguments kept.
async fn fake_redis() -> (u16, std::sync::Arc<std::sync::Mutex<Vec<String>>>) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let kept = seen.clone();
    tokio::spawn(async move {
        while let Ok((mut stream, _)) = listener.accept().await {
            let kept = kept.clone();
            tokio::spawn(async move {
                let mut buffer = Vec::new();
                let mut chunk = [0u8; 4096];
                while let Ok(n) = stream.read(&mut chunk).await {
                    if n == 0 {
                        return;
                    }
                    buffer.extend_from_slice(&chunk[..n]);
                    while let Some((command, used)) = resp_command(&buffer) {
                        buffer.drain(..used);
                        kept.lock().unwrap().push(command);
                        if stream.write_all(b"+OK\r\n").await.is_err() {
                            return;
                        }
                    }
                }
            });
        }
    });
    (port, seen)
}

/// The first whole command in `buffer` (an array of bulk strings), its arguments joined by
/// spaces, and the bytes it took.
fn resp_command(buffer: &[u8]) -> Option<(String, usize)> {
    let line = |from: usize| -> Option<(&[u8], usize)> {
        let end = buffer[from..].windows(2).position(|w| w == b"\r\n")? + from;
        Some((&buffer[from..end], end + 2))
    };
    let (header, mut at) = line(0)?;
    let count: usize = std::str::from_utf8(header.strip_prefix(b"*")?)
        .ok()?
        .parse()
        .ok()?;
    let mut words = Vec::new();
    for _ in 0..count {
        let (size, next) = line(at)?;
        let size: usize = std::str::from_utf8(size.strip_prefix(b"$")?).ok()?.parse().ok()?;
        let word = buffer.get(next..next + size)?;
        words.push(String::from_utf8_lossy(word).into_owned());
        at = next + size + 2;
        if buffer.len() < at {
            return None;
        }
    }
    Some((words.join(" "), at))
}

/// A password in `worker --queue`'s address is blanked in the process list (which every
/// local user can read) once the worker has read it, and still used to log in.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_workers_queue_password_is_not_in_its_process_list() {
    let password = "queue-pw-7fd3a9c1";
    let (port, seen) = fake_redis().await;
    let work = tempfile::tempdir().unwrap();
    let mut worker = agent_host()
        .args(["worker", "--queue"])
        .arg(format!("redis://:{password}@127.0.0.1:{port}/0"))
        .arg("--work-dir")
        .arg(work.path())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let pid = worker.id().unwrap();
    // Guards against a hang only: the worker logs in within a second.
    let logged_in = tokio::time::timeout(Duration::from_secs(60), async {
        while !seen.lock().unwrap().iter().any(|c| c.contains(password)) {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await;
    let commands = seen.lock().unwrap().clone();
    let cmdline =
        String::from_utf8_lossy(&std::fs::read(format!("/proc/{pid}/cmdline")).unwrap()).replace('\0', " ");
    worker.start_kill().unwrap();
    let output = worker.wait_with_output().await.unwrap();
    assert!(
        logged_in.is_ok(),
        "the worker never logged in: {commands:?}\n{}",
        stderr(&output)
    );
    assert!(!cmdline.contains(password), "{cmdline}");
    assert!(
        cmdline.contains("worker --queue redis://") && cmdline.contains(&format!("@127.0.0.1:{port}/0")),
        "{cmdline}"
    );
    assert!(!stderr(&output).contains(password), "{}", stderr(&output));
}
