//! The answers the markdown benchmark streams, apart so that terminal-markdown's `bench`
//! example measures the same ones without building agent-bench (which links wasmtime).

use std::fmt::Write as _;

pub const TOKEN_BYTES: usize = 4;

/// `text` in pieces of 4 bytes, or a little more to end on a character.
pub fn tokens(text: &str) -> Vec<&str> {
    let mut out = Vec::with_capacity(text.len() / TOKEN_BYTES + 1);
    let mut start = 0;
    while start < text.len() {
        let mut end = (start + TOKEN_BYTES).min(text.len());
        while !text.is_char_boundary(end) {
            end += 1;
        }
        out.push(&text[start..end]);
        start = end;
    }
    out
}

/// An answer of about `size` bytes as models write them: sections with a heading, prose
/// with inline styles and links, nested lists, a table, a quote and a code fence.
pub fn answer(size: usize) -> String {
    let mut text = String::with_capacity(size + 4096);
    let mut i = 0;
    while text.len() < size {
        i += 1;
        let _ = write!(
            text,
            "## Section {i}\n\n\
             The change in **section {i}** keeps the *old* behaviour for `callers_{i}` and \
             adds a [guide](https://example.com/guide/{i}) for the new one; ~~nothing~~ \
             little else moves. The longer explanation goes on for a while, so that this \
             paragraph wraps over several lines of a terminal of ordinary width.\n\n\
             - First, read `config_{i}.toml` and check that every key is known\n\
             - Then:\n  \
               - build the index\n  \
               - write it to disk, atomically\n\
             - [x] tests pass\n\n\
             | Row {i} | name | 名前 | value |\n\
             |---|:---|:---:|---:|\n\
             | 1 | alpha | 日本 | 10 |\n\
             | 2 | beta | 語 | 2000 |\n\n\
             > Note: the cache for step {i} is rebuilt when its inputs change.\n\n\
             ```rust\n\
             fn step_{i}(input: &str) -> Result<usize, Error> {{\n    \
                 // Counts the words of the input.\n    \
                 let words = input.split_whitespace().count();\n    \
                 Ok(words * {i})\n\
             }}\n\
             ```\n\n"
        );
    }
    text
}

/// An answer of about `size` bytes that is one Rust code fence.
pub fn one_fence(size: usize) -> String {
    let mut text = String::with_capacity(size + 4096);
    text.push_str("```rust\n");
    let mut i = 0;
    while text.len() < size {
        i += 1;
        let _ = write!(
            text,
            "/// Step {i}: adds the input's length.\n\
             pub fn step_{i}(input: &str, total: &mut u64) -> Option<u64> {{\n    \
                 let n = input.len() as u64 + {i};\n    \
                 *total = total.checked_add(n)?;\n    \
                 Some(*total) // \"done\"\n\
             }}\n\n"
        );
    }
    text.push_str("```\n");
    text
}
