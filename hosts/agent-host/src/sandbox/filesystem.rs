//! The Landlock ruleset of one command: read everything but the denied paths, write only in
//! the writable roots.
//!
//! Landlock only grants, hierarchically: access given on a directory holds for everything
//! beneath it and cannot be taken back lower down. So "read all but `~/.ssh`" is built by
//! granting read on `/` piece by piece: a directory with a denied path beneath it gets only
//! the right to list it, and each of its entries is granted on its own, except the denied
//! one. `ls ~/.ssh` then shows names; `cat ~/.ssh/id_ed25519` is refused.

use super::SandboxError;
use landlock::{
    ABI, Access, AccessFs, BitFlags, PathBeneath, PathFd, Ruleset, RulesetAttr, RulesetCreated,
    RulesetCreatedAttr, Scope,
};
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};

/// The newest ABI whose rights the rules name; older kernels (down to
/// [`super::probe::MIN_LANDLOCK_ABI`]) enforce the subset they know.
const RULES_ABI: ABI = ABI::V6;

/// Devices every command may read and write (`/dev` itself is denied).
const DEVICES: &[&str] = &["/dev/null", "/dev/zero", "/dev/full"];
/// Devices every command may read.
const READABLE_DEVICES: &[&str] = &["/dev/random", "/dev/urandom"];

fn rules_error(e: impl std::fmt::Display) -> SandboxError {
    SandboxError::Rules(e.to_string())
}

/// The ruleset's file descriptor, for `landlock_restrict_self` in the child.
pub fn ruleset(writable: &[PathBuf], deny_read: &[PathBuf]) -> Result<OwnedFd, SandboxError> {
    let all = AccessFs::from_all(RULES_ABI);
    let mut ruleset = Ruleset::default()
        .handle_access(all)
        .and_then(|r| r.scope(Scope::Signal | Scope::AbstractUnixSocket))
        .and_then(Ruleset::create)
        .map_err(rules_error)?;
    grant_read(&mut ruleset, Path::new("/"), deny_read)?;
    for root in writable {
        add(&mut ruleset, root, all)?;
    }
    let device = AccessFs::ReadFile | AccessFs::WriteFile | AccessFs::IoctlDev;
    // A device this machine lacks (a minimal container) is simply not granted.
    let devices = DEVICES
        .iter()
        .map(|d| (d, device))
        .chain(READABLE_DEVICES.iter().map(|d| (d, AccessFs::ReadFile.into())));
    for (device_path, access) in devices {
        if Path::new(device_path).exists() {
            add(&mut ruleset, Path::new(device_path), access)?;
        }
    }
    let fd: Option<OwnedFd> = ruleset.into();
    fd.ok_or_else(|| SandboxError::Rules("this kernel made no Landlock ruleset".into()))
}

/// The rights to read files and list and enter folders, as the kernel's bit mask: what a
/// command gets on the `/proc` of its PID namespace, added in the child once it is mounted.
pub fn read_access_bits() -> u64 {
    AccessFs::from_read(RULES_ABI).bits()
}

fn add(ruleset: &mut RulesetCreated, path: &Path, access: BitFlags<AccessFs>) -> Result<(), SandboxError> {
    let fd = PathFd::new(path).map_err(|e| SandboxError::Prepare {
        what: format!("opening {}", path.display()),
        source: std::io::Error::other(e.to_string()),
    })?;
    // On a file, the rights that only make sense for directories are dropped (best effort).
    ruleset
        .add_rule(PathBeneath::new(fd, access))
        .map_err(rules_error)?;
    Ok(())
}

/// Grants read on `path` and everything beneath it except the denied paths.
fn grant_read(ruleset: &mut RulesetCreated, path: &Path, deny_read: &[PathBuf]) -> Result<(), SandboxError> {
    if deny_read.iter().any(|d| d == path) {
        return Ok(());
    }
    // An entry that vanished or cannot be opened is simply not granted.
    let grant = |ruleset: &mut RulesetCreated, access: BitFlags<AccessFs>| match PathFd::new(path) {
        Ok(fd) => ruleset
            .add_rule(PathBeneath::new(fd, access))
            .map(|_| ())
            .map_err(rules_error),
        Err(_) => Ok(()),
    };
    if !deny_read.iter().any(|d| d.starts_with(path)) {
        return grant(ruleset, AccessFs::from_read(RULES_ABI));
    }
    grant(ruleset, AccessFs::ReadDir.into())?;
    let Ok(entries) = std::fs::read_dir(path) else {
        return Ok(());
    };
    for entry in entries.flatten() {
        // A link is judged by the rules of what it points to, never granted itself.
        if entry.file_type().is_ok_and(|t| !t.is_symlink()) {
            grant_read(ruleset, &entry.path(), deny_read)?;
        }
    }
    Ok(())
}
