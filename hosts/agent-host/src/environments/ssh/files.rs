//! The SSH environment's file operations over SFTP, and its searches: the tree is walked
//! over SFTP (the root's .gitignore applied, `.git` skipped, links not followed) and files
//! are searched with the same ripgrep matcher as locally.

use super::sftp::SftpRoot;
use crate::environments::environment::read_window;
use crate::environments::ignore_rules::MAX_IGNORE_FILE;
use crate::environments::search::{GrepRun, Searched, glob_matcher};
use agent_protocol::ports::{DirEntry, EntryKind, FileStat, FsError, GrepMatch, GrepOptions};
use russh_sftp::client::error::Error as SftpError;
use russh_sftp::protocol::StatusCode;
use std::time::UNIX_EPOCH;
use tokio::io::{AsyncReadExt, AsyncSeekExt, AsyncWriteExt};

/// Entries a walk visits at most, so a huge remote tree cannot stall a search.
const MAX_WALK: usize = 50_000;
/// Files larger than this are not searched by grep.
const MAX_GREP_FILE: u64 = 16 * 1024 * 1024;

fn sftp_error(error: SftpError, path: &str) -> FsError {
    match &error {
        SftpError::Status(status) => match status.status_code {
            StatusCode::NoSuchFile => FsError::NotFound(format!("{path} does not exist")),
            StatusCode::PermissionDenied => FsError::PermissionDenied(format!("permission denied: {path}")),
            _ => FsError::Other(format!("{path}: {error}")),
        },
        _ => FsError::Other(format!("{path}: {error}")),
    }
}

fn io_error(error: std::io::Error, path: &str) -> FsError {
    FsError::Other(format!("{path}: {error}"))
}

pub async fn read_file(env: &SftpRoot, path: &str, range: Option<(u64, u64)>) -> Result<Vec<u8>, FsError> {
    let remote = env.remote(path)?;
    let meta = env
        .sftp
        .metadata(remote.as_str())
        .await
        .map_err(|e| sftp_error(e, path))?;
    let (offset, length) = read_window(path, meta.len(), meta.is_dir(), range)?;
    let mut file = env
        .sftp
        .open(remote.as_str())
        .await
        .map_err(|e| sftp_error(e, path))?;
    file.seek(std::io::SeekFrom::Start(offset))
        .await
        .map_err(|e| io_error(e, path))?;
    let mut buf = Vec::new();
    file.take(length)
        .read_to_end(&mut buf)
        .await
        .map_err(|e| io_error(e, path))?;
    Ok(buf)
}

pub async fn write_file(env: &SftpRoot, path: &str, contents: &[u8]) -> Result<(), FsError> {
    let remote = env.remote(path)?;
    if env.sftp.metadata(remote.as_str()).await.is_ok_and(|m| m.is_dir()) {
        return Err(FsError::IsDirectory(format!("{path} is a directory")));
    }
    if let Some((parent, _)) = remote.rsplit_once('/').filter(|(p, _)| !p.is_empty()) {
        create_dirs(env, parent, path).await?;
    }
    let mut file = env
        .sftp
        .create(remote.as_str())
        .await
        .map_err(|e| sftp_error(e, path))?;
    file.write_all(contents).await.map_err(|e| io_error(e, path))?;
    file.shutdown().await.map_err(|e| io_error(e, path))
}

pub async fn delete_file(env: &SftpRoot, path: &str) -> Result<(), FsError> {
    let remote = env.remote(path)?;
    let meta = env
        .sftp
        .symlink_metadata(remote.as_str())
        .await
        .map_err(|e| sftp_error(e, path))?;
    if meta.is_dir() {
        return Err(FsError::IsDirectory(format!(
            "{path} is a directory; delete-file removes files only"
        )));
    }
    env.sftp
        .remove_file(remote)
        .await
        .map_err(|e| sftp_error(e, path))
}

pub async fn rename_file(env: &SftpRoot, from: &str, to: &str) -> Result<(), FsError> {
    let (source, target) = (env.remote(from)?, env.remote(to)?);
    env.sftp
        .symlink_metadata(source.as_str())
        .await
        .map_err(|e| sftp_error(e, from))?;
    if let Some((parent, _)) = target.rsplit_once('/').filter(|(p, _)| !p.is_empty()) {
        create_dirs(env, parent, to).await?;
    }
    // SFTP's rename refuses an existing target; a local rename replaces it.
    if env
        .sftp
        .metadata(target.as_str())
        .await
        .is_ok_and(|m| !m.is_dir())
    {
        env.sftp
            .remove_file(target.as_str())
            .await
            .map_err(|e| sftp_error(e, to))?;
    }
    env.sftp
        .rename(source, target)
        .await
        .map_err(|e| sftp_error(e, from))
}

/// `mkdir -p` of an absolute remote path.
pub async fn create_dirs(env: &SftpRoot, remote: &str, shown: &str) -> Result<(), FsError> {
    let mut current = String::new();
    for part in remote.split('/').filter(|p| !p.is_empty()) {
        current.push('/');
        current.push_str(part);
        match env.sftp.metadata(current.as_str()).await {
            Ok(meta) if meta.is_dir() => continue,
            Ok(_) => {
                return Err(FsError::NotADirectory(format!(
                    "a parent of {shown} ({current}) is not a directory"
                )));
            }
            Err(_) => env
                .sftp
                .create_dir(current.as_str())
                .await
                .map_err(|e| sftp_error(e, shown))?,
        }
    }
    Ok(())
}

fn modified_ms(meta: &russh_sftp::client::fs::Metadata) -> u64 {
    meta.modified()
        .ok()
        .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_millis() as u64)
}

pub async fn stat(env: &SftpRoot, path: &str) -> Result<FileStat, FsError> {
    let remote = env.remote(path)?;
    let meta = env.sftp.metadata(remote).await.map_err(|e| sftp_error(e, path))?;
    let kind = if meta.is_dir() {
        EntryKind::Directory
    } else if meta.is_regular() {
        EntryKind::File
    } else {
        EntryKind::Other
    };
    Ok(FileStat {
        kind,
        size: if meta.is_dir() { 0 } else { meta.len() },
        modified_ms: modified_ms(&meta),
        readonly: meta.permissions().is_readonly(),
    })
}

/// The canonical remote path, resolving the nearest existing ancestor of a new path.
pub async fn real_path(env: &SftpRoot, path: &str) -> Result<String, FsError> {
    let remote = env.remote(path)?;
    let mut existing = remote.trim_end_matches('/').to_string();
    let mut rest: Vec<String> = Vec::new();
    loop {
        if let Ok(real) = env.sftp.canonicalize(existing.as_str()).await {
            let mut out = real.trim_end_matches('/').to_string();
            for part in rest.iter().rev() {
                if part == ".." {
                    return Err(FsError::InvalidInput(format!(
                        "{path}: `..` after a directory that does not exist"
                    )));
                }
                out.push('/');
                out.push_str(part);
            }
            return Ok(if out.is_empty() { "/".to_string() } else { out });
        }
        match existing.rsplit_once('/') {
            Some((parent, name)) => {
                rest.push(name.to_string());
                existing = if parent.is_empty() {
                    "/".to_string()
                } else {
                    parent.to_string()
                };
            }
            None => return Err(FsError::NotFound(format!("{path} does not exist"))),
        }
    }
}

/// One entry of a remote walk.
struct Walked {
    /// Relative to the walk's base.
    relative: String,
    kind: EntryKind,
    size: u64,
    modified_ms: u64,
    depth: u32,
}

/// Entries under `base` (breadth-first, sorted per directory) to `max_depth` levels.
async fn walk(env: &SftpRoot, base: &str, max_depth: u32, shown: &str) -> Result<Vec<Walked>, FsError> {
    let ignore = gitignore(env).await;
    let mut out = Vec::new();
    let mut queue = std::collections::VecDeque::from([(String::new(), 1u32)]);
    while let Some((relative_dir, depth)) = queue.pop_front() {
        let dir = if relative_dir.is_empty() {
            base.to_string()
        } else {
            format!("{base}/{relative_dir}")
        };
        let entries = match env.sftp.read_dir(dir.as_str()).await {
            Ok(entries) => entries,
            Err(e) if relative_dir.is_empty() => return Err(sftp_error(e, shown)),
            Err(_) => continue,
        };
        let mut entries: Vec<_> = entries.collect();
        entries.sort_by_key(|e| e.file_name());
        for entry in entries {
            let name = entry.file_name();
            if name == "." || name == ".." || name == ".git" {
                continue;
            }
            let relative = if relative_dir.is_empty() {
                name.clone()
            } else {
                format!("{relative_dir}/{name}")
            };
            let meta = entry.metadata();
            let file_type = entry.file_type();
            let kind = if file_type.is_symlink() {
                EntryKind::Symlink
            } else if file_type.is_dir() {
                EntryKind::Directory
            } else if file_type.is_file() {
                EntryKind::File
            } else {
                EntryKind::Other
            };
            let absolute = format!("{dir}/{name}");
            if let Some(rules) = &ignore
                && let Some(inside) = absolute.strip_prefix(&format!("{}/", env.root))
                && rules
                    .matched_path_or_any_parents(inside, kind == EntryKind::Directory)
                    .is_ignore()
            {
                continue;
            }
            if kind == EntryKind::Directory && depth < max_depth {
                queue.push_back((relative.clone(), depth + 1));
            }
            out.push(Walked {
                relative,
                kind,
                size: meta.len(),
                modified_ms: modified_ms(&meta),
                depth,
            });
            if out.len() >= MAX_WALK {
                return Ok(out);
            }
        }
    }
    Ok(out)
}

/// The working directory's .gitignore, if it is a regular file (not a link) of at most
/// [`MAX_IGNORE_FILE`] bytes: a repository's link to `/dev/zero` must not exhaust memory.
/// The type is checked on the open file too and at most the limit is read, so swapping the
/// file for a link after the first check gains nothing; the whole read is bounded in time.
async fn gitignore(env: &SftpRoot) -> Option<ignore::gitignore::Gitignore> {
    let path = format!("{}/.gitignore", env.root);
    let read = async {
        let meta = env.sftp.symlink_metadata(path.as_str()).await.ok()?;
        if !meta.file_type().is_file() || meta.len() > MAX_IGNORE_FILE {
            return None;
        }
        let file = env.sftp.open(path.as_str()).await.ok()?;
        let opened = file.metadata().await.ok()?;
        if !opened.file_type().is_file() || opened.len() > MAX_IGNORE_FILE {
            return None;
        }
        let mut text = Vec::new();
        file.take(MAX_IGNORE_FILE + 1).read_to_end(&mut text).await.ok()?;
        (text.len() as u64 <= MAX_IGNORE_FILE).then_some(text)
    };
    let Ok(Some(text)) = tokio::time::timeout(IGNORE_READ_TIMEOUT, read).await else {
        tracing::warn!(file = %path, "remote .gitignore is not a small regular file; its rules are not applied");
        return None;
    };
    let mut builder = ignore::gitignore::GitignoreBuilder::new(&env.root);
    for line in String::from_utf8_lossy(&text).lines() {
        let _ = builder.add_line(None, line);
    }
    builder.build().ok()
}

/// How long reading the remote .gitignore may take.
const IGNORE_READ_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(10);

pub async fn list_directory(env: &SftpRoot, path: &str, depth: u32) -> Result<Vec<DirEntry>, FsError> {
    let base = env.remote(path)?;
    if !env
        .sftp
        .metadata(base.as_str())
        .await
        .map_err(|e| sftp_error(e, path))?
        .is_dir()
    {
        return Err(FsError::NotADirectory(format!("{path} is not a directory")));
    }
    let mut entries: Vec<DirEntry> = walk(env, &base, depth.max(1), path)
        .await?
        .into_iter()
        .map(|w| DirEntry {
            path: w.relative,
            kind: w.kind,
            size: if w.kind == EntryKind::File { w.size } else { 0 },
            depth: w.depth,
        })
        .collect();
    entries.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(entries)
}

/// The files under a path (or the path itself when it is a file), with paths shown relative
/// to the working directory.
async fn files_under(env: &SftpRoot, path: &str) -> Result<Vec<(String, String, u64, u64)>, FsError> {
    let base = env.remote(path)?;
    let meta = env
        .sftp
        .metadata(base.as_str())
        .await
        .map_err(|e| sftp_error(e, path))?;
    let shown = |absolute: &str| {
        absolute
            .strip_prefix(&format!("{}/", env.root))
            .unwrap_or(absolute)
            .to_string()
    };
    if !meta.is_dir() {
        return Ok(vec![(base.clone(), shown(&base), meta.len(), modified_ms(&meta))]);
    }
    Ok(walk(env, &base, u32::MAX, path)
        .await?
        .into_iter()
        .filter(|w| w.kind == EntryKind::File)
        .map(|w| {
            let absolute = format!("{base}/{}", w.relative);
            let shown = shown(&absolute);
            (absolute, shown, w.size, w.modified_ms)
        })
        .collect())
}

pub async fn grep(env: &SftpRoot, options: &GrepOptions) -> Result<Vec<GrepMatch>, FsError> {
    let mut run = GrepRun::new(options)?;
    let mut files = files_under(env, options.path.as_deref().unwrap_or(".")).await?;
    files.sort_by(|a, b| a.1.cmp(&b.1));
    for (absolute, shown, size, _) in files {
        if run.full() {
            break;
        }
        let name = shown.rsplit('/').next().unwrap_or(&shown).to_string();
        if !run.admits(&shown, &name) || size > MAX_GREP_FILE {
            continue;
        }
        if let Ok(bytes) = env.sftp.read(absolute.as_str()).await {
            run.search(&shown, Searched::Bytes(&bytes));
        }
    }
    Ok(run.finish())
}

pub async fn glob(env: &SftpRoot, pattern: &str, path: Option<&str>) -> Result<Vec<String>, FsError> {
    let matcher = glob_matcher(pattern)?;
    let path = path.unwrap_or(".");
    let base = env.remote(path)?;
    let mut found: Vec<(u64, String)> = files_under(env, path)
        .await?
        .into_iter()
        .filter(|(absolute, _, _, _)| {
            absolute
                .strip_prefix(&format!("{base}/"))
                .is_some_and(|relative| matcher.is_match(relative))
        })
        .map(|(_, shown, _, modified)| (modified, shown))
        .collect();
    found.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
    Ok(found.into_iter().map(|(_, p)| p).collect())
}
