//! The workspace as the host lets the plugin see it: paths relative to the working
//! directory, every call checked against the plugin's grants. Errors are messages the
//! plugin can pass straight to the model.

use crate::bindings::agent::core::execution_environment as ee;
use crate::bindings::agent::core::types::{self, FsError};

pub use ee::ExecResult;
pub use types::{DirEntry, EntryKind, GrepMatch};

/// The message of an environment error.
pub fn message(error: FsError) -> String {
    match error {
        FsError::NotFound(m)
        | FsError::PermissionDenied(m)
        | FsError::IsDirectory(m)
        | FsError::NotADirectory(m)
        | FsError::Binary(m)
        | FsError::TooLarge(m)
        | FsError::AlreadyExists(m)
        | FsError::Denied(m)
        | FsError::InvalidInput(m)
        | FsError::Other(m) => m,
    }
}

/// Reads a whole file (needs the `read` capability).
pub fn read(path: &str) -> Result<Vec<u8>, String> {
    ee::read_file(path, None).map_err(message)
}

/// Reads a whole UTF-8 text file (needs `read`).
pub fn read_to_string(path: &str) -> Result<String, String> {
    String::from_utf8(read(path)?).map_err(|_| format!("{path} is not UTF-8 text"))
}

/// Writes a whole file, creating parent directories (needs `write`).
pub fn write(path: &str, contents: &[u8]) -> Result<(), String> {
    ee::write_file(path, contents).map_err(message)
}

/// Lists a directory `depth` levels deep (needs `read`).
pub fn list(path: &str, depth: u32) -> Result<Vec<DirEntry>, String> {
    ee::list_directory(path, depth).map_err(message)
}

/// Files matching a glob, newest first (needs `read`).
pub fn glob(pattern: &str) -> Result<Vec<String>, String> {
    ee::glob(pattern, None).map_err(message)
}

/// Runs a shell command in the working directory and waits for it (needs `run`).
pub fn run(command: &str, timeout_ms: u64) -> Result<ExecResult, String> {
    let process = ee::spawn(&ee::SpawnRequest {
        command: command.to_string(),
        working_dir: None,
        timeout_ms,
        env: Vec::new(),
    })
    .map_err(|e| match e {
        ee::SpawnError::Unsupported(m)
        | ee::SpawnError::Denied(m)
        | ee::SpawnError::InvalidWorkingDir(m)
        | ee::SpawnError::Failed(m) => m,
    })?;
    Ok(process.wait())
}
