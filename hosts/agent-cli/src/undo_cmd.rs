//! `agent-host undo`: a saved session's files put back as they were before one of its
//! inputs, from the checkpoints recorded before each input; and the text the chat's
//! `/undo` and `/rewind` print.

use crate::sessions::{default_store, short};
use crate::{exit, fail, terminal_text};
use agent_host::checkpoints::{Checkpoint, Checkpoints, Restored};
use agent_host::persist::PersistError;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

#[derive(Debug, Clone, clap::Args)]
pub struct UndoArgs {
    /// The session's id or its beginning (default: the latest session of the current
    /// directory's workspace).
    session: Option<String>,
    /// Restore to before input N (default: the latest checkpoint, which undoes the last
    /// input; again, it goes one input further back).
    #[arg(long, value_name = "N")]
    to: Option<u32>,
    /// List the checkpoints instead of restoring.
    #[arg(long, conflicts_with = "to")]
    list: bool,
}

pub fn undo(args: UndoArgs) -> ExitCode {
    let store = match default_store() {
        Ok(store) => store,
        Err(message) => return fail(exit::USAGE, message),
    };
    let id = match args.session {
        Some(id) => id,
        None => match crate::sessions::latest_session_of(None) {
            Ok(id) => id,
            Err(message) => return fail(exit::USAGE, message),
        },
    };
    let stored = match store.load(&id) {
        Ok(stored) => stored,
        Err(e @ (PersistError::NotFound(_) | PersistError::Ambiguous { .. })) => return fail(exit::USAGE, e),
        Err(e) => return fail(exit::AGENT_ERROR, format!("cannot read session {id}: {e}")),
    };
    if stored.in_use() {
        return fail(
            exit::USAGE,
            format!(
                "session {} is open in another agent-host process: use /undo or /rewind there, or close it first",
                short(stored.id())
            ),
        );
    }
    if !stored.dir.join("checkpoints").is_dir() {
        return fail(
            exit::USAGE,
            format!(
                "session {} has no checkpoints (it ran before checkpoints existed, read-only, or not in a local workspace)",
                short(stored.id())
            ),
        );
    }
    let inputs = u32::try_from(stored.summary().inputs.len()).unwrap_or(u32::MAX);
    let workspace = PathBuf::from(&stored.meta.workspace);
    let checkpoints = match Checkpoints::open(&stored.dir, &workspace, inputs, None) {
        Ok(checkpoints) => checkpoints,
        Err(e) => return fail(exit::AGENT_ERROR, e),
    };
    if args.list {
        return match checkpoints.list() {
            Ok(list) => {
                println!("{}", list_text(&list, "agent-host undo --to N"));
                ExitCode::SUCCESS
            }
            Err(e) => fail(exit::AGENT_ERROR, e),
        };
    }
    match checkpoints.restore(args.to) {
        Ok(restored) => {
            println!("{}", restored_text(&restored, checkpoints.workspace()));
            match restored.changes.failed.is_empty() {
                true => ExitCode::SUCCESS,
                false => ExitCode::from(exit::AGENT_ERROR),
            }
        }
        Err(e) => fail(exit::USAGE, e),
    }
}

/// The checkpoints as a table, or a line saying there are none.
pub fn list_text(checkpoints: &[Checkpoint], restore_with: &str) -> String {
    if checkpoints.is_empty() {
        return "no checkpoints (none recorded yet, or all used by earlier undos)".to_string();
    }
    let mut text = format!("{:>5}  {:<16}  {:>6}  INPUT", "N", "RECORDED", "FILES");
    for c in checkpoints {
        let recorded =
            chrono::DateTime::from_timestamp_millis(i64::try_from(c.created_ms).unwrap_or(i64::MAX))
                .map(|t| {
                    t.with_timezone(&chrono::Local)
                        .format("%Y-%m-%d %H:%M")
                        .to_string()
                })
                .unwrap_or_default();
        let files = match c.partial {
            true => format!("{}+", c.files),
            false => c.files.to_string(),
        };
        text.push_str(&format!(
            "\n{:>5}  {recorded:<16}  {files:>6}  {}",
            c.input,
            terminal_text::one_line(&c.label)
        ));
    }
    text.push_str(&format!(
        "\n`{restore_with}` puts the files back as they were before input N"
    ));
    text
}

/// What a restore did, one file per line.
pub fn restored_text(restored: &Restored, workspace: &Path) -> String {
    let changes = &restored.changes;
    let mut text = format!(
        "files of {} restored to before input {}",
        workspace.display(),
        restored.input
    );
    if changes.restored.is_empty() && changes.removed.is_empty() && changes.failed.is_empty() {
        text.push_str(": none differed");
    }
    let path = |p: &str| terminal_text::one_line(p).into_owned();
    for p in &changes.restored {
        text.push_str(&format!("\n  restored  {}", path(p)));
    }
    for p in &changes.removed {
        text.push_str(&format!("\n  removed   {} (created since)", path(p)));
    }
    for (p, why) in &changes.left {
        text.push_str(&format!("\n  left      {} ({why})", path(p)));
    }
    for (p, why) in &changes.failed {
        text.push_str(&format!("\n  FAILED    {}: {why}", path(p)));
    }
    text
}
