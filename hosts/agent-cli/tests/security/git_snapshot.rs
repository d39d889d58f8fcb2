//! The system prompt's git snapshot runs before anything is approved (THREAT-MODEL.md,
//! row 5). A repository's own git configuration (`core.fsmonitor`, filter drivers named by
//! `.gitattributes` or by `.git/info/attributes`) must not get it to run a program.

use crate::UserDirs;
use crate::common::{git, stderr};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_git_snapshot_runs_no_program_the_repository_configures() {
    let work = tempfile::tempdir().unwrap();
    let dir = work.path();
    git(dir, &["init", "-q"]);
    std::fs::write(dir.join("a.txt"), "a\n").unwrap();
    std::fs::write(dir.join(".gitattributes"), "*.txt filter=evil\n").unwrap();
    git(dir, &["add", "."]);
    git(dir, &["commit", "-qm", "init"]);
    git(dir, &["config", "core.fsmonitor", "touch fsmonitor-ran; false"]);
    git(dir, &["config", "filter.evil.clean", "touch filter-ran; cat"]);
    // Attributes outside the tree name a long-running filter process too.
    std::fs::write(dir.join(".git/info/attributes"), "* filter=worse\n").unwrap();
    git(dir, &["config", "filter.worse.process", "touch process-ran"]);
    // A changed timestamp makes status read the file through the filter.
    std::fs::write(dir.join("a.txt"), "b\n").unwrap();
    let output = UserDirs::new()
        .agent_host()
        .args(["profile", "--json", "--cwd"])
        .arg(dir)
        .output()
        .await
        .unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(!dir.join("fsmonitor-ran").exists(), "core.fsmonitor ran");
    assert!(!dir.join("filter-ran").exists(), "the filter driver ran");
    assert!(!dir.join("process-ran").exists(), "the filter process ran");
    // The snapshot itself still works: the commit is in the system prompt.
    let described = String::from_utf8_lossy(&output.stdout);
    assert!(described.contains(" init"), "{described}");
}

/// A repository can commit a folder in the layout of a bare repository (HEAD, objects,
/// refs, config). git looking for its repository from a workspace below the root would take
/// that folder, with the configuration and history it commits; the snapshot refuses it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bare_repository_committed_below_the_root_is_not_taken_for_the_snapshot() {
    let work = tempfile::tempdir().unwrap();
    let other = work.path().join("other");
    std::fs::create_dir_all(&other).unwrap();
    git(&other, &["init", "-q"]);
    std::fs::write(other.join("x"), "x").unwrap();
    git(&other, &["add", "."]);
    git(&other, &["commit", "-qm", "planted history"]);
    let root = work.path().join("repo");
    std::fs::create_dir_all(root.join("pkg")).unwrap();
    git(&root, &["init", "-q"]);
    std::fs::write(root.join("README"), "r").unwrap();
    git(&root, &["add", "."]);
    git(&root, &["commit", "-qm", "real history"]);
    // The workspace itself is the planted bare repository.
    git(work.path(), &["clone", "-q", "--bare", "other", "repo/pkg/app"]);
    let output = UserDirs::new()
        .agent_host()
        .args(["profile", "--json", "--cwd"])
        .arg(root.join("pkg/app"))
        .output()
        .await
        .unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
    let described = String::from_utf8_lossy(&output.stdout);
    assert!(!described.contains("planted history"), "{described}");
}
