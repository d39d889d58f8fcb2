//! Reading configuration files. A workspace's `.agent/config.toml` comes with the
//! repository and is read before anything is trusted, so neither the file nor its `.agent`
//! folder may be a link: a repository could otherwise link it to `~/.git-credentials` or
//! `~/.aws/credentials`, and the file's values, or a parser's message about them, would be
//! shown and used. Both are opened with `O_NOFOLLOW` beneath the workspace, which is the
//! user's choice and may itself be reached through links. A file the user names (`--config`,
//! the user's own file) may be a link. Either way only a regular file of at most
//! [`MAX_BYTES`] is read, and opening a FIFO returns at once instead of waiting for a writer.

use cap_fs_ext::{DirExt, FollowSymlinks, OpenOptionsFollowExt};
use cap_std::ambient_authority;
use cap_std::fs::{Dir, FileTypeExt as CapFileTypeExt, OpenOptions, OpenOptionsExt};
use std::io::{ErrorKind, Read};
use std::os::unix::fs::FileTypeExt as StdFileTypeExt;
use std::path::Path;

/// Larger is no configuration but a mistake (or a file that is not one).
pub const MAX_BYTES: u64 = 1024 * 1024;

/// The flags every configuration file is opened with: a FIFO does not block the open (reads
/// of regular files ignore the flag), and a terminal never becomes the controlling one.
const OPEN_FLAGS: i32 = libc::O_NONBLOCK | libc::O_NOCTTY;

/// What a file that is not a regular one is, for messages (std's and cap-std's file types
/// are distinct types with the same methods).
macro_rules! kind_of {
    ($file_type:expr, $ext:ident) => {{
        let t = $file_type;
        if t.is_dir() {
            "a folder"
        } else if $ext::is_fifo(&t) {
            "a FIFO"
        } else if $ext::is_char_device(&t) || $ext::is_block_device(&t) {
            "a device"
        } else if $ext::is_socket(&t) {
            "a socket"
        } else {
            "not a regular file"
        }
    }};
}

fn not_regular(path: &Path, kind: &str) -> String {
    format!(
        "{} is {kind}, not a regular file: agent-host reads its configuration only from regular files",
        path.display()
    )
}

fn linked(path: &Path) -> String {
    format!(
        "{} is a symbolic link, which agent-host does not follow for a workspace's configuration (it \
         could lead to any file of yours, read before the project is trusted): make it a file of \
         the workspace, or name a file of your own with --config FILE",
        path.display()
    )
}

/// At most [`MAX_BYTES`] of `file` as UTF-8 text.
fn text_of(file: impl Read, path: &Path) -> Result<String, String> {
    let mut bytes = Vec::new();
    file.take(MAX_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    if bytes.len() as u64 > MAX_BYTES {
        return Err(format!(
            "{} is larger than {} MiB, too large for a configuration file",
            path.display(),
            MAX_BYTES >> 20
        ));
    }
    String::from_utf8(bytes).map_err(|_| format!("{} is not UTF-8 text", path.display()))
}

/// The text of the project file at `path` (`<workspace>/.agent/config.toml`, or any
/// `<folder>/<dir>/<file>`): the folder of `path` and the file are opened without following
/// links. `None` when there is no such file (or no such folder, or the folder is no
/// folder: another tool's `.agent` file, say); an error when either is a link or the file
/// is not a regular one.
pub fn project_file(path: &Path) -> Result<Option<String>, String> {
    let cannot = |e: std::io::Error| format!("cannot read {}: {e}", path.display());
    let Some(name) = path.file_name() else {
        return Err(format!("{} names no file", path.display()));
    };
    let folder = path.parent().filter(|p| !p.as_os_str().is_empty());
    let (base, folder_name) = match folder {
        Some(folder) => (
            folder
                .parent()
                .filter(|p| !p.as_os_str().is_empty())
                .unwrap_or(Path::new(".")),
            folder.file_name(),
        ),
        None => (Path::new("."), None),
    };
    // The workspace is the user's choice; a workspace that is not there has no file.
    let Ok(base_dir) = Dir::open_ambient_dir(base, ambient_authority()) else {
        return Ok(None);
    };
    let dir = match (folder, folder_name) {
        (Some(folder), Some(folder_name)) => {
            match base_dir.symlink_metadata(folder_name) {
                Err(e) if e.kind() == ErrorKind::NotFound => return Ok(None),
                Err(e) => return Err(cannot(e)),
                Ok(meta) if meta.file_type().is_symlink() => return Err(linked(folder)),
                Ok(meta) if !meta.is_dir() => return Ok(None),
                Ok(_) => {}
            }
            // Swapped for a link since: refused by the open itself.
            base_dir.open_dir_nofollow(folder_name).map_err(cannot)?
        }
        // `..` or a root as the folder: nothing beneath a workspace to guard.
        (Some(folder), None) => Dir::open_ambient_dir(folder, ambient_authority()).map_err(cannot)?,
        (None, _) => base_dir,
    };
    match dir.symlink_metadata(name) {
        Err(e) if e.kind() == ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(cannot(e)),
        Ok(meta) if meta.file_type().is_symlink() => return Err(linked(path)),
        Ok(meta) if !meta.is_file() => {
            return Err(not_regular(path, kind_of!(meta.file_type(), CapFileTypeExt)));
        }
        Ok(_) => {}
    }
    let mut options = OpenOptions::new();
    options
        .read(true)
        .follow(FollowSymlinks::No)
        .custom_flags(OPEN_FLAGS);
    let file = dir.open_with(name, &options).map_err(cannot)?.into_std();
    // Checked again through the handle: something else may stand there by now.
    let meta = file.metadata().map_err(cannot)?;
    if !meta.is_file() {
        return Err(not_regular(path, kind_of!(meta.file_type(), StdFileTypeExt)));
    }
    text_of(file, path).map(Some)
}

/// The text of a file the user named (`--config FILE`, the user's configuration): links
/// are followed, but only a regular file is read, and a FIFO does not block.
pub fn named_file(path: &Path) -> Result<String, String> {
    use std::os::unix::fs::OpenOptionsExt as _;
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(OPEN_FLAGS)
        .open(path)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let meta = file
        .metadata()
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    if !meta.is_file() {
        return Err(not_regular(path, kind_of!(meta.file_type(), StdFileTypeExt)));
    }
    text_of(file, path)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use std::os::unix::fs::symlink;

    fn fifo(path: &Path) {
        nix::unistd::mkfifo(path, nix::sys::stat::Mode::from_bits_truncate(0o600)).unwrap();
    }

    #[test]
    fn a_project_file_is_read_only_when_neither_it_nor_its_folder_is_a_link() {
        let root = tempfile::tempdir().unwrap();
        let secrets = root.path().join("secrets");
        std::fs::create_dir(&secrets).unwrap();
        std::fs::write(secrets.join("config.toml"), "token = \"s3cret\"\n").unwrap();

        let work = root.path().join("work");
        std::fs::create_dir_all(work.join(".agent")).unwrap();
        let file = work.join(".agent/config.toml");
        assert_eq!(project_file(&file).unwrap(), None);
        std::fs::write(&file, "model = \"m\"\n").unwrap();
        assert_eq!(project_file(&file).unwrap().as_deref(), Some("model = \"m\"\n"));

        std::fs::remove_file(&file).unwrap();
        symlink(secrets.join("config.toml"), &file).unwrap();
        let error = project_file(&file).unwrap_err();
        assert!(
            error.contains("is a symbolic link") && !error.contains("s3cret"),
            "{error}"
        );

        let linked_folder = root.path().join("linked");
        std::fs::create_dir(&linked_folder).unwrap();
        symlink(&secrets, linked_folder.join(".agent")).unwrap();
        let error = project_file(&linked_folder.join(".agent/config.toml")).unwrap_err();
        assert!(error.contains(".agent is a symbolic link"), "{error}");

        // No `.agent`, or a file of another tool by that name: no project file.
        let bare = root.path().join("bare");
        std::fs::create_dir(&bare).unwrap();
        assert_eq!(project_file(&bare.join(".agent/config.toml")).unwrap(), None);
        std::fs::write(bare.join(".agent"), "x").unwrap();
        assert_eq!(project_file(&bare.join(".agent/config.toml")).unwrap(), None);
        assert_eq!(
            project_file(&root.path().join("none/.agent/config.toml")).unwrap(),
            None
        );
    }

    #[test]
    fn a_fifo_is_refused_without_blocking_and_a_large_file_is_refused() {
        let work = tempfile::tempdir().unwrap();
        std::fs::create_dir(work.path().join(".agent")).unwrap();
        let file = work.path().join(".agent/config.toml");
        fifo(&file);
        assert!(project_file(&file).unwrap_err().contains("is a FIFO"));
        assert!(named_file(&file).unwrap_err().contains("is a FIFO"));
        let large = work.path().join("large.toml");
        std::fs::write(&large, vec![b'#'; MAX_BYTES as usize + 1]).unwrap();
        assert!(named_file(&large).unwrap_err().contains("larger than 1 MiB"));
        let folder = work.path().join(".agent");
        assert!(named_file(&folder).unwrap_err().contains("is a folder"));
    }

    #[test]
    fn a_named_file_may_be_a_link() {
        let work = tempfile::tempdir().unwrap();
        std::fs::write(work.path().join("real.toml"), "model = \"m\"\n").unwrap();
        symlink(work.path().join("real.toml"), work.path().join("named.toml")).unwrap();
        assert_eq!(
            named_file(&work.path().join("named.toml")).unwrap(),
            "model = \"m\"\n"
        );
    }
}
