//! The distributed batch (workers sharing one Redis queue) against a real `redis-server` the
//! test starts (on a Unix socket in a temporary folder, with its append-only file so that it
//! can restart; a visibility timeout of 4 s, which a live worker's refresh every 1.3 s stays
//! well inside): workers take every task once; a worker killed with SIGKILL mid-task has its
//! task taken by another after the visibility timeout, and nothing finishes twice; a task
//! that ends its worker every time is failed after `--max-attempts` without holding up the
//! rest; a task past the worker's `--task-timeout-sec` is given up and its entry let go;
//! Redis restarting mid-run is survived by the workers and the batch.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests may panic

mod common;

use common::{agent_host, stderr, stdout};
use scripted_llm::anthropic::{message, text, tool_use};
use scripted_llm::{Reply, Route, Script, ScriptedServer};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// A redis-server of the test's own, on a Unix socket.
struct Redis {
    dir: PathBuf,
    child: std::process::Child,
}

impl Redis {
    fn start(dir: &Path) -> Self {
        let child = Command::new("redis-server")
            .args(["--port", "0", "--unixsocket"])
            .arg(dir.join("redis.sock"))
            .args([
                "--unixsocketperm",
                "700",
                "--save",
                "",
                "--appendonly",
                "yes",
                "--appendfsync",
                "always",
                "--dir",
            ])
            .arg(dir)
            .stdout(Stdio::null())
            .spawn()
            .expect("redis-server (scripts/ensure-redis.sh installs it)");
        let redis = Self {
            dir: dir.to_path_buf(),
            child,
        };
        redis.wait_ready();
        redis
    }

    /// The deadline guards against a hang only: redis-server answers within a second.
    fn wait_ready(&self) {
        let deadline = Instant::now() + Duration::from_secs(20);
        while self.cli(&["PING"]).trim() != "PONG" {
            assert!(Instant::now() < deadline, "redis-server did not start");
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    fn url(&self) -> String {
        format!("redis+unix://{}", self.dir.join("redis.sock").display())
    }

    fn cli(&self, args: &[&str]) -> String {
        let output = Command::new("redis-cli")
            .arg("-s")
            .arg(self.dir.join("redis.sock"))
            .args(args)
            .output()
            .unwrap();
        String::from_utf8_lossy(&output.stdout).to_string()
    }

    /// Stops it (its data kept in the append-only file) and starts it again.
    fn restart(&mut self) {
        let _ = self.cli(&["SHUTDOWN"]);
        let _ = self.child.wait();
        *self = Self::start(&self.dir.clone());
    }
}

impl Drop for Redis {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn worker(redis: &Redis, server: &ScriptedServer, root: &Path, name: &str) -> tokio::process::Child {
    worker_with(redis, server, root, name, &[])
}

/// A worker as [`worker`] starts it, with `extra` flags.
fn worker_with(
    redis: &Redis,
    server: &ScriptedServer,
    root: &Path,
    name: &str,
    extra: &[&str],
) -> tokio::process::Child {
    agent_host()
        .args(["worker", "--queue", &redis.url(), "--name", name])
        .args(extra)
        .args([
            "--visibility-timeout-sec",
            "4",
            "--max-attempts",
            "2",
            "--approval",
            "auto",
        ])
        .args(["--sandbox", "danger-full-access", "--work-dir"])
        .arg(root.join(format!("work-{name}")))
        .env("ANTHROPIC_BASE_URL", server.base_url())
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(root.join(format!("{name}.log"))).unwrap())
        .spawn()
        .unwrap()
}

fn batch(redis: &Redis, server: &ScriptedServer, root: &Path) -> tokio::process::Child {
    agent_host()
        .args(["batch", "tasks.jsonl", "--out", "out", "--queue", &redis.url()])
        .current_dir(root)
        .env("ANTHROPIC_BASE_URL", server.base_url())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// Tasks `QUICK-0`.. answering at once, plus `extra`; and their routes.
fn tasks(root: &Path, quick: usize, extra: &[(&str, Vec<Reply>)]) -> Vec<Route> {
    std::fs::create_dir_all(root.join("proj")).unwrap();
    std::fs::write(root.join("proj/readme.md"), "hi\n").unwrap();
    let mut lines = Vec::new();
    let mut routes = Vec::new();
    for n in 0..quick {
        let marker = format!("QUICK-{n}-TASK");
        lines.push(
            json!({"id": format!("quick-{n}"), "instruction": marker, "workspace": {"dir": "proj"}})
                .to_string(),
        );
        routes.push(Route {
            marker,
            replies: vec![message(&[text(&format!("done {n}"))])],
        });
    }
    for (id, replies) in extra {
        let marker = format!("{}-TASK", id.to_uppercase());
        lines.push(json!({"id": id, "instruction": marker, "workspace": {"dir": "proj"}}).to_string());
        routes.push(Route {
            marker,
            replies: replies.clone(),
        });
    }
    std::fs::write(root.join("tasks.jsonl"), lines.join("\n") + "\n").unwrap();
    routes
}

async fn serve(routes: Vec<Route>) -> ScriptedServer {
    ScriptedServer::start_routed(
        Script {
            replies: Vec::new(),
            require_api_key: None,
        },
        routes,
    )
    .await
    .unwrap()
}

/// How many requests carried `marker`.
fn asked(server: &ScriptedServer, marker: &str) -> usize {
    server
        .requests()
        .iter()
        .filter(|r| r.body.contains(marker))
        .count()
}

/// The worker holding the queue entry of task `id`, by the group's pending list.
fn holder(redis: &Redis, id: &str) -> Option<String> {
    let entries = redis.cli(&["XRANGE", "agent-host:tasks", "-", "+"]);
    let lines: Vec<&str> = entries.lines().collect();
    // XRANGE prints: entry id, then the fields and values.
    let at = lines.iter().position(|l| *l == id)?;
    let entry = lines[..at]
        .iter()
        .rev()
        .find(|l| l.contains('-') && l.chars().next().is_some_and(|c| c.is_ascii_digit()))?;
    let pending = redis.cli(&["XPENDING", "agent-host:tasks", "workers", entry, entry, "1"]);
    pending.lines().nth(1).map(str::to_string)
}

/// Workers `w1`.. by name.
struct Fleet(Vec<(String, tokio::process::Child)>);

impl Fleet {
    fn start(redis: &Redis, server: &ScriptedServer, root: &Path, count: usize) -> Self {
        let mut fleet = Self(Vec::new());
        for _ in 0..count {
            fleet.add(redis, server, root);
        }
        fleet
    }

    fn add(&mut self, redis: &Redis, server: &ScriptedServer, root: &Path) {
        let name = format!("w{}", self.0.len() + 1);
        let child = worker(redis, server, root, &name);
        self.0.push((name, child));
    }

    /// Kills (SIGKILL) the worker holding task `id`, and starts another in its place.
    fn replace_holder_of(&mut self, redis: &Redis, server: &ScriptedServer, root: &Path, id: &str) {
        let name = holder(redis, id).expect("the task is held by a worker");
        let (_, victim) = self.0.iter_mut().find(|(n, _)| *n == name).unwrap();
        victim.start_kill().unwrap();
        self.add(redis, server, root);
    }
}

/// Polls until `done`. The deadline guards against a hang only: what the tests wait for
/// (a worker taking a task) happens within a few seconds.
async fn wait_until(what: &str, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while !done() {
        assert!(Instant::now() < deadline, "timed out waiting until {what}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

fn result(root: &Path, id: &str) -> Value {
    serde_json::from_str(&std::fs::read_to_string(root.join("out").join(id).join("result.json")).unwrap())
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_workers_run_every_task_once_even_when_one_is_killed_mid_task() {
    let root = tempfile::tempdir().unwrap();
    let redis = Redis::start(root.path());
    let slow = vec![
        message(&[tool_use("s1", "shell", json!({"command": "sleep 5"}))]),
        message(&[text("Slow task done.")]),
    ];
    let server = serve(tasks(root.path(), 30, &[("slow", slow)])).await;
    let mut fleet = Fleet::start(&redis, &server, root.path(), 3);
    let collecting = batch(&redis, &server, root.path());

    // The slow task's worker is killed while its command runs; a fourth takes its place.
    wait_until("a worker runs the slow task", || asked(&server, "SLOW-TASK") == 1).await;
    fleet.replace_holder_of(&redis, &server, root.path(), "slow");

    // Guards against a hang only: more than 10x the batch's time, most of it the killed
    // worker's task waiting out its 4 s visibility timeout and running its 5 s command.
    let output = tokio::time::timeout(Duration::from_secs(180), collecting.wait_with_output())
        .await
        .expect("the batch collected every result")
        .unwrap();
    let (out, err) = (stdout(&output), stderr(&output));
    assert!(output.status.success(), "{out}\n{err}");
    assert!(
        out.contains("31 tasks: 31 completed, 0 stopped, 0 failed"),
        "{out}"
    );
    for n in 0..30 {
        assert_eq!(
            asked(&server, &format!("QUICK-{n}-TASK")),
            1,
            "quick-{n} ran once"
        );
        assert_eq!(
            result(root.path(), &format!("quick-{n}"))["final_text"],
            format!("done {n}")
        );
    }
    // Two attempts at the slow task (the first one's worker was killed), one result.
    assert_eq!(result(root.path(), "slow")["final_text"], "Slow task done.");
    assert_eq!(redis.cli(&["HGET", "agent-host:attempts", "slow"]).trim(), "2");
    assert_eq!(redis.cli(&["HLEN", "agent-host:results"]).trim(), "31");
    assert_eq!(
        redis.cli(&["XLEN", "agent-host:tasks"]).trim(),
        "0",
        "the queue is empty"
    );
    let events = std::fs::read_to_string(root.path().join("out/slow/events.jsonl")).unwrap();
    assert!(events.contains("PROCESSING_END"), "{events}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_that_ends_its_worker_fails_after_its_attempts_and_redis_may_restart() {
    let root = tempfile::tempdir().unwrap();
    let mut redis = Redis::start(root.path());
    let poison = vec![
        message(&[tool_use("p1", "shell", json!({"command": "sleep 30"}))]),
        message(&[tool_use("p2", "shell", json!({"command": "sleep 30"}))]),
    ];
    let server = serve(tasks(root.path(), 10, &[("poison", poison)])).await;
    let mut fleet = Fleet::start(&redis, &server, root.path(), 3);
    let collecting = batch(&redis, &server, root.path());

    // Each time a worker runs the poison task, that worker dies (killed here, as a task that
    // crashes its worker would have it); Redis restarts after the first death.
    for attempt in 1..=2 {
        wait_until("a worker runs the poison task", || {
            asked(&server, "POISON-TASK") == attempt
        })
        .await;
        fleet.replace_holder_of(&redis, &server, root.path(), "poison");
        if attempt == 1 {
            redis.restart();
        }
    }

    // Guards against a hang only: more than 10x the batch's time, most of it the poison
    // task's second attempt waiting out the 4 s visibility timeout.
    let output = tokio::time::timeout(Duration::from_secs(180), collecting.wait_with_output())
        .await
        .expect("the batch collected every result")
        .unwrap();
    let (out, err) = (stdout(&output), stderr(&output));
    assert_eq!(output.status.code(), Some(1), "{out}\n{err}");
    assert!(
        out.contains("11 tasks: 10 completed, 0 stopped, 1 failed"),
        "{out}"
    );
    let poisoned = result(root.path(), "poison");
    assert_eq!(poisoned["state"], "failed");
    assert!(
        poisoned["error"].as_str().unwrap().contains("attempted 2 times"),
        "{poisoned}"
    );
    assert_eq!(asked(&server, "POISON-TASK"), 2, "not run a third time");
    for n in 0..10 {
        assert_eq!(
            asked(&server, &format!("QUICK-{n}-TASK")),
            1,
            "quick-{n} ran once"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_lets_a_worker_finish_its_task_then_stop() {
    let root = tempfile::tempdir().unwrap();
    let redis = Redis::start(root.path());
    let slow = vec![
        message(&[tool_use("s1", "shell", json!({"command": "sleep 2"}))]),
        message(&[text("Finished before stopping.")]),
    ];
    let server = serve(tasks(root.path(), 0, &[("slow", slow)])).await;
    let mut only = worker(&redis, &server, root.path(), "w1");
    let collecting = batch(&redis, &server, root.path());
    wait_until("the worker runs the task", || asked(&server, "SLOW-TASK") == 1).await;
    let pid = nix::unistd::Pid::from_raw(only.id().unwrap() as i32);
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM).unwrap();
    // Both timeouts guard against a hang only: the task's 2 s command is most of the time.
    let status = tokio::time::timeout(Duration::from_secs(60), only.wait())
        .await
        .expect("the worker stopped")
        .unwrap();
    assert!(status.success());
    let output = tokio::time::timeout(Duration::from_secs(60), collecting.wait_with_output())
        .await
        .expect("the batch collected the result")
        .unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
    assert_eq!(
        result(root.path(), "slow")["final_text"],
        "Finished before stopping."
    );
    let log = std::fs::read_to_string(root.path().join("w1.log")).unwrap();
    assert!(
        log.contains("slow: completed") && log.ends_with("stopped\n"),
        "{log}"
    );
}

/// A task that never ends (its command sleeps ten minutes) is given up at the worker's
/// deadline: failed with the reason and stored, its entry no longer kept fresh but taken
/// off the queue. Before, the worker kept the entry fresh for ever and no other worker
/// could take it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_worker_gives_up_a_task_past_its_deadline_and_takes_the_next() {
    let root = tempfile::tempdir().unwrap();
    let redis = Redis::start(root.path());
    let stuck = vec![
        message(&[tool_use("s1", "shell", json!({"command": "sleep 600"}))]),
        message(&[text("Never reached.")]),
    ];
    let server = serve(tasks(root.path(), 1, &[("stuck", stuck)])).await;
    let _only = worker_with(&redis, &server, root.path(), "w1", &["--task-timeout-sec", "3"]);
    let collecting = batch(&redis, &server, root.path());
    // Guards against a hang only: the 3 s deadline and a command's 2 s kill are most of it.
    let output = tokio::time::timeout(Duration::from_secs(120), collecting.wait_with_output())
        .await
        .expect("the batch collected every result")
        .unwrap();
    let (out, err) = (stdout(&output), stderr(&output));
    assert_eq!(output.status.code(), Some(1), "{out}\n{err}");
    let stuck = result(root.path(), "stuck");
    assert_eq!(stuck["state"], "failed", "{stuck}");
    assert!(
        stuck["error"]
            .as_str()
            .unwrap()
            .starts_with("given up at its deadline of 3 s"),
        "{stuck}"
    );
    assert_eq!(result(root.path(), "quick-0")["final_text"], "done 0");
    assert_eq!(asked(&server, "STUCK-TASK"), 1, "run once, by its worker");
    assert_eq!(redis.cli(&["HGET", "agent-host:attempts", "stuck"]).trim(), "1");
    assert_eq!(
        redis.cli(&["XLEN", "agent-host:tasks"]).trim(),
        "0",
        "the queue is empty"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_worker_checks_a_queued_task_again() {
    let root = tempfile::tempdir().unwrap();
    let redis = Redis::start(root.path());
    let server = serve(Vec::new()).await;
    let _fleet = Fleet::start(&redis, &server, root.path(), 1);
    // Written straight into the queue by whoever can reach it: an id that would name a folder
    // outside the worker's, and a git option for a repository.
    let evil = json!({"id": "../evil", "instruction": "x", "workspace": {"dir": "/"}}).to_string();
    let option =
        json!({"id": "opt", "instruction": "x", "workspace": {"git": "--upload-pack=touch /tmp/pwned"}})
            .to_string();
    redis.cli(&["XADD", "agent-host:tasks", "*", "id", "../evil", "task", &evil]);
    redis.cli(&["XADD", "agent-host:tasks", "*", "id", "opt", "task", &option]);
    wait_until("both are answered", || {
        redis.cli(&["HLEN", "agent-host:results"]).trim() == "2"
    })
    .await;
    let stored = |id: &str| -> Value {
        serde_json::from_str(&redis.cli(&["HGET", "agent-host:results", id])).unwrap()
    };
    assert!(
        stored("../evil")["error"]
            .as_str()
            .unwrap()
            .contains("cannot name a folder")
    );
    assert!(
        stored("opt")["error"]
            .as_str()
            .unwrap()
            .contains("not a repository")
    );
    assert!(!root.path().join("evil").exists());
    assert_eq!(asked(&server, "x"), 0, "nothing ran");
}
