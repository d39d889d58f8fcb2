//! Listing, grep and glob over a real directory tree with ripgrep's crates: .gitignore
//! rules apply (read safely, see `ignore_rules`), binary files are skipped, symbolic links are not followed (so a link cannot
//! lead a search out of the tree it started in).
//!
//! Grep and glob walk the tree on every core, like ripgrep (one searcher per thread), then
//! sort what they found, so results do not depend on which thread got which file: grep's
//! are in path order (as a sorted walk would visit them) and line order, glob's newest first.

use super::ignore_rules::{WalkRules, walker};
use agent_protocol::ports::{DirEntry, EntryKind, FsError, GrepMatch, GrepOptions, GrepOutputMode};
use ignore::WalkState;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, PoisonError};
use std::time::UNIX_EPOCH;

/// What grep and glob search: ripgrep's defaults (hidden entries skipped, `.gitignore`
/// applied inside a repository).
const SEARCHED: WalkRules = WalkRules {
    skip_hidden: true,
    gitignore_needs_git: true,
    list_ignore_files: false,
};

/// Matches returned by a grep that names no limit.
const DEFAULT_GREP_LIMIT: usize = 1_000;

/// Entries under `base` to `depth` levels, sorted, `.git` left out.
pub fn list(base: &Path, depth: u32) -> Vec<DirEntry> {
    let shown = WalkRules {
        skip_hidden: false,
        gitignore_needs_git: true,
        list_ignore_files: false,
    };
    let walker = walker(base, shown, |e| e.file_name() != ".git")
        .max_depth(Some(depth.max(1) as usize))
        .sort_by_file_path(|a, b| a.cmp(b))
        .build();
    let mut entries = Vec::new();
    for entry in walker.flatten() {
        if entry.depth() == 0 {
            continue;
        }
        let meta = entry.metadata().ok();
        let kind = entry.file_type().map(|t| kind_of(&t)).unwrap_or(EntryKind::Other);
        entries.push(DirEntry {
            path: entry
                .path()
                .strip_prefix(base)
                .unwrap_or(entry.path())
                .to_string_lossy()
                .into_owned(),
            kind,
            size: match (kind, meta) {
                (EntryKind::File, Some(m)) => m.len(),
                _ => 0,
            },
            depth: entry.depth() as u32,
        });
    }
    entries
}

/// The compiled pattern, glob filter, limit and output mode of a grep; shared by the
/// threads of a local search and by the SSH environment's SFTP walk.
pub struct GrepSpec {
    matcher: grep_regex::RegexMatcher,
    filter: Option<globset::GlobMatcher>,
    limit: usize,
    mode: GrepOutputMode,
}

impl GrepSpec {
    pub fn new(options: &GrepOptions) -> Result<Self, FsError> {
        let matcher = grep_regex::RegexMatcherBuilder::new()
            .case_insensitive(options.case_insensitive)
            .fixed_strings(options.fixed_strings)
            .build(&options.pattern)
            .map_err(|e| FsError::InvalidInput(format!("invalid pattern {:?}: {e}", options.pattern)))?;
        Ok(Self {
            matcher,
            filter: options.glob_filter.as_deref().map(glob_matcher).transpose()?,
            limit: match options.max_results {
                0 => DEFAULT_GREP_LIMIT,
                n => n as usize,
            },
            mode: options.output_mode,
        })
    }

    /// A searcher for one thread: binary files (a NUL byte) are skipped, as by ripgrep.
    pub fn searcher() -> grep_searcher::Searcher {
        grep_searcher::SearcherBuilder::new()
            .binary_detection(grep_searcher::BinaryDetection::quit(0))
            .line_number(true)
            .build()
    }

    /// Whether the glob filter lets a file through (by its shown path or its name).
    pub fn admits(&self, shown: &str, name: &str) -> bool {
        self.filter
            .as_ref()
            .is_none_or(|f| f.is_match(shown) || f.is_match(name))
    }

    /// What one file, given as a path or as its bytes, contributes in the output mode. A
    /// file's lines past the limit could never be returned, so its search stops there.
    pub fn search(
        &self,
        searcher: &mut grep_searcher::Searcher,
        shown: &str,
        file: Searched<'_>,
    ) -> Vec<GrepMatch> {
        use grep_searcher::sinks::UTF8;
        let (mode, limit) = (self.mode, self.limit);
        let mut count = 0u32;
        let mut hits = Vec::new();
        let sink = UTF8(|line_number, line| {
            count += 1;
            if mode == GrepOutputMode::Content {
                hits.push(GrepMatch {
                    path: shown.to_string(),
                    line_number: line_number as u32,
                    line: line.trim_end_matches(['\n', '\r']).to_string(),
                });
            }
            Ok(match mode {
                GrepOutputMode::Content => hits.len() < limit,
                GrepOutputMode::FilesWithMatches => false,
                GrepOutputMode::Count => true,
            })
        });
        let _ = match file {
            Searched::Path(path) => searcher.search_path(&self.matcher, path, sink),
            Searched::Bytes(bytes) => searcher.search_slice(&self.matcher, bytes, sink),
        };
        let summary = |line_number| GrepMatch {
            path: shown.to_string(),
            line_number,
            line: String::new(),
        };
        match mode {
            GrepOutputMode::Content => hits,
            _ if count == 0 => Vec::new(),
            GrepOutputMode::FilesWithMatches => vec![summary(0)],
            GrepOutputMode::Count => vec![summary(count)],
        }
    }
}

/// A grep that visits files one at a time in the caller's order (the SSH environment's).
pub struct GrepRun {
    spec: GrepSpec,
    searcher: grep_searcher::Searcher,
    results: Vec<GrepMatch>,
}

impl GrepRun {
    pub fn new(options: &GrepOptions) -> Result<Self, FsError> {
        Ok(Self {
            spec: GrepSpec::new(options)?,
            searcher: GrepSpec::searcher(),
            results: Vec::new(),
        })
    }

    pub fn full(&self) -> bool {
        self.results.len() >= self.spec.limit
    }

    pub fn admits(&self, shown: &str, name: &str) -> bool {
        self.spec.admits(shown, name)
    }

    pub fn search(&mut self, shown: &str, file: Searched<'_>) {
        let hits = self.spec.search(&mut self.searcher, shown, file);
        self.results.extend(hits);
    }

    pub fn finish(mut self) -> Vec<GrepMatch> {
        self.results.truncate(self.spec.limit);
        self.results
    }
}

/// A file to search.
pub enum Searched<'a> {
    Path(&'a Path),
    Bytes(&'a [u8]),
}

/// Lines (or files, or counts) under `base` matching the options, the first `limit` in path
/// order; paths are shown relative to `shown_from`.
pub fn grep(base: &Path, shown_from: &Path, options: &GrepOptions) -> Result<Vec<GrepMatch>, FsError> {
    let spec = GrepSpec::new(options)?;
    let first = FirstInPathOrder::new(spec.limit);
    walker(base, SEARCHED, |_| true).build_parallel().run(|| {
        let (spec, first) = (&spec, &first);
        let mut searcher = GrepSpec::searcher();
        Box::new(move |entry| {
            let Ok(entry) = entry else {
                return WalkState::Continue;
            };
            if first.after_the_limit(entry.path()) {
                return WalkState::Skip;
            }
            if entry.file_type().is_some_and(|t| t.is_file()) {
                let shown = shown_path(shown_from, entry.path());
                if spec.admits(&shown, &entry.file_name().to_string_lossy()) {
                    let hits = spec.search(&mut searcher, &shown, Searched::Path(entry.path()));
                    first.offer(entry.into_path(), hits);
                }
            }
            WalkState::Continue
        })
    });
    Ok(first.finish())
}

/// The first `limit` results in path order (a path's components compared in turn, the
/// order of a walk that sorts each directory), gathered from files searched in any order.
/// Once `limit` results are held, nothing at a path after the last file held can be among
/// them, so such files are dropped and such directories not entered (everything under a
/// directory sorts after it): a small limit still stops a search early.
struct FirstInPathOrder {
    limit: usize,
    /// Whether `limit` results are held, so the walk need not lock until then.
    full: AtomicBool,
    held: Mutex<Held>,
}

#[derive(Default)]
struct Held {
    by_path: BTreeMap<PathBuf, Vec<GrepMatch>>,
    count: usize,
}

impl FirstInPathOrder {
    fn new(limit: usize) -> Self {
        Self {
            limit,
            full: AtomicBool::new(false),
            held: Mutex::new(Held::default()),
        }
    }

    fn held(&self) -> std::sync::MutexGuard<'_, Held> {
        // A panicking searcher thread leaves the map consistent: every update is one insert
        // or remove.
        self.held.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn after_the_limit(&self, path: &Path) -> bool {
        self.full.load(Ordering::Relaxed) && self.held().is_after_last(path)
    }

    fn offer(&self, path: PathBuf, hits: Vec<GrepMatch>) {
        if hits.is_empty() {
            return;
        }
        let mut held = self.held();
        if held.count >= self.limit && held.is_after_last(&path) {
            return;
        }
        held.count += hits.len();
        held.by_path.insert(path, hits);
        // Whole files from the end go while the rest still hold the limit.
        let Held { by_path, count } = &mut *held;
        while let Some(last) = by_path.last_entry() {
            if *count - last.get().len() < self.limit {
                break;
            }
            *count -= last.remove().len();
        }
        if *count >= self.limit {
            self.full.store(true, Ordering::Relaxed);
        }
    }

    fn finish(self) -> Vec<GrepMatch> {
        let held = self.held.into_inner().unwrap_or_else(PoisonError::into_inner);
        let mut results: Vec<GrepMatch> = held.by_path.into_values().flatten().collect();
        results.truncate(self.limit);
        results
    }
}

impl Held {
    fn is_after_last(&self, path: &Path) -> bool {
        self.by_path
            .last_key_value()
            .is_some_and(|(last, _)| path > last.as_path())
    }
}

/// Files under `base` whose path relative to it matches `pattern`, newest first (ties in
/// path order).
pub fn glob(base: &Path, shown_from: &Path, pattern: &str) -> Result<Vec<String>, FsError> {
    let matcher = glob_matcher(pattern)?;
    let found: Mutex<Vec<(u64, String)>> = Mutex::new(Vec::new());
    walker(base, SEARCHED, |_| true).build_parallel().run(|| {
        let (matcher, found) = (&matcher, &found);
        Box::new(move |entry| {
            let Ok(entry) = entry else {
                return WalkState::Continue;
            };
            if !entry.file_type().is_some_and(|t| t.is_file()) {
                return WalkState::Continue;
            }
            let relative = entry.path().strip_prefix(base).unwrap_or(entry.path());
            if matcher.is_match(relative) {
                let modified = entry.metadata().map(|m| modified_ms(&m)).unwrap_or(0);
                let shown = shown_path(shown_from, entry.path());
                found
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .push((modified, shown));
            }
            WalkState::Continue
        })
    });
    let mut found = found.into_inner().unwrap_or_else(PoisonError::into_inner);
    found.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
    Ok(found.into_iter().map(|(_, p)| p).collect())
}

/// A path relative to `from` when under it, else as is.
fn shown_path(from: &Path, path: &Path) -> String {
    path.strip_prefix(from)
        .unwrap_or(path)
        .to_string_lossy()
        .into_owned()
}

pub fn glob_matcher(pattern: &str) -> Result<globset::GlobMatcher, FsError> {
    globset::GlobBuilder::new(pattern)
        .literal_separator(false)
        .build()
        .map(|g| g.compile_matcher())
        .map_err(|e| FsError::InvalidInput(format!("invalid glob {pattern:?}: {e}")))
}

pub fn kind_of(t: &std::fs::FileType) -> EntryKind {
    if t.is_symlink() {
        EntryKind::Symlink
    } else if t.is_dir() {
        EntryKind::Directory
    } else if t.is_file() {
        EntryKind::File
    } else {
        EntryKind::Other
    }
}

pub fn modified_ms(meta: &std::fs::Metadata) -> u64 {
    meta.modified()
        .ok()
        .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}
