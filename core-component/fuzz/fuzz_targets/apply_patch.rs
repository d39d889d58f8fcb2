//! The apply_patch parser and applier on arbitrary text over an in-memory folder: never a
//! panic, and a patch that fails leaves every file as it was.
#![no_main]

use agent_test_support::fakes::FakeEnv;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|input: &str| {
    // The input is "<contents of a.txt>\0<patch>", so hunks can match real lines.
    let (contents, patch) = input.split_once('\0').unwrap_or(("", input));
    let env = FakeEnv::default();
    env.put("a.txt", contents);
    env.put("dir/b.txt", "b\n");
    let before = env.files.borrow().clone();
    let _ = agent_core::patch::parse(patch);
    if agent_core::patch::apply(patch, &env).is_err() {
        assert_eq!(*env.files.borrow(), before, "a failed patch changed files");
    }
});
