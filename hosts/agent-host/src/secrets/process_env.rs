//! The host's own environment without credentials.
//!
//! `remove_var` alone is not enough: `/proc/<pid>/environ` shows the strings the process
//! was started with, wherever `environ` points later. So the original strings of each
//! credential are overwritten in place too, and the process is made non-dumpable (other
//! processes of the user can no longer read its memory or `/proc/<pid>/environ`; root
//! still can).

use crate::secrets::names::{is_secret_name, is_secret_value, url_credentials};
use crate::secrets::redact;
use std::collections::{BTreeMap, BTreeSet};
use std::ffi::{CStr, c_char};
use std::sync::{Mutex, OnceLock};

/// Variables agent-host reads from its own process environment after start-up: the HTTP
/// client's proxies (an authenticated one), and the queue address `batch` and `worker` take
/// from `$AGENT_HOST_QUEUE` while parsing their flags. Kept in agent-host's environment (the
/// process is non-dumpable, and sandboxed commands cannot read it), still dropped from
/// every command's (see `EnvPolicy::keeps`), and their credentials redacted.
const HOST_NEEDS: &[&str] = &["HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "AGENT_HOST_QUEUE"];

/// The credentials taken out of the environment at start-up, by name.
static HELD: OnceLock<BTreeMap<String, String>> = OnceLock::new();

/// Variables no command gets, named after start-up (an endpoint's key variable whose name
/// does not look like a credential).
static WITHHELD: Mutex<BTreeSet<String>> = Mutex::new(BTreeSet::new());

unsafe extern "C" {
    /// The C library's environment (POSIX).
    static mut environ: *const *mut c_char;
}

/// Takes every credential (by name or by value, see [`crate::secrets::names`]) out of this
/// process's environment, keeping the values for [`host_var`], and makes the process
/// non-dumpable. Returns the names taken.
///
/// # Safety
///
/// Call before any other thread exists (first thing in `main`, before an async runtime
/// starts): it changes the environment and the strings behind it.
pub unsafe fn withhold_credentials() -> Vec<String> {
    let mut held = BTreeMap::new();
    for (name, value) in std::env::vars_os() {
        if let (Ok(name), Ok(value)) = (name.into_string(), value.into_string())
            && !name.contains('=')
            && (is_secret_name(&name) || is_secret_value(&value))
        {
            redact::remember(&value);
            // A URL's password alone, as an error might quote it.
            for credential in url_credentials(&value) {
                redact::remember(credential);
            }
            if !HOST_NEEDS.contains(&name.to_ascii_uppercase().as_str()) {
                held.insert(name, value);
            }
        }
    }
    // SAFETY: single-threaded (the caller's promise); `environ` is the C library's
    // null-terminated array of NUL-terminated strings.
    let originals = unsafe { entries_named(&held) };
    for name in held.keys() {
        // SAFETY: as above, no other thread reads the environment.
        unsafe { std::env::remove_var(name) };
    }
    // Only the block the kernel set up at exec is overwritten: it is what
    // `/proc/<pid>/environ` shows, and no C library frees it (a string a `setenv` allocated
    // may be freed by `unsetenv`, on musl).
    let block = initial_environment_block();
    for (pointer, len) in originals {
        let start = pointer as usize;
        if block.is_some_and(|(first, end)| start >= first && start.saturating_add(len) <= end) {
            // SAFETY: the string lies in the exec-time environment block, which stays mapped
            // for the life of the process; it is no longer in `environ` (removed above), and
            // `len` is its length without the NUL.
            unsafe { std::ptr::write_bytes(pointer, 0, len) };
        }
    }
    if let Err(e) = nix::sys::prctl::set_dumpable(false) {
        tracing::warn!("cannot make agent-host non-dumpable: {e}");
    }
    let names = held.keys().cloned().collect();
    let _ = HELD.set(held);
    names
}

/// The strings of `environ` whose names are in `names`, with their lengths.
///
/// # Safety
///
/// No other thread may change the environment meanwhile.
unsafe fn entries_named(names: &BTreeMap<String, String>) -> Vec<(*mut c_char, usize)> {
    let mut found = Vec::new();
    // SAFETY: reading the pointer value of the C library's `environ`.
    let mut entry = unsafe { environ };
    if entry.is_null() {
        return found;
    }
    loop {
        // SAFETY: `entry` walks a null-terminated array of valid C strings.
        let string = unsafe { *entry };
        if string.is_null() {
            break;
        }
        // SAFETY: each entry is a NUL-terminated string.
        let bytes = unsafe { CStr::from_ptr(string) }.to_bytes();
        let name = bytes.split(|b| *b == b'=').next().unwrap_or(&[]);
        if std::str::from_utf8(name).is_ok_and(|name| names.contains_key(name)) {
            found.push((string, bytes.len()));
        }
        // SAFETY: the terminating null has not been reached.
        entry = unsafe { entry.add(1) };
    }
    found
}

/// The address range of the environment strings the kernel placed at exec (`env_start` and
/// `env_end`, fields 50 and 51 of `/proc/self/stat`).
fn initial_environment_block() -> Option<(usize, usize)> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // Fields after the command name (which may hold spaces) start at field 3.
    let fields: Vec<&str> = stat.get(stat.rfind(')')? + 2..)?.split_whitespace().collect();
    let field = |n: usize| fields.get(n - 3)?.parse::<usize>().ok();
    Some((field(50)?, field(51)?))
}

/// A variable of the host's environment as agent-host started: the credentials withheld
/// from the process are still found here.
pub fn host_var(name: &str) -> Option<String> {
    HELD.get()
        .and_then(|held| held.get(name).cloned())
        .or_else(|| std::env::var(name).ok())
}

/// Keeps `name` from every command from now on, and its value out of logs.
pub fn withhold(name: &str) {
    if let Some(value) = host_var(name) {
        redact::remember(&value);
    }
    WITHHELD
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
        .insert(name.to_string());
}

/// Credentials the user passes on to commands by name (`--env-allow`).
static ALLOWED: Mutex<BTreeSet<String>> = Mutex::new(BTreeSet::new());

/// Passes the credential `name` on to every command from now on (the user's choice).
pub fn allow(name: &str) {
    ALLOWED
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
        .insert(name.to_string());
}

/// The credentials the user passes on to commands.
pub fn allowed() -> Vec<String> {
    ALLOWED
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
        .iter()
        .cloned()
        .collect()
}

/// Whether `name` was withheld (at start-up or later).
pub fn is_withheld(name: &str) -> bool {
    HELD.get().is_some_and(|held| held.contains_key(name))
        || WITHHELD
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .contains(name)
}

#[cfg(test)]
mod tests {
    use super::initial_environment_block;

    #[test]
    fn the_exec_time_environment_block_is_found() {
        let (start, end) = initial_environment_block().unwrap_or((0, 0));
        assert!(start > 0 && end > start, "{start:#x}..{end:#x}");
    }
}
