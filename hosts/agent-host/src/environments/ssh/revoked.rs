//! `@revoked` entries of known_hosts. russh's check reads plain entries only and skips
//! marker lines, so a key the user revoked would still be accepted next to an old plain
//! entry for it. A revoked key is refused whatever host its line names, as OpenSSH's manual
//! says it "must not ever be accepted".

use russh::keys::ssh_key::PublicKey;
use std::path::Path;

/// Whether `key` appears on an `@revoked` line of the known_hosts file at `path` (a missing
/// file revokes nothing).
pub fn is_revoked(path: &Path, key: &PublicKey) -> Result<bool, String> {
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(false),
        Err(e) => return Err(format!("cannot read {}: {e}", path.display())),
    };
    let encoded = key
        .to_openssh()
        .map_err(|e| format!("cannot encode the host key: {e}"))?;
    let Some(blob) = encoded.split_whitespace().nth(1) else {
        return Ok(false);
    };
    Ok(text.lines().any(|line| {
        let mut fields = line.split_whitespace();
        fields.next() == Some("@revoked") && fields.nth(2) == Some(blob)
    }))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    const KEY: &str = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl";

    #[test]
    fn a_key_on_a_revoked_line_is_revoked_whatever_host_it_names() {
        let key = PublicKey::from_openssh(KEY).unwrap();
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("known_hosts");
        std::fs::write(&path, format!("[127.0.0.1]:2222 {KEY}\n")).unwrap();
        assert!(!is_revoked(&path, &key).unwrap());
        std::fs::write(&path, format!("[127.0.0.1]:2222 {KEY}\n@revoked * {KEY}\n")).unwrap();
        assert!(is_revoked(&path, &key).unwrap());
        assert!(!is_revoked(&dir.path().join("none"), &key).unwrap());
    }
}
