//! Error-recovery reminders (after the OpenDev paper's system reminders): a small
//! model that gets a tool error often stops, or answers "done" although its last call
//! failed. A failed call's result says what to check next, and a final answer given right
//! after a failed call is sent back once with a request to verify. On for the compact profile
//! (EVAL.md measures it); `SessionConfig::system_reminders` turns it on or off for any.

use super::Session;
use crate::history::Turn;

/// What to check after `tool` failed with `error`, tuned to the usual causes.
pub(super) fn after_failure(tool: &str, error: &str) -> String {
    let lower = error.to_lowercase();
    let hint = if lower.contains("unknown tool") {
        "Call one of the available tools by its exact name."
    } else if lower.contains("invalid arguments") {
        "Check the tool's parameters: use their exact names and give every required one."
    } else if error.contains(crate::tools::edit_file::FILE_SHOWN) {
        "Copy old_string exactly from the file shown above, with its indentation."
    } else if lower.contains("not found") && (lower.contains("old_string") || lower.contains("match")) {
        "Read the file again with read_file and copy old_string exactly from it, with its \
         indentation."
    } else if lower.contains("not found")
        || lower.contains("no such file")
        || lower.contains("does not exist")
    {
        "Check the path: use a file from <workspace_files> or find it with glob. Never guess a path."
    } else if tool == "shell" {
        "Read the command's output above, fix the cause (the command, the code or a missing \
         file) and run it again."
    } else {
        "Read the error, fix the call and try again."
    };
    format!(
        "\n\n<system-reminder>The call failed, so the task is not done yet. {hint} Then call the \
         tool again{REMINDER_END}"
    )
}

/// How much of the task the nudge repeats.
const TASK_SHOWN_CHARS: usize = 500;
/// How a result the reminders spoke to ends.
const REMINDER_END: &str = "</system-reminder>";

/// Sent back once per input when the model answers right after a failed call: the task
/// again, and what failed (its first line), since a small model has lost both by then.
pub(super) fn unverified_finish(task: &str, error: &str) -> String {
    let error = error.lines().next().unwrap_or_default();
    let task = match task.char_indices().nth(TASK_SHOWN_CHARS) {
        Some((cut, _)) => format!("{} [...]", &task[..cut]),
        None => task.to_string(),
    };
    format!(
        "<system-reminder>The task is not done: your last tool call failed ({error}). The task \
         was: {task}\nCall a tool now to do it correctly.{REMINDER_END}"
    )
}

impl Session {
    /// Whether this session adds reminders: its configuration says, else its profile.
    pub(super) fn reminders_on(&self) -> bool {
        self.config
            .system_reminders
            .unwrap_or_else(|| crate::profile::row_of(&self.config).reminders)
    }

    /// The reminder for a final answer given right after the input's last tool round had a
    /// failed call that got a reminder (never a refused one); `None` otherwise.
    pub(super) fn unverified_finish(&self) -> Option<String> {
        let failed = self
            .history
            .iter()
            .rev()
            .take_while(|turn| !matches!(turn, Turn::User { .. }))
            .find_map(|turn| match turn {
                Turn::ToolResults { results, .. } => Some(
                    results
                        .iter()
                        .find(|r| r.is_error && r.content.ends_with(REMINDER_END)),
                ),
                _ => None,
            })
            .flatten()?;
        let task = self.history.iter().rev().find_map(|turn| match turn {
            Turn::User { content, .. } => Some(content.as_str()),
            _ => None,
        })?;
        Some(unverified_finish(task, &failed.content))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_cause_gets_its_own_hint() {
        assert!(
            after_failure("read_file", "Tool error (read_file): File not found: src/calc.py")
                .contains("glob")
        );
        assert!(
            after_failure(
                "edit_file",
                "Tool error (edit_file): old_string not found in calc.py"
            )
            .contains("copy old_string exactly")
        );
        assert!(after_failure("x", "Unknown tool: x. Available tools: shell").contains("exact name"));
        assert!(after_failure("shell", "exit code 1").contains("command's output"));
    }
}
