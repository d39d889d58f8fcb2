//! Files only their owner reads: sessions, recordings and the trust list hold file
//! contents, command output and the user's choices, so folders are 0700 and files 0600
//! whatever the umask says.

use std::fs::{DirBuilder, File, OpenOptions, Permissions};
use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt};
use std::path::Path;

const DIR_MODE: u32 = 0o700;
const FILE_MODE: u32 = 0o600;

/// Creates `dir` and its missing parents as 0700; an existing `dir` is narrowed to 0700
/// (folders an older agent-host created 0755).
pub fn create_private_dir(dir: &Path) -> std::io::Result<()> {
    DirBuilder::new().recursive(true).mode(DIR_MODE).create(dir)?;
    std::fs::set_permissions(dir, Permissions::from_mode(DIR_MODE))
}

/// Options for a new or appended private file (0600 when created).
pub fn private_options() -> OpenOptions {
    let mut options = OpenOptions::new();
    options.mode(FILE_MODE);
    options
}

/// Creates (or truncates) a private file. A symbolic link at `path` is not followed: a
/// repository could plant one where a recording is written.
pub fn create_private(path: &Path) -> std::io::Result<File> {
    let file = private_options()
        .write(true)
        .create(true)
        .truncate(true)
        .custom_flags(nix::fcntl::OFlag::O_NOFOLLOW.bits())
        .open(path)?;
    // An existing file keeps its mode on open: narrow it too.
    file.set_permissions(Permissions::from_mode(FILE_MODE))?;
    Ok(file)
}

/// Writes `bytes` to `path` whole (through a temporary file renamed over it), 0600, in a
/// private folder.
pub fn write_private(path: &Path, bytes: &[u8]) -> Result<(), String> {
    let fail = |e: std::io::Error| format!("cannot write {}: {e}", path.display());
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        create_private_dir(dir).map_err(fail)?;
    }
    let temporary = path.with_extension("tmp");
    let mut file = create_private(&temporary).map_err(fail)?;
    file.write_all(bytes)
        .and_then(|()| file.sync_all())
        .map_err(fail)?;
    std::fs::rename(&temporary, path).map_err(fail)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn mode(path: &Path) -> u32 {
        std::fs::metadata(path).unwrap().permissions().mode() & 0o777
    }

    #[test]
    fn folders_and_files_are_owner_only_whatever_existed() {
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().join("a/b");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::set_permissions(&dir, Permissions::from_mode(0o755)).unwrap();
        create_private_dir(&dir).unwrap();
        assert_eq!(mode(&dir), 0o700);
        let file = dir.join("x.json");
        std::fs::write(&file, "old").unwrap();
        std::fs::set_permissions(&file, Permissions::from_mode(0o644)).unwrap();
        write_private(&file, b"new").unwrap();
        assert_eq!(
            (mode(&file), std::fs::read_to_string(&file).unwrap().as_str()),
            (0o600, "new")
        );
        let fresh = root.path().join("c/d/e.txt");
        write_private(&fresh, b"x").unwrap();
        assert_eq!((mode(&fresh), mode(&root.path().join("c/d"))), (0o600, 0o700));
    }
}
