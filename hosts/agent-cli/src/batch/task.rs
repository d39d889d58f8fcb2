//! A batch's tasks: one JSON object per line of TASKS.jsonl, all read and checked before any
//! runs, each mistake naming its line.

use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// One task of a batch.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Task {
    /// Names the task's folder in the output (letters, digits, `-`, `_`, `.`; at most 100).
    pub id: String,
    /// What the agent is asked to do.
    pub instruction: String,
    /// Where its workspace comes from.
    pub workspace: Source,
    #[serde(default)]
    pub provider: Option<String>,
    #[serde(default)]
    pub model: Option<String>,
    #[serde(default)]
    pub limits: Limits,
    /// The command sandbox: `workspace-write` (the default), `read-only` or
    /// `danger-full-access`.
    #[serde(default)]
    pub sandbox: Option<String>,
    /// What its commands reach of the network: `off`, `allow-list` or `on`; only narrows
    /// what the configuration and flags allow.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sandbox_network: Option<String>,
    /// The hosts its commands reach (as `network_allow`); each entry is kept only when the
    /// configuration's list allows all it allows (any entry when the network is on).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub network_allow: Option<Vec<String>>,
    /// Seconds after which the task is given up; only lowers `--task-timeout-sec`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_sec: Option<u64>,
}

/// A task's workspace: a folder to copy, or a git repository to clone (at `rev`, else its
/// default branch).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Source {
    #[serde(default)]
    pub dir: Option<PathBuf>,
    #[serde(default)]
    pub git: Option<String>,
    #[serde(default)]
    pub rev: Option<String>,
}

/// Limits of a task's session; unset ones keep the configuration's.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Limits {
    pub max_turns: Option<u32>,
    pub max_tool_rounds: Option<u32>,
    pub max_session_tokens: Option<u64>,
    pub max_cost_cents: Option<f64>,
}

/// The tasks of `text` (the file `file`); a relative `dir` is taken from the file's folder.
pub fn parse(text: &str, file: &Path) -> Result<Vec<Task>, String> {
    // Absolute, so that a worker elsewhere finds a task's folder at the same path.
    let folder = file
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let base = std::path::absolute(folder).map_err(|e| format!("{}: {e}", file.display()))?;
    let base = base.as_path();
    let mut tasks = Vec::new();
    let mut ids = BTreeSet::new();
    for (index, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let at = |why: String| format!("{} line {}: {why}", file.display(), index + 1);
        let mut task: Task = serde_json::from_str(line).map_err(|e| at(format!("not a task: {e}")))?;
        check(&task).map_err(at)?;
        if !ids.insert(task.id.clone()) {
            return Err(at(format!("the id {:?} is used twice", task.id)));
        }
        // Relative folders and repository paths are taken from the tasks file's folder.
        if let Some(dir) = &task.workspace.dir {
            task.workspace.dir = Some(base.join(dir));
        }
        if let Some(path) = task
            .workspace
            .git
            .as_deref()
            .and_then(super::sources::local_repository)
            && path.is_relative()
        {
            task.workspace.git = Some(base.join(path).display().to_string());
        }
        tasks.push(task);
    }
    if tasks.is_empty() {
        return Err(format!("{} holds no task", file.display()));
    }
    Ok(tasks)
}

/// Whether `task` can run: its id names a folder, it has an instruction, its source is one
/// of the two kinds and no option, its sandbox is known.
pub fn check(task: &Task) -> Result<(), String> {
    let id_ok = (1..=100).contains(&task.id.len())
        && !task.id.starts_with('.')
        && task
            .id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'));
    if !id_ok {
        return Err(format!(
            "the id {:?} cannot name a folder: use letters, digits, '-', '_' and '.' (at most 100, \
             not starting with '.')",
            task.id
        ));
    }
    if task.instruction.trim().is_empty() {
        return Err("the instruction is empty".to_string());
    }
    let source = &task.workspace;
    match (&source.dir, &source.git) {
        (Some(_), None) if source.rev.is_some() => {
            return Err("workspace.rev goes with workspace.git, not workspace.dir".to_string());
        }
        (Some(_), None) | (None, Some(_)) => {}
        _ => {
            return Err(
                "the workspace names either dir (a folder to copy) or git (a repository to clone)"
                    .to_string(),
            );
        }
    }
    // Neither may pass as an option to git.
    for (what, value) in [("git", &source.git), ("rev", &source.rev)] {
        if value
            .as_deref()
            .is_some_and(|v| v.starts_with('-') || v.is_empty())
        {
            return Err(format!(
                "workspace.{what} {value:?} is not a repository or revision"
            ));
        }
    }
    if let Some(cents) = task.limits.max_cost_cents {
        agent_host::protocol::Limits::check_cost_cents(cents).map_err(|e| format!("limits.{e}"))?;
    }
    if let Some(mode) = &task.sandbox {
        mode.parse::<agent_host::sandbox::SandboxMode>()
            .map_err(|e| format!("sandbox: {e}"))?;
    }
    if let Some(access) = &task.sandbox_network {
        access
            .parse::<agent_host::sandbox::NetworkAccess>()
            .map_err(|e| format!("sandbox_network: {e}"))?;
    }
    if let Some(list) = &task.network_allow {
        agent_host::sandbox::AllowList::parse(list).map_err(|e| format!("network_allow: {e}"))?;
    }
    if task.timeout_sec == Some(0) {
        return Err("timeout_sec must be at least 1 (seconds)".to_string());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn tasks_are_read_with_their_defaults_and_each_mistake_names_its_line() {
        let file = Path::new("/runs/tasks.jsonl");
        let tasks = parse(
            "{\"id\": \"a\", \"instruction\": \"Fix it\", \"workspace\": {\"dir\": \"repos/a\"}}\n\n\
             {\"id\": \"b\", \"instruction\": \"Go\", \"workspace\": {\"git\": \"/srv/b.git\", \"rev\": \"v1\"}, \
             \"provider\": \"openai\", \"limits\": {\"max_turns\": 5}, \"sandbox\": \"read-only\"}\n",
            file,
        )
        .unwrap();
        assert_eq!(
            tasks[0].workspace.dir.as_deref(),
            Some(Path::new("/runs/repos/a"))
        );
        assert_eq!(tasks[1].limits.max_turns, Some(5));
        assert_eq!(tasks[1].workspace.rev.as_deref(), Some("v1"));
        let mistakes = [
            (
                "{\"id\": \"../x\", \"instruction\": \"i\", \"workspace\": {\"dir\": \"d\"}}",
                "cannot name a folder",
            ),
            (
                "{\"id\": \"x\", \"instruction\": \" \", \"workspace\": {\"dir\": \"d\"}}",
                "the instruction is empty",
            ),
            (
                "{\"id\": \"x\", \"instruction\": \"i\", \"workspace\": {}}",
                "either dir",
            ),
            (
                "{\"id\": \"x\", \"instruction\": \"i\", \"workspace\": {\"git\": \"--upload-pack=x\"}}",
                "not a repository",
            ),
            (
                "{\"id\": \"x\", \"instruction\": \"i\", \"workspace\": {\"dir\": \"d\"}, \"sandbox\": \"none\"}",
                "sandbox:",
            ),
            (
                "{\"id\": \"x\", \"instruction\": \"i\", \"workspace\": {\"dir\": \"d\"}, \"limit\": {}}",
                "unknown field",
            ),
            (
                "{\"id\": \"x\", \"instruction\": \"i\", \"workspace\": {\"dir\": \"d\"}, \"timeout_sec\": 0}",
                "timeout_sec must be at least 1",
            ),
            // A task may not lift the cost budget with an amount the session would read as none.
            (
                "{\"id\": \"x\", \"instruction\": \"i\", \"workspace\": {\"dir\": \"d\"}, \"limits\": {\"max_cost_cents\": -1}}",
                "is not an amount of US cents",
            ),
            ("not json", "not a task"),
        ];
        for (line, expected) in mistakes {
            let error = parse(&format!("\n{line}\n"), file).unwrap_err();
            assert!(error.starts_with("/runs/tasks.jsonl line 2: "), "{error}");
            assert!(error.contains(expected), "{error}");
        }
        let twice = "{\"id\": \"x\", \"instruction\": \"i\", \"workspace\": {\"dir\": \"d\"}}\n";
        assert!(parse(&twice.repeat(2), file).unwrap_err().contains("used twice"));
        assert!(parse("\n", file).unwrap_err().contains("holds no task"));
    }
}
