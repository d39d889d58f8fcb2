//! Where a task's workspace may come from: folders and local repositories under the sources
//! folder the user chose (a tasks file from someone else cannot copy `~/.ssh` into a
//! workspace the model reads), never one holding the output folder (it would copy itself).

use super::task::Task;
use std::path::{Path, PathBuf};

/// Checks every task's source before any runs; the error names the task.
pub fn check_all(tasks: &[Task], root: &Path, out: &Path) -> Result<(), String> {
    let real = |path: &Path| std::fs::canonicalize(path).map_err(|e| format!("{}: {e}", path.display()));
    let root = real(root)?;
    let out = real(out)?;
    for task in tasks {
        let source = &task.workspace;
        let local = match (&source.dir, &source.git) {
            (Some(dir), _) => Some(dir.clone()),
            (None, Some(url)) => local_repository(url),
            (None, None) => None,
        };
        let Some(path) = local else { continue };
        let shown = path.display().to_string();
        let at = |why: String| format!("task {}: {why}", task.id);
        let path = real(&path).map_err(at)?;
        if !path.starts_with(&root) {
            return Err(at(format!(
                "{shown} is outside {}, where this batch's sources may be (--sources chooses)",
                root.display()
            )));
        }
        if out.starts_with(&path) {
            return Err(at(format!(
                "{shown} holds the output folder {}: choose --out outside it",
                out.display()
            )));
        }
        // An earlier task's copy there could be swapped for a link before this one is copied.
        if path.starts_with(&out) {
            return Err(at(format!(
                "{shown} is inside the output folder {}",
                out.display()
            )));
        }
    }
    Ok(())
}

/// The folder a repository address names on this machine: a path or a `file://` address;
/// `None` for a remote one (`https://`, `ssh://`, `git://`, `user@host:path`).
pub(super) fn local_repository(url: &str) -> Option<PathBuf> {
    if let Some(path) = url.strip_prefix("file://") {
        return Some(PathBuf::from(path));
    }
    if url.contains("://") {
        return None;
    }
    // scp-like `host:path` has its colon before any slash.
    match (url.find(':'), url.find('/')) {
        (Some(colon), Some(slash)) if colon < slash => None,
        (Some(_), None) => None,
        _ => Some(PathBuf::from(url)),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn repository_addresses_are_told_local_or_remote() {
        assert_eq!(
            local_repository("file:///srv/a.git"),
            Some(PathBuf::from("/srv/a.git"))
        );
        assert_eq!(local_repository("repos/a"), Some(PathBuf::from("repos/a")));
        for remote in [
            "https://example.com/a.git",
            "git@example.com:a/b.git",
            "ssh://h/a",
            "host:a",
        ] {
            assert_eq!(local_repository(remote), None, "{remote}");
        }
    }
}
