//! Commands in an OS sandbox. Each test runs real commands through the `shell`
//! tool of the real binary (`agent-host tool shell`) and checks what the kernel let them do.

use crate::common::{agent_host, stderr, stdout};
use crate::identity::{identities, tool_shell};
use std::path::Path;
use std::process::Output;

/// Runs `command` with the shell tool in `work`, with `home` as the home directory (its
/// credentials are the ones the sandbox must hide) and the extra flags.
async fn shell(work: &Path, home: &Path, command: &str, flags: &[&str]) -> Output {
    let mut base = agent_host();
    base.env("HOME", home);
    tool_shell(base, work, command, flags).output().await.unwrap()
}

/// The flags that turn the sandbox off.
const UNCONFINED: &[&str] = &["--sandbox", "danger-full-access"];

/// The tool's output (stdout, stderr and the exit code as the model sees them).
fn seen_by_model(output: &Output) -> String {
    format!("{}{}", stdout(output), stderr(output))
}

fn git_init(work: &Path) {
    let status = std::process::Command::new("git")
        .args(["init", "-q"])
        .current_dir(work)
        .status()
        .unwrap();
    assert!(status.success());
}

#[tokio::test]
async fn workspace_write_keeps_every_write_in_the_workspace() {
    for who in identities().await {
        let work = who.folder();
        let home = who.folder();
        let outside = who.folder();
        git_init(work.path());
        std::os::unix::fs::symlink(outside.path(), work.path().join("link-out")).unwrap();
        who.own(work.path());
        let o = outside.path().display();
        let script = format!(
            "echo x > {o}/direct && echo WROTE-OUTSIDE
             echo x > $HOME/x && echo WROTE-HOME
             echo x > link-out/through-link && echo WROTE-THROUGH-LINK
             echo x > .git/hooks/pre-commit && echo WROTE-GIT-HOOK
             echo x >> .git/config && echo WROTE-GIT-CONFIG
             umount .git 2>/dev/null; echo x > .git/after-umount && echo WROTE-GIT-AFTER-UMOUNT
             sh -c 'echo x > {o}/from-child' && echo WROTE-FROM-CHILD
             setsid sh -c 'echo x > {o}/from-setsid' && echo WROTE-FROM-SETSID
             mkdir -p src && echo x > src/inside.txt && echo WROTE-INSIDE
             echo x > $TMPDIR/scratch && echo WROTE-TMPDIR
             true"
        );
        let output = who.shell(work.path(), home.path(), &script, &[]).await;
        let seen = seen_by_model(&output);
        for allowed in ["WROTE-INSIDE", "WROTE-TMPDIR"] {
            assert!(seen.contains(allowed), "{allowed} missing: {seen}");
        }
        for refused in [
            "WROTE-OUTSIDE",
            "WROTE-HOME",
            "WROTE-THROUGH-LINK",
            "WROTE-GIT-HOOK",
            "WROTE-GIT-CONFIG",
            "WROTE-GIT-AFTER-UMOUNT",
            "WROTE-FROM-CHILD",
            "WROTE-FROM-SETSID",
        ] {
            assert!(!seen.contains(refused), "{refused}: {seen}");
        }
        assert_eq!(std::fs::read_dir(outside.path()).unwrap().count(), 0, "{seen}");
        assert!(!home.path().join("x").exists());
        assert!(!work.path().join(".git/hooks/pre-commit").exists());
        assert_eq!(
            std::fs::read_to_string(work.path().join("src/inside.txt")).unwrap(),
            "x\n"
        );
    }
}

#[tokio::test]
async fn credentials_in_the_home_directory_cannot_be_read() {
    let work = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    std::fs::create_dir(home.path().join(".ssh")).unwrap();
    std::fs::write(home.path().join(".ssh/id_ed25519"), "PRIVATE-KEY-BYTES").unwrap();
    std::fs::create_dir(home.path().join(".aws")).unwrap();
    std::fs::write(home.path().join(".aws/credentials"), "AWS-SECRET-BYTES").unwrap();
    std::fs::write(home.path().join("notes.txt"), "ORDINARY-NOTES").unwrap();
    // Every process the command can see, its environment written to a file: agent-host's
    // would hold HOST_ONLY_CANARY, which `--env-policy core` gives no command. Written to
    // a file, since what the model sees is redacted and could hide a leak.
    let script = "cat $HOME/notes.txt; cat $HOME/.ssh/id_*; cat $HOME/.aws/credentials; \
                  for e in /proc/[0-9]*/environ; do tr '\\0' '\\n' < $e; done > environs.txt; \
                  cp $HOME/.ssh/id_ed25519 k; cat k";
    let output = agent_host()
        .env("HOME", home.path())
        .env("HOST_ONLY_CANARY", "host-environment-canary")
        .args(["tool", "shell", "--env-policy", "core", "--args"])
        .arg(serde_json::json!({ "command": script }).to_string())
        .arg("--cwd")
        .arg(work.path())
        .output()
        .await
        .unwrap();
    let seen = seen_by_model(&output);
    assert!(seen.contains("ORDINARY-NOTES"), "{seen}");
    assert!(!seen.contains("PRIVATE-KEY-BYTES"), "{seen}");
    assert!(!seen.contains("AWS-SECRET-BYTES"), "{seen}");
    let environs = std::fs::read_to_string(work.path().join("environs.txt")).unwrap();
    assert!(
        environs.contains("PATH="),
        "no environment was read at all: {seen}"
    );
    assert!(
        !environs.contains("host-environment-canary"),
        "agent-host's environment was read: {environs}"
    );
    assert!(
        seen.contains("agent-host sandbox"),
        "the model is not told why: {seen}"
    );
}

/// A server on 127.0.0.1 that counts the connections it accepts.
async fn counting_server() -> (u16, std::sync::Arc<std::sync::atomic::AtomicUsize>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let count = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let counted = count.clone();
    tokio::spawn(async move {
        while let Ok((_stream, _)) = listener.accept().await {
            counted.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        }
    });
    (port, count)
}

/// Waits until the server has accepted `expected` connections: the client's connect
/// returns once the kernel queued it, before the server's accept loop counts it. The 10 s
/// guard against a hang only: the accept loop counts within milliseconds.
async fn accepted(count: &std::sync::atomic::AtomicUsize, expected: usize) {
    let counted = || count.load(std::sync::atomic::Ordering::SeqCst);
    let waited = tokio::time::timeout(std::time::Duration::from_secs(10), async {
        while counted() < expected {
            tokio::time::sleep(std::time::Duration::from_millis(5)).await;
        }
    })
    .await;
    assert!(
        waited.is_ok(),
        "{} connections accepted, {expected} expected",
        counted()
    );
    assert_eq!(counted(), expected);
}

fn connect_script(port: u16) -> String {
    format!(
        "python3 -c \"import socket; socket.create_connection(('127.0.0.1', {port}), timeout=5); print('PY-CONNECTED')\"
         (exec 3<>/dev/tcp/127.0.0.1/{port}) && echo BASH-CONNECTED"
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_network_is_off_unless_allowed() {
    for who in identities().await {
        let work = who.folder();
        let home = who.folder();
        let (port, count) = counting_server().await;
        let output = who
            .shell(work.path(), home.path(), &connect_script(port), &[])
            .await;
        let seen = seen_by_model(&output);
        assert!(!seen.contains("CONNECTED"), "{seen}");
        assert_eq!(count.load(std::sync::atomic::Ordering::SeqCst), 0);
        assert!(seen.contains("the network is off"), "{seen}");

        let output = who
            .shell(
                work.path(),
                home.path(),
                &connect_script(port),
                &["--sandbox-network"],
            )
            .await;
        let seen = seen_by_model(&output);
        assert!(
            seen.contains("PY-CONNECTED") && seen.contains("BASH-CONNECTED"),
            "{seen}"
        );
        accepted(&count, 2).await;
    }
}

/// With `--network-allow`, a command reaches the named host through agent-host's proxy and
/// nothing else: not another name (refused, saying how to allow it), not the same server
/// directly (its own network namespace has no route to it).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_allow_list_lets_commands_reach_only_the_named_hosts() {
    for who in identities().await {
        let work = who.folder();
        let home = who.folder();
        let hello = agent_test_support::http::HelloServer::start().unwrap();
        let port = hello.port;
        let script = format!(
            "curl -sS http://ok.test:{port}/ && echo FETCHED-ALLOWED
             curl -sS --proxytunnel http://other.test:{port}/ || echo TUNNEL-REFUSED
             curl -sS http://other.test:{port}/
             {}",
            connect_script(port)
        );
        let allowed = format!("ok.test:{port}");
        let mut command = who.shell_command(
            work.path(),
            home.path(),
            &script,
            &["--network-allow", &allowed, "--network-allow", "127.0.0.1:*"],
        );
        command.env(
            "AGENT_HOST_TEST_RESOLVE",
            "ok.test=127.0.0.1,other.test=127.0.0.1",
        );
        let output = command.output().await.unwrap();
        let seen = seen_by_model(&output);
        assert!(seen.contains("hello\nFETCHED-ALLOWED"), "{}: {seen}", who.name());
        assert!(seen.contains("TUNNEL-REFUSED"), "{seen}");
        assert!(
            seen.contains(&format!(
                "agent-host refused other.test:{port}: not in network_allow"
            )) && seen.contains(&format!("--network-allow other.test:{port}")),
            "{seen}"
        );
        assert!(
            !seen.contains("PY-CONNECTED") && !seen.contains("BASH-CONNECTED"),
            "{seen}"
        );
        // Only the allowed request arrived (answered before curl printed it).
        assert_eq!(hello.answered(), 1, "{seen}");
    }
}

#[tokio::test]
async fn a_python_environment_builds_inside_the_workspace() {
    let work = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    let script = "python3 -m venv venv && venv/bin/python -c 'print(6 * 7)' && venv/bin/pip --version";
    let output = shell(work.path(), home.path(), script, &[]).await;
    let seen = seen_by_model(&output);
    assert!(output.status.success() && seen.contains("42"), "{seen}");
    assert!(seen.contains("pip "), "{seen}");
}

#[tokio::test]
async fn read_only_refuses_every_write_but_its_temporary_directory() {
    for who in identities().await {
        let work = who.folder();
        let home = who.folder();
        let script = "echo x > inside.txt && echo WROTE-INSIDE
                      echo x > $TMPDIR/scratch && echo WROTE-TMPDIR
                      true";
        let output = who
            .shell(work.path(), home.path(), script, &["--sandbox", "read-only"])
            .await;
        let seen = seen_by_model(&output);
        assert!(!seen.contains("WROTE-INSIDE"), "{seen}");
        assert!(seen.contains("WROTE-TMPDIR"), "{seen}");
        assert!(!work.path().join("inside.txt").exists());
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn danger_full_access_behaves_as_without_a_sandbox() {
    let work = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    std::fs::create_dir(home.path().join(".ssh")).unwrap();
    std::fs::write(home.path().join(".ssh/id_ed25519"), "PRIVATE-KEY-BYTES").unwrap();
    let (port, count) = counting_server().await;
    let script = format!(
        "echo x > {}/direct && echo WROTE-OUTSIDE; cat $HOME/.ssh/id_ed25519; echo; {}",
        outside.path().display(),
        connect_script(port)
    );
    let output = shell(work.path(), home.path(), &script, UNCONFINED).await;
    let seen = seen_by_model(&output);
    assert!(seen.contains("WROTE-OUTSIDE"), "{seen}");
    assert!(seen.contains("PRIVATE-KEY-BYTES"), "{seen}");
    assert!(seen.contains("PY-CONNECTED"), "{seen}");
    accepted(&count, 2).await;
}

#[tokio::test]
async fn config_show_names_the_sandbox_and_what_the_kernel_enforces() {
    let work = tempfile::tempdir().unwrap();
    let output = agent_host()
        .args(["config", "show", "--cwd"])
        .arg(work.path())
        .output()
        .await
        .unwrap();
    let shown = stdout(&output);
    assert!(
        shown.contains("sandbox") && shown.contains("workspace-write"),
        "{shown}"
    );
    assert!(shown.contains("Landlock ABI"), "{shown}");
}

#[tokio::test]
async fn an_untrusted_project_can_tighten_the_sandbox_but_not_loosen_it() {
    let show = |work: &Path| {
        let mut cmd = agent_host();
        cmd.args(["config", "show", "--cwd"]).arg(work);
        cmd
    };
    let project = |config: &str| {
        let work = tempfile::tempdir().unwrap();
        std::fs::create_dir(work.path().join(".agent")).unwrap();
        std::fs::write(work.path().join(".agent/config.toml"), config).unwrap();
        work
    };
    let loose = project("sandbox = \"danger-full-access\"\nsandbox_network = true\n");
    let output = show(loose.path()).output().await.unwrap();
    // The warning is a comment at the top of what `config show` prints.
    let (shown, warned) = (stdout(&output), format!("{}{}", stdout(&output), stderr(&output)));
    let line = |key: &str| {
        shown
            .lines()
            .find(|l| l.trim_start().starts_with(&format!("{key} ")))
            .unwrap_or_default()
            .to_string()
    };
    assert!(line("sandbox").contains("workspace-write"), "{shown}");
    assert!(line("sandbox_network").contains("\"off\""), "{shown}");
    assert!(
        warned.contains("ignored: sandbox (") && warned.contains("sandbox_network ("),
        "{warned}"
    );

    let strict = project("sandbox = \"read-only\"\n");
    let output = show(strict.path()).output().await.unwrap();
    let shown = stdout(&output);
    assert!(
        shown
            .lines()
            .any(|l| l.trim_start().starts_with("sandbox ") && l.contains("read-only")),
        "{shown}"
    );
}

/// Through the user's D-Bus session a command could ask systemd for an unconfined process;
/// through tmux, Docker or ssh-agent it could get as far. A listening Unix socket outside
/// the workspace stands for all of them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_local_daemons_unix_socket_cannot_be_reached() {
    for who in identities().await {
        let work = who.folder();
        let home = who.folder();
        let daemon = who.folder();
        let socket = daemon.path().join("bus");
        let listener = tokio::net::UnixListener::bind(&socket).unwrap();
        // Open to every user: only the sandbox may stand in the way.
        std::fs::set_permissions(&socket, std::os::unix::fs::PermissionsExt::from_mode(0o777)).unwrap();
        let count = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let counted = count.clone();
        tokio::spawn(async move {
            while let Ok((_stream, _)) = listener.accept().await {
                counted.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            }
        });
        let script = format!(
            "python3 -c \"import socket; s = socket.socket(socket.AF_UNIX); s.connect('{}'); print('UNIX-CONNECTED')\"",
            socket.display()
        );
        for flags in [&[][..], &["--sandbox-network"][..]] {
            let output = who.shell(work.path(), home.path(), &script, flags).await;
            let seen = seen_by_model(&output);
            assert!(!seen.contains("UNIX-CONNECTED"), "{flags:?}: {seen}");
        }
        assert_eq!(count.load(std::sync::atomic::Ordering::SeqCst), 0);
        let output = who.shell(work.path(), home.path(), &script, UNCONFINED).await;
        assert!(seen_by_model(&output).contains("UNIX-CONNECTED"));
    }
}

/// A terminal (`/dev/pts/N`, `/dev/tty`) gives away the user's keystrokes; root could make
/// a block device in the workspace and write the disk.
#[tokio::test]
async fn terminals_and_disks_are_out_of_reach() {
    for who in identities().await {
        let work = who.folder();
        let home = who.folder();
        let script = "cat /dev/null && echo NULL-OK
                      head -c 4 /dev/urandom > /dev/null && echo URANDOM-OK
                      echo to-stdout > /dev/stdout
                      (exec 3</dev/ptmx) && echo PTY-OPENED
                      cat /dev/tty && echo TTY-READ
                      mknod ./disk b 8 0 && echo MADE-DEVICE
                      false";
        let output = who.shell(work.path(), home.path(), script, &[]).await;
        let seen = seen_by_model(&output);
        for allowed in ["NULL-OK", "URANDOM-OK", "to-stdout"] {
            assert!(seen.contains(allowed), "{allowed}: {seen}");
        }
        for refused in ["PTY-OPENED", "TTY-READ", "MADE-DEVICE"] {
            assert!(!seen.contains(refused), "{refused}: {seen}");
        }
        assert!(!work.path().join("disk").exists());
    }
}

/// Landlock's grant on the workspace once let denied paths inside it through, and
/// `--deny-dir` did not reach commands at all.
#[tokio::test]
async fn denied_paths_inside_the_workspace_stay_denied() {
    for who in identities().await {
        let work = who.folder();
        // The home directory is the workspace: its `.ssh` is inside a writable root.
        std::fs::create_dir(work.path().join(".ssh")).unwrap();
        std::fs::write(work.path().join(".ssh/id_ed25519"), "PRIVATE-KEY-BYTES").unwrap();
        std::fs::create_dir(work.path().join("vault")).unwrap();
        std::fs::write(work.path().join("vault/plans.txt"), "VAULT-BYTES").unwrap();
        who.own(work.path());
        let script = "cat .ssh/id_ed25519; cat vault/plans.txt; echo x > vault/new && echo WROTE-VAULT
                      echo x > .ssh/authorized_keys && echo WROTE-SSH
                      echo x > elsewhere.txt && echo WROTE-ELSEWHERE";
        let vault = work.path().join("vault");
        let output = who
            .shell(
                work.path(),
                work.path(),
                script,
                &["--deny-dir", vault.to_str().unwrap()],
            )
            .await;
        let seen = seen_by_model(&output);
        assert!(seen.contains("WROTE-ELSEWHERE"), "{seen}");
        for leaked in ["PRIVATE-KEY-BYTES", "VAULT-BYTES", "WROTE-VAULT", "WROTE-SSH"] {
            assert!(!seen.contains(leaked), "{leaked}: {seen}");
        }
        assert!(!work.path().join("vault/new").exists());
        assert!(!work.path().join(".ssh/authorized_keys").exists());
    }
}

/// `.git` was once protected only if it existed when the session's sandbox was made; a
/// repository one command makes is read-only for the next.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_repository_made_by_one_command_is_read_only_for_the_next() {
    use scripted_llm::anthropic::{message, text, tool_use};
    let llm = crate::llm(vec![
        message(&[tool_use(
            "t1",
            "shell",
            serde_json::json!({"command": "git init -q"}),
        )]),
        message(&[tool_use(
            "t2",
            "shell",
            serde_json::json!({"command": "echo x > .git/hooks/post-checkout; echo x > tracked.txt"}),
        )]),
        message(&[text("Done.")]),
    ])
    .await;
    let work = tempfile::tempdir().unwrap();
    let output = crate::UserDirs::new()
        .run("start", &["--no-persist"], work.path(), &llm.base_url())
        .await;
    crate::succeeded(&output);
    assert!(work.path().join(".git/HEAD").exists(), "git init did not run");
    assert!(work.path().join("tracked.txt").exists());
    assert!(!work.path().join(".git/hooks/post-checkout").exists());
}

/// Rules protect `.git` by name, so a command that renamed the workspace away (its parent
/// being an --allow-dir) left the next command free to write the real repository's hooks.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_workspace_renamed_away_stops_the_session_s_commands() {
    use scripted_llm::anthropic::{message, text, tool_use};
    let parent = tempfile::tempdir().unwrap();
    let work = parent.path().join("p");
    std::fs::create_dir(&work).unwrap();
    git_init(&work);
    let llm = crate::llm(vec![
        message(&[tool_use(
            "t1",
            "shell",
            serde_json::json!({"command": "cd .. && mv p p2 && mkdir p"}),
        )]),
        message(&[tool_use(
            "t2",
            "shell",
            serde_json::json!({"command": "echo x > ../p2/.git/hooks/post-checkout"}),
        )]),
        message(&[text("Done.")]),
    ])
    .await;
    let allow = parent.path().to_str().unwrap();
    let output = crate::UserDirs::new()
        .run(
            "start",
            &["--no-persist", "--allow-dir", allow],
            &work,
            &llm.base_url(),
        )
        .await;
    crate::succeeded(&output);
    assert!(!parent.path().join("p2/.git/hooks/post-checkout").exists());
    // The third request carries both results. In the command's mount namespace the
    // workspace is a mount point, which cannot be renamed; had it been renamed (by a
    // process outside the sandbox), the next command would be refused.
    let results = llm.requests()[2].tool_results();
    let content = |at: usize| results[at]["content"].as_str().unwrap_or_default().to_string();
    match parent.path().join("p2/.git").exists() {
        false => assert!(content(0).contains("Device or resource busy"), "{}", content(0)),
        true => assert!(content(1).contains("moved or replaced"), "{}", content(1)),
    }
}

/// `agent-host` as `shell` runs it, but started with descriptor 7 open for appending to
/// `file` and not closed on exec, as a launcher (an IDE, a CI runner, a parent shell) may
/// leave one.
async fn shell_with_inherited_descriptor(
    work: &Path,
    home: &Path,
    file: &Path,
    command: &str,
    flags: &[&str],
) -> Output {
    let mut inner = agent_host();
    inner
        .env("HOME", home)
        .args(["tool", "shell", "--args"])
        .arg(serde_json::json!({ "command": command }).to_string())
        .args(flags)
        .arg("--cwd")
        .arg(work);
    let inner = inner.as_std();
    let mut outer = tokio::process::Command::new("/bin/bash");
    outer
        .args(["-c", r#"exec 7>>"$0" && exec "$@""#])
        .arg(file)
        .arg(inner.get_program())
        .args(inner.get_args());
    for (name, value) in inner.get_envs() {
        match value {
            Some(value) => outer.env(name, value),
            None => outer.env_remove(name),
        };
    }
    outer.output().await.unwrap()
}

#[tokio::test]
async fn a_descriptor_agent_host_inherited_does_not_reach_a_sandboxed_command() {
    let work = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    let file = outside.path().join("log");
    std::fs::write(&file, "").unwrap();
    let script = "echo pwned >&7 && echo WROTE-THROUGH-DESCRIPTOR; echo \"FDS: $(ls /proc/self/fd | tr '\\n' ' ')END\"";
    // Unconfined the command uses it: the descriptor really is there to be taken.
    let output = shell_with_inherited_descriptor(work.path(), home.path(), &file, script, UNCONFINED).await;
    assert!(
        seen_by_model(&output).contains("WROTE-THROUGH-DESCRIPTOR"),
        "{}",
        seen_by_model(&output)
    );
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "pwned\n");
    std::fs::write(&file, "").unwrap();
    let output = shell_with_inherited_descriptor(work.path(), home.path(), &file, script, &[]).await;
    let seen = seen_by_model(&output);
    assert!(!seen.contains("WROTE-THROUGH-DESCRIPTOR"), "{seen}");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "", "{seen}");
    // ls's own listing is 3.
    assert!(
        seen.contains("FDS: 0 1 2 3 END"),
        "only the standard streams: {seen}"
    );
}
