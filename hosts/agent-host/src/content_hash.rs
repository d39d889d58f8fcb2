//! Content named by its SHA-256, in lowercase hex: trusted project files, checkpoint
//! contents and states.

use sha2::{Digest, Sha256};

pub fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes).iter().map(|b| format!("{b:02x}")).collect()
}
