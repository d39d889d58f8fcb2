//! What this kernel can enforce, for refusing a mode it cannot and for `config show`.

use super::{SandboxError, SandboxMode};

/// Landlock ABI 3 (Linux 6.2) is the first that controls truncation; with less, a
/// sandboxed command could still empty files outside the workspace.
pub const MIN_LANDLOCK_ABI: i64 = 3;

/// The first ABI that keeps signals and abstract Unix sockets inside the sandbox.
pub const SCOPES_ABI: i64 = 6;

/// The kernel's Landlock ABI version, or why there is none.
pub fn landlock_abi() -> Result<i64, String> {
    const LANDLOCK_CREATE_RULESET_VERSION: libc::c_uint = 1;
    // SAFETY: the documented version query: no attributes, size 0.
    let version = unsafe {
        libc::syscall(
            libc::SYS_landlock_create_ruleset,
            std::ptr::null::<libc::c_void>(),
            0usize,
            LANDLOCK_CREATE_RULESET_VERSION,
        )
    };
    match version {
        v if v > 0 => Ok(v),
        _ => Err(match std::io::Error::last_os_error().raw_os_error() {
            Some(libc::EOPNOTSUPP) => "Landlock is built into this kernel but not enabled (add `landlock` to the `lsm=` boot parameter)".to_string(),
            _ => "this kernel has no Landlock (Linux 5.13 or later built with CONFIG_SECURITY_LANDLOCK)".to_string(),
        }),
    }
}

/// Fails, saying why, when the kernel's Landlock is missing or too old for `mode`.
pub fn require_landlock(mode: SandboxMode) -> Result<(), SandboxError> {
    let needs = "Landlock ABI 3 or later (Linux 6.2)";
    match landlock_abi() {
        Ok(abi) if abi >= MIN_LANDLOCK_ABI => Ok(()),
        Ok(abi) => Err(SandboxError::Unsupported {
            mode,
            needs,
            found: format!("this kernel has ABI {abi}"),
        }),
        Err(found) => Err(SandboxError::Unsupported { mode, needs, found }),
    }
}

/// One line for `config show`: the ABI, or why there is no sandbox here.
pub fn summary() -> String {
    match landlock_abi() {
        Ok(abi) if abi >= SCOPES_ABI => format!("Landlock ABI {abi}"),
        Ok(abi) if abi >= MIN_LANDLOCK_ABI => format!(
            "Landlock ABI {abi} (below {SCOPES_ABI}: commands can still signal agent-host and reach abstract sockets)"
        ),
        Ok(abi) => format!("Landlock ABI {abi} (too old: the sandbox needs ABI {MIN_LANDLOCK_ABI})"),
        Err(why) => why,
    }
}
