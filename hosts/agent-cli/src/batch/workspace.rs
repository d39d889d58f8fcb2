//! A task's workspace: its own copy of a folder, or a clone of a repository at a revision;
//! and what the task changed in it, as a patch `git apply` takes.

use super::task::Source;
use similar::TextDiff;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Fills `dest` (not existing yet) from `source`.
pub fn prepare(source: &Source, dest: &Path) -> Result<(), String> {
    match (&source.dir, &source.git) {
        (Some(dir), _) => {
            // Checked before the batch began; a link put there since is not followed.
            if std::fs::symlink_metadata(dir).is_ok_and(|m| m.file_type().is_symlink()) {
                return Err(format!("workspace.dir {} is a link", dir.display()));
            }
            if !dir.is_dir() {
                return Err(format!("workspace.dir {} is not a folder", dir.display()));
            }
            copy_tree(dir, dest, false)
        }
        (None, Some(url)) => clone(url, source.rev.as_deref(), dest),
        (None, None) => Err("the task names no workspace".to_string()),
    }
}

/// `git clone` then `git checkout`, with only the transports a repository address should
/// use (never `ext::`, which runs a command) and no prompt for credentials.
fn clone(url: &str, rev: Option<&str>, dest: &Path) -> Result<(), String> {
    let git = |args: &[&std::ffi::OsStr]| {
        let output = Command::new("git")
            .args(args)
            .env("GIT_ALLOW_PROTOCOL", "file:git:http:https:ssh")
            .env("GIT_TERMINAL_PROMPT", "0")
            // Nobody answers a password or host-key question in a batch.
            .env("GIT_SSH_COMMAND", "ssh -o BatchMode=yes")
            .stdin(std::process::Stdio::null())
            .output()
            .map_err(|e| format!("cannot run git: {e}"))?;
        if output.status.success() {
            Ok(())
        } else {
            Err(String::from_utf8_lossy(&output.stderr).trim().to_string())
        }
    };
    git(&[
        "clone".as_ref(),
        "--quiet".as_ref(),
        "--".as_ref(),
        url.as_ref(),
        dest.as_os_str(),
    ])
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

/// The entries under `root` a diff compares: files and links (never followed), `.gitignore`d
/// ones and `.git` left out (as `git diff` would), relative to `root`.
fn entries(root: &Path) -> BTreeSet<PathBuf> {
    ignore::WalkBuilder::new(root)
        .hidden(false)
        .parents(false)
        .require_git(false)
        .follow_links(false)
        .filter_entry(|entry| entry.file_name() != ".git")
        .build()
        .flatten()
        .filter(|entry| entry.file_type().is_some_and(|t| t.is_file() || t.is_symlink()))
        .filter_map(|entry| entry.path().strip_prefix(root).ok().map(Path::to_path_buf))
        .collect()
}

/// Larger files are named in the patch, not read.
const MAX_DIFFED_BYTES: u64 = 8 * 1024 * 1024;

/// What a diff sees of one path: the agent ran in the workspace and may have put links
/// anywhere (to the user's keys, to `/dev/zero`), so nothing is followed: a link is its
/// target's name (as git records it), and only a regular file reached through real folders
/// is read.
#[derive(PartialEq)]
enum Entry {
    Missing,
    File(Vec<u8>),
    Link(String),
    /// Too large, or not a file or a link (a FIFO, a device).
    Unread(String),
}

fn entry(root: &Path, relative: &Path) -> Entry {
    use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
    // Every folder on the way must be a folder, not a link to one.
    let mut at = root.to_path_buf();
    let mut components = relative.components().peekable();
    while let Some(component) = components.next() {
        at.push(component);
        let Ok(meta) = std::fs::symlink_metadata(&at) else {
            return Entry::Missing;
        };
        if components.peek().is_some() && !meta.is_dir() {
            return Entry::Missing;
        }
        if components.peek().is_none() {
            let kind = meta.file_type();
            if kind.is_symlink() {
                return match std::fs::read_link(&at) {
                    Ok(target) => Entry::Link(target.display().to_string()),
                    Err(_) => Entry::Missing,
                };
            }
            if kind.is_dir() {
                // A folder is not an entry; its files are.
                return Entry::Missing;
            }
            if !kind.is_file() || kind.is_fifo() {
                return Entry::Unread("not a regular file".to_string());
            }
            if meta.len() > MAX_DIFFED_BYTES {
                return Entry::Unread(format!(
                    "{} bytes, over the {MAX_DIFFED_BYTES} a patch shows",
                    meta.len()
                ));
            }
        }
    }
    let opened = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(nix::libc::O_NOFOLLOW | nix::libc::O_NONBLOCK)
        .open(&at);
    let mut bytes = Vec::new();
    match opened.and_then(|file| {
        std::io::Read::read_to_end(&mut std::io::Read::take(file, MAX_DIFFED_BYTES + 1), &mut bytes)
    }) {
        Ok(_) if bytes.len() as u64 > MAX_DIFFED_BYTES => {
            Entry::Unread("it grew past the size a patch shows".to_string())
        }
        Ok(_) => Entry::File(bytes),
        Err(_) => Entry::Missing,
    }
}

/// What changed from `before` to `after`: a unified diff with git's headers (new and
/// deleted files marked, links as git records them, binary and unread files named), and the
/// changed paths.
pub fn changes(before: &Path, after: &Path) -> (String, Vec<String>) {
    let paths: BTreeSet<PathBuf> = entries(before).into_iter().chain(entries(after)).collect();
    let mut patch = String::new();
    let mut changed = Vec::new();
    for path in paths {
        let (old, new) = (entry(before, &path), entry(after, &path));
        if old == new {
            continue;
        }
        let name = path.display().to_string();
        patch.push_str(&entry_diff(&name, &old, &new));
        changed.push(name);
    }
    (patch, changed)
}

/// One path's diff: as a file's, a link's (mode 120000, its target as its one line), or a
/// line naming what is not shown.
fn entry_diff(name: &str, old: &Entry, new: &Entry) -> String {
    let unread = |e: &Entry| match e {
        Entry::Unread(why) => Some(why.clone()),
        _ => None,
    };
    if let Some(why) = unread(new).or_else(|| unread(old)) {
        return format!("diff --git a/{name} b/{name}\n# {name} changed; not shown: {why}\n");
    }
    let link = matches!(old, Entry::Link(_)) || matches!(new, Entry::Link(_));
    let content = |e: &Entry| match e {
        Entry::File(bytes) => Some(bytes.clone()),
        Entry::Link(target) => Some(target.clone().into_bytes()),
        _ => None,
    };
    if link
        && matches!(
            (old, new),
            (Entry::File(_), Entry::Link(_)) | (Entry::Link(_), Entry::File(_))
        )
    {
        // A file replaced by a link (or back): git shows a deletion and an addition.
        return entry_diff(name, old, &Entry::Missing) + &entry_diff(name, &Entry::Missing, new);
    }
    file_diff(
        name,
        content(old).as_deref(),
        content(new).as_deref(),
        if link { "120000" } else { "100644" },
    )
}

fn file_diff(name: &str, old: Option<&[u8]>, new: Option<&[u8]>, mode: &str) -> String {
    let mut out = format!("diff --git a/{name} b/{name}\n");
    match (old, new) {
        (None, Some(_)) => out.push_str(&format!("new file mode {mode}\n")),
        (Some(_), None) => out.push_str(&format!("deleted file mode {mode}\n")),
        _ => {}
    }
    let (Ok(old_text), Ok(new_text)) = (text_of(old), text_of(new)) else {
        out.push_str(&format!("Binary files a/{name} and b/{name} differ\n"));
        return out;
    };
    let old_header = if old.is_some() {
        format!("a/{name}")
    } else {
        "/dev/null".to_string()
    };
    let new_header = if new.is_some() {
        format!("b/{name}")
    } else {
        "/dev/null".to_string()
    };
    let diff = TextDiff::from_lines(old_text.unwrap_or(""), new_text.unwrap_or(""));
    out.push_str(
        &diff
            .unified_diff()
            .context_radius(3)
            .header(&old_header, &new_header)
            .to_string(),
    );
    out
}

/// A file's text; `Err` for one that is not UTF-8 (shown as binary).
fn text_of(bytes: Option<&[u8]>) -> Result<Option<&str>, std::str::Utf8Error> {
    bytes.map(std::str::from_utf8).transpose()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn the_patch_of_a_changed_copy_applies_to_the_original() {
        let root = tempfile::tempdir().unwrap();
        let (original, copy) = (root.path().join("original"), root.path().join("copy"));
        std::fs::create_dir_all(original.join("src")).unwrap();
        std::fs::write(original.join("src/lib.rs"), "fn a() {}\nfn b() {}\n").unwrap();
        std::fs::write(original.join("gone.txt"), "bye\n").unwrap();
        std::fs::write(original.join(".gitignore"), "target/\n").unwrap();
        std::os::unix::fs::symlink("src/lib.rs", original.join("link")).unwrap();
        copy_tree(&original, &copy, false).unwrap();
        assert!(std::fs::symlink_metadata(copy.join("link")).unwrap().is_symlink());

        std::fs::write(copy.join("src/lib.rs"), "fn a() {}\nfn c() {}\n").unwrap();
        std::fs::remove_file(copy.join("gone.txt")).unwrap();
        std::fs::write(copy.join("new.md"), "hello\n").unwrap();
        std::fs::create_dir(copy.join("target")).unwrap();
        std::fs::write(copy.join("target/out.bin"), [0, 159, 146, 150]).unwrap();
        std::fs::write(copy.join("logo.bin"), [0, 159, 146, 150]).unwrap();
        let (patch, changed) = changes(&original, &copy);
        assert_eq!(
            changed,
            ["gone.txt", "logo.bin", "new.md", "src/lib.rs"],
            "{patch}"
        );
        assert!(
            patch.contains("Binary files a/logo.bin and b/logo.bin differ"),
            "{patch}"
        );

        // git applies it to the original and gets the copy's text files.
        let text_only: String = patch
            .split("diff --git ")
            .filter(|part| !part.is_empty() && !part.contains("Binary files"))
            .map(|part| format!("diff --git {part}"))
            .collect();
        std::fs::write(root.path().join("changes.patch"), text_only).unwrap();
        let applied = Command::new("git")
            .arg("apply")
            .arg(root.path().join("changes.patch"))
            .current_dir(&original)
            .output()
            .unwrap();
        assert!(
            applied.status.success(),
            "{}",
            String::from_utf8_lossy(&applied.stderr)
        );
        assert_eq!(
            std::fs::read_to_string(original.join("src/lib.rs")).unwrap(),
            "fn a() {}\nfn c() {}\n"
        );
        assert!(!original.join("gone.txt").exists());
        assert_eq!(
            std::fs::read_to_string(original.join("new.md")).unwrap(),
            "hello\n"
        );
    }

    #[test]
    fn links_the_agent_made_are_shown_as_links_never_followed() {
        let root = tempfile::tempdir().unwrap();
        let (before, after) = (root.path().join("before"), root.path().join("after"));
        let secret = root.path().join("id_key");
        std::fs::write(&secret, "PRIVATE KEY").unwrap();
        for dir in [&before, &after] {
            std::fs::create_dir_all(dir.join("docs")).unwrap();
            std::fs::write(dir.join("config.txt"), "a\n").unwrap();
            std::fs::write(dir.join("docs/readme.md"), "r\n").unwrap();
        }
        // A file replaced by a link to a secret, a folder replaced by a link, a FIFO.
        std::fs::remove_file(after.join("config.txt")).unwrap();
        std::os::unix::fs::symlink(&secret, after.join("config.txt")).unwrap();
        std::fs::remove_dir_all(after.join("docs")).unwrap();
        std::os::unix::fs::symlink(root.path(), after.join("docs")).unwrap();
        nix::unistd::mkfifo(&after.join("pipe"), nix::sys::stat::Mode::S_IRWXU).unwrap();
        let (patch, changed) = changes(&before, &after);
        assert!(!patch.contains("PRIVATE KEY"), "{patch}");
        assert!(
            patch.contains(&format!(
                "new file mode 120000\n--- /dev/null\n+++ b/config.txt\n@@ -0,0 +1 @@\n+{}",
                secret.display()
            )),
            "{patch}"
        );
        assert!(
            patch.contains("deleted file mode 100644\n--- a/docs/readme.md"),
            "{patch}"
        );
        // A FIFO is no content: never opened (it would block), not listed.
        assert_eq!(changed, ["config.txt", "docs", "docs/readme.md"], "{patch}");
    }

    #[test]
    fn a_source_folder_that_became_a_link_is_not_copied() {
        let root = tempfile::tempdir().unwrap();
        std::fs::create_dir(root.path().join("keys")).unwrap();
        std::os::unix::fs::symlink(root.path().join("keys"), root.path().join("d")).unwrap();
        let source = Source {
            dir: Some(root.path().join("d")),
            git: None,
            rev: None,
        };
        let refused = prepare(&source, &root.path().join("copy")).unwrap_err();
        assert!(refused.ends_with("is a link"), "{refused}");
        assert!(!root.path().join("copy").exists());
    }
}
