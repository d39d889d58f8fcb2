//! Section 4 of the spec: the local environment's grep and glob search on every core, yet
//! return the same results in the same order as a sorted single-threaded walk would, and a
//! result limit keeps the first results in that order.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests may panic

use agent_host::LocalEnvironment;
use agent_host::protocol::ports::{GrepMatch, GrepOptions, GrepOutputMode};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

const LINES_PER_FILE: u32 = 40;

/// Lines 1, 3 and 5 of each file match `needle`, and there are enough files for every
/// thread to get some.
fn tree() -> (tempfile::TempDir, LocalEnvironment, Vec<PathBuf>) {
    let dir = tempfile::tempdir().unwrap();
    let mut visible = Vec::new();
    for d in 0..12 {
        // `x`, `x-y.txt` and `x.txt` sort differently as strings ("x-y.txt" < "x.txt" <
        // "x/a.txt") than as paths (`x` first, as a walk that sorts each directory visits).
        for name in ["x/a.txt", "x/b/c.txt", "x-y.txt", "x.txt", "Z.txt", "m/n/o/p.rs"] {
            visible.push(PathBuf::from(format!("d{d:02}/{name}")));
        }
    }
    for relative in &visible {
        write(dir.path(), relative, &text());
    }
    // Searched by neither: the repository's internals, a hidden folder, an ignored one.
    for hidden in [".git/config", ".cache/c.txt", "ignored/i.txt"] {
        write(dir.path(), Path::new(hidden), &text());
    }
    write(dir.path(), Path::new(".ignore"), "ignored/\n");
    visible.sort();
    let env = LocalEnvironment::new(dir.path()).unwrap();
    (dir, env, visible)
}

fn text() -> String {
    (1..=LINES_PER_FILE)
        .map(|n| {
            if n <= 5 && n % 2 == 1 {
                format!("needle {n}\n")
            } else {
                format!("hay {n}\n")
            }
        })
        .collect()
}

fn write(base: &Path, relative: &Path, text: &str) {
    let path = base.join(relative);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

fn options(mode: GrepOutputMode, max_results: u32) -> GrepOptions {
    GrepOptions {
        pattern: "needle".to_string(),
        path: None,
        glob_filter: None,
        case_insensitive: false,
        fixed_strings: false,
        max_results,
        output_mode: mode,
    }
}

fn keys(hits: &[GrepMatch]) -> Vec<(String, u32)> {
    hits.iter().map(|m| (m.path.clone(), m.line_number)).collect()
}

#[test]
fn grep_returns_every_match_in_path_then_line_order_on_every_run() {
    let (_dir, env, visible) = tree();
    // `visible` was sorted as paths (component by component).
    let expected: Vec<(String, u32)> = visible
        .iter()
        .flat_map(|p| [1, 3, 5].map(|n| (p.to_string_lossy().into_owned(), n)))
        .collect();
    assert!(expected.len() > 200);
    for _ in 0..5 {
        let hits = env.grep(&options(GrepOutputMode::Content, 100_000)).unwrap();
        assert_eq!(keys(&hits), expected);
        assert!(hits.iter().all(|m| m.line == format!("needle {}", m.line_number)));
    }
    let files = env
        .grep(&options(GrepOutputMode::FilesWithMatches, 100_000))
        .unwrap();
    let paths: Vec<String> = files.iter().map(|m| m.path.clone()).collect();
    let visible: Vec<String> = visible.iter().map(|p| p.to_string_lossy().into_owned()).collect();
    assert_eq!(paths, visible);
    let counts = env.grep(&options(GrepOutputMode::Count, 100_000)).unwrap();
    assert!(counts.iter().all(|m| m.line_number == 3) && counts.len() == visible.len());
}

#[test]
fn a_limit_keeps_the_first_results_in_path_order() {
    let (_dir, env, _) = tree();
    for mode in [
        GrepOutputMode::Content,
        GrepOutputMode::FilesWithMatches,
        GrepOutputMode::Count,
    ] {
        let all = keys(&env.grep(&options(mode, 100_000)).unwrap());
        // Within one file, at a file's end, past the middle, and one short of everything.
        for limit in [1, 2, 3, 4, 7, 50, all.len() - 1] {
            let limited = env.grep(&options(mode, limit as u32)).unwrap();
            assert_eq!(keys(&limited), all[..limit], "{mode:?}, limit {limit}");
        }
    }
    // No limit named: the host's default of 1,000 matches.
    let (dir, env, _) = tree();
    write(dir.path(), Path::new("many.txt"), &"needle\n".repeat(1_500));
    let hits = env.grep(&options(GrepOutputMode::Content, 0)).unwrap();
    assert_eq!(hits.len(), 1_000);
    assert_eq!(
        (hits[0].path.as_str(), hits[999].path.as_str()),
        ("d00/Z.txt", "many.txt")
    );
}

#[test]
fn grep_of_a_single_file_and_a_glob_filter_still_work() {
    let (_dir, env, _) = tree();
    let mut one = options(GrepOutputMode::Content, 0);
    one.path = Some("d03/x.txt".to_string());
    let hits = env.grep(&one).unwrap();
    assert_eq!(keys(&hits), [1, 3, 5].map(|n| ("d03/x.txt".to_string(), n)));
    let mut filtered = options(GrepOutputMode::FilesWithMatches, 0);
    filtered.glob_filter = Some("*.rs".to_string());
    let paths: Vec<String> = env.grep(&filtered).unwrap().into_iter().map(|m| m.path).collect();
    assert_eq!(
        paths,
        (0..12).map(|d| format!("d{d:02}/m/n/o/p.rs")).collect::<Vec<_>>()
    );
}

#[test]
fn glob_is_newest_first_with_ties_in_path_order_on_every_run() {
    let (dir, env, visible) = tree();
    let base = SystemTime::UNIX_EPOCH + Duration::from_secs(1_700_000_000);
    // Three distinct times, shared by many files: order within a time comes from the path.
    let time_of = |i: usize| base + Duration::from_secs((i % 3) as u64 * 60);
    for (i, relative) in visible.iter().enumerate() {
        let file = std::fs::File::options()
            .write(true)
            .open(dir.path().join(relative))
            .unwrap();
        file.set_modified(time_of(i)).unwrap();
    }
    let mut expected: Vec<(SystemTime, String)> = visible
        .iter()
        .enumerate()
        .filter(|(_, p)| p.extension().is_some_and(|e| e == "txt"))
        .map(|(i, p)| (time_of(i), p.to_string_lossy().into_owned()))
        .collect();
    expected.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
    let expected: Vec<String> = expected.into_iter().map(|(_, p)| p).collect();
    for _ in 0..5 {
        assert_eq!(env.glob("**/*.txt", None).unwrap(), expected);
    }
}
