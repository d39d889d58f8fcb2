//! What the chat adds to an input before sending it: files named with `@path` (read through
//! the session's environment, so its sandbox decides what may be read), the output of
//! `!command`s run in the sandbox since the last input, and Tab's completions of slash
//! commands, `@` paths (fuzzy, over the workspace's files as the ignore-aware `glob` tool
//! lists them) and plain paths.

use agent_host::Environment;
use agent_protocol::ports::{EntryKind, SpawnRequest};
use nucleo_matcher::pattern::{CaseMatching, Normalization, Pattern};
use nucleo_matcher::{Config, Matcher};
use std::sync::Arc;

/// A file attached with `@` is cut after this many bytes (the model can read the rest).
pub const ATTACH_LIMIT: usize = 256 * 1024;
/// A `!command`'s output kept for the next input: its head and tail.
const SHELL_KEEP: usize = 16 * 1024;
/// How long a `!command` may run.
const SHELL_TIMEOUT_MS: u64 = 10 * 60 * 1000;
/// Completions listed at most.
const LISTED: usize = 8;

/// A file attached to an input.
pub struct Attached {
    pub path: String,
    pub bytes: usize,
    pub cut: bool,
}

/// The message with the files its `@path` words name appended, and which they were. Words
/// that name no readable file are left as they are (they may be a handle or an address).
pub async fn attach_files(env: &Arc<dyn Environment>, message: &str) -> (String, Vec<Attached>) {
    let mut attached: Vec<Attached> = Vec::new();
    let mut blocks = String::new();
    for word in message.split_whitespace() {
        let Some(path) = word.strip_prefix('@') else {
            continue;
        };
        let path = path.trim_end_matches([',', '.', ';', ':', ')', '?', '!']);
        if path.is_empty() || attached.iter().any(|a| a.path == path) {
            continue;
        }
        let Ok(bytes) = env.read_file(path, None).await else {
            continue;
        };
        let cut = bytes.len() > ATTACH_LIMIT;
        let text = String::from_utf8_lossy(&bytes[..bytes.len().min(ATTACH_LIMIT)]);
        blocks.push_str(&file_block(path, &text, cut.then_some(bytes.len())));
        attached.push(Attached {
            path: path.to_string(),
            bytes: bytes.len(),
            cut,
        });
    }
    (format!("{message}{blocks}"), attached)
}

/// A file's text as the model gets an attached file; `cut_from`: its whole size, when only
/// the first [`ATTACH_LIMIT`] bytes are given.
pub fn file_block(path: &str, text: &str, cut_from: Option<usize>) -> String {
    let mut block = format!("\n\n<file path=\"{path}\">\n{text}");
    if let Some(size) = cut_from {
        block.push_str(&format!(
            "\n[cut at {ATTACH_LIMIT} of {size} bytes: read the rest with the tools]"
        ));
    }
    block.push_str("\n</file>");
    block
}

/// A `!command` that ran, to tell the model with the next input.
pub struct ShellRun {
    pub command: String,
    pub exit_code: i32,
    pub output: String,
}

impl ShellRun {
    /// The run as the next input quotes it.
    pub fn context(&self) -> String {
        format!(
            "I ran `{}` in the workspace (exit code {}):\n```\n{}\n```",
            self.command,
            self.exit_code,
            self.output.trim_end()
        )
    }
}

/// Runs `command` in the session's environment (its sandbox and environment policy);
/// killed when `cancel` resolves first.
pub async fn run_shell(
    env: &Arc<dyn Environment>,
    command: &str,
    cancel: impl std::future::Future<Output = ()>,
) -> Result<ShellRun, String> {
    let request = SpawnRequest {
        command: command.to_string(),
        working_dir: None,
        timeout_ms: SHELL_TIMEOUT_MS,
        env: Vec::new(),
    };
    let mut process = env.spawn(request).await.map_err(|e| e.to_string())?;
    // Dropping the process (when cancelled) kills it.
    let result = tokio::select! {
        result = process.wait() => result,
        () = cancel => return Err("cancelled".to_string()),
    };
    let mut output = result.stdout;
    if !result.stderr.is_empty() {
        if !output.is_empty() && !output.ends_with('\n') {
            output.push('\n');
        }
        output.push_str(&result.stderr);
    }
    if result.timed_out {
        output.push_str(&format!("\n(stopped after {} s)", SHELL_TIMEOUT_MS / 1000));
    }
    Ok(ShellRun {
        command: command.to_string(),
        exit_code: result.exit_code,
        output: head_and_tail(&output, SHELL_KEEP),
    })
}

/// `text` cut to about `keep` bytes: its head and tail, with what was left out counted.
fn head_and_tail(text: &str, keep: usize) -> String {
    if text.len() <= keep {
        return text.to_string();
    }
    let head_end = floor_boundary(text, keep / 2);
    let tail_start = ceil_boundary(text, text.len() - keep / 2);
    format!(
        "{}\n[… {} bytes left out …]\n{}",
        &text[..head_end],
        tail_start - head_end,
        &text[tail_start..]
    )
}

fn floor_boundary(text: &str, mut i: usize) -> usize {
    while !text.is_char_boundary(i) {
        i -= 1;
    }
    i
}

fn ceil_boundary(text: &str, mut i: usize) -> usize {
    while !text.is_char_boundary(i) {
        i += 1;
    }
    i
}

/// Tab's answer: what replaces the word, and the other candidates to list.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Completion {
    pub replacement: Option<String>,
    pub listed: Vec<String>,
}

/// Completes a slash command's name among `names` (without their slashes).
pub fn complete_command(word: &str, names: &[String]) -> Completion {
    let typed = word.trim_start_matches('/');
    let matching: Vec<&String> = names.iter().filter(|n| n.starts_with(typed)).collect();
    match matching.as_slice() {
        [] => Completion::default(),
        [only] => Completion {
            replacement: Some(format!("/{only} ")),
            listed: Vec::new(),
        },
        many => Completion {
            replacement: Some(format!("/{}", common_prefix(many.iter().map(|s| s.as_str())))),
            listed: many.iter().take(LISTED).map(|n| format!("/{n}")).collect(),
        },
    }
}

/// Completes `@query` with the best fuzzy match among `files`, listing the next best.
pub fn complete_at(query: &str, files: &[String]) -> Completion {
    let mut matcher = Matcher::new(Config::DEFAULT.match_paths());
    let pattern = Pattern::parse(query, CaseMatching::Smart, Normalization::Smart);
    let ranked = pattern.match_list(files.iter(), &mut matcher);
    let mut best = ranked.iter().map(|(file, _)| file.as_str());
    match best.next() {
        None => Completion::default(),
        Some(first) => Completion {
            replacement: Some(format!("@{first} ")),
            listed: best.take(LISTED - 1).map(|f| format!("@{f}")).collect(),
        },
    }
}

/// Completes a path among the entries of its folder (names ending in `/` are folders).
pub fn complete_path(word: &str, entries: &[String]) -> Completion {
    let (folder, typed) = match word.rfind('/') {
        Some(i) => word.split_at(i + 1),
        None => ("", word),
    };
    let matching: Vec<&String> = entries.iter().filter(|e| e.starts_with(typed)).collect();
    match matching.as_slice() {
        [] => Completion::default(),
        [only] => Completion {
            replacement: Some(match only.ends_with('/') {
                true => format!("{folder}{only}"),
                false => format!("{folder}{only} "),
            }),
            listed: Vec::new(),
        },
        many => Completion {
            replacement: Some(format!(
                "{folder}{}",
                common_prefix(many.iter().map(|s| s.as_str()))
            )),
            listed: many.iter().take(LISTED).map(|e| e.to_string()).collect(),
        },
    }
}

/// The workspace's files (ignore-aware, as the `glob` tool lists them), relative.
pub async fn workspace_files(env: &Arc<dyn Environment>) -> Vec<String> {
    let root = env.working_directory();
    let prefix = format!("{}/", root.trim_end_matches('/'));
    let mut files: Vec<String> = env
        .glob("**/*", None)
        .await
        .unwrap_or_default()
        .into_iter()
        .map(|f| f.strip_prefix(&prefix).map(str::to_string).unwrap_or(f))
        .collect();
    // Equal matches keep this order: the shorter path (`stats.py` before
    // `__pycache__/stats.cpython-311.pyc`) first.
    files.sort_by(|a, b| a.len().cmp(&b.len()).then_with(|| a.cmp(b)));
    files
}

/// The entries of the folder `word` is in, folders marked with `/`.
pub async fn folder_entries(env: &Arc<dyn Environment>, word: &str) -> Vec<String> {
    let folder = match word.rfind('/') {
        Some(i) => &word[..=i],
        None => ".",
    };
    let Ok(entries) = env.list_directory(folder, 1).await else {
        return Vec::new();
    };
    entries
        .into_iter()
        .map(|e| match e.kind {
            EntryKind::Directory => format!("{}/", e.path),
            _ => e.path,
        })
        .collect()
}

fn common_prefix<'a>(mut words: impl Iterator<Item = &'a str>) -> String {
    let Some(first) = words.next() else {
        return String::new();
    };
    let mut end = first.len();
    for word in words {
        end = first
            .char_indices()
            .zip(word.chars())
            .find(|((_, a), b)| a != b)
            .map_or(end.min(word.len()), |((i, _), _)| i.min(end));
    }
    first[..floor_boundary(first, end.min(first.len()))].to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strings(items: &[&str]) -> Vec<String> {
        items.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn commands_complete_to_the_only_match_or_the_common_prefix() {
        let names = strings(&["help", "model", "mcp", "sessions", "status"]);
        assert_eq!(
            complete_command("/mo", &names).replacement.as_deref(),
            Some("/model ")
        );
        let many = complete_command("/s", &names);
        assert_eq!(many.replacement.as_deref(), Some("/s"));
        assert_eq!(many.listed, ["/sessions", "/status"]);
        assert_eq!(complete_command("/zz", &names), Completion::default());
    }

    #[test]
    fn at_paths_complete_fuzzily_best_first() {
        let files = strings(&["src/main.rs", "src/lib.rs", "README.md", "tests/main_test.rs"]);
        let ties = strings(&["stats.py", "__pycache__/stats.cpython-311.pyc"]);
        assert_eq!(
            complete_at("stat", &ties).replacement.as_deref(),
            Some("@stats.py ")
        );
        let done = complete_at("srcmain", &files);
        assert_eq!(done.replacement.as_deref(), Some("@src/main.rs "));
        assert!(complete_at("zzzq", &files).replacement.is_none());
    }

    #[test]
    fn paths_complete_within_their_folder() {
        let entries = strings(&["main.rs", "mod.rs", "model/"]);
        assert_eq!(
            complete_path("src/ma", &entries).replacement.as_deref(),
            Some("src/main.rs ")
        );
        assert_eq!(
            complete_path("src/model", &entries).replacement.as_deref(),
            Some("src/model/")
        );
        let many = complete_path("src/mo", &entries);
        assert_eq!(many.replacement.as_deref(), Some("src/mod"));
        assert_eq!(many.listed.len(), 2);
    }

    #[test]
    fn long_output_keeps_its_head_and_tail() {
        let text = format!("{}{}", "a".repeat(10_000), "z".repeat(10_000));
        let kept = head_and_tail(&text, 1000);
        assert!(kept.starts_with("aaa") && kept.ends_with("zzz"), "{kept}");
        assert!(kept.contains("[… 19000 bytes left out …]"), "{kept}");
    }
}
