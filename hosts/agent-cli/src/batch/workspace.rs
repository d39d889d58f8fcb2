//! A task's workspace: its own copy of a folder, or a clone of a repository at a revision.
//! (What the task changed in it is [`super::patch`]'s.)

use super::task::Source;
use std::ffi::OsStr;
use std::path::Path;

/// Fills `dest` (not existing yet) from `source`. Copying runs off the async threads; a
/// clone still running when the caller gives up (its task's deadline) is killed.
pub async fn prepare(source: &Source, dest: &Path) -> Result<(), String> {
    match (&source.dir, &source.git) {
        (Some(dir), _) => {
            let (dir, dest) = (dir.clone(), dest.to_path_buf());
            tokio::task::spawn_blocking(move || copy_folder(&dir, &dest))
                .await
                .unwrap_or_else(|e| Err(format!("copying the workspace stopped: {e}")))
        }
        (None, Some(url)) => clone(url, source.rev.as_deref(), dest).await,
        (None, None) => Err("the task names no workspace".to_string()),
    }
}

fn copy_folder(dir: &Path, dest: &Path) -> Result<(), String> {
    // Checked before the batch began; a link put there since is not followed.
    if std::fs::symlink_metadata(dir).is_ok_and(|m| m.file_type().is_symlink()) {
        return Err(format!("workspace.dir {} is a link", dir.display()));
    }
    if !dir.is_dir() {
        return Err(format!("workspace.dir {} is not a folder", dir.display()));
    }
    copy_tree(dir, dest, false)
}

/// Runs git with `args`: only the transports a repository address should use (never
/// `ext::`, which runs a command), no prompt for credentials, killed if dropped.
async fn git(args: &[&OsStr]) -> Result<(), String> {
    let output = tokio::process::Command::new("git")
        .args(args)
        .env("GIT_ALLOW_PROTOCOL", "file:git:http:https:ssh")
        .env("GIT_TERMINAL_PROMPT", "0")
        // Nobody answers a password or host-key question in a batch.
        .env("GIT_SSH_COMMAND", "ssh -o BatchMode=yes")
        .stdin(std::process::Stdio::null())
        .kill_on_drop(true)
        .output()
        .await
        .map_err(|e| format!("cannot run git: {e}"))?;
    if output.status.success() {
        Ok(())
    } else {
        Err(String::from_utf8_lossy(&output.stderr).trim().to_string())
    }
}

/// `git clone` then `git checkout`.
async fn clone(url: &str, rev: Option<&str>, dest: &Path) -> Result<(), String> {
    git(&[
        "clone".as_ref(),
        "--quiet".as_ref(),
        "--".as_ref(),
        url.as_ref(),
        dest.as_os_str(),
    ])
    .await
    .map_err(|e| format!("cannot clone {url}: {e}"))?;
    if let Some(rev) = rev {
        git(&[
            "-C".as_ref(),
            dest.as_os_str(),
            "checkout".as_ref(),
            "--quiet".as_ref(),
            "--detach".as_ref(),
            rev.as_ref(),
        ])
        .await
        .map_err(|e| format!("cannot check out {rev} of {url}: {e}"))?;
    }
    Ok(())
}

/// Copies the folder `from` to `to`: files with their permissions, links as links (never
/// followed); `.git` folders too unless `skip_git`.
pub fn copy_tree(from: &Path, to: &Path, skip_git: bool) -> Result<(), String> {
    let failed = |what: &Path, e: std::io::Error| format!("cannot copy {}: {e}", what.display());
    std::fs::create_dir_all(to).map_err(|e| failed(to, e))?;
    let entries = std::fs::read_dir(from).map_err(|e| failed(from, e))?;
    for entry in entries {
        let entry = entry.map_err(|e| failed(from, e))?;
        let (source, target) = (entry.path(), to.join(entry.file_name()));
        let kind = entry.file_type().map_err(|e| failed(&source, e))?;
        if kind.is_dir() {
            if skip_git && entry.file_name() == ".git" {
                continue;
            }
            copy_tree(&source, &target, skip_git)?;
        } else if kind.is_symlink() {
            let link = std::fs::read_link(&source).map_err(|e| failed(&source, e))?;
            std::os::unix::fs::symlink(link, &target).map_err(|e| failed(&source, e))?;
        } else if kind.is_file() {
            std::fs::copy(&source, &target).map_err(|e| failed(&source, e))?;
        }
        // Sockets, FIFOs and devices are not a repository's content.
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[tokio::test]
    async fn a_source_folder_that_became_a_link_is_not_copied() {
        let root = tempfile::tempdir().unwrap();
        std::fs::create_dir(root.path().join("keys")).unwrap();
        std::os::unix::fs::symlink(root.path().join("keys"), root.path().join("d")).unwrap();
        let source = Source {
            dir: Some(root.path().join("d")),
            git: None,
            rev: None,
        };
        let refused = prepare(&source, &root.path().join("copy")).await.unwrap_err();
        assert!(refused.ends_with("is a link"), "{refused}");
        assert!(!root.path().join("copy").exists());
    }
}
