//! The remote filesystem an SSH environment works in: the SFTP session and the canonical
//! working directory paths are resolved against.

use agent_protocol::ports::FsError;
use russh_sftp::client::SftpSession;
use std::sync::Arc;

pub struct SftpRoot {
    pub sftp: Arc<SftpSession>,
    /// The remote working directory, canonical.
    pub root: String,
}

impl SftpRoot {
    /// A remote path for a path the model gave.
    pub fn remote(&self, path: &str) -> Result<String, FsError> {
        if path.is_empty() {
            return Err(FsError::InvalidInput("the path is empty".to_string()));
        }
        if path.contains('\0') {
            return Err(FsError::InvalidInput(format!(
                "the path {path:?} contains a NUL byte"
            )));
        }
        Ok(if path.starts_with('/') {
            path.to_string()
        } else if path == "." || path == "./" {
            self.root.clone()
        } else {
            format!(
                "{}/{}",
                self.root.trim_end_matches('/'),
                path.trim_start_matches("./")
            )
        })
    }
}
