//! The content store: each file content once, named by its SHA-256, so a checkpoint of an
//! unchanged workspace costs a listing and no copies.

use super::CheckpointError;
use std::io::Write;
use std::path::{Path, PathBuf};

pub use crate::content_hash::sha256_hex as hash;

pub struct Objects {
    dir: PathBuf,
}

impl Objects {
    pub fn new(checkpoints: &Path) -> Self {
        Self {
            dir: checkpoints.join("objects"),
        }
    }

    fn path(&self, hash: &str) -> PathBuf {
        self.dir.join(hash)
    }

    pub fn contains(&self, hash: &str) -> bool {
        self.path(hash).is_file()
    }

    /// Stores `bytes` under `hash` unless already there; written whole or not at all.
    pub fn put(&self, hash: &str, bytes: &[u8]) -> Result<(), CheckpointError> {
        if self.contains(hash) {
            return Ok(());
        }
        write_atomically(&self.dir, &self.path(hash), bytes)
    }

    pub fn get(&self, hash: &str) -> Result<Vec<u8>, CheckpointError> {
        let path = self.path(hash);
        let bytes = std::fs::read(&path).map_err(|e| CheckpointError::io("read", &path, e))?;
        if self::hash(&bytes) != hash {
            return Err(CheckpointError::Damaged(format!(
                "{} does not hold the content it is named after",
                path.display()
            )));
        }
        Ok(bytes)
    }
}

/// Writes `path` through a temporary file in `dir` (0700; the file is 0600) renamed over
/// it, so a crash leaves the old file or the new one, never half of one.
pub fn write_atomically(dir: &Path, path: &Path, bytes: &[u8]) -> Result<(), CheckpointError> {
    crate::private_files::create_private_dir(dir).map_err(|e| CheckpointError::io("create", dir, e))?;
    let mut file =
        tempfile::NamedTempFile::new_in(dir).map_err(|e| CheckpointError::io("create a file in", dir, e))?;
    file.write_all(bytes)
        .map_err(|e| CheckpointError::io("write", file.path(), e))?;
    file.persist(path)
        .map_err(|e| CheckpointError::io("write", path, e.error))?;
    Ok(())
}
