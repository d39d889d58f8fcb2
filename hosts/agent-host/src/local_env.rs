//! The local execution environment: files under a working directory, searches with
//! ripgrep's crates, and real processes (see `process`).

use crate::bindings::types::{
    DirEntry, EntryKind, FileStat, FsError, GrepMatch, GrepOptions, GrepOutputMode,
};
use crate::process::{self, ProcessHandle};
use std::io::{ErrorKind, Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::time::{Duration, UNIX_EPOCH};

/// Matches returned by a grep that names no limit.
const DEFAULT_GREP_LIMIT: usize = 1_000;
/// Largest file `read-file` returns whole.
const MAX_READ: u64 = 256 * 1024 * 1024;

/// Files and processes on this machine, relative to a working directory.
#[derive(Debug, Clone)]
pub struct LocalEnvironment {
    root: PathBuf,
}

impl LocalEnvironment {
    /// An environment rooted at `dir` (made absolute).
    pub fn new(dir: impl AsRef<Path>) -> std::io::Result<Self> {
        let root = std::fs::canonicalize(dir.as_ref())?;
        if !root.is_dir() {
            return Err(std::io::Error::new(
                ErrorKind::NotADirectory,
                format!("{} is not a directory", root.display()),
            ));
        }
        Ok(Self { root })
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Resolves a path the component gave against the working directory.
    fn resolve(&self, path: &str) -> Result<PathBuf, FsError> {
        if path.is_empty() {
            return Err(FsError::InvalidInput("the path is empty".to_string()));
        }
        if path.contains('\0') {
            return Err(FsError::InvalidInput(format!(
                "the path {path:?} contains a NUL byte"
            )));
        }
        Ok(self.root.join(path))
    }

    /// A path relative to the working directory for results (absolute if outside it).
    fn display(&self, path: &Path) -> String {
        path.strip_prefix(&self.root)
            .unwrap_or(path)
            .to_string_lossy()
            .into_owned()
    }

    pub fn read_file(&self, path: &str, range: Option<(u64, u64)>) -> Result<Vec<u8>, FsError> {
        let full = self.resolve(path)?;
        let mut file = std::fs::File::open(&full).map_err(|e| fs_error(e, path))?;
        let meta = file.metadata().map_err(|e| fs_error(e, path))?;
        if meta.is_dir() {
            return Err(FsError::IsDirectory(format!("{path} is a directory, not a file")));
        }
        let (offset, length) = range.unwrap_or((0, meta.len()));
        if length > MAX_READ {
            return Err(FsError::TooLarge(format!(
                "{path} is {} bytes; read at most {MAX_READ} bytes at a time",
                meta.len()
            )));
        }
        file.seek(SeekFrom::Start(offset))
            .map_err(|e| fs_error(e, path))?;
        let mut buf = Vec::with_capacity(length.min(meta.len()) as usize);
        file.take(length)
            .read_to_end(&mut buf)
            .map_err(|e| fs_error(e, path))?;
        Ok(buf)
    }

    pub fn write_file(&self, path: &str, contents: &[u8]) -> Result<(), FsError> {
        let full = self.resolve(path)?;
        if full.is_dir() {
            return Err(FsError::IsDirectory(format!("{path} is a directory")));
        }
        if let Some(parent) = full.parent() {
            std::fs::create_dir_all(parent).map_err(|e| fs_error(e, path))?;
        }
        std::fs::write(&full, contents).map_err(|e| fs_error(e, path))
    }

    pub fn delete_file(&self, path: &str) -> Result<(), FsError> {
        let full = self.resolve(path)?;
        if full.is_dir() {
            return Err(FsError::IsDirectory(format!(
                "{path} is a directory; delete-file removes files only"
            )));
        }
        std::fs::remove_file(&full).map_err(|e| fs_error(e, path))
    }

    pub fn rename_file(&self, from: &str, to: &str) -> Result<(), FsError> {
        let source = self.resolve(from)?;
        let destination = self.resolve(to)?;
        if !source.exists() {
            return Err(FsError::NotFound(format!("{from} does not exist")));
        }
        if let Some(parent) = destination.parent() {
            std::fs::create_dir_all(parent).map_err(|e| fs_error(e, to))?;
        }
        std::fs::rename(&source, &destination).map_err(|e| fs_error(e, from))
    }

    pub fn create_directory(&self, path: &str) -> Result<(), FsError> {
        std::fs::create_dir_all(self.resolve(path)?).map_err(|e| fs_error(e, path))
    }

    pub fn file_exists(&self, path: &str) -> bool {
        self.resolve(path).map(|p| p.exists()).unwrap_or(false)
    }

    pub fn stat(&self, path: &str) -> Result<FileStat, FsError> {
        let meta = std::fs::metadata(self.resolve(path)?).map_err(|e| fs_error(e, path))?;
        Ok(FileStat {
            kind: kind_of(&meta.file_type()),
            size: if meta.is_dir() { 0 } else { meta.len() },
            modified_ms: modified_ms(&meta),
            readonly: meta.permissions().readonly(),
        })
    }

    pub fn list_directory(&self, path: &str, depth: u32) -> Result<Vec<DirEntry>, FsError> {
        let base = self.resolve(path)?;
        if !base.is_dir() {
            return Err(match base.exists() {
                true => FsError::NotADirectory(format!("{path} is not a directory")),
                false => FsError::NotFound(format!("{path} does not exist")),
            });
        }
        let walker = ignore::WalkBuilder::new(&base)
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
                    .strip_prefix(&base)
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
        Ok(entries)
    }

    pub fn grep(&self, options: &GrepOptions) -> Result<Vec<GrepMatch>, FsError> {
        use grep_regex::RegexMatcherBuilder;
        use grep_searcher::{BinaryDetection, SearcherBuilder, sinks::UTF8};
        let base = self.resolve(options.path.as_deref().unwrap_or("."))?;
        if !base.exists() {
            return Err(FsError::NotFound(format!(
                "{} does not exist",
                options.path.as_deref().unwrap_or(".")
            )));
        }
        let matcher = RegexMatcherBuilder::new()
            .case_insensitive(options.case_insensitive)
            .fixed_strings(options.fixed_strings)
            .build(&options.pattern)
            .map_err(|e| FsError::InvalidInput(format!("invalid pattern {:?}: {e}", options.pattern)))?;
        let filter = options.glob_filter.as_deref().map(glob_matcher).transpose()?;
        let limit = match options.max_results {
            0 => DEFAULT_GREP_LIMIT,
            n => n as usize,
        };
        let mut searcher = SearcherBuilder::new()
            .binary_detection(BinaryDetection::quit(0))
            .line_number(true)
            .build();
        let mut results = Vec::new();
        for entry in ignore::WalkBuilder::new(&base)
            .sort_by_file_path(|a, b| a.cmp(b))
            .build()
            .flatten()
        {
            if results.len() >= limit {
                break;
            }
            if !entry.file_type().is_some_and(|t| t.is_file()) {
                continue;
            }
            let shown = self.display(entry.path());
            if let Some(filter) = &filter
                && !filter.is_match(&shown)
                && !filter.is_match(entry.file_name())
            {
                continue;
            }
            let mut count = 0u32;
            let mut hits = Vec::new();
            let _ = searcher.search_path(
                &matcher,
                entry.path(),
                UTF8(|line_number, line| {
                    count += 1;
                    if options.output_mode == GrepOutputMode::Content {
                        hits.push(GrepMatch {
                            path: shown.clone(),
                            line_number: line_number as u32,
                            line: line.trim_end_matches(['\n', '\r']).to_string(),
                        });
                    }
                    Ok(options.output_mode != GrepOutputMode::FilesWithMatches)
                }),
            );
            match options.output_mode {
                GrepOutputMode::Content => results.extend(hits),
                _ if count == 0 => {}
                GrepOutputMode::FilesWithMatches => results.push(GrepMatch {
                    path: shown,
                    line_number: 0,
                    line: String::new(),
                }),
                GrepOutputMode::Count => results.push(GrepMatch {
                    path: shown,
                    line_number: count,
                    line: String::new(),
                }),
            }
        }
        results.truncate(limit);
        Ok(results)
    }

    pub fn glob(&self, pattern: &str, path: Option<&str>) -> Result<Vec<String>, FsError> {
        let base = self.resolve(path.unwrap_or("."))?;
        let matcher = glob_matcher(pattern)?;
        let mut found: Vec<(u64, String)> = Vec::new();
        for entry in ignore::WalkBuilder::new(&base).build().flatten() {
            if !entry.file_type().is_some_and(|t| t.is_file()) {
                continue;
            }
            let relative = entry.path().strip_prefix(&base).unwrap_or(entry.path());
            if matcher.is_match(relative) {
                let modified = entry.metadata().map(|m| modified_ms(&m)).unwrap_or(0);
                found.push((modified, self.display(entry.path())));
            }
        }
        found.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
        Ok(found.into_iter().map(|(_, p)| p).collect())
    }

    pub fn working_directory(&self) -> String {
        self.root.to_string_lossy().into_owned()
    }

    pub fn platform(&self) -> String {
        match std::env::consts::OS {
            "macos" => "darwin".to_string(),
            other => other.to_string(),
        }
    }

    pub fn os_version(&self) -> String {
        let release = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap_or_default();
        format!("{} {}", std::env::consts::OS, release.trim())
            .trim()
            .to_string()
    }

    pub fn spawn(
        &self,
        command: &str,
        working_dir: Option<&str>,
        timeout_ms: u64,
        env: &[(String, String)],
    ) -> Result<ProcessHandle, String> {
        let cwd = match working_dir {
            Some(dir) => self.root.join(dir),
            None => self.root.clone(),
        };
        if !cwd.is_dir() {
            return Err(format!("{} is not a directory", cwd.display()));
        }
        process::spawn(command, &cwd, Duration::from_millis(timeout_ms.max(1)), env)
            .map_err(|e| format!("could not start /bin/bash: {e}"))
    }
}

fn glob_matcher(pattern: &str) -> Result<globset::GlobMatcher, FsError> {
    globset::GlobBuilder::new(pattern)
        .literal_separator(false)
        .build()
        .map(|g| g.compile_matcher())
        .map_err(|e| FsError::InvalidInput(format!("invalid glob {pattern:?}: {e}")))
}

fn kind_of(t: &std::fs::FileType) -> EntryKind {
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

fn modified_ms(meta: &std::fs::Metadata) -> u64 {
    meta.modified()
        .ok()
        .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

/// An I/O error as the WIT `fs-error`, naming the path.
fn fs_error(error: std::io::Error, path: &str) -> FsError {
    match error.kind() {
        ErrorKind::NotFound => FsError::NotFound(format!("{path} does not exist")),
        ErrorKind::PermissionDenied => FsError::PermissionDenied(format!("permission denied: {path}")),
        ErrorKind::IsADirectory => FsError::IsDirectory(format!("{path} is a directory")),
        ErrorKind::NotADirectory => FsError::NotADirectory(format!("a parent of {path} is not a directory")),
        ErrorKind::AlreadyExists => FsError::AlreadyExists(format!("{path} already exists")),
        _ => FsError::Other(format!("{path}: {error}")),
    }
}
