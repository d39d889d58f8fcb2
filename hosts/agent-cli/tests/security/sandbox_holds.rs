//! The sandbox holds against a determined command: nothing outside its writable roots
//! changes, not even a file's mode, owner, times or attributes; nothing it starts outlives
//! its call or agent-host; it cannot start processes without bound, nor can one response
//! run commands without bound. Each test performs the attack through the real binary, as
//! root and as an ordinary user (see [`crate::identity`]).

use crate::common::{processes_with, stderr, stdout};
use crate::identity::{Identity, identities, ordinary_user};
use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::time::{Duration, Instant};

/// What a metadata attack could change about a path: its mode, owner, group, modification
/// time and extended attributes.
#[derive(Debug, PartialEq)]
struct Metadata {
    mode: u32,
    uid: u32,
    gid: u32,
    mtime: i64,
    xattrs: Vec<String>,
}

fn metadata(path: &Path) -> Metadata {
    let meta = std::fs::symlink_metadata(path).unwrap();
    let xattrs = std::process::Command::new("python3")
        .args([
            "-c",
            "import os,sys; print(sorted(os.listxattr(sys.argv[1], follow_symlinks=False)))",
        ])
        .arg(path)
        .output()
        .unwrap();
    Metadata {
        mode: meta.mode(),
        uid: meta.uid(),
        gid: meta.gid(),
        mtime: meta.mtime(),
        xattrs: vec![String::from_utf8_lossy(&xattrs.stdout).trim().to_string()],
    }
}

/// A marker no other process on the machine has in its command line.
fn marker(what: &str) -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .subsec_nanos();
    format!("agent-host-holds-{what}-{}-{nanos}", std::process::id())
}

/// Everything a command tries on each path: its mode (set-user-ID, open to all), its owner,
/// its times, an extended attribute.
fn metadata_attack(paths: &[&Path]) -> String {
    paths
        .iter()
        .map(|p| {
            let p = p.display();
            format!(
                "chmod 4777 '{p}'; chmod 0777 '{p}'; chown 65534:65534 '{p}'; chown :65534 '{p}'; \
                 touch -h -d @0 '{p}'; \
                 python3 -c 'import os,sys; os.setxattr(sys.argv[1], \"user.x\", b\"1\", follow_symlinks=False)' '{p}'; "
            )
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn nothing_outside_the_writable_roots_changes_its_mode_owner_times_or_attributes() {
    for who in identities().await {
        for mode in ["workspace-write", "read-only"] {
            metadata_attack_as(&who, mode).await;
        }
    }
}

async fn metadata_attack_as(who: &Identity, mode: &str) {
    let home = who.folder();
    let work = who.folder();
    let outside = who.folder();
    let ssh = home.path().join(".ssh");
    std::fs::create_dir(&ssh).unwrap();
    std::fs::write(ssh.join("id_ed25519"), "KEY").unwrap();
    std::fs::write(outside.path().join("target"), "data").unwrap();
    let sessions = home.path().join(".local/state/agent-host/sessions/earlier");
    std::fs::create_dir_all(&sessions).unwrap();
    who.own(home.path());
    who.own(outside.path());
    use std::os::unix::fs::PermissionsExt;
    let mode_of = |path: &Path, mode: u32| {
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap()
    };
    mode_of(&ssh, 0o700);
    mode_of(&ssh.join("id_ed25519"), 0o600);
    mode_of(&sessions, 0o700);
    let targets = [
        outside.path().join("target"),
        outside.path().to_path_buf(),
        home.path().to_path_buf(),
        ssh.clone(),
        ssh.join("id_ed25519"),
        sessions.clone(),
    ];
    let before: Vec<Metadata> = targets.iter().map(|p| metadata(p)).collect();
    let refs: Vec<&Path> = targets.iter().map(|p| p.as_path()).collect();
    let script = format!(
        "{} touch inside.sh && chmod 0755 inside.sh && echo INSIDE-CHANGED",
        metadata_attack(&refs)
    );
    let output = who
        .shell(work.path(), home.path(), &script, &["--sandbox", mode])
        .await;
    let seen = format!("{}{}", stdout(&output), stderr(&output));
    for (path, was) in targets.iter().zip(&before) {
        assert_eq!(
            &metadata(path),
            was,
            "{} changed {} in {mode} mode: {seen}",
            who.name(),
            path.display()
        );
    }
    if mode == "workspace-write" {
        assert!(seen.contains("INSIDE-CHANGED"), "{seen}");
        let inside = std::fs::metadata(work.path().join("inside.sh")).unwrap();
        assert_eq!(inside.mode() & 0o777, 0o755);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_process_that_leaves_its_call_every_way_it_can_ends_with_it() {
    for who in identities().await {
        let home = who.folder();
        let work = who.folder();
        let mark = marker("leaves");
        // Its own session, no environment, twice forked, its output closed, and a
        // daemon's double fork in Python: each one would wait for a `.git/hooks` that a
        // later `git init` makes, as one did.
        let script = format!(
            "( setsid env -i /bin/sh -c 'sleep 300; : {mark}-a' > /dev/null 2>&1 & ) &
             nohup setsid /bin/sh -c 'exec -a {mark}-b sleep 300' > /dev/null 2>&1 &
             python3 -c 'import os,time
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        os.execv(\"/bin/sleep\", [\"{mark}-c\", \"300\"])
' ; echo started"
        );
        let output = who.shell(work.path(), home.path(), &script, &[]).await;
        let seen = format!("{}{}", stdout(&output), stderr(&output));
        assert!(seen.contains("started"), "{seen}");
        assert_eq!(
            processes_with(&mark),
            [],
            "a process of {}'s command outlived its call: {seen}",
            who.name()
        );
    }
}

/// Waits (at most `limit`, a guard against a hang) until `done` holds.
async fn until(limit: Duration, what: &str, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + limit;
    while !done() {
        assert!(Instant::now() < deadline, "timed out waiting until {what}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Kills `agent` (SIGKILL: no clean-up of its own) and waits until no process with `mark`
/// is left: each init notices through its lifeline at once (the wait guards against a hang
/// only).
async fn kill_and_see_every_process_end(mut agent: tokio::process::Child, mark: &str) {
    agent.start_kill().unwrap();
    agent.wait().await.unwrap();
    until(
        Duration::from_secs(30),
        "the command ends with agent-host",
        || processes_with(mark).is_empty(),
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_command_ends_when_agent_host_is_killed() {
    for who in identities().await {
        let home = who.folder();
        let work = who.folder();
        let mark = marker("orphaned");
        let script = format!("setsid sh -c 'sleep 300; : {mark}' & sleep 300; : {mark}");
        let agent = who
            .shell_command(work.path(), home.path(), &script, &[])
            .kill_on_drop(true)
            .spawn()
            .unwrap();
        // Hang guards only: the command starts within a second.
        until(Duration::from_secs(60), "the command runs", || {
            processes_with(&mark).len() >= 2
        })
        .await;
        kill_and_see_every_process_end(agent, &mark).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_command_cannot_start_more_processes_than_its_limit() {
    // Root is not held to RLIMIT_NPROC by the kernel: the limit is an ordinary user's.
    let who = match ordinary_user().await {
        Ok(who) => who,
        Err(why) => {
            eprintln!("skipped: a command's process limit applies to an ordinary user, and {why}");
            return;
        }
    };
    let home = who.folder();
    let work = who.folder();
    let script = "python3 -c 'import os,time
n = 0
try:
    while n < 1000:
        if os.fork() == 0:
            time.sleep(300)
            os._exit(0)
        n += 1
except OSError:
    pass
open(\"forked\", \"w\").write(str(n))
'";
    let output = who
        .shell_command(work.path(), home.path(), script, &[])
        .env("AGENT_HOST_MAX_COMMAND_PROCESSES", "16")
        .output()
        .await
        .unwrap();
    let seen = format!("{}{}", stdout(&output), stderr(&output));
    let forked: usize = std::fs::read_to_string(work.path().join("forked"))
        .unwrap_or_else(|_| panic!("{seen}"))
        .parse()
        .unwrap();
    // The init, bash and python count too.
    assert!(forked < 16, "one command started {forked} processes: {seen}");
    assert!(forked > 0, "{seen}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_response_of_many_calls_runs_a_bounded_number_of_commands_at_once() {
    use scripted_llm::anthropic::{message, text, tool_use};
    use tokio::io::AsyncBufReadExt;
    const CALLS: usize = 6;
    const AT_ONCE: usize = 2;
    let work = tempfile::tempdir().unwrap();
    let running = work.path().join("running");
    std::fs::create_dir(&running).unwrap();
    // Each command shows itself in `running` until the test lets every one go.
    let command = "f=$(mktemp -p running); until [ -e release ]; do sleep 0.02; done; rm \"$f\"; echo done";
    let calls: Vec<_> = (0..CALLS)
        .map(|i| {
            tool_use(
                &format!("c{i}"),
                "shell",
                serde_json::json!({ "command": command }),
            )
        })
        .collect();
    let llm = crate::llm(vec![message(&calls), message(&[text("Done.")])]).await;
    let mut agent = crate::UserDirs::new()
        .agent_host()
        .args(["run", "go", "--no-persist", "--cwd"])
        .arg(work.path())
        .env("ANTHROPIC_BASE_URL", llm.base_url())
        .env("AGENT_HOST_MAX_RUNNING_COMMANDS", AT_ONCE.to_string())
        .env("AGENT_HOST_LOG", "agent_host::environments::process=info")
        .stderr(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut lines = tokio::io::BufReader::new(agent.stderr.take().unwrap()).lines();
    let (waiting_tx, mut waiting_rx) = tokio::sync::mpsc::unbounded_channel();
    let log = tokio::spawn(async move {
        let mut kept = String::new();
        while let Ok(Some(line)) = lines.next_line().await {
            if line.contains("a command waits for a place") {
                let _ = waiting_tx.send(());
            }
            kept.push_str(&line);
            kept.push('\n');
        }
        kept
    });
    // The calls past the limit say they wait, and none of them starts while the first
    // ones hold their places (none ends before `release`). Hang guards only.
    for _ in AT_ONCE..CALLS {
        tokio::time::timeout(Duration::from_secs(60), waiting_rx.recv())
            .await
            .expect("a call past the limit did not wait");
    }
    until(Duration::from_secs(60), "the first commands run", || {
        std::fs::read_dir(&running).unwrap().count() == AT_ONCE
    })
    .await;
    assert_eq!(std::fs::read_dir(&running).unwrap().count(), AT_ONCE);
    std::fs::write(work.path().join("release"), "").unwrap();
    let status = tokio::time::timeout(Duration::from_secs(120), agent.wait())
        .await
        .expect("the run did not end")
        .unwrap();
    let log = log.await.unwrap();
    assert!(status.success(), "{log}");
    let results = llm.requests()[1].tool_results();
    assert_eq!(results.len(), CALLS);
    for result in results {
        let content = result["content"].as_str().unwrap_or_default();
        assert!(content.contains("done"), "{content}");
    }
}

/// The init's pipes (its report to agent-host, its lifeline) cannot be taken by the
/// command it runs: not through `/proc/1/fd`, `pidfd_getfd` or `ptrace`. Holding the
/// lifeline would keep the command alive after agent-host; writing to it or to the report
/// would end or forge other commands' results.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_inits_pipes_are_out_of_the_commands_reach_and_a_command_still_ends_with_agent_host() {
    for who in identities().await {
        let home = who.folder();
        let work = who.folder();
        let mark = marker("grabs");
        let script = format!(
            r#"python3 - {mark} <<'PY'
import ctypes, os, time
libc = ctypes.CDLL(None, use_errno=True)
held, ways = [], []
pidfd = libc.syscall(434, 1, 0)
for fd in range(64):
    got = libc.syscall(438, pidfd, fd, 0) if pidfd >= 0 else -1
    if got >= 0:
        held.append(got); ways.append("pidfd_getfd")
try:
    names = os.listdir("/proc/1/fd")
except OSError:
    names = []
for name in names:
    try:
        held.append(os.open("/proc/1/fd/" + name, os.O_WRONLY | os.O_NONBLOCK)); ways.append("proc")
    except OSError:
        pass
if libc.ptrace(0x4206, 1, 0, 0) == 0:
    ways.append("ptrace")
open("grabbed", "w").write(" ".join(ways) or "nothing")
time.sleep(300)
PY"#
        );
        let agent = who
            .shell_command(work.path(), home.path(), &script, &[])
            .kill_on_drop(true)
            .spawn()
            .unwrap();
        // Hang guards only.
        until(Duration::from_secs(60), "the command has tried", || {
            // `open(..., "w")` creates the file before `write` fills it: wait for its words.
            std::fs::read_to_string(work.path().join("grabbed")).is_ok_and(|s| !s.is_empty())
                && !processes_with(&mark).is_empty()
        })
        .await;
        let grabbed = std::fs::read_to_string(work.path().join("grabbed")).unwrap();
        assert_eq!(grabbed, "nothing", "{}'s command reached its init", who.name());
        kill_and_see_every_process_end(agent, &mark).await;
    }
}

/// No file gets a set-user-ID or set-group-ID bit, by `chmod` or at its creation: a
/// set-user-ID root shell a command left in the workspace would be any local user's way
/// to root. Nor may root's command become another user (and so any file's owner).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_file_gets_a_set_id_bit_and_roots_command_cannot_become_another_user() {
    for who in identities().await {
        let home = who.folder();
        let work = who.folder();
        let script = "cp /bin/true t; chmod 4755 t; chmod u+s t; chmod 2755 t; chmod g+s t
                      install -m 4755 /bin/true installed
                      python3 -c 'import os; os.close(os.open(\"created\", os.O_CREAT | os.O_WRONLY, 0o6755))'
                      mkdir -m 2775 shared
                      python3 -c 'import os; os.setuid(65534); print(\"BECAME-NOBODY\")'
                      echo done";
        let output = who.shell(work.path(), home.path(), script, &[]).await;
        let seen = format!("{}{}", stdout(&output), stderr(&output));
        assert!(seen.contains("done"), "{seen}");
        assert!(
            !seen.contains("BECAME-NOBODY") || !who.name().contains("root"),
            "{seen}"
        );
        for entry in std::fs::read_dir(work.path()).unwrap() {
            let entry = entry.unwrap();
            let mode = entry.metadata().unwrap().mode();
            assert_eq!(
                mode & 0o6000,
                0,
                "{} made {:?} {:o}: {seen}",
                who.name(),
                entry.file_name(),
                mode
            );
        }
    }
}
