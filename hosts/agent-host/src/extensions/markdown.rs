//! Reading an extension's Markdown files beneath a root opened once (the workspace, or the
//! user's commands or skills folder): every path resolves inside that root (cap-std), so a
//! link a repository commits, or swaps in later, cannot lead a read to the user's keys or
//! anywhere else outside it; only regular files are opened (never a FIFO, without waiting),
//! of bounded size. A folder the session may not read (`--deny-dir`) stays unread however
//! a link inside the root leads there. Plus the front matter (`---` delimited `key: value`
//! lines, the subset of YAML these formats use).

use crate::environments::file_kind;
use cap_std::ambient_authority;
use cap_std::fs::Dir;
use std::collections::BTreeMap;
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;

/// Larger is not a prompt or a skill but a mistake.
pub const MAX_BYTES: u64 = 256 * 1024;

/// A folder extensions are read beneath.
#[derive(Clone)]
pub struct Root {
    dir: Arc<Dir>,
    path: PathBuf,
    /// The root's real path, and the real paths of the folders no read may reach.
    real: PathBuf,
    denied: Arc<[PathBuf]>,
}

impl std::fmt::Debug for Root {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("Root").field(&self.path).finish()
    }
}

impl PartialEq for Root {
    fn eq(&self, other: &Self) -> bool {
        self.path == other.path
    }
}

impl Eq for Root {}

/// One entry of a folder beneath a root.
pub struct Entry {
    pub name: String,
    pub is_dir: bool,
}

impl Root {
    /// `path` (the user's choice, so its own links are followed); `None` when it is no folder.
    pub fn open(path: &Path) -> Option<Self> {
        let dir = Dir::open_ambient_dir(path, ambient_authority()).ok()?;
        Some(Self {
            dir: Arc::new(dir),
            path: path.to_path_buf(),
            real: std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf()),
            denied: Arc::new([]),
        })
    }

    /// The root, with `denied` folders (absolute; the session's `--deny-dir`) kept from
    /// every read and listing beneath it.
    pub fn denying(mut self, denied: &[PathBuf]) -> Self {
        self.denied = denied
            .iter()
            .map(|dir| std::fs::canonicalize(dir).unwrap_or_else(|_| dir.clone()))
            .collect();
        self
    }

    /// `Err` naming `relative` when it leads, links followed inside the root, to a denied
    /// folder or beneath one (or cannot be resolved).
    fn allowed(&self, relative: &Path, shown: &str) -> Result<(), String> {
        if self.denied.is_empty() {
            return Ok(());
        }
        let inside = self
            .dir
            .canonicalize(relative)
            .map_err(|e| format!("{shown}: {e}"))?;
        let real = self.real.join(inside);
        match self.denied.iter().find(|dir| real.starts_with(dir)) {
            Some(dir) => Err(format!(
                "{shown} is in {}, which this session may not read (--deny-dir)",
                dir.display()
            )),
            None => Ok(()),
        }
    }

    /// Where `relative` is, for messages.
    pub fn display(&self, relative: &Path) -> String {
        self.path.join(relative).display().to_string()
    }

    /// The entries of the folder `relative` (not following links to tell folders), sorted;
    /// empty when it is no folder.
    pub fn entries(&self, relative: &Path) -> Vec<Entry> {
        let relative = if relative.as_os_str().is_empty() {
            Path::new(".")
        } else {
            relative
        };
        if self.allowed(relative, "").is_err() {
            return Vec::new();
        }
        let Ok(entries) = self.dir.read_dir(relative) else {
            return Vec::new();
        };
        let mut out: Vec<Entry> = entries
            .flatten()
            .filter_map(|e| {
                let name = e.file_name().into_string().ok()?;
                let is_dir = e.file_type().ok()?.is_dir();
                Some(Entry { name, is_dir })
            })
            .collect();
        out.sort_by(|a, b| a.name.cmp(&b.name));
        out
    }

    /// The text of the regular file `relative`: plain names only (no `..`, no root), inside
    /// the root, at most [`MAX_BYTES`], UTF-8; otherwise an error naming it.
    pub fn read(&self, relative: &Path) -> Result<String, String> {
        let shown = self.display(relative);
        if !relative.components().all(|c| matches!(c, Component::Normal(_))) {
            return Err(format!("{} is not a path inside the folder", relative.display()));
        }
        // Resolved, then opened: a link swapped in between these two steps is not caught
        // (the model's own commands could do it; without the sandbox they read anything).
        self.allowed(relative, &shown)?;
        let error = |e: std::io::Error| agent_protocol::ports::FsError::Other(e.to_string());
        let bytes = file_kind::read(&self.dir, relative, &shown, Some((0, MAX_BYTES + 1)), &error)
            .map_err(|e| format!("{shown}: {e}"))?;
        if bytes.len() as u64 > MAX_BYTES {
            return Err(format!("{shown} is larger than {} KiB", MAX_BYTES / 1024));
        }
        String::from_utf8(bytes).map_err(|_| format!("{shown} is not UTF-8 text"))
    }
}

/// The front matter's fields and the body after it. Text without front matter is all body.
/// Quotes around a value are removed; keys are lower-case.
pub fn front_matter(text: &str) -> (BTreeMap<String, String>, &str) {
    let mut fields = BTreeMap::new();
    let Some(rest) = text
        .strip_prefix("---\n")
        .or_else(|| text.strip_prefix("---\r\n"))
    else {
        return (fields, text);
    };
    let mut offset = 0;
    for line in rest.split_inclusive('\n') {
        offset += line.len();
        let line = line.trim_end();
        if line == "---" {
            return (fields, &rest[offset..]);
        }
        if let Some((key, value)) = line.split_once(':') {
            let value = value.trim();
            let unquoted = value
                .strip_prefix('"')
                .and_then(|v| v.strip_suffix('"'))
                .or_else(|| value.strip_prefix('\'').and_then(|v| v.strip_suffix('\'')))
                .unwrap_or(value);
            fields.insert(key.trim().to_ascii_lowercase(), unquoted.to_string());
        }
    }
    // No closing line: not front matter after all.
    (BTreeMap::new(), text)
}

/// An extension's name: letters, digits, `-` and `_`, at most 64.
pub fn is_name(name: &str) -> bool {
    (1..=64).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn front_matter_is_split_from_the_body() {
        let (fields, body) = front_matter("---\nname: pdf\nDescription: \"Fill PDF forms\"\n---\nUse it.\n");
        assert_eq!(fields["name"], "pdf");
        assert_eq!(fields["description"], "Fill PDF forms");
        assert_eq!(body, "Use it.\n");
        let (fields, body) = front_matter("No front matter.\n");
        assert!(fields.is_empty());
        assert_eq!(body, "No front matter.\n");
        let (fields, body) = front_matter("---\nname: x\nnever closed\n");
        assert!(fields.is_empty() && body.starts_with("---"));
    }

    #[test]
    fn nothing_outside_the_root_is_read_however_linked() {
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("id_key"), "private").unwrap();
        let work = tempfile::tempdir().unwrap();
        // A linked `.agent`, a linked folder and a linked file, all leading out.
        std::fs::create_dir_all(work.path().join("data/skills")).unwrap();
        // (A link inside the root is followed when relative; an absolute one counts as out.)
        std::os::unix::fs::symlink("data", work.path().join(".agent")).unwrap();
        std::os::unix::fs::symlink(outside.path(), work.path().join("data/skills/keys")).unwrap();
        std::os::unix::fs::symlink(outside.path().join("id_key"), work.path().join("data/key.md")).unwrap();
        std::fs::write(work.path().join("data/skills/inside.md"), "inside").unwrap();
        let root = Root::open(work.path()).unwrap();
        assert!(root.read(Path::new(".agent/skills/keys/id_key")).is_err());
        assert!(root.read(Path::new(".agent/key.md")).is_err());
        assert!(
            root.read(Path::new("../id_key"))
                .unwrap_err()
                .contains("not a path inside")
        );
        // A link that stays inside the root shows only the root's own file.
        assert_eq!(root.read(Path::new(".agent/skills/inside.md")).unwrap(), "inside");
        // A denied folder inside the root is not read, however a link leads there.
        std::fs::create_dir(work.path().join("private")).unwrap();
        std::fs::write(work.path().join("private/notes.md"), "denied").unwrap();
        std::os::unix::fs::symlink("../../private", work.path().join("data/skills/linked")).unwrap();
        let guarded = root.clone().denying(&[work.path().join("private")]);
        for path in [".agent/skills/linked/notes.md", "private/notes.md"] {
            let refused = guarded.read(Path::new(path)).unwrap_err();
            assert!(
                refused.contains("which this session may not read (--deny-dir)"),
                "{refused}"
            );
        }
        assert!(guarded.entries(Path::new(".agent/skills/linked")).is_empty());
        assert_eq!(
            guarded.read(Path::new(".agent/skills/inside.md")).unwrap(),
            "inside"
        );
        assert_eq!(root.read(Path::new("private/notes.md")).unwrap(), "denied");
        // A FIFO is refused without waiting; a large file is refused.
        nix::unistd::mkfifo(&work.path().join("fifo.md"), nix::sys::stat::Mode::S_IRWXU).unwrap();
        assert!(root.read(Path::new("fifo.md")).unwrap_err().contains("FIFO"));
        std::fs::write(work.path().join("large.md"), vec![b'a'; MAX_BYTES as usize + 1]).unwrap();
        assert!(
            root.read(Path::new("large.md"))
                .unwrap_err()
                .contains("larger than")
        );
    }
}
