//! Search: the local environment's grep and glob (agent_host::LocalEnvironment, in this
//! process) against the `rg` command line (Debian's ripgrep) on the same tree and query.
//!
//! The tree is the Rust standard library sources from Debian's `rust-src` (fixed version,
//! ~1,400 files, 49 MB; `scripts/ensure-bench-tools.sh` installs both), or under `--quick` a
//! few hundred generated files. Each query runs once on each side to warm the page cache,
//! then `runs` times interleaved (the side that goes first alternates), and every run's
//! output is checked against the other side's: a faster search that finds less is a bug,
//! not a win.

mod rg;
mod tree;

use crate::context::Context;
use crate::stats::{median, millis};
use crate::table::{Row, Target};
use agent_host::LocalEnvironment;
use agent_host::protocol::ports::{GrepMatch, GrepOptions, GrepOutputMode};
use anyhow::{Context as _, anyhow};
use std::time::Instant;

/// The target: our search within 1.5x of ripgrep's time.
const TARGET_RATIO: f64 = 1.5;

/// Finding every implementation of a trait is among the searches coding agents run most; on
/// the standard library this pattern matches ~640 lines in ~130 files. Both sides extract
/// the inner literal `Iterator for` and confirm candidates with the regex, so the `.*`
/// exercises the regex engine and not only a literal scan.
const CONTENT_PATTERN: &str = "impl.*Iterator for";
/// Common enough (~380 of ~1,400 files) that listing files shows the stop-at-first-match
/// saving of files-with-matches mode.
const FILES_PATTERN: &str = "unsafe fn";
const GLOB: &str = "**/*.rs";

/// The three kinds of query compared with ripgrep: content search, files with matches, glob.
#[derive(Clone, Copy)]
enum Query {
    Content,
    Files,
    Glob,
}

impl Query {
    fn describe(self) -> String {
        match self {
            Self::Content => format!("search: grep content /{CONTENT_PATTERN}/"),
            Self::Files => format!("search: grep files-with-matches /{FILES_PATTERN}/"),
            Self::Glob => format!("search: glob {GLOB}"),
        }
    }

    /// The equivalent rg command line. rg's filters do not only narrow its walk: an
    /// override glob (`-g '*.rs'`) re-admits files that ignore rules or hiddenness would
    /// skip, and a type (`-t rust`, whose only glob is `*.rs`) applies after the ignore rules
    /// but still re-admits hidden files. So rg gets `-t rust -g '!.*'`: the same files as
    /// our `**/*.rs` (the quick tree holds one of each case to prove it).
    fn rg_args(self, tree: &str) -> Vec<String> {
        let args: &[&str] = match self {
            Self::Content => &["-n", "--no-heading", CONTENT_PATTERN],
            Self::Files => &["-l", FILES_PATTERN],
            Self::Glob => &["--files", "-t", "rust", "-g", "!.*"],
        };
        ["--no-config"]
            .iter()
            .chain(args)
            .map(|s| s.to_string())
            .chain([tree.to_string()])
            .collect()
    }

    fn grep_options(self) -> GrepOptions {
        let (pattern, output_mode) = match self {
            Self::Files => (FILES_PATTERN, GrepOutputMode::FilesWithMatches),
            _ => (CONTENT_PATTERN, GrepOutputMode::Content),
        };
        GrepOptions {
            pattern: pattern.to_string(),
            path: None,
            glob_filter: None,
            case_insensitive: false,
            fixed_strings: false,
            // Far above any tree here, so the 1,000-match default never cuts ours short.
            max_results: u32::MAX,
            output_mode,
        }
    }

    /// Our side, returning what it found as `rel-path[:line]` keys (outside the timing).
    fn ours(self, env: &LocalEnvironment) -> anyhow::Result<(f64, Vec<String>)> {
        let start = Instant::now();
        let found = match self {
            Self::Glob => Found::Paths(
                env.glob(GLOB, None)
                    .map_err(|e| anyhow!("our glob failed: {e:?}"))?,
            ),
            _ => Found::Matches(
                env.grep(&self.grep_options())
                    .map_err(|e| anyhow!("our grep failed: {e:?}"))?,
            ),
        };
        let ms = millis(start.elapsed());
        let keys = match std::hint::black_box(found) {
            Found::Paths(paths) => paths,
            Found::Matches(hits) => hits.iter().map(|m| self.key(m)).collect(),
        };
        Ok((ms, keys))
    }

    fn key(self, hit: &GrepMatch) -> String {
        match self {
            Self::Content => format!("{}:{}", hit.path, hit.line_number),
            _ => hit.path.clone(),
        }
    }

    fn rg(self, tree: &str) -> anyhow::Result<(f64, Vec<String>)> {
        let start = Instant::now();
        let stdout = rg::run(&self.rg_args(tree))?;
        let ms = millis(start.elapsed());
        let keys = rg::keys(&stdout, tree, matches!(self, Self::Content))?;
        Ok((ms, keys))
    }
}

enum Found {
    Matches(Vec<GrepMatch>),
    Paths(Vec<String>),
}

pub fn run(ctx: &Context) -> anyhow::Result<Vec<Row>> {
    rg::ensure_installed()?;
    let tree = if ctx.quick {
        tree::generate(&ctx.scratch("search")?)?
    } else {
        let tree = &ctx.search_tree;
        anyhow::ensure!(
            tree.is_dir(),
            "the search tree {} is missing: run scripts/ensure-bench-tools.sh (installs Debian's rust-src)",
            tree.display()
        );
        tree.canonicalize()
            .with_context(|| format!("cannot resolve {}", tree.display()))?
    };
    let env = LocalEnvironment::new(&tree).with_context(|| format!("cannot open {}", tree.display()))?;
    let shown = tree
        .to_str()
        .context("the search tree's path is not UTF-8")?
        .to_string();
    let runs = ctx.size(9, 3);
    let mut rows = vec![Row::new(
        "search: files in the tree (rg --files)",
        count_files(&shown)? as f64,
        "files",
    )];
    // Part of every rg figure is starting a process, which our in-process calls skip.
    let mut start_up = Vec::new();
    for _ in 0..runs {
        let start = Instant::now();
        rg::run(&["--version".to_string()])?;
        start_up.push(millis(start.elapsed()));
    }
    rows.push(Row::new(
        "search: rg process start-up (rg --version)",
        median(&start_up),
        "ms",
    ));
    for query in [Query::Content, Query::Files, Query::Glob] {
        rows.extend(compare(query, &env, &shown, runs)?);
    }
    Ok(rows)
}

/// Medians of interleaved runs of both sides, every run checked against the warm-up's result.
fn compare(query: Query, env: &LocalEnvironment, tree: &str, runs: usize) -> anyhow::Result<Vec<Row>> {
    let what = query.describe();
    let (_, mut expected) = query.rg(tree)?;
    expected.sort();
    anyhow::ensure!(
        !expected.is_empty(),
        "{what}: rg found nothing in {tree}, so there is nothing to compare"
    );
    let (_, ours) = query.ours(env)?;
    same(&what, "ours", ours, &expected)?;
    let (mut ours_ms, mut rg_ms) = (Vec::new(), Vec::new());
    for i in 0..runs {
        // Alternating who goes first, so neither always inherits the other's cache effects.
        for side in [i % 2, 1 - i % 2] {
            if side == 0 {
                let (ms, found) = query.ours(env)?;
                same(&what, "ours", found, &expected)?;
                ours_ms.push(ms);
            } else {
                let (ms, found) = query.rg(tree)?;
                same(&what, "rg", found, &expected)?;
                rg_ms.push(ms);
            }
        }
    }
    let (ours, rg) = (median(&ours_ms), median(&rg_ms));
    let label = format!(
        "{what} ({} {})",
        expected.len(),
        if matches!(query, Query::Content) {
            "lines"
        } else {
            "files"
        }
    );
    Ok(vec![
        Row::new(format!("{label}: ours"), ours, "ms"),
        Row::new(format!("{label}: rg"), rg, "ms"),
        Row::new(format!("{label}: ours / rg"), ours / rg, "x").target(Target::AtMost(TARGET_RATIO)),
    ])
}

/// Fails, naming a few differences, unless `found` holds exactly the expected keys.
fn same(what: &str, side: &str, mut found: Vec<String>, expected: &[String]) -> anyhow::Result<()> {
    found.sort();
    if found == expected {
        return Ok(());
    }
    let missing: Vec<&String> = expected
        .iter()
        .filter(|k| found.binary_search(k).is_err())
        .take(5)
        .collect();
    let extra: Vec<&String> = found
        .iter()
        .filter(|k| expected.binary_search(k).is_err())
        .take(5)
        .collect();
    anyhow::bail!(
        "{what}: {side} found {} results where rg's warm-up found {}; missing e.g. {missing:?}, extra e.g. {extra:?}",
        found.len(),
        expected.len()
    )
}

fn count_files(tree: &str) -> anyhow::Result<usize> {
    let stdout = rg::run(&["--no-config".to_string(), "--files".to_string(), tree.to_string()])?;
    Ok(rg::keys(&stdout, tree, false)?.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn differences_are_reported_and_order_does_not_matter() {
        let expected = vec!["a.rs".to_string(), "b.rs".to_string()];
        assert!(same("q", "ours", vec!["b.rs".into(), "a.rs".into()], &expected).is_ok());
        let err = same("q", "ours", vec!["a.rs".into(), "c.rs".into()], &expected).unwrap_err();
        let text = err.to_string();
        assert!(text.contains("\"b.rs\"") && text.contains("\"c.rs\""), "{text}");
    }

    #[test]
    fn rg_is_asked_for_the_same_files_as_ours() {
        let args = Query::Glob.rg_args("/t");
        assert_eq!(args, ["--no-config", "--files", "-t", "rust", "-g", "!.*", "/t"]);
        assert_eq!(
            Query::Content.rg_args("/t").last().map(String::as_str),
            Some("/t")
        );
        assert_eq!(
            Query::Files.grep_options().output_mode,
            GrepOutputMode::FilesWithMatches
        );
    }
}
