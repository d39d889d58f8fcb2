//! Which files the local file tools open, and how. Only regular files: opening a FIFO waits
//! for its other end (a `read_file` on one hung the session), and a device or socket is no
//! file to show the model. A file is checked before it is opened, so a device is never
//! opened, and again through the open handle, in case it was swapped in between; the open
//! itself never waits (`O_NONBLOCK`).
//!
//! A file with more than one hard link is not written in place: its other names may lie
//! outside the workspace, where the write would land too. Reading it is allowed:
//! only someone who may read a file can link it (`fs.protected_hardlinks`), and package
//! stores such as pnpm's and `git clone --local` fill projects with hard links.

use agent_protocol::ports::FsError;
use cap_std::fs::{Dir, OpenOptions};
use std::io::{ErrorKind, Read, Seek, SeekFrom, Write};
use std::path::Path;

/// Opening a FIFO returns at once instead of waiting for a writer (reads of regular files
/// ignore the flag), and a terminal never becomes the controlling one.
const OPEN_FLAGS: i32 = nix::libc::O_NONBLOCK | nix::libc::O_NOCTTY;

/// The parts of a file's metadata checked here, from cap-std's (before opening, beneath the
/// root's handle) or std's (of the open handle).
trait Kind {
    fn is_regular(&self) -> bool;
    fn is_directory(&self) -> bool;
    /// What the file is when neither, as the model should read it.
    fn other_kind(&self) -> &'static str;
    fn links(&self) -> u64;
}

fn name_other(fifo: bool, char_device: bool, block_device: bool, socket: bool) -> &'static str {
    match (fifo, char_device, block_device, socket) {
        (true, ..) => "a FIFO",
        (_, true, ..) => "a character device",
        (_, _, true, _) => "a block device",
        (.., true) => "a socket",
        _ => "not a regular file",
    }
}

/// `Kind` for a metadata type, through its own extension traits (cap-std's and std's
/// metadata are distinct types with the same methods).
macro_rules! kind_of {
    ($metadata:ty, $file_type_ext:ident, $metadata_ext:ident) => {
        impl Kind for $metadata {
            fn is_regular(&self) -> bool {
                self.is_file()
            }
            fn is_directory(&self) -> bool {
                self.is_dir()
            }
            fn other_kind(&self) -> &'static str {
                let t = self.file_type();
                name_other(
                    $file_type_ext::is_fifo(&t),
                    $file_type_ext::is_char_device(&t),
                    $file_type_ext::is_block_device(&t),
                    $file_type_ext::is_socket(&t),
                )
            }
            fn links(&self) -> u64 {
                $metadata_ext::nlink(self)
            }
        }
    };
}

use cap_std::fs::{FileTypeExt as CapFileTypeExt, MetadataExt as CapMetadataExt};
use std::os::unix::fs::{FileTypeExt as StdFileTypeExt, MetadataExt as StdMetadataExt};

kind_of!(cap_std::fs::Metadata, CapFileTypeExt, CapMetadataExt);
kind_of!(std::fs::Metadata, StdFileTypeExt, StdMetadataExt);

/// Refuses what is neither a regular file nor a directory (the callers report directories
/// in their own words).
fn regular_or_directory(meta: &impl Kind, path: &str) -> Result<(), FsError> {
    if meta.is_regular() || meta.is_directory() {
        return Ok(());
    }
    Err(FsError::InvalidInput(format!(
        "not a regular file: {path} is {}; the file tools only read and write regular files",
        meta.other_kind()
    )))
}

/// Refuses to write a file that has other names, unless the user vouched for it.
fn sole_name(meta: &impl Kind, path: &str, vouched: &dyn Fn() -> bool) -> Result<(), FsError> {
    let links = meta.links();
    if !meta.is_regular() || links <= 1 || vouched() {
        return Ok(());
    }
    Err(FsError::Denied(format!(
        "{path} has {links} hard links, and writing it would change the file under its other \
         names too, which may lie outside the workspace; delete {path} and write it anew to \
         leave the other names alone, or allow their directory with --allow-dir"
    )))
}

/// Reads `range` (or all) of the regular file `relative` beneath `dir`; `error` turns I/O
/// errors into the environment's.
pub fn read(
    dir: &Dir,
    relative: &Path,
    path: &str,
    range: Option<(u64, u64)>,
    error: &dyn Fn(std::io::Error) -> FsError,
) -> Result<Vec<u8>, FsError> {
    regular_or_directory(&dir.metadata(relative).map_err(error)?, path)?;
    let mut options = OpenOptions::new();
    options.read(true);
    cap_std::fs::OpenOptionsExt::custom_flags(&mut options, OPEN_FLAGS);
    let mut file = dir.open_with(relative, &options).map_err(error)?.into_std();
    let meta = file.metadata().map_err(error)?;
    regular_or_directory(&meta, path)?;
    let (offset, length) = crate::environments::read_window(path, meta.len(), meta.is_dir(), range)?;
    file.seek(SeekFrom::Start(offset)).map_err(error)?;
    let mut buf = Vec::with_capacity(length.min(meta.len()) as usize);
    file.take(length).read_to_end(&mut buf).map_err(error)?;
    Ok(buf)
}

/// Replaces the contents of the regular file `relative` beneath `dir`, creating it if
/// needed; nothing is truncated before every check passed. `vouched` says whether a file
/// with several hard links may be written (it lies under an `--allow-dir`).
pub fn write(
    dir: &Dir,
    relative: &Path,
    path: &str,
    contents: &[u8],
    vouched: &dyn Fn() -> bool,
    error: &dyn Fn(std::io::Error) -> FsError,
) -> Result<(), FsError> {
    match dir.metadata(relative) {
        Ok(meta) => {
            regular_or_directory(&meta, path)?;
            sole_name(&meta, path, vouched)?;
        }
        // A new file (or a dangling link, which the open follows beneath the handle).
        Err(e) if e.kind() == ErrorKind::NotFound => {}
        Err(e) => return Err(error(e)),
    }
    let mut options = OpenOptions::new();
    options.write(true).create(true);
    cap_std::fs::OpenOptionsExt::custom_flags(&mut options, OPEN_FLAGS);
    let mut file = dir.open_with(relative, &options).map_err(error)?.into_std();
    let meta = file.metadata().map_err(error)?;
    regular_or_directory(&meta, path)?;
    sole_name(&meta, path, vouched)?;
    file.set_len(0).map_err(error)?;
    file.write_all(contents).map_err(error)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)] // tests may panic

    use super::*;
    use cap_std::ambient_authority;

    fn workspace() -> (tempfile::TempDir, Dir) {
        let top = tempfile::tempdir().unwrap();
        let dir = Dir::open_ambient_dir(top.path(), ambient_authority()).unwrap();
        (top, dir)
    }

    fn io(e: std::io::Error) -> FsError {
        FsError::Other(e.to_string())
    }

    #[test]
    fn a_fifo_is_refused_before_it_is_opened() {
        let (top, dir) = workspace();
        let fifo = top.path().join("pipe");
        let made = std::process::Command::new("mkfifo").arg(&fifo).status().unwrap();
        assert!(made.success());
        let read = read(&dir, Path::new("pipe"), "pipe", None, &io).unwrap_err();
        assert_eq!(
            read.to_string(),
            "not a regular file: pipe is a FIFO; the file tools only read and write regular files"
        );
        let written = write(&dir, Path::new("pipe"), "pipe", b"x", &|| false, &io).unwrap_err();
        assert!(matches!(written, FsError::InvalidInput(_)), "{written:?}");
    }

    #[test]
    fn a_refused_write_leaves_the_file_as_it_was_and_a_vouched_one_goes_ahead() {
        let (top, dir) = workspace();
        std::fs::write(top.path().join("a"), "original").unwrap();
        std::fs::hard_link(top.path().join("a"), top.path().join("b")).unwrap();
        let refused = write(&dir, Path::new("b"), "b", b"new", &|| false, &io).unwrap_err();
        assert!(refused.to_string().contains("b has 2 hard links"), "{refused}");
        assert_eq!(std::fs::read_to_string(top.path().join("a")).unwrap(), "original");
        write(&dir, Path::new("b"), "b", b"new", &|| true, &io).unwrap();
        assert_eq!(std::fs::read_to_string(top.path().join("a")).unwrap(), "new");
        assert_eq!(read(&dir, Path::new("a"), "a", Some((1, 2)), &io).unwrap(), b"ew");
    }
}
