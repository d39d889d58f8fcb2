//! The workspace reached without following any link: every folder on a path is opened with
//! `O_NOFOLLOW`, and so is the file, so neither a link elsewhere in the workspace (`a` ->
//! `.git`) nor one out of it leads a record or a restore astray. Special files (a FIFO) are
//! opened without blocking and refused; a file is written through a temporary file renamed
//! over it, so a failure leaves the old file whole and a hard link is replaced, not written
//! through.

use cap_fs_ext::{DirExt, FollowSymlinks, OpenOptionsFollowExt};
use cap_std::fs::{Dir, Metadata, OpenOptions, OpenOptionsExt, PermissionsExt};
use std::ffi::OsStr;
use std::io::{Error, ErrorKind, Read, Result, Write};
use std::os::unix::ffi::OsStrExt;

fn refused(why: &str) -> Error {
    Error::new(ErrorKind::InvalidInput, why.to_string())
}

/// The folder that holds `path` (relative, `/`-separated, in the filesystem's bytes) and
/// the file's name; each folder is opened without following links, and created when
/// `create`. `.git` is never entered.
fn parent<'a>(root: &Dir, path: &'a OsStr, create: bool) -> Result<(Dir, &'a OsStr)> {
    let mut parts: Vec<&OsStr> = path
        .as_bytes()
        .split(|&b| b == b'/')
        .map(OsStr::from_bytes)
        .collect();
    let name = parts.pop().unwrap_or_default();
    let mut dir = root.try_clone()?;
    for part in parts.iter().copied().chain([name]) {
        if part.is_empty() || part == "." || part == ".." || part == ".git" {
            return Err(refused("not a path a checkpoint records"));
        }
    }
    for part in parts {
        dir = match dir.open_dir_nofollow(part) {
            Ok(next) => next,
            Err(error) if create && error.kind() == ErrorKind::NotFound => {
                dir.create_dir(part)?;
                dir.open_dir_nofollow(part)?
            }
            Err(error) => return Err(error),
        };
    }
    Ok((dir, name))
}

/// What stands at `path`, a link itself rather than its target.
pub fn metadata(root: &Dir, path: &OsStr) -> Result<Metadata> {
    let (dir, name) = parent(root, path, false)?;
    dir.symlink_metadata(name)
}

/// A regular file's bytes, at most `max` of them (more is an error).
pub fn read(root: &Dir, path: &OsStr, max: u64) -> Result<Vec<u8>> {
    let (dir, name) = parent(root, path, false)?;
    let mut options = OpenOptions::new();
    options
        .read(true)
        .follow(FollowSymlinks::No)
        .custom_flags(libc::O_NONBLOCK);
    let file = dir.open_with(name, &options)?;
    if !file.metadata()?.is_file() {
        return Err(refused("not a regular file"));
    }
    let mut bytes = Vec::new();
    file.take(max + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > max {
        return Err(refused("larger than the limit"));
    }
    Ok(bytes)
}

/// Puts `bytes` at `path` (its folders created): the old file's permissions kept, the
/// executable bit set as recorded; whatever stood there that is not a folder is replaced.
pub fn write(root: &Dir, path: &OsStr, bytes: &[u8], executable: bool) -> Result<()> {
    let (dir, name) = parent(root, path, true)?;
    let existing = dir.symlink_metadata(name).ok();
    if existing.as_ref().is_some_and(Metadata::is_dir) {
        return Err(refused("a folder stands where the file was"));
    }
    let mode = existing
        .filter(Metadata::is_file)
        .map_or(0o644, |m| m.permissions().mode() & 0o7777);
    let mode = match executable {
        true => mode | (mode & 0o444) >> 2,
        false => mode & !0o111,
    };
    // Short (any name still fits in 255 bytes) and not guessable ahead of time.
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    let temporary = format!(".agent-host-restore-{}-{nanos}", std::process::id());
    let mut options = OpenOptions::new();
    options
        .write(true)
        .create_new(true)
        .follow(FollowSymlinks::No)
        .mode(0o600);
    let written = dir.open_with(&temporary, &options).and_then(|mut file| {
        file.write_all(bytes)?;
        let mut permissions = file.metadata()?.permissions();
        permissions.set_mode(mode);
        file.set_permissions(permissions)?;
        dir.rename(&temporary, &dir, name)
    });
    if written.is_err() {
        let _ = dir.remove_file(&temporary);
    }
    written
}

/// Removes the file (or link) at `path`.
pub fn remove(root: &Dir, path: &OsStr) -> Result<()> {
    let (dir, name) = parent(root, path, false)?;
    dir.remove_file(name)
}
