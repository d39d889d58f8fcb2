//! The WASI 0.2 side: `wasi:filesystem/preopens` and descriptors.

use wasip2::filesystem::preopens::get_directories;
use wasip2::filesystem::types::{
    Descriptor, DescriptorFlags, DescriptorType, ErrorCode, OpenFlags, PathFlags,
};

use crate::{FsError, resolve};

/// Reads are done in pieces of this size: few host calls, bounded copies.
const CHUNK: u64 = 1 << 20;

/// The names of the directories the host preopened for this component, in its order.
pub fn preopen_names() -> Vec<String> {
    get_directories().into_iter().map(|(_, name)| name).collect()
}

/// The whole file at the workspace path `path`, refused when a directory or over `limit` bytes.
pub fn read(path: &str, limit: u64) -> Result<Vec<u8>, FsError> {
    let file = open(path, OpenFlags::empty(), DescriptorFlags::READ)?;
    let stat = file.stat().map_err(|code| failure(path, code))?;
    if stat.type_ == DescriptorType::Directory {
        return Err(FsError::Failed(format!("{path}: is a directory")));
    }
    if stat.size > limit {
        return Err(FsError::Failed(format!(
            "{path}: {} bytes, more than the {limit} this component reads",
            stat.size
        )));
    }
    let mut contents = Vec::new();
    loop {
        let offset = contents.len() as u64;
        let (piece, end) = file
            .read(CHUNK.min(limit.saturating_add(1) - offset), offset)
            .map_err(|code| failure(path, code))?;
        contents.extend_from_slice(&piece);
        // The file may have grown since `stat`.
        if contents.len() as u64 > limit {
            return Err(FsError::Failed(format!(
                "{path}: more than the {limit} bytes this component reads"
            )));
        }
        if end || piece.is_empty() {
            return Ok(contents);
        }
    }
}

/// Creates or replaces the file at the workspace path `path` with `contents`.
pub fn write(path: &str, contents: &[u8]) -> Result<(), FsError> {
    let file = open(
        path,
        OpenFlags::CREATE | OpenFlags::TRUNCATE,
        DescriptorFlags::WRITE,
    )?;
    let mut written = 0;
    while written < contents.len() {
        let count = file
            .write(&contents[written..], written as u64)
            .map_err(|code| failure(path, code))?;
        if count == 0 {
            return Err(FsError::Failed(format!("{path}: the write made no progress")));
        }
        written += count as usize;
    }
    Ok(())
}

/// Creates a symbolic link at the workspace path `path` whose target is `target`, as given.
pub fn symlink(target: &str, path: &str) -> Result<(), FsError> {
    let (directory, relative) = place(path)?;
    directory
        .symlink_at(target, &relative)
        .map_err(|code| failure(path, code))
}

/// Makes `path` a hard link to the existing `existing` (both workspace paths), not following
/// `existing` when it is a symbolic link.
pub fn hard_link(existing: &str, path: &str) -> Result<(), FsError> {
    let (from_directory, from) = place(existing)?;
    let (to_directory, to) = place(path)?;
    from_directory
        .link_at(PathFlags::empty(), &from, &to_directory, &to)
        .map_err(|code| failure(path, code))
}

fn open(path: &str, open: OpenFlags, flags: DescriptorFlags) -> Result<Descriptor, FsError> {
    let (directory, relative) = place(path)?;
    directory
        .open_at(PathFlags::SYMLINK_FOLLOW, &relative, open, flags)
        .map_err(|code| failure(path, code))
}

/// The preopened directory `path` falls in, and the rest of the path below it.
fn place(path: &str) -> Result<(Descriptor, String), FsError> {
    let mut directories = get_directories();
    let names: Vec<String> = directories.iter().map(|(_, name)| name.clone()).collect();
    let place = resolve(&names, path).map_err(FsError::Failed)?;
    if place.preopen >= directories.len() {
        return Err(FsError::Failed(format!("{path}: the preopen list changed")));
    }
    let (directory, _) = directories.swap_remove(place.preopen);
    Ok((directory, place.relative))
}

fn failure(path: &str, code: ErrorCode) -> FsError {
    // The generated message is "Permission denied, similar to `EACCES` in POSIX.": keep the
    // part a reader needs.
    let message = code.message();
    let short = message
        .split(", similar to")
        .next()
        .unwrap_or(message)
        .trim_end_matches('.');
    let text = format!("{path}: {short} ({})", code.name());
    if code == ErrorCode::NoEntry {
        FsError::NotFound(text)
    } else {
        FsError::Failed(text)
    }
}
