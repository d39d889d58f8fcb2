//! The module's exports. Protocol: `probe_prepare(case, quick)` once, then for each run
//! `probe_reset(case)` (untimed) and `probe_run(case)` (timed), then `probe_verify(case)`.
//! Each returns `FAILED` on failure, with the reason readable at
//! `probe_message_ptr()`/`probe_message_len()` in the exported memory.

use crate::cases::{Case, Probe, Sizes};
use std::cell::RefCell;
use std::collections::BTreeMap;

const FAILED: u64 = u64::MAX;

thread_local! {
    static PROBES: RefCell<BTreeMap<u32, Probe>> = const { RefCell::new(BTreeMap::new()) };
    static MESSAGE: RefCell<String> = const { RefCell::new(String::new()) };
}

fn report(result: Result<u64, String>) -> u64 {
    match result {
        Ok(value) => value,
        Err(message) => {
            MESSAGE.with(|m| *m.borrow_mut() = message);
            FAILED
        }
    }
}

fn with_probe(case: u32, work: impl FnOnce(&mut Probe) -> Result<u64, String>) -> u64 {
    report(PROBES.with(|probes| match probes.borrow_mut().get_mut(&case) {
        Some(probe) => work(probe),
        None => Err(format!("case {case} is not prepared")),
    }))
}

/// Builds the case's inputs; returns the case number.
#[unsafe(no_mangle)]
pub extern "C" fn probe_prepare(case: u32, quick: u32) -> u64 {
    report(match Case::from_u32(case) {
        Some(known) => {
            let probe = Probe::prepare(known, Sizes::new(quick != 0));
            PROBES.with(|probes| probes.borrow_mut().insert(case, probe));
            Ok(u64::from(case))
        }
        None => Err(format!("unknown case {case}")),
    })
}

#[unsafe(no_mangle)]
pub extern "C" fn probe_reset(case: u32) -> u64 {
    with_probe(case, |probe| {
        probe.reset();
        Ok(0)
    })
}

/// Runs the case once; returns the output's length.
#[unsafe(no_mangle)]
pub extern "C" fn probe_run(case: u32) -> u64 {
    with_probe(case, Probe::run)
}

#[unsafe(no_mangle)]
pub extern "C" fn probe_verify(case: u32) -> u64 {
    with_probe(case, |probe| probe.verify().map(|()| 0))
}

#[unsafe(no_mangle)]
pub extern "C" fn probe_message_ptr() -> u32 {
    // wasm32 addresses are 32-bit.
    MESSAGE.with(|m| m.borrow().as_ptr() as usize as u32)
}

#[unsafe(no_mangle)]
pub extern "C" fn probe_message_len() -> u32 {
    MESSAGE.with(|m| m.borrow().len() as u32)
}

/// getrandom's custom backend (selected in `.cargo/config.toml`). The only caller is
/// ahash seeding boon's schema maps; the probe needs no real randomness (the inputs are its
/// own, so hash flooding is no concern), and fixed seeds keep the runs alike.
///
/// # Safety
/// getrandom calls it with a writable buffer of `len` bytes.
#[unsafe(no_mangle)]
unsafe extern "Rust" fn __getrandom_v03_custom(dest: *mut u8, len: usize) -> Result<(), getrandom::Error> {
    // SAFETY: `dest` is valid for `len` bytes.
    unsafe { std::ptr::write_bytes(dest, 0x5a, len) };
    Ok(())
}
