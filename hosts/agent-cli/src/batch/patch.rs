//! What a task changed in its workspace, as a patch `git apply` takes.
//!
//! The workspace is the agent's. It may hold links anywhere (to the user's keys, to
//! `/dev/zero`), FIFOs, ignore files that are either; and a process the task started that
//! escaped its end (possible without the command sandbox) may be changing it while it is
//! read, swapping a folder for a look-alike whose entries are links
//! (`renameat2(RENAME_EXCHANGE)`) between a check and an open. So each tree is read through
//! a handle on its root opened without following a link, and every folder and file below
//! it is opened from its parent's handle without following one either: nothing checked is
//! ever looked up again by path. A link is its target's name, as git records it, never
//! followed; only regular files are read, and only up to [`MAX_DIFFED_BYTES`].
//!
//! Which paths are compared follows git's rules, so the patch shows what `git status` would:
//! `.gitignore` files and the repository's `.git/info/exclude` (read bounded, never a link
//! or a FIFO), not ripgrep's `.ignore`; `.git` itself is left out.

use cap_fs_ext::{DirExt, FollowSymlinks, OpenOptionsFollowExt};
use cap_std::fs::{Dir, OpenOptions, OpenOptionsExt};
use similar::TextDiff;
use std::collections::BTreeSet;
use std::ffi::OsStr;
use std::io::Read;
use std::path::{Component, Path, PathBuf};

/// Larger files are named in the patch, not read.
const MAX_DIFFED_BYTES: u64 = 8 * 1024 * 1024;

/// What a diff sees of one path.
#[derive(PartialEq)]
enum Entry {
    Missing,
    File(Vec<u8>),
    Link(String),
    /// Too large, not a file or a link (a FIFO, a device), or changing while it was read.
    Unread(String),
}

/// What changed from `before` to `after`: a unified diff with git's headers (new and
/// deleted files marked, links as git records them, binary and unread files named), and the
/// changed paths. An error when either folder cannot be opened (or is a link).
pub fn changes(before: &Path, after: &Path) -> Result<(String, Vec<String>), String> {
    // Opened before they are listed: should a root be swapped for a link later, what is
    // read is still the folder opened here.
    let (old_root, new_root) = (open_root(before)?, open_root(after)?);
    let paths: BTreeSet<PathBuf> = entries(before).into_iter().chain(entries(after)).collect();
    let mut patch = String::new();
    let mut changed = Vec::new();
    for path in paths {
        let (old, new) = (entry(&old_root, &path), entry(&new_root, &path));
        if old == new {
            continue;
        }
        let name = path.display().to_string();
        patch.push_str(&entry_diff(&name, &old, &new));
        changed.push(name);
    }
    Ok((patch, changed))
}

fn open_root(path: &Path) -> Result<Dir, String> {
    use std::os::unix::fs::OpenOptionsExt;
    std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(nix::libc::O_NOFOLLOW | nix::libc::O_DIRECTORY)
        .open(path)
        .map(Dir::from_std_file)
        .map_err(|e| format!("cannot read the folder {}: {e}", path.display()))
}

/// The paths under `root` a diff compares: files and links, as git's ignore rules and
/// `.git` leave them, relative to `root`. Only names come from here; what is at a name is
/// read by [`entry`].
fn entries(root: &Path) -> BTreeSet<PathBuf> {
    agent_host::environments::git_walker(root, |entry| entry.file_name() != ".git")
        .build()
        .flatten()
        .filter(|entry| entry.file_type().is_some_and(|t| t.is_file() || t.is_symlink()))
        .filter_map(|entry| entry.path().strip_prefix(root).ok().map(Path::to_path_buf))
        .collect()
}

/// What stands at `relative` under `root`, every folder on the way opened from the one
/// before without following a link (a link there, or anything but a folder, means the path
/// has no entry).
fn entry(root: &Dir, relative: &Path) -> Entry {
    let mut names: Vec<&OsStr> = Vec::new();
    for component in relative.components() {
        match component {
            Component::Normal(name) => names.push(name),
            // The listing gives plain names only.
            _ => return Entry::Missing,
        }
    }
    let Some(name) = names.pop() else {
        return Entry::Missing;
    };
    let mut folder: Option<Dir> = None;
    for part in names {
        match folder.as_ref().unwrap_or(root).open_dir_nofollow(part) {
            Ok(next) => folder = Some(next),
            Err(_) => return Entry::Missing,
        }
    }
    entry_in(folder.as_ref().unwrap_or(root), name)
}

/// The entry `name` of the open folder `dir`.
fn entry_in(dir: &Dir, name: &OsStr) -> Entry {
    let Ok(meta) = dir.symlink_metadata(name) else {
        return Entry::Missing;
    };
    let kind = meta.file_type();
    if kind.is_symlink() {
        return match dir.read_link_contents(name) {
            Ok(target) => Entry::Link(target.display().to_string()),
            Err(_) => changing(),
        };
    }
    if kind.is_dir() {
        // A folder is not an entry; its files are.
        return Entry::Missing;
    }
    if !kind.is_file() {
        // Never opened: opening a FIFO blocks, a device may act.
        return Entry::Unread("not a regular file".to_string());
    }
    let mut options = OpenOptions::new();
    options
        .read(true)
        .follow(FollowSymlinks::No)
        .custom_flags(nix::libc::O_NONBLOCK);
    // Opened without following, and checked again once open: whatever was swapped in
    // since the look above (a link, a FIFO) is refused, not read through.
    let Ok(file) = dir.open_with(name, &options) else {
        return changing();
    };
    match file.metadata() {
        Ok(meta) if meta.is_file() && meta.len() > MAX_DIFFED_BYTES => {
            return Entry::Unread(format!(
                "{} bytes, over the {MAX_DIFFED_BYTES} a patch shows",
                meta.len()
            ));
        }
        Ok(meta) if meta.is_file() => {}
        _ => return changing(),
    }
    let mut bytes = Vec::new();
    match file.take(MAX_DIFFED_BYTES + 1).read_to_end(&mut bytes) {
        Ok(_) if bytes.len() as u64 > MAX_DIFFED_BYTES => {
            Entry::Unread("it grew past the size a patch shows".to_string())
        }
        Ok(_) => Entry::File(bytes),
        Err(_) => changing(),
    }
}

/// An entry that changed kind between being looked at and being opened.
fn changing() -> Entry {
    Entry::Unread("it changed while the patch was taken".to_string())
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
    use super::super::workspace::copy_tree;
    use super::*;
    use std::process::Command;

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
        let (patch, changed) = changes(&original, &copy).unwrap();
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
        let (patch, changed) = changes(&before, &after).unwrap();
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

    /// A workspace that is itself a link (swapped after the task) is not read through.
    #[test]
    fn a_workspace_that_became_a_link_is_not_diffed() {
        let root = tempfile::tempdir().unwrap();
        let (before, keys) = (root.path().join("before"), root.path().join("keys"));
        std::fs::create_dir_all(&before).unwrap();
        std::fs::create_dir_all(&keys).unwrap();
        std::fs::write(keys.join("id_key"), "PRIVATE KEY").unwrap();
        std::os::unix::fs::symlink(&keys, root.path().join("after")).unwrap();
        let refused = changes(&before, &root.path().join("after")).unwrap_err();
        assert!(refused.starts_with("cannot read the folder"), "{refused}");
    }

    /// The listing follows git: `.ignore` is not git's, so a self-hiding one hides nothing,
    /// and git's own `.gitignore` and exclude file apply.
    #[test]
    fn the_listing_follows_gits_ignore_rules() {
        let root = tempfile::tempdir().unwrap();
        let (before, after) = (root.path().join("before"), root.path().join("after"));
        std::fs::create_dir_all(&before).unwrap();
        std::fs::create_dir_all(after.join(".git/info")).unwrap();
        std::fs::write(after.join(".git/info/exclude"), "local.txt\n").unwrap();
        for (file, text) in [
            (".ignore", "*\n"),
            ("new.txt", "new\n"),
            ("local.txt", "mine\n"),
            (".gitignore", "*.log\n"),
            ("run.log", "log\n"),
        ] {
            std::fs::write(after.join(file), text).unwrap();
        }
        let (patch, changed) = changes(&before, &after).unwrap();
        assert_eq!(changed, [".gitignore", ".ignore", "new.txt"], "{patch}");
    }
}
