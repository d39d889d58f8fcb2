//! The `--quick` tree: a few hundred generated source files shaped like a crate workspace,
//! plus the cases where the two searches could disagree (hidden, git-ignored, .ignore'd and
//! binary files), so a quick run checks the comparison itself.

use anyhow::Context as _;
use std::path::{Path, PathBuf};

const CRATES: usize = 6;
const MODULES: usize = 10;
const FILES: usize = 5;

/// Writes the tree under `dir` and returns it (absolute, symbolic links resolved).
pub fn generate(dir: &Path) -> anyhow::Result<PathBuf> {
    let mut n = 0;
    for c in 0..CRATES {
        for m in 0..MODULES {
            for f in 0..FILES {
                write(dir, &format!("crates/c{c}/src/m{m}/f{f}.rs"), &source(n))?;
                n += 1;
            }
        }
        write(
            dir,
            &format!("crates/c{c}/README.md"),
            "Every `impl Iterator for` here is lazy.\n",
        )?;
    }
    // Searched by neither side: hidden, ignored by git rules, ignored by a .ignore file.
    write(dir, ".git/HEAD", "ref: refs/heads/main\n")?;
    write(dir, ".gitignore", "target/\n")?;
    // Files as well as folders: rg's `-g` override globs would re-admit these two.
    write(dir, ".ignore", "vendor/\ngenerated.rs\n")?;
    let skipped = [
        ".hidden/h.rs",
        "crates/c1/.hidden.rs",
        "crates/c2/src/generated.rs",
        "target/debug/build.rs",
        "vendor/v.rs",
    ];
    for skipped in skipped {
        write(dir, skipped, &source(1))?;
    }
    // A match before a NUL byte: grep skips it as binary, glob still lists it.
    write(
        dir,
        "crates/c0/src/blob.rs",
        "impl Iterator for Blob {}\nunsafe fn x() {}\n\0\x01",
    )?;
    dir.canonicalize()
        .with_context(|| format!("cannot resolve {}", dir.display()))
}

fn write(dir: &Path, relative: &str, text: &str) -> anyhow::Result<()> {
    let path = dir.join(relative);
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).with_context(|| format!("cannot create {}", parent.display()))?;
    }
    std::fs::write(&path, text).with_context(|| format!("cannot write {}", path.display()))
}

/// ~100 lines of Rust; every third file implements Iterator, every other has an unsafe fn.
fn source(n: usize) -> String {
    let mut text = format!("//! Module {n}.\n\npub struct Iter{n}<T> {{\n    items: Vec<T>,\n}}\n\n");
    if n.is_multiple_of(3) {
        text += &format!("impl<T: Copy> Iterator for Iter{n}<T> {{\n    type Item = T;\n");
        text += "    fn next(&mut self) -> Option<T> {\n        self.items.pop()\n    }\n}\n\n";
    }
    if n.is_multiple_of(2) {
        text += &format!("pub unsafe fn get_unchecked_{n}(items: &[u8], i: usize) -> u8 {{\n");
        text += "    unsafe { *items.get_unchecked(i) }\n}\n\n";
    }
    for line in 0..80 {
        text += &format!("pub const VALUE_{line}: usize = {line} * {n} + 1; // filler\n");
    }
    text
}
