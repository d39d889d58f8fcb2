//! Listing, grep and glob over a real directory tree with ripgrep's crates: .gitignore
//! rules apply, binary files are skipped, symbolic links are not followed (so a link cannot
//! lead a search out of the tree it started in).

use crate::bindings::types::{DirEntry, EntryKind, FsError, GrepMatch, GrepOptions, GrepOutputMode};
use std::path::Path;
use std::time::UNIX_EPOCH;

/// Matches returned by a grep that names no limit.
const DEFAULT_GREP_LIMIT: usize = 1_000;

/// Entries under `base` to `depth` levels, sorted, `.git` left out.
pub fn list(base: &Path, depth: u32) -> Vec<DirEntry> {
    let walker = ignore::WalkBuilder::new(base)
        .max_depth(Some(depth.max(1) as usize))
        .hidden(false)
        .filter_entry(|e| e.file_name() != ".git")
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

/// The compiled pattern, glob filter and limit of a grep, and a searcher: shared by the
/// local walk and the SSH environment's SFTP walk.
pub struct GrepRun<'a> {
    pub options: &'a GrepOptions,
    pub matcher: grep_regex::RegexMatcher,
    pub filter: Option<globset::GlobMatcher>,
    pub limit: usize,
    searcher: grep_searcher::Searcher,
    pub results: Vec<GrepMatch>,
}

impl<'a> GrepRun<'a> {
    pub fn new(options: &'a GrepOptions) -> Result<Self, FsError> {
        use grep_regex::RegexMatcherBuilder;
        use grep_searcher::{BinaryDetection, SearcherBuilder};
        let matcher = RegexMatcherBuilder::new()
            .case_insensitive(options.case_insensitive)
            .fixed_strings(options.fixed_strings)
            .build(&options.pattern)
            .map_err(|e| FsError::InvalidInput(format!("invalid pattern {:?}: {e}", options.pattern)))?;
        Ok(Self {
            options,
            matcher,
            filter: options.glob_filter.as_deref().map(glob_matcher).transpose()?,
            limit: match options.max_results {
                0 => DEFAULT_GREP_LIMIT,
                n => n as usize,
            },
            searcher: SearcherBuilder::new()
                .binary_detection(BinaryDetection::quit(0))
                .line_number(true)
                .build(),
            results: Vec::new(),
        })
    }

    pub fn full(&self) -> bool {
        self.results.len() >= self.limit
    }

    /// Whether the glob filter lets a file through (by its shown path or its name).
    pub fn admits(&self, shown: &str, name: &str) -> bool {
        self.filter
            .as_ref()
            .is_none_or(|f| f.is_match(shown) || f.is_match(name))
    }

    /// Searches one file, given as a path or as its bytes, and records what the output
    /// mode asks for.
    pub fn search(&mut self, shown: &str, file: Searched<'_>) {
        use grep_searcher::sinks::UTF8;
        let mode = self.options.output_mode;
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
            Ok(mode != GrepOutputMode::FilesWithMatches)
        });
        let _ = match file {
            Searched::Path(path) => self.searcher.search_path(&self.matcher, path, sink),
            Searched::Bytes(bytes) => self.searcher.search_slice(&self.matcher, bytes, sink),
        };
        let summary = |line_number| GrepMatch {
            path: shown.to_string(),
            line_number,
            line: String::new(),
        };
        match mode {
            GrepOutputMode::Content => self.results.extend(hits),
            _ if count == 0 => {}
            GrepOutputMode::FilesWithMatches => self.results.push(summary(0)),
            GrepOutputMode::Count => self.results.push(summary(count)),
        }
    }

    pub fn finish(mut self) -> Vec<GrepMatch> {
        self.results.truncate(self.limit);
        self.results
    }
}

/// A file to search.
pub enum Searched<'a> {
    Path(&'a Path),
    Bytes(&'a [u8]),
}

/// Lines (or files, or counts) under `base` matching the options; paths are shown relative
/// to `shown_from`.
pub fn grep(base: &Path, shown_from: &Path, options: &GrepOptions) -> Result<Vec<GrepMatch>, FsError> {
    let mut run = GrepRun::new(options)?;
    for entry in ignore::WalkBuilder::new(base)
        .sort_by_file_path(|a, b| a.cmp(b))
        .build()
        .flatten()
    {
        if run.full() {
            break;
        }
        if !entry.file_type().is_some_and(|t| t.is_file()) {
            continue;
        }
        let shown = shown_path(shown_from, entry.path());
        if run.admits(&shown, &entry.file_name().to_string_lossy()) {
            run.search(&shown, Searched::Path(entry.path()));
        }
    }
    Ok(run.finish())
}

/// Files under `base` whose path relative to it matches `pattern`, newest first.
pub fn glob(base: &Path, shown_from: &Path, pattern: &str) -> Result<Vec<String>, FsError> {
    let matcher = glob_matcher(pattern)?;
    let mut found: Vec<(u64, String)> = Vec::new();
    for entry in ignore::WalkBuilder::new(base).build().flatten() {
        if !entry.file_type().is_some_and(|t| t.is_file()) {
            continue;
        }
        let relative = entry.path().strip_prefix(base).unwrap_or(entry.path());
        if matcher.is_match(relative) {
            let modified = entry.metadata().map(|m| modified_ms(&m)).unwrap_or(0);
            found.push((modified, shown_path(shown_from, entry.path())));
        }
    }
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
