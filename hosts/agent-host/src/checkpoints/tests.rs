#![allow(clippy::unwrap_used, clippy::expect_used)]

use super::*;
use std::fs;
use std::os::unix::fs::PermissionsExt;

fn workspace() -> (tempfile::TempDir, tempfile::TempDir) {
    (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap())
}

#[test]
fn a_restore_puts_back_changed_deleted_and_created_files_byte_for_byte() {
    let (work, state) = workspace();
    let w = work.path();
    fs::write(w.join("a.txt"), b"one\r\n").unwrap();
    fs::create_dir(w.join("src")).unwrap();
    fs::write(w.join("src/lib.rs"), b"fn f() {}").unwrap();
    fs::write(w.join("run.sh"), b"#!/bin/sh\n").unwrap();
    fs::set_permissions(w.join("run.sh"), fs::Permissions::from_mode(0o755)).unwrap();
    let checkpoints = Checkpoints::open(state.path(), w, 0, None).unwrap();
    let first = checkpoints.record("first input\nmore").unwrap();
    assert_eq!(
        (first.input, first.label.as_str(), first.files),
        (1, "first input", 3)
    );

    fs::write(w.join("a.txt"), b"changed").unwrap();
    fs::remove_file(w.join("src/lib.rs")).unwrap();
    fs::set_permissions(w.join("run.sh"), fs::Permissions::from_mode(0o644)).unwrap();
    fs::create_dir_all(w.join("new/dir")).unwrap();
    fs::write(w.join("new/dir/created.txt"), b"x").unwrap();

    let restored = checkpoints.restore(Some(1)).unwrap();
    assert_eq!(restored.input, 1);
    assert_eq!(restored.changes.restored, ["a.txt", "run.sh", "src/lib.rs"]);
    assert_eq!(restored.changes.removed, ["new/dir/created.txt"]);
    assert!(
        restored.changes.failed.is_empty(),
        "{:?}",
        restored.changes.failed
    );
    assert_eq!(fs::read(w.join("a.txt")).unwrap(), b"one\r\n");
    assert_eq!(fs::read(w.join("src/lib.rs")).unwrap(), b"fn f() {}");
    assert_eq!(
        fs::metadata(w.join("run.sh")).unwrap().permissions().mode() & 0o111,
        0o111
    );
    assert!(
        checkpoints.list().unwrap().is_empty(),
        "the restored checkpoint is used up"
    );
}

#[test]
fn undo_goes_back_one_input_at_a_time_and_numbers_continue_after_a_resume() {
    let (work, state) = workspace();
    let w = work.path();
    fs::write(w.join("f"), b"0").unwrap();
    let checkpoints = Checkpoints::open(state.path(), w, 2, None).unwrap();
    for n in 1..=3 {
        checkpoints.record(&format!("input {n}")).unwrap();
        fs::write(w.join("f"), n.to_string()).unwrap();
    }
    let inputs: Vec<u32> = checkpoints.list().unwrap().iter().map(|c| c.input).collect();
    assert_eq!(inputs, [3, 4, 5], "two inputs came before the checkpoints began");

    // Reopened, as `agent-host undo` does in another process.
    let reopened = Checkpoints::open(state.path(), w, 0, None).unwrap();
    assert_eq!(reopened.restore(None).unwrap().input, 5);
    assert_eq!(fs::read(w.join("f")).unwrap(), b"2");
    assert_eq!(reopened.restore(None).unwrap().input, 4);
    assert_eq!(fs::read(w.join("f")).unwrap(), b"1");
    let error = reopened.restore(Some(5)).unwrap_err().to_string();
    assert!(
        error.contains("no checkpoint before input 5") && error.contains("inputs 3"),
        "{error}"
    );
    assert_eq!(reopened.record("next").unwrap().input, 6);
}

#[test]
fn ignored_git_and_preexisting_files_are_never_deleted() {
    let (work, state) = workspace();
    let w = work.path();
    fs::write(w.join(".gitignore"), b"build/\n").unwrap();
    fs::create_dir_all(w.join(".git/info")).unwrap();
    fs::write(w.join(".git/info/exclude"), b"vendor/\n").unwrap();
    fs::write(w.join(".git/HEAD"), b"ref: refs/heads/main\n").unwrap();
    // Built an hour ago: `touch` cannot make it look new (its creation time is used).
    let hour_ago = std::time::SystemTime::now() - std::time::Duration::from_secs(3600);
    for dir in ["build", "vendor"] {
        fs::create_dir_all(w.join(dir)).unwrap();
        let path = w.join(dir).join("out.o");
        fs::write(&path, b"old object").unwrap();
        fs::File::options()
            .write(true)
            .open(&path)
            .unwrap()
            .set_modified(hour_ago)
            .unwrap();
    }
    fs::write(w.join(".env"), b"hidden but recorded").unwrap();
    // Creation times cannot be set: let the files be older than the clock's slack, as files
    // made before a session are.
    std::thread::sleep(std::time::Duration::from_millis(60));
    let checkpoints = Checkpoints::open(state.path(), w, 0, None).unwrap();
    let recorded = checkpoints.record("go").unwrap();
    assert_eq!(
        recorded.files, 2,
        ".gitignore and .env; not build/, vendor/ nor .git/"
    );

    // The input un-ignores both folders and writes in .git. The restored .gitignore hides
    // build/ again; vendor/'s rule lived in .git, which is not restored, and its file
    // predates the checkpoint: left, not deleted.
    fs::write(w.join(".gitignore"), b"").unwrap();
    fs::write(w.join(".git/info/exclude"), b"").unwrap();
    fs::write(w.join(".git/HEAD"), b"changed").unwrap();
    fs::write(w.join(".env"), b"edited").unwrap();
    let restored = checkpoints.restore(None).unwrap();
    assert_eq!(restored.changes.restored, [".env", ".gitignore"]);
    assert!(restored.changes.removed.is_empty(), "{:?}", restored.changes);
    assert_eq!(restored.changes.left.len(), 1, "{:?}", restored.changes);
    assert_eq!(restored.changes.left[0].0, "vendor/out.o");
    assert!(restored.changes.left[0].1.contains("older than the checkpoint"));
    for dir in ["build", "vendor"] {
        assert_eq!(fs::read(w.join(dir).join("out.o")).unwrap(), b"old object");
    }
    assert_eq!(fs::read(w.join(".git/HEAD")).unwrap(), b"changed");
    assert_eq!(fs::read(w.join(".env")).unwrap(), b"hidden but recorded");
}

#[test]
fn a_link_put_where_a_file_was_is_replaced_not_written_through() {
    let (work, state) = workspace();
    let outside = tempfile::tempdir().unwrap();
    let w = work.path();
    fs::write(w.join("config"), b"mine").unwrap();
    fs::write(outside.path().join("secret"), b"keep").unwrap();
    let checkpoints = Checkpoints::open(state.path(), w, 0, None).unwrap();
    checkpoints.record("go").unwrap();
    fs::remove_file(w.join("config")).unwrap();
    std::os::unix::fs::symlink(outside.path().join("secret"), w.join("config")).unwrap();
    let restored = checkpoints.restore(None).unwrap();
    assert_eq!(restored.changes.restored, ["config"]);
    assert_eq!(fs::read(outside.path().join("secret")).unwrap(), b"keep");
    assert!(fs::symlink_metadata(w.join("config")).unwrap().is_file());
    assert_eq!(fs::read(w.join("config")).unwrap(), b"mine");
}

#[test]
fn a_file_read_through_a_link_is_not_recorded() {
    let (work, state) = workspace();
    let outside = tempfile::tempdir().unwrap();
    fs::write(outside.path().join("secret"), b"secret").unwrap();
    std::os::unix::fs::symlink(outside.path(), work.path().join("out")).unwrap();
    std::os::unix::fs::symlink(outside.path().join("secret"), work.path().join("s")).unwrap();
    let checkpoints = Checkpoints::open(state.path(), work.path(), 0, None).unwrap();
    assert_eq!(checkpoints.record("go").unwrap().files, 0);
    let objects = fs::read_dir(state.path().join("checkpoints/objects"));
    assert!(
        objects.map(|d| d.count()).unwrap_or(0) == 0,
        "no content was stored"
    );
}

#[test]
fn an_unchanged_workspace_stores_its_state_once_and_unchanged_files_are_not_read_again() {
    let (work, state) = workspace();
    fs::write(work.path().join("a"), b"a").unwrap();
    let checkpoints = Checkpoints::open(state.path(), work.path(), 0, None).unwrap();
    checkpoints.record("1").unwrap();
    checkpoints.record("2").unwrap();
    let states = fs::read_dir(state.path().join("checkpoints/states"))
        .unwrap()
        .count();
    assert_eq!(states, 1);
    // A stored content that no longer matches its name is found out, not restored.
    let object = fs::read_dir(state.path().join("checkpoints/objects"))
        .unwrap()
        .next()
        .unwrap()
        .unwrap();
    fs::write(object.path(), b"tampered").unwrap();
    fs::write(work.path().join("a"), b"changed").unwrap();
    let restored = checkpoints.restore(None).unwrap();
    assert_eq!(restored.changes.failed.len(), 1);
    assert!(
        restored.changes.failed[0].1.contains("does not hold the content"),
        "{:?}",
        restored.changes.failed
    );
    assert_eq!(fs::read(work.path().join("a")).unwrap(), b"changed");
}

#[test]
fn a_folder_swapped_for_a_link_outside_is_not_written_through() {
    let (work, state) = workspace();
    let outside = tempfile::tempdir().unwrap();
    let w = work.path();
    fs::create_dir(w.join("dir")).unwrap();
    fs::write(w.join("dir/file"), b"recorded").unwrap();
    let checkpoints = Checkpoints::open(state.path(), w, 0, None).unwrap();
    checkpoints.record("go").unwrap();
    fs::remove_dir_all(w.join("dir")).unwrap();
    std::os::unix::fs::symlink(outside.path(), w.join("dir")).unwrap();
    let restored = checkpoints.restore(None).unwrap();
    assert!(restored.changes.restored.is_empty());
    assert_eq!(restored.changes.failed.len(), 1, "{:?}", restored.changes);
    assert_eq!(restored.changes.failed[0].0, "dir/file");
    assert!(
        !outside.path().join("file").exists(),
        "nothing was written outside the workspace"
    );
}

#[test]
fn a_hard_link_put_where_a_file_was_is_replaced_not_written_through() {
    let (work, state) = workspace();
    let outside = tempfile::tempdir().unwrap();
    let w = work.path();
    fs::write(w.join("config"), b"mine").unwrap();
    fs::write(outside.path().join("other"), b"keep").unwrap();
    let checkpoints = Checkpoints::open(state.path(), w, 0, None).unwrap();
    checkpoints.record("go").unwrap();
    fs::remove_file(w.join("config")).unwrap();
    fs::hard_link(outside.path().join("other"), w.join("config")).unwrap();
    let restored = checkpoints.restore(None).unwrap();
    assert_eq!(restored.changes.restored, ["config"]);
    assert_eq!(fs::read(outside.path().join("other")).unwrap(), b"keep");
    assert_eq!(fs::read(w.join("config")).unwrap(), b"mine");
}

#[test]
fn a_folder_swapped_for_a_link_into_git_is_not_written_through() {
    // Recorded a/config and a/hooks/pre-commit; then `rm -rf a && ln -s .git a`: a restore
    // must not write the repository's configuration or hooks.
    let (work, state) = workspace();
    let w = work.path();
    fs::create_dir_all(w.join(".git/hooks")).unwrap();
    fs::create_dir_all(w.join("a/hooks")).unwrap();
    fs::write(w.join("a/config"), b"[core]\n\tfsmonitor = evil\n").unwrap();
    fs::write(w.join("a/hooks/pre-commit"), b"#!/bin/sh\nevil\n").unwrap();
    fs::set_permissions(w.join("a/hooks/pre-commit"), fs::Permissions::from_mode(0o755)).unwrap();
    let checkpoints = Checkpoints::open(state.path(), w, 0, None).unwrap();
    checkpoints.record("go").unwrap();
    fs::remove_dir_all(w.join("a")).unwrap();
    std::os::unix::fs::symlink(".git", w.join("a")).unwrap();
    let restored = checkpoints.restore(None).unwrap();
    assert!(restored.changes.restored.is_empty(), "{:?}", restored.changes);
    assert_eq!(restored.changes.failed.len(), 2, "{:?}", restored.changes);
    assert!(!w.join(".git/config").exists());
    assert!(!w.join(".git/hooks/pre-commit").exists());
}

#[test]
fn checkpoints_are_never_restored_into_another_workspace() {
    let (work, state) = workspace();
    let other = tempfile::tempdir().unwrap();
    fs::write(work.path().join("a"), b"a").unwrap();
    fs::write(other.path().join("b"), b"b").unwrap();
    Checkpoints::open(state.path(), work.path(), 0, None)
        .unwrap()
        .record("go")
        .unwrap();
    let error = Checkpoints::open(state.path(), other.path(), 0, None).unwrap_err();
    assert!(matches!(error, CheckpointError::OtherWorkspace { .. }), "{error}");
    assert!(error.to_string().contains("resumed elsewhere"), "{error}");
    assert_eq!(fs::read(other.path().join("b")).unwrap(), b"b");
}

#[test]
fn a_fifo_neither_blocks_a_record_nor_a_restore() {
    let (work, state) = workspace();
    let w = work.path();
    fs::write(w.join("pipe"), b"was a file").unwrap();
    let checkpoints = Checkpoints::open(state.path(), w, 0, None).unwrap();
    checkpoints.record("go").unwrap();
    fs::remove_file(w.join("pipe")).unwrap();
    let made = std::process::Command::new("mkfifo")
        .arg(w.join("pipe"))
        .status()
        .unwrap();
    assert!(made.success());
    // The listing sees no regular file there; the restore replaces the FIFO, never opening it.
    assert_eq!(checkpoints.record("again").unwrap().files, 0);
    let restored = checkpoints.restore(Some(1)).unwrap();
    assert_eq!(restored.changes.restored, ["pipe"]);
    assert_eq!(fs::read(w.join("pipe")).unwrap(), b"was a file");
}

#[test]
fn what_the_session_denies_is_neither_copied_nor_restored_nor_removed() {
    let (work, state) = workspace();
    let w = work.path().canonicalize().unwrap();
    fs::create_dir(w.join("secret")).unwrap();
    fs::write(w.join("secret/key"), b"do not copy").unwrap();
    fs::write(w.join("open.txt"), b"open").unwrap();
    let checkpoints = Checkpoints::open(state.path(), &w, 0, Some(vec![w.join("secret")])).unwrap();
    assert_eq!(checkpoints.record("go").unwrap().files, 1);
    let objects = fs::read_dir(state.path().join("checkpoints/objects")).unwrap();
    for object in objects {
        assert_ne!(fs::read(object.unwrap().path()).unwrap(), b"do not copy");
    }
    fs::write(w.join("secret/new"), b"the user's").unwrap();
    // `agent-host undo` opens without a session: the saved exclusions still hold.
    let reopened = Checkpoints::open(state.path(), &w, 0, None).unwrap();
    let restored = reopened.restore(None).unwrap();
    assert!(restored.changes.removed.is_empty(), "{:?}", restored.changes);
    assert_eq!(fs::read(w.join("secret/new")).unwrap(), b"the user's");
}

#[test]
fn a_repository_behind_a_gitdir_pointer_and_agent_are_left_alone() {
    use crate::environments::environment::Environment;
    let (work, state) = workspace();
    let w = work.path().canonicalize().unwrap();
    fs::write(w.join(".git"), b"gitdir: ./.bare\n").unwrap();
    fs::create_dir_all(w.join(".bare/refs")).unwrap();
    fs::write(w.join(".bare/HEAD"), b"ref: refs/heads/main\n").unwrap();
    fs::create_dir(w.join(".agent")).unwrap();
    fs::write(w.join(".agent/config.toml"), b"# project\n").unwrap();
    fs::write(w.join("code.rs"), b"fn main() {}").unwrap();
    let excluded = crate::environments::LocalEnvironment::new(&w)
        .unwrap()
        .checkpoint_exclusions();
    let checkpoints = Checkpoints::open(state.path(), &w, 0, Some(excluded)).unwrap();
    assert_eq!(
        checkpoints.record("go").unwrap().files,
        1,
        "code.rs only (a .git pointer file is skipped like a .git folder)"
    );
    // The user commits meanwhile; an undo must neither revert nor delete repository files.
    fs::write(w.join(".bare/HEAD"), b"moved").unwrap();
    fs::write(w.join(".bare/refs/new-object"), b"commit").unwrap();
    fs::write(w.join(".agent/config.toml"), b"# changed\n").unwrap();
    let restored = checkpoints.restore(None).unwrap();
    assert!(
        restored.changes.restored.is_empty() && restored.changes.removed.is_empty(),
        "{:?}",
        restored.changes
    );
    assert_eq!(fs::read(w.join(".bare/HEAD")).unwrap(), b"moved");
    assert!(w.join(".bare/refs/new-object").exists());
    assert_eq!(fs::read(w.join(".agent/config.toml")).unwrap(), b"# changed\n");
}

#[test]
fn a_path_denied_since_it_was_recorded_is_not_restored() {
    let (work, state) = workspace();
    let w = work.path().canonicalize().unwrap();
    fs::create_dir(w.join("secret")).unwrap();
    fs::write(w.join("secret/key"), b"old").unwrap();
    Checkpoints::open(state.path(), &w, 0, None)
        .unwrap()
        .record("go")
        .unwrap();
    fs::write(w.join("secret/key"), b"new").unwrap();
    // Resumed with --deny-dir secret.
    let resumed = Checkpoints::open(state.path(), &w, 0, Some(vec![w.join("secret")])).unwrap();
    let restored = resumed.restore(None).unwrap();
    assert_eq!(restored.changes.left.len(), 1, "{:?}", restored.changes);
    assert_eq!(fs::read(w.join("secret/key")).unwrap(), b"new");
}

#[test]
fn a_file_named_with_bytes_that_are_not_utf8_is_recorded_restored_and_removed() {
    use std::ffi::OsStr;
    use std::os::unix::ffi::OsStrExt;
    let (work, state) = workspace();
    let w = work.path();
    let latin1 = w.join(OsStr::from_bytes(b"caf\xe9.txt"));
    let in_folder = w.join(OsStr::from_bytes(b"r\xe9sum\xe9")).join("notes.txt");
    fs::write(&latin1, b"before").unwrap();
    fs::create_dir(in_folder.parent().unwrap()).unwrap();
    fs::write(&in_folder, b"kept").unwrap();
    fs::write(w.join("plain.txt"), b"plain").unwrap();
    let checkpoints = Checkpoints::open(state.path(), w, 0, None).unwrap();
    assert_eq!(checkpoints.record("go").unwrap().files, 3, "none skipped");

    fs::write(&latin1, b"changed").unwrap();
    fs::remove_file(&in_folder).unwrap();
    let created = w.join(OsStr::from_bytes(b"new\xff.txt"));
    fs::write(&created, b"made after the checkpoint").unwrap();
    // `agent-host undo` reads the checkpoint back from disk in another process.
    let reopened = Checkpoints::open(state.path(), w, 0, None).unwrap();
    let restored = reopened.restore(None).unwrap();
    assert!(restored.changes.failed.is_empty(), "{:?}", restored.changes);
    assert_eq!(
        restored.changes.restored,
        ["caf\\xe9.txt", "r\\xe9sum\\xe9/notes.txt"]
    );
    assert_eq!(restored.changes.removed, ["new\\xff.txt"]);
    assert_eq!(fs::read(&latin1).unwrap(), b"before");
    assert_eq!(fs::read(&in_folder).unwrap(), b"kept");
    assert!(!created.exists());
    assert_eq!(fs::read(w.join("plain.txt")).unwrap(), b"plain");
}

#[test]
fn utf8_names_are_stored_as_before_so_older_checkpoints_still_restore() {
    // States written before names could hold other bytes have UTF-8 paths as they are.
    let (work, state) = workspace();
    let w = work.path();
    fs::write(w.join("a.txt"), b"old").unwrap();
    let checkpoints = Checkpoints::open(state.path(), w, 0, None).unwrap();
    checkpoints.record("go").unwrap();
    let states = state.path().join("checkpoints/states");
    let file = fs::read_dir(&states).unwrap().next().unwrap().unwrap().path();
    let json: serde_json::Value = serde_json::from_slice(&fs::read(&file).unwrap()).unwrap();
    assert!(json["files"].get("a.txt").is_some(), "{json}");
    fs::write(w.join("a.txt"), b"new").unwrap();
    assert_eq!(checkpoints.restore(None).unwrap().changes.restored, ["a.txt"]);
    assert_eq!(fs::read(w.join("a.txt")).unwrap(), b"old");
}

#[test]
fn the_changes_since_the_first_input_name_every_changed_file_with_both_sides() {
    let (work, state) = workspace();
    let w = work.path();
    fs::write(w.join("kept.txt"), b"same").unwrap();
    fs::write(w.join("edited.txt"), b"before\n").unwrap();
    fs::write(w.join("gone.txt"), b"bye\n").unwrap();
    let checkpoints = Checkpoints::open(state.path(), w, 0, None).unwrap();
    checkpoints.record("first").unwrap();
    fs::write(w.join("edited.txt"), b"after\n").unwrap();
    checkpoints.record("second").unwrap();
    fs::remove_file(w.join("gone.txt")).unwrap();
    fs::write(w.join("new.txt"), b"hello\n").unwrap();
    // A link is not followed to what it points at.
    std::os::unix::fs::symlink("/etc/passwd", w.join("link")).unwrap();

    let diffs = checkpoints.changes_since(None).unwrap();
    type Shown<'a> = (&'a str, Option<&'a [u8]>, Option<&'a [u8]>);
    let shown: Vec<Shown> = diffs
        .iter()
        .map(|d| (d.path.as_str(), d.before.as_deref(), d.after.as_deref()))
        .collect();
    assert_eq!(
        shown,
        [
            ("edited.txt", Some(&b"before\n"[..]), Some(&b"after\n"[..])),
            ("gone.txt", Some(&b"bye\n"[..]), None),
            ("new.txt", None, Some(&b"hello\n"[..])),
        ]
    );
    // Since the second input, the edit is part of the starting point.
    let since_second = checkpoints.changes_since(Some(2)).unwrap();
    let paths: Vec<&str> = since_second.iter().map(|d| d.path.as_str()).collect();
    assert_eq!(paths, ["gone.txt", "new.txt"]);
    assert!(checkpoints.changes_since(Some(9)).is_err());
}
