//! The inputs of the cases: a source file made of small numbered functions, a v4a patch that
//! changes some of them, edit_file arguments that only a fuzzy pass can match, and one long
//! line of output. Every expected result is built here independently of the code under test
//! (by generating the changed file, or by an exact string replacement), so a tool that does
//! the wrong thing fails verification instead of being timed.

use std::fmt::Write as _;

/// Lines of one generated function.
pub const FUNCTION_LINES: usize = 10;

/// The path every tool case edits, relative to the working directory.
pub const PATH: &str = "src/big.rs";

/// The lines of function `i`; `patched` gives it the body the patch produces.
fn function(out: &mut String, i: usize, patched: bool) {
    // Aligned `=` signs, as rustfmt-style code often has: the edit cases' old_string drops
    // the alignment, so only a whitespace-tolerant pass can match it.
    let _ = writeln!(out, "fn item_{i:05}(input: &[u64]) -> u64 {{");
    let _ = writeln!(out, "    let scale  = {i};");
    out.push_str("    let offset = 7;\n    let mut total = 0;\n    for value in input {\n");
    if patched {
        out.push_str(
            "        let step = value * scale + offset;\n        total = total.wrapping_add(step);\n",
        );
    } else {
        out.push_str("        total += value * scale + offset;\n");
    }
    out.push_str("    }\n");
    let _ = writeln!(out, "    // item {i} keeps its remainder");
    out.push_str("    total % (scale + 1)\n}\n");
}

/// A file of `functions` functions (`FUNCTION_LINES` lines each); those listed in `patched`
/// (sorted) have the patched body.
pub fn code_file(functions: usize, patched: &[usize]) -> String {
    let mut out = String::with_capacity(functions * 300);
    for i in 0..functions {
        function(&mut out, i, patched.binary_search(&i).is_ok());
    }
    out
}

/// The functions `hunks` evenly spread hunks change, sorted.
pub fn patched_functions(functions: usize, hunks: usize) -> Vec<usize> {
    let hunks = hunks.clamp(1, functions.max(1));
    (0..hunks)
        .map(|k| k * functions / hunks + functions / (2 * hunks))
        .collect()
}

/// A v4a patch with one `@@` hunk per listed function: three lines of context on each side,
/// one line replaced by two, located by the function's signature as models write them.
pub fn patch(functions: &[usize]) -> String {
    let mut out = format!("*** Begin Patch\n*** Update File: {PATH}\n");
    for &i in functions {
        let _ = writeln!(out, "@@ fn item_{i:05}(input: &[u64]) -> u64 {{");
        out.push_str("     let offset = 7;\n     let mut total = 0;\n     for value in input {\n");
        out.push_str("-        total += value * scale + offset;\n");
        out.push_str(
            "+        let step = value * scale + offset;\n+        total = total.wrapping_add(step);\n",
        );
        out.push_str("     }\n");
        let _ = writeln!(out, "     // item {i} keeps its remainder");
        out.push_str("     total % (scale + 1)\n");
    }
    out.push_str("*** End Patch\n");
    out
}

/// Which kind of imperfect old_string an edit case sends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sloppiness {
    /// Re-indented and without the file's alignment spaces: the first line then matches no
    /// line even trimmed, so exact, line-trimmed and block-anchor all scan the file in vain
    /// and whitespace-normalized finds it.
    Whitespace,
    /// A comment line left out and another line misremembered: every pass but the last
    /// (context-aware) fails, so the whole chain runs.
    Context,
}

/// edit_file arguments for function `target` of a `code_file`, with the text the matched
/// region of the file holds and its replacement.
pub struct Edit {
    pub old_string: String,
    pub new_string: String,
    /// The file's own text that the edit must replace.
    pub region: String,
}

pub fn edit(target: usize, sloppiness: Sloppiness) -> Edit {
    let mut text = String::new();
    function(&mut text, target, false);
    let lines: Vec<&str> = text.lines().collect();
    match sloppiness {
        Sloppiness::Whitespace => Edit {
            old_string: format!(
                "let scale = {target};\nlet offset = 7;\nlet mut total = 0;\nfor value in input {{\n    \
                 total += value * scale + offset;\n}}"
            ),
            new_string: format!(
                "    let scale  = {target};\n    let offset = 7;\n    let mut total = 0u64;\n    \
                 for value in input {{\n        total = total.saturating_add(value * scale + offset);\n    }}"
            ),
            region: lines[1..=6].join("\n"),
        },
        Sloppiness::Context => {
            let mut old: Vec<&str> = lines[..=8].to_vec();
            old[5] = "        total += value * scale;";
            old.remove(7);
            Edit {
                old_string: old.join("\n"),
                new_string: format!(
                    "{}\n    let scale  = {target};\n    let offset = 7;\n    \
                     input.iter().fold(0, |total, value| total + value * scale + offset) % (scale + 1)",
                    lines[0]
                ),
                region: lines[..=8].join("\n"),
            }
        }
    }
}

/// One line of `bytes` ASCII characters, like minified JSON: `[0,1,2,...` cut at `bytes`.
/// Its start and end differ, so a truncation that keeps the wrong part is caught.
pub fn long_line(bytes: usize) -> String {
    let mut out = String::with_capacity(bytes + 16);
    out.push('[');
    let mut n = 0u64;
    while out.len() < bytes {
        let _ = write!(out, "{n},");
        n += 1;
    }
    out.truncate(bytes);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_file_has_the_asked_number_of_lines_and_the_hunks_are_spread() {
        let file = code_file(100, &[]);
        assert_eq!(file.lines().count(), 100 * FUNCTION_LINES);
        assert_eq!(patched_functions(10_000, 50).first(), Some(&100));
        assert_eq!(patched_functions(10_000, 50).last(), Some(&9_900));
        assert_eq!(patched_functions(100, 50).len(), 50);
    }

    #[test]
    fn the_edit_regions_are_in_the_file_once_and_old_strings_are_not() {
        let file = code_file(20, &[]);
        for sloppiness in [Sloppiness::Whitespace, Sloppiness::Context] {
            let edit = edit(10, sloppiness);
            assert_eq!(file.matches(&edit.region).count(), 1, "{sloppiness:?}");
            assert!(!file.contains(&edit.old_string), "{sloppiness:?}");
        }
    }

    #[test]
    fn the_long_line_is_one_line_of_the_asked_size() {
        let line = long_line(100_000);
        assert_eq!(line.len(), 100_000);
        assert!(!line.contains('\n'));
        assert!(line.starts_with("[0,1,2,"));
    }
}
