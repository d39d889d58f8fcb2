//! Every command that README.md and docs/ show is one the binary has: each `agent-host`
//! line of their shell blocks names a real command, and each of its flags is in that
//! command's `--help` (renamed flags' old names are not, so the docs keep up); each `make`
//! target they name exists.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests may panic

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// README.md and the pages under docs/.
fn documents() -> Vec<PathBuf> {
    let root = repo_root();
    let mut files = vec![root.join("README.md")];
    if let Ok(entries) = std::fs::read_dir(root.join("docs")) {
        let mut pages: Vec<PathBuf> = entries
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|x| x == "md"))
            .collect();
        pages.sort();
        files.extend(pages);
    }
    files
}

/// The command lines of a document's shell blocks (```sh, bash, shell, console), with
/// continuation lines joined, a `$ ` prompt and comments removed: (line number, words).
fn shell_lines(text: &str) -> Vec<(usize, Vec<String>)> {
    let mut lines = Vec::new();
    let mut in_shell = false;
    let mut in_block = false;
    let mut pending: Option<(usize, String)> = None;
    for (number, line) in text.lines().enumerate() {
        let trimmed = line.trim_start();
        if let Some(info) = trimmed.strip_prefix("```") {
            in_block = !in_block;
            in_shell = in_block && matches!(info.trim(), "sh" | "bash" | "shell" | "console");
            continue;
        }
        if !in_shell {
            continue;
        }
        let (start, mut joined) = pending.take().unwrap_or((number + 1, String::new()));
        joined.push_str(trimmed.strip_prefix("$ ").unwrap_or(trimmed));
        if let Some(head) = joined.strip_suffix('\\') {
            pending = Some((start, format!("{head} ")));
            continue;
        }
        let Some(words) = shlex::split(&joined) else {
            continue;
        };
        let words: Vec<String> = words.into_iter().take_while(|w| !w.starts_with('#')).collect();
        lines.push((start, words));
    }
    lines
}

/// Each `agent-host ...` and `make ...` of a line (after `|`, `&&`, `;` too).
fn invocations(words: &[String]) -> Vec<Vec<String>> {
    words
        .split(|w| matches!(w.as_str(), "|" | "&&" | "||" | ";"))
        .filter_map(|part| {
            let start = part
                .iter()
                .position(|w| w == "agent-host" || w.ends_with("/agent-host") || w == "make")?;
            // Only when what comes before is variable assignments.
            part[..start]
                .iter()
                .all(|w| w.contains('='))
                .then(|| part[start..].to_vec())
        })
        .collect()
}

struct Helps {
    cache: BTreeMap<Vec<String>, Option<String>>,
}

impl Helps {
    /// `agent-host PATH... --help`, or `None` if that is not a command.
    fn of(&mut self, path: &[String]) -> Option<String> {
        self.cache
            .entry(path.to_vec())
            .or_insert_with(|| {
                let output = std::process::Command::new(env!("CARGO_BIN_EXE_agent-host"))
                    .args(path)
                    .arg("--help")
                    .output()
                    .unwrap();
                output
                    .status
                    .success()
                    .then(|| String::from_utf8_lossy(&output.stdout).into_owned())
            })
            .clone()
    }
}

/// The names a help text lists under "Commands:".
fn subcommands(help: &str) -> Vec<String> {
    help.lines()
        .skip_while(|l| !l.starts_with("Commands:"))
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        .filter_map(|l| l.split_whitespace().next().map(str::to_string))
        .collect()
}

/// Whether `flag` (`--name` or `-x`) is offered in `help`.
fn offers(help: &str, flag: &str) -> bool {
    help.split(|c: char| c.is_whitespace() || c == ',' || c == '[' || c == ']')
        .any(|word| word == flag)
}

#[test]
fn every_documented_command_and_flag_exists() {
    let makefile = std::fs::read_to_string(repo_root().join("Makefile")).unwrap();
    let mut helps = Helps {
        cache: BTreeMap::new(),
    };
    let mut problems = Vec::new();
    let mut checked = 0;
    for file in documents() {
        let text = std::fs::read_to_string(&file).unwrap();
        let name = file
            .strip_prefix(repo_root())
            .unwrap_or(&file)
            .display()
            .to_string();
        for (line, words) in shell_lines(&text) {
            for invocation in invocations(&words) {
                checked += 1;
                let at = format!("{name}:{line}: {}", invocation.join(" "));
                if invocation[0] == "make" {
                    for target in invocation[1..]
                        .iter()
                        .filter(|w| !w.contains('=') && !w.starts_with('-'))
                    {
                        if !makefile.lines().any(|l| l.starts_with(&format!("{target}:"))) {
                            problems.push(format!("{at}: no make target {target:?}"));
                        }
                    }
                    continue;
                }
                let args = &invocation[1..];
                let mut path: Vec<String> = Vec::new();
                let top = helps.of(&[]).unwrap();
                let mut help = top.clone();
                for word in args.iter().take_while(|w| !w.starts_with('-')) {
                    if !subcommands(&help).contains(word) {
                        break;
                    }
                    path.push(word.clone());
                    help = match helps.of(&path) {
                        Some(help) => help,
                        None => {
                            problems.push(format!("{at}: `agent-host {}` is not a command", path.join(" ")));
                            break;
                        }
                    };
                }
                if path.is_empty() && args.first().is_some_and(|w| !w.starts_with('-')) {
                    problems.push(format!("{at}: {:?} is not a command", args[0]));
                    continue;
                }
                for word in args.iter().take_while(|w| *w != "--") {
                    if word == "-" || !word.starts_with('-') || word.starts_with("-\"") {
                        continue;
                    }
                    let flag = word.split('=').next().unwrap_or(word);
                    // Top-level flags (--version, --component) are offered everywhere.
                    if !offers(&help, flag) && !offers(&top, flag) {
                        problems.push(format!(
                            "{at}: {flag} is not in `agent-host {} --help`",
                            path.join(" ")
                        ));
                    }
                }
            }
        }
    }
    assert!(checked > 10, "the documents show commands: only {checked} found");
    assert!(
        problems.is_empty(),
        "{} problems:\n{}",
        problems.len(),
        problems.join("\n")
    );
}
