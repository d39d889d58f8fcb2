//! Section 4 of the spec with the security spec's section 6.4: the local environment is
//! confined to its workspace by construction (cap-std), and policy wrappers (path
//! boundaries, read-only mode, the dangerous-command guard, scoping) compose over it. Every
//! refusal is an error naming the path or command, never a crash.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests may panic

mod common;

use agent_host::LocalEnvironment;
use agent_host::environments::{CommandGuard, EnvPolicy, Environment, PathPolicy, ReadOnly, Scoped};
use agent_host::protocol::ports::{FsError, GrepOptions, GrepOutputMode};
use agent_host::protocol::ports::{SpawnError, SpawnRequest};
use std::os::unix::fs::symlink;
use std::path::Path;
use std::sync::Arc;

/// A workspace beside a directory with a secret, and links from the one to the other.
struct Fixture {
    _top: tempfile::TempDir,
    work: std::path::PathBuf,
    outside: std::path::PathBuf,
}

fn fixture() -> Fixture {
    let top = tempfile::tempdir().unwrap();
    let work = top.path().join("work");
    let outside = top.path().join("outside");
    std::fs::create_dir_all(work.join("src")).unwrap();
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::write(outside.join("secret.txt"), "TOP SECRET needle\n").unwrap();
    std::fs::write(work.join("src/lib.rs"), "// needle inside\n").unwrap();
    symlink(&outside, work.join("escape")).unwrap();
    symlink(outside.join("secret.txt"), work.join("secret-link.txt")).unwrap();
    symlink("src", work.join("src-alias")).unwrap();
    symlink(work.join("src"), work.join("absolute-alias")).unwrap();
    Fixture {
        work: std::fs::canonicalize(&work).unwrap(),
        outside: std::fs::canonicalize(&outside).unwrap(),
        _top: top,
    }
}

fn grep_options(path: Option<&str>) -> GrepOptions {
    GrepOptions {
        pattern: "needle".to_string(),
        path: path.map(str::to_string),
        glob_filter: None,
        case_insensitive: false,
        fixed_strings: true,
        max_results: 0,
        output_mode: GrepOutputMode::Content,
    }
}

fn denied<T: std::fmt::Debug>(result: Result<T, FsError>) -> String {
    match result {
        Err(FsError::Denied(message)) => message,
        other => panic!("expected a denial, got {other:?}"),
    }
}

#[test]
fn dot_dot_and_symlink_escapes_are_refused_for_read_write_list_grep_and_glob() {
    let f = fixture();
    let env = LocalEnvironment::new(&f.work).unwrap();
    let secret = f.outside.join("secret.txt");

    // read
    for path in [
        "../outside/secret.txt",
        "escape/secret.txt",
        "secret-link.txt",
        "src/../../outside/secret.txt",
    ] {
        let message = denied(env.read_file(path, None));
        assert!(
            message.contains(path) && message.contains("outside the workspace"),
            "{message}"
        );
    }
    let message = denied(env.read_file(secret.to_str().unwrap(), None));
    assert!(message.contains("outside the workspace"), "{message}");
    // write: refused and nothing created
    denied(env.write_file("escape/planted.txt", b"x"));
    denied(env.write_file("../outside/planted.txt", b"x"));
    denied(env.write_file("secret-link.txt", b"overwritten"));
    assert!(!f.outside.join("planted.txt").exists());
    assert_eq!(std::fs::read_to_string(&secret).unwrap(), "TOP SECRET needle\n");
    denied(env.delete_file("escape/secret.txt"));
    denied(env.rename_file("escape/secret.txt", "stolen.txt"));
    denied(env.create_directory("../outside/newdir"));
    assert!(secret.exists() && !f.outside.join("newdir").exists());
    // list
    denied(env.list_directory("escape", 1));
    denied(env.list_directory("..", 1));
    // grep: the escaping base is refused, and a search of the workspace does not follow links
    denied(env.grep(&grep_options(Some("escape"))));
    denied(env.grep(&grep_options(Some(".."))));
    let hits = env.grep(&grep_options(None)).unwrap();
    assert!(hits.iter().all(|m| !m.line.contains("TOP SECRET")), "{hits:?}");
    assert!(hits.iter().any(|m| m.path == "src/lib.rs"));
    // glob
    denied(env.glob("*.txt", Some("escape")));
    denied(env.glob("**/*", Some("../outside")));
    let files = env.glob("**/*.txt", None).unwrap();
    assert!(files.is_empty(), "{files:?}");
    // processes may not start outside either
    let Err(SpawnError::InvalidWorkingDir(message)) = env.spawn("pwd", Some("escape"), 1_000, &[]) else {
        panic!("a working directory outside the workspace was accepted");
    };
    assert!(message.contains("outside the workspace"), "{message}");
}

#[test]
fn links_and_absolute_paths_that_stay_inside_work() {
    let f = fixture();
    let env = LocalEnvironment::new(&f.work).unwrap();
    assert_eq!(
        env.read_file("src-alias/lib.rs", None).unwrap(),
        b"// needle inside\n"
    );
    // An absolute link is resolved from the filesystem's root, which the handle does not
    // reach, even when it points back inside (a documented limit of the confinement).
    denied(env.read_file("absolute-alias/lib.rs", None));
    let absolute = f.work.join("src/lib.rs");
    assert_eq!(
        env.read_file(absolute.to_str().unwrap(), None).unwrap(),
        b"// needle inside\n"
    );
    env.write_file("src/../new/file.txt", b"ok").unwrap();
    assert!(f.work.join("new/file.txt").is_file());
}

#[test]
fn extra_roots_are_reachable_by_absolute_path_only() {
    let f = fixture();
    let env = LocalEnvironment::new(&f.work)
        .unwrap()
        .with_extra_roots(std::slice::from_ref(&f.outside))
        .unwrap();
    let secret = f.outside.join("secret.txt");
    assert_eq!(
        env.read_file(secret.to_str().unwrap(), None).unwrap(),
        b"TOP SECRET needle\n"
    );
    // Relative paths still start in the workspace, where `..` is still an escape.
    denied(env.read_file("../outside/secret.txt", None));
}

async fn policy(f: &Fixture, allowed: &[String], denied_roots: &[String]) -> Arc<dyn Environment> {
    let local: Arc<dyn Environment> = Arc::new(LocalEnvironment::new(&f.work).unwrap());
    Arc::new(PathPolicy::new(local, allowed, denied_roots).await.unwrap())
}

#[tokio::test]
async fn a_denied_directory_wins_over_an_allowed_one_even_through_a_link_or_for_new_files() {
    let f = fixture();
    std::fs::create_dir_all(f.work.join("keys")).unwrap();
    std::fs::write(f.work.join("keys/id"), "needle key\n").unwrap();
    symlink(f.work.join("keys"), f.work.join("innocent")).unwrap();
    let env = policy(&f, &[], &["keys".to_string()]).await;

    let message = denied(env.read_file("keys/id", None).await);
    assert!(message.contains("denied directory"), "{message}");
    denied(env.read_file("innocent/id", None).await);
    denied(env.write_file("innocent/new/deeper/file.txt", b"x").await);
    assert!(!f.work.join("keys/new").exists());
    denied(env.list_directory("innocent", 1).await);
    let hits = env.grep(&grep_options(None)).await.unwrap();
    assert!(hits.iter().all(|m| !m.path.starts_with("keys")), "{hits:?}");
    let listing = env.list_directory(".", 2).await.unwrap();
    assert!(listing.iter().all(|e| !e.path.starts_with("keys")), "{listing:?}");
    assert_eq!(
        env.read_file("src/lib.rs", None).await.unwrap(),
        b"// needle inside\n"
    );
}

#[tokio::test]
async fn read_only_mode_refuses_changes_and_commands_with_a_reason() {
    let f = fixture();
    let local: Arc<dyn Environment> = Arc::new(LocalEnvironment::new(&f.work).unwrap());
    let env = ReadOnly::new(local);
    assert!(env.read_file("src/lib.rs", None).await.is_ok());
    let message = denied(env.write_file("src/lib.rs", b"changed").await);
    assert!(message.contains("read-only mode"), "{message}");
    denied(env.delete_file("src/lib.rs").await);
    assert_eq!(
        std::fs::read_to_string(f.work.join("src/lib.rs")).unwrap(),
        "// needle inside\n"
    );
    let request = SpawnRequest {
        command: "touch x".to_string(),
        working_dir: None,
        timeout_ms: 1_000,
        env: Vec::new(),
    };
    assert!(matches!(env.spawn(request).await, Err(SpawnError::Denied(m)) if m.contains("read-only mode")));
}

fn request(command: &str) -> SpawnRequest {
    SpawnRequest {
        command: command.to_string(),
        working_dir: None,
        timeout_ms: 5_000,
        env: Vec::new(),
    }
}

#[tokio::test]
async fn the_command_guard_explains_what_it_refuses_and_lets_the_rest_run() {
    let f = fixture();
    let local: Arc<dyn Environment> = Arc::new(LocalEnvironment::new(&f.work).unwrap());
    let env = CommandGuard::new(local);
    for command in [
        "rm -rf /",
        "mkfs.ext4 /dev/sdb1",
        "dd if=/dev/zero of=/dev/sda",
        ":(){ :|:& };:",
    ] {
        match env.spawn(request(command)).await {
            Err(SpawnError::Denied(message)) => {
                assert!(
                    message.contains(command) && message.contains("was not run"),
                    "{message}"
                )
            }
            Err(other) => panic!("{command}: {other:?}"),
            Ok(_) => panic!("{command} was run"),
        }
    }
    let mut process = env.spawn(request("echo fine")).await.unwrap();
    assert_eq!(process.wait().await.stdout, "fine\n");
}

#[tokio::test]
async fn a_scoped_environment_starts_in_its_subdirectory_and_cannot_leave_it() {
    let f = fixture();
    std::fs::create_dir_all(f.work.join("pkg/a")).unwrap();
    std::fs::write(f.work.join("pkg/a/mod.rs"), "// needle in pkg\n").unwrap();
    let local: Arc<dyn Environment> = Arc::new(LocalEnvironment::new(&f.work).unwrap());
    let env = Scoped::new(local, "pkg").await.unwrap();
    assert_eq!(env.working_directory(), f.work.join("pkg").to_string_lossy());
    assert_eq!(
        env.read_file("a/mod.rs", None).await.unwrap(),
        b"// needle in pkg\n"
    );
    let message = denied(env.read_file("../src/lib.rs", None).await);
    assert!(message.contains("outside the allowed directories"), "{message}");
    let hits = env.grep(&grep_options(None)).await.unwrap();
    let paths: Vec<&str> = hits.iter().map(|m| m.path.as_str()).collect();
    assert_eq!(paths, ["a/mod.rs"]);
    assert_eq!(env.glob("**/*.rs", None).await.unwrap(), ["a/mod.rs"]);
    env.write_file("b/new.rs", b"x").await.unwrap();
    assert!(f.work.join("pkg/b/new.rs").is_file());
    let mut process = env.spawn(request("pwd")).await.unwrap();
    assert_eq!(
        process.wait().await.stdout.trim(),
        f.work.join("pkg").to_string_lossy()
    );
}

/// `env` run through `agent-host tool shell` with a policy flag and the host variables set
/// on the agent-host process only (no `set_var` in this multi-threaded test binary).
async fn env_output(policy: &str, work: &Path) -> String {
    let args = serde_json::json!({"command": "env"}).to_string();
    let output = common::agent_host()
        .args(["tool", "shell", "--args", &args, "--env-policy", policy, "--cwd"])
        .arg(work)
        .env("CONFINEMENT_TEST_PLAIN", "visible")
        .env("CONFINEMENT_TEST_API_KEY", "sk-hidden")
        .output()
        .await
        .unwrap();
    assert!(output.status.success(), "{}", common::stderr(&output));
    common::stdout(&output)
}

#[tokio::test]
async fn the_environment_policy_inherits_all_core_only_or_nothing() {
    let f = fixture();
    let all = env_output("inherit-all", &f.work).await;
    assert!(
        all.contains("CONFINEMENT_TEST_PLAIN=visible") && !all.contains("sk-hidden"),
        "{all}"
    );
    let core = env_output("core", &f.work).await;
    assert!(
        core.contains("PATH=") && !core.contains("CONFINEMENT_TEST_PLAIN"),
        "{core}"
    );
    let none = env_output("none", &f.work).await;
    let names: Vec<&str> = none
        .lines()
        .take_while(|l| !l.starts_with("Exit code:"))
        .filter_map(|l| l.split('=').next())
        .collect();
    // Only what bash sets for itself, and agent-host's call tag and sandbox temp directory.
    assert!(
        names
            .iter()
            .all(|n| ["PWD", "SHLVL", "_", "OLDPWD", "AGENT_HOST_CALL", "TMPDIR"].contains(n)),
        "{none}"
    );
}

/// A call's own variables are applied over any policy.
#[tokio::test]
async fn extra_variables_apply_over_every_policy() {
    let f = fixture();
    for policy in [EnvPolicy::InheritAll, EnvPolicy::CoreOnly, EnvPolicy::None] {
        let env = LocalEnvironment::new(&f.work).unwrap().with_env_policy(policy);
        let mut process = env
            .spawn("env", None, 5_000, &[("EXTRA_SETTING".into(), "given".into())])
            .unwrap();
        let out = process.wait().await.stdout;
        assert!(out.contains("EXTRA_SETTING=given"), "{policy:?}: {out}");
        assert_eq!(
            out.contains("PATH=/"),
            policy != EnvPolicy::None,
            "{policy:?}: {out}"
        );
    }
}

// Ways deny rules and the workspace boundary used to leak, each now closed.

/// A dangling link is judged by where the kernel would take it, not by its own name:
/// before, `notes.txt -> denied/x` looked like `notes.txt` and a write created `denied/x`.
#[tokio::test]
async fn a_dangling_link_into_a_denied_directory_is_judged_by_its_target() {
    let f = fixture();
    std::fs::create_dir_all(f.work.join("denied")).unwrap();
    symlink("denied/x", f.work.join("notes.txt")).unwrap();
    symlink("denied/newdir", f.work.join("drafts")).unwrap();
    symlink("notes.txt", f.work.join("chained.txt")).unwrap();
    let denied_root = f.work.join("denied").to_string_lossy().into_owned();
    let env = policy(&f, &[], &[denied_root]).await;

    let message = denied(env.write_file("notes.txt", b"planted").await);
    assert!(message.contains("denied directory"), "{message}");
    denied(env.write_file("chained.txt", b"planted").await);
    assert!(!f.work.join("denied/x").exists());
    denied(env.read_file("notes.txt", None).await);
    denied(env.rename_file("src/lib.rs", "drafts/lib.rs").await);
    denied(env.rename_file("notes.txt", "renamed.txt").await);
    denied(env.delete_file("notes.txt").await);
    denied(env.create_directory("drafts/sub").await);
    denied(env.list_directory("drafts", 1).await);
    assert!(!f.work.join("denied/newdir").exists() && f.work.join("src/lib.rs").exists());
}

/// `agent-host tool read_file` run from `dir` with the given flags.
async fn read_with_flags(dir: &Path, file: &str, flags: &[&str]) -> std::process::Output {
    let args = serde_json::json!({"file_path": file}).to_string();
    common::agent_host()
        .current_dir(dir)
        .args(["tool", "read_file", "--args", &args])
        .args(flags)
        .output()
        .await
        .unwrap()
}

/// Before, a relative `--deny-dir` was read from `--cwd` (so `work/keys` named
/// `work/work/keys`, which did not exist and was silently accepted), while `--allow-dir`
/// was read from the shell's directory.
#[tokio::test]
async fn relative_allow_and_deny_dirs_resolve_from_the_shell_and_must_exist() {
    let f = fixture();
    let top = f.work.parent().unwrap();
    std::fs::create_dir_all(f.work.join("keys")).unwrap();
    std::fs::write(f.work.join("keys/id"), "needle key\n").unwrap();
    let flags = [
        "--cwd",
        "work",
        "--deny-dir",
        "work/keys",
        "--allow-dir",
        "outside",
    ];

    let key = read_with_flags(top, "keys/id", &flags).await;
    let stderr = common::stderr(&key);
    assert!(
        !key.status.success() && stderr.contains("denied directory"),
        "{stderr}"
    );
    let secret = f.outside.join("secret.txt");
    let secret = read_with_flags(top, secret.to_str().unwrap(), &flags).await;
    assert!(
        common::stdout(&secret).contains("TOP SECRET"),
        "{}",
        common::stderr(&secret)
    );

    for flag in ["--deny-dir", "--allow-dir"] {
        let out = read_with_flags(top, "src/lib.rs", &["--cwd", "work", flag, "missing"]).await;
        let stderr = common::stderr(&out);
        assert!(
            !out.status.success() && stderr.contains(flag) && stderr.contains("missing"),
            "{flag}: {stderr}"
        );
    }
}

/// A hard link shares its file with a name outside the workspace: writing through it
/// changed the outside file. Writes are refused; reads are allowed on purpose (only someone
/// who may read the file can link it, and package stores such as pnpm's link files into
/// projects); renaming or deleting the name leaves the other one alone.
#[test]
fn a_hard_link_to_an_outside_file_is_readable_but_not_writable() {
    let f = fixture();
    let secret = f.outside.join("secret.txt");
    std::fs::hard_link(&secret, f.work.join("hard.txt")).unwrap();
    let env = LocalEnvironment::new(&f.work).unwrap();

    let message = denied(env.write_file("hard.txt", b"overwritten"));
    assert!(
        message.contains("hard.txt") && message.contains("2 hard links"),
        "{message}"
    );
    assert_eq!(std::fs::read_to_string(&secret).unwrap(), "TOP SECRET needle\n");
    assert_eq!(env.read_file("hard.txt", None).unwrap(), b"TOP SECRET needle\n");
    env.rename_file("hard.txt", "moved.txt").unwrap();
    env.delete_file("moved.txt").unwrap();
    assert_eq!(std::fs::read_to_string(&secret).unwrap(), "TOP SECRET needle\n");

    // Under an --allow-dir the user vouched for the files, shared or not.
    let env = env.with_extra_roots(std::slice::from_ref(&f.outside)).unwrap();
    std::fs::hard_link(&secret, f.outside.join("second.txt")).unwrap();
    let second = f.outside.join("second.txt");
    env.write_file(second.to_str().unwrap(), b"shared").unwrap();
    assert_eq!(std::fs::read_to_string(&secret).unwrap(), "shared");
}

/// Opening a FIFO for reading waited for a writer forever (the session hung); devices and
/// sockets are no files to read or write either.
#[test]
fn fifos_devices_and_sockets_are_refused_without_blocking() {
    let f = fixture();
    let fifo = f.work.join("pipe");
    assert!(
        std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success()
    );
    let _socket = std::os::unix::net::UnixListener::bind(f.work.join("sock")).unwrap();
    let env = LocalEnvironment::new(&f.work)
        .unwrap()
        .with_extra_roots(&["/dev".into()])
        .unwrap();
    let (sender, results) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let message = |result: Result<(), FsError>| format!("{result:?}");
        let read = |path: &str, range| message(env.read_file(path, range).map(drop));
        let _ = sender.send([
            read("pipe", None),
            message(env.write_file("pipe", b"x")),
            read("sock", None),
            read("/dev/zero", Some((0, 16))),
            message(env.write_file("/dev/null", b"x")),
        ]);
    });
    // A hang detector, not a speed target: the five calls take milliseconds.
    let Ok(results) = results.recv_timeout(std::time::Duration::from_secs(20)) else {
        // Opening both ends never waits, and lets a stuck open return.
        let _ = std::fs::OpenOptions::new().read(true).write(true).open(&fifo);
        panic!("a file tool blocked on a FIFO");
    };
    let expected = [
        "not a regular file: pipe is a FIFO",
        "not a regular file: pipe is a FIFO",
        "not a regular file: sock is a socket",
        "not a regular file: /dev/zero is a character device",
        "not a regular file: /dev/null is a character device",
    ];
    for (result, expected) in results.iter().zip(expected) {
        assert!(result.contains(expected), "{result}");
    }
}
