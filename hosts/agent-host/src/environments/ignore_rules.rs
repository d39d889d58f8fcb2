//! The ignore rules of a tree (`.gitignore`, `.ignore`, `.git/info/exclude`) read safely.
//! [`walker`] applies them as ripgrep does; [`git_walker`] only those git applies, for a
//! listing that must match `git status` (a batch's patch).
//!
//! ripgrep's `ignore` crate reads those files itself, following links, in full and with a
//! blocking open: a repository whose `.gitignore` is a link to `/dev/zero`, a FIFO or a
//! multi-gigabyte file would stall or exhaust every listing, grep, glob and checkpoint. So
//! the walks here switch the crate's own reading off and apply rules read from files opened
//! without following a link, without blocking, only when regular, and only up to
//! [`MAX_IGNORE_FILE`] bytes. A file that fails those checks is skipped (its rules do not
//! apply) and logged.

use ignore::gitignore::{Gitignore, GitignoreBuilder};
use ignore::{DirEntry, Match, WalkBuilder};
use std::collections::HashMap;
use std::fs::OpenOptions;
use std::io::Read;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

/// Largest ignore file read; real ones are a few kilobytes.
pub const MAX_IGNORE_FILE: u64 = 1 << 20;
/// Most ignore-file bytes one walk reads, all folders together: a repository of a thousand
/// folders each with a 1 MiB `.gitignore` would otherwise compile gigabytes of patterns.
pub const MAX_IGNORE_TOTAL: u64 = 8 << 20;

/// How a walk treats hidden entries and ignore files.
#[derive(Clone, Copy)]
pub struct WalkRules {
    /// Skip entries whose name starts with a dot.
    pub skip_hidden: bool,
    /// Apply `.gitignore` only inside a git repository (ripgrep's default); `.ignore` always.
    pub gitignore_needs_git: bool,
    /// List `.gitignore` and `.ignore` files even where the rules hide them, so that a
    /// checkpoint sees an ignore file that hides itself (`*`).
    pub list_ignore_files: bool,
}

/// Whose ignore files a walk reads.
#[derive(Clone, Copy, PartialEq)]
enum Dialect {
    /// ripgrep's: `.gitignore`, `.ignore` and the repository's exclude file, from the
    /// repository root (which may be above `base`) down.
    Ripgrep,
    /// git's, for a tree that is its own repository: `base`'s `.git/info/exclude` and the
    /// `.gitignore` files from `base` down. Never `.ignore`, which git does not read (a
    /// self-hiding `.ignore` would keep new files out of a listing `git status` shows them
    /// in), nor anything above `base`.
    Git,
}

/// A walker over `base` that applies the tree's ignore rules as described in the module
/// comment, never follows links, and keeps only entries `keep` admits (it sees entries
/// the rules let through; returning false for a folder skips what is under it).
pub fn walker(
    base: &Path,
    rules: WalkRules,
    keep: impl Fn(&DirEntry) -> bool + Send + Sync + 'static,
) -> WalkBuilder {
    build(base, rules, Dialect::Ripgrep, keep)
}

/// A walker over `base` as [`walker`], hidden entries included, that applies only the rules
/// git would if `base` were a repository's root (see [`Dialect::Git`]): what it lists is
/// what `git status` would show there, ignore files that hide themselves included in
/// neither. The global exclude file of the user's git configuration is not read.
pub fn git_walker(base: &Path, keep: impl Fn(&DirEntry) -> bool + Send + Sync + 'static) -> WalkBuilder {
    let rules = WalkRules {
        skip_hidden: false,
        gitignore_needs_git: false,
        list_ignore_files: false,
    };
    build(base, rules, Dialect::Git, keep)
}

fn build(
    base: &Path,
    rules: WalkRules,
    dialect: Dialect,
    keep: impl Fn(&DirEntry) -> bool + Send + Sync + 'static,
) -> WalkBuilder {
    let ignores = Arc::new(IgnoreFiles::new(base, rules.gitignore_needs_git, dialect));
    let mut builder = WalkBuilder::new(base);
    builder
        .standard_filters(false)
        .hidden(rules.skip_hidden)
        .follow_links(false)
        .filter_entry(move |entry| {
            let is_dir = entry.file_type().is_some_and(|t| t.is_dir());
            let listed_anyway = rules.list_ignore_files
                && entry.file_type().is_some_and(|t| t.is_file())
                && matches!(entry.file_name().to_str(), Some(".gitignore" | ".ignore"));
            (entry.depth() == 0 || listed_anyway || !ignores.ignored(entry.path(), is_dir)) && keep(entry)
        });
    builder
}

/// The rules of every folder met so far, each read once.
struct IgnoreFiles {
    base: PathBuf,
    /// The folder holding `.git`, when `base` is in a repository.
    git_root: Option<PathBuf>,
    read_gitignore: bool,
    dialect: Dialect,
    /// Folders from the repository root (or `base`) down to `base`'s parent, deepest last,
    /// whose rules also apply below `base`, as git applies them.
    above: Vec<Arc<Gitignore>>,
    by_folder: Mutex<HashMap<PathBuf, Option<Arc<Gitignore>>>>,
    /// Ignore-file bytes read so far, against [`MAX_IGNORE_TOTAL`].
    bytes_read: AtomicU64,
}

impl IgnoreFiles {
    fn new(base: &Path, gitignore_needs_git: bool, dialect: Dialect) -> Self {
        let has_git = |dir: &&Path| std::fs::symlink_metadata(dir.join(".git")).is_ok();
        let git_root = match dialect {
            Dialect::Ripgrep => base.ancestors().find(has_git),
            Dialect::Git => Some(base).filter(has_git),
        }
        .map(Path::to_path_buf);
        let mut files = Self {
            base: base.to_path_buf(),
            read_gitignore: git_root.is_some() || !gitignore_needs_git,
            dialect,
            git_root,
            above: Vec::new(),
            by_folder: Mutex::new(HashMap::new()),
            bytes_read: AtomicU64::new(0),
        };
        if let Some(root) = files.git_root.clone() {
            files.above = base
                .ancestors()
                .skip(1)
                .take_while(|dir| dir.starts_with(&root))
                .filter_map(|dir| files.read_folder(dir))
                .collect();
            files.above.reverse();
        }
        files
    }

    /// Whether the deepest rule that matches `path` ignores it; folders nearer `path` take
    /// precedence, as in git.
    fn ignored(&self, path: &Path, is_dir: bool) -> bool {
        let Some(parent) = path.parent() else {
            return false;
        };
        let below: Vec<Arc<Gitignore>> = parent
            .ancestors()
            .take_while(|dir| dir.starts_with(&self.base))
            .filter_map(|dir| self.folder(dir))
            .collect();
        let deepest_first = below.iter().chain(self.above.iter().rev());
        for rules in deepest_first {
            match rules.matched(path, is_dir) {
                Match::Ignore(_) => return true,
                Match::Whitelist(_) => return false,
                Match::None => {}
            }
        }
        false
    }

    fn folder(&self, dir: &Path) -> Option<Arc<Gitignore>> {
        let mut cache = self.by_folder.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(known) = cache.get(dir) {
            return known.clone();
        }
        let rules = self.read_folder(dir);
        cache.insert(dir.to_path_buf(), rules.clone());
        rules
    }

    /// The rules `dir` declares; `None` when it declares none.
    fn read_folder(&self, dir: &Path) -> Option<Arc<Gitignore>> {
        let mut builder = GitignoreBuilder::new(dir);
        let mut any = false;
        // Later lines win, so the most specific source is added last: the repository's
        // exclude file, then .gitignore, then .ignore (ripgrep's order).
        let mut sources = Vec::new();
        if self.read_gitignore {
            if self.git_root.as_deref() == Some(dir) {
                sources.push(dir.join(".git/info/exclude"));
            }
            sources.push(dir.join(".gitignore"));
        }
        if self.dialect == Dialect::Ripgrep {
            sources.push(dir.join(".ignore"));
        }
        for source in sources {
            let Some(text) = read_bounded(&source) else {
                continue;
            };
            let total = self.bytes_read.fetch_add(text.len() as u64, Ordering::Relaxed) + text.len() as u64;
            if total > MAX_IGNORE_TOTAL {
                tracing::warn!(file = %source.display(), limit = MAX_IGNORE_TOTAL, "ignore files too large together; these rules are not applied");
                continue;
            }
            for line in text.lines() {
                if builder.add_line(Some(source.clone()), line).is_ok() {
                    any = true;
                }
            }
        }
        if !any {
            return None;
        }
        match builder.build() {
            Ok(rules) => Some(Arc::new(rules)),
            Err(error) => {
                tracing::warn!(folder = %dir.display(), %error, "ignore rules not applied");
                None
            }
        }
    }
}

/// The text of an ignore file, or `None` when it is absent, a link, not a regular file, or
/// larger than [`MAX_IGNORE_FILE`].
fn read_bounded(path: &Path) -> Option<String> {
    let file = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path)
        .ok()?;
    let meta = file.metadata().ok()?;
    if !meta.is_file() {
        tracing::warn!(file = %path.display(), "ignore file is not a regular file; its rules are not applied");
        return None;
    }
    let mut bytes = Vec::new();
    file.take(MAX_IGNORE_FILE + 1).read_to_end(&mut bytes).ok()?;
    if bytes.len() as u64 > MAX_IGNORE_FILE {
        tracing::warn!(file = %path.display(), limit = MAX_IGNORE_FILE, "ignore file too large; its rules are not applied");
        return None;
    }
    Some(String::from_utf8_lossy(&bytes).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;
    use std::sync::mpsc;
    use std::time::Duration;

    fn names(base: &Path, rules: WalkRules) -> Vec<String> {
        let mut found: Vec<String> = walker(base, rules, |_| true)
            .build()
            .flatten()
            .filter(|e| e.depth() > 0)
            .map(|e| {
                e.path()
                    .strip_prefix(base)
                    .unwrap()
                    .to_string_lossy()
                    .into_owned()
            })
            .collect();
        found.sort();
        found
    }

    const ALL: WalkRules = WalkRules {
        skip_hidden: false,
        gitignore_needs_git: false,
        list_ignore_files: false,
    };

    #[test]
    fn rules_nearer_the_path_win_and_ignored_folders_are_not_entered() {
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path();
        fs::create_dir_all(base.join("src/gen")).unwrap();
        fs::create_dir_all(base.join("build")).unwrap();
        fs::write(base.join(".gitignore"), "build/\n*.log\n").unwrap();
        fs::write(base.join("src/.gitignore"), "!keep.log\n").unwrap();
        fs::write(base.join("src/.ignore"), "gen/\n").unwrap();
        for file in [
            "a.log",
            "build/out",
            "src/keep.log",
            "src/other.log",
            "src/main.rs",
            "src/gen/x",
        ] {
            fs::write(base.join(file), "x").unwrap();
        }
        assert_eq!(
            names(base, ALL),
            [
                ".gitignore",
                "src",
                "src/.gitignore",
                "src/.ignore",
                "src/keep.log",
                "src/main.rs"
            ]
        );
    }

    #[test]
    fn gitignore_outside_a_repository_applies_only_when_asked() {
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path();
        fs::write(base.join(".gitignore"), "a\n").unwrap();
        fs::write(base.join(".ignore"), "b\n").unwrap();
        fs::write(base.join("a"), "").unwrap();
        fs::write(base.join("b"), "").unwrap();
        let ripgrep_like = WalkRules {
            skip_hidden: true,
            gitignore_needs_git: true,
            list_ignore_files: false,
        };
        assert_eq!(names(base, ripgrep_like), ["a"]);
        fs::create_dir(base.join(".git")).unwrap();
        assert_eq!(names(base, ripgrep_like), Vec::<String>::new());
    }

    #[test]
    fn a_subfolder_walk_keeps_the_repository_roots_rules() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        fs::create_dir_all(root.join(".git/info")).unwrap();
        fs::create_dir_all(root.join("pkg/target")).unwrap();
        fs::write(root.join(".gitignore"), "target/\n").unwrap();
        fs::write(root.join(".git/info/exclude"), "scratch.txt\n").unwrap();
        fs::write(root.join("pkg/target/bin"), "").unwrap();
        fs::write(root.join("pkg/scratch.txt"), "").unwrap();
        fs::write(root.join("pkg/lib.rs"), "").unwrap();
        assert_eq!(names(&root.join("pkg"), ALL), ["lib.rs"]);
    }

    #[test]
    fn a_self_hiding_ignore_file_is_listed_when_asked() {
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path();
        fs::create_dir(base.join("sub")).unwrap();
        fs::write(base.join("sub/.ignore"), "*\n").unwrap();
        fs::write(base.join("sub/new.txt"), "").unwrap();
        assert_eq!(names(base, ALL), ["sub"]);
        let checkpoint = WalkRules {
            list_ignore_files: true,
            ..ALL
        };
        assert_eq!(names(base, checkpoint), ["sub", "sub/.ignore"]);
    }

    /// git's rules only: `.ignore` is not git's, the repository's exclude file is, and a
    /// tree that is its own repository takes nothing from the folders above it.
    #[test]
    fn the_git_walker_applies_only_the_rules_git_applies_from_its_base() {
        let dir = tempfile::tempdir().unwrap();
        let outer = dir.path();
        fs::create_dir_all(outer.join(".git")).unwrap();
        fs::write(outer.join(".gitignore"), "*.log\n").unwrap();
        let base = outer.join("work");
        fs::create_dir_all(base.join(".git/info")).unwrap();
        fs::write(base.join(".git/info/exclude"), "scratch.txt\n").unwrap();
        fs::write(base.join(".gitignore"), "build/\n").unwrap();
        fs::write(base.join(".ignore"), "*\n").unwrap();
        fs::create_dir(base.join("build")).unwrap();
        for file in ["build/out", "scratch.txt", "new.txt", "run.log"] {
            fs::write(base.join(file), "x").unwrap();
        }
        let mut found: Vec<String> = git_walker(&base, |e| e.file_name() != ".git")
            .build()
            .flatten()
            .filter(|e| e.depth() > 0)
            .map(|e| {
                e.path()
                    .strip_prefix(&base)
                    .unwrap()
                    .to_string_lossy()
                    .into_owned()
            })
            .collect();
        found.sort();
        assert_eq!(found, [".gitignore", ".ignore", "new.txt", "run.log"]);
    }

    /// Together the ignore files of a walk are read up to a total: past it, rules are not
    /// applied (the files stay listed) instead of compiling gigabytes of patterns.
    #[test]
    fn ignore_files_past_the_total_are_not_read() {
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path();
        // Just under 1 MiB each: 10,000 patterns of 99 characters.
        let pattern_lines = format!("{}\n", "x".repeat(99)).repeat(10_000);
        for n in 0..20 {
            let folder = base.join(format!("d{n:02}"));
            fs::create_dir(&folder).unwrap();
            fs::write(folder.join(".ignore"), format!("{pattern_lines}hidden\n")).unwrap();
            fs::write(folder.join("hidden"), "").unwrap();
        }
        let found = names(base, ALL);
        let hidden = found.iter().filter(|f| f.ends_with("/hidden")).count();
        // 8 MiB holds 8 of the files: their folders' file is hidden, the other 12 shown.
        assert_eq!(hidden, 12, "{found:?}");
    }

    /// The attack: ignore files that would block or exhaust a reader that follows links or
    /// reads without bound. Each listing must finish and list the tree; the hostile files'
    /// rules are simply not applied. (Before this module, the FIFO blocked the walk forever.)
    #[test]
    fn hostile_ignore_files_do_not_stall_or_exhaust_the_walk() {
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path().to_path_buf();
        fs::create_dir_all(base.join("a")).unwrap();
        fs::create_dir_all(base.join("b")).unwrap();
        fs::create_dir_all(base.join("c")).unwrap();
        let fifo = base.join("a/.gitignore");
        let made = std::process::Command::new("mkfifo").arg(&fifo).status().unwrap();
        assert!(made.success());
        std::os::unix::fs::symlink("/dev/zero", base.join("b/.gitignore")).unwrap();
        std::os::unix::fs::symlink(&fifo, base.join("c/.ignore")).unwrap();
        let big = fs::File::create(base.join(".ignore")).unwrap();
        big.set_len(MAX_IGNORE_FILE + 1).unwrap();
        for file in ["a/x", "b/y", "c/z"] {
            fs::write(base.join(file), "").unwrap();
        }
        let (done, finished) = mpsc::channel();
        let walked = base.clone();
        std::thread::spawn(move || done.send(names(&walked, ALL)).unwrap());
        // A hang detector, not a speed target: the walk takes milliseconds.
        let found = finished
            .recv_timeout(Duration::from_secs(60))
            .expect("the walk stalled on a hostile ignore file");
        for file in ["a/x", "b/y", "c/z"] {
            assert!(found.contains(&file.to_string()), "{file} missing from {found:?}");
        }
    }
}
