//! Tool calls as open models get them slightly wrong: arguments sent as a JSON
//! string holding the object, and a tool named as another harness names it (`run_shell`,
//! `Bash`, `str_replace`). The first is taken as the object it plainly is; the second is
//! answered with an error that names the tool to call, since running another tool than the
//! one named would show the user a call the model never made.

use agent_protocol::history::{ContentPart, Message};
use serde_json::Value;

/// Takes every call's arguments that arrived as a JSON string holding an object as that
/// object, in the response itself: the events, the history, loop detection and every later
/// request then show what runs (a request would otherwise replay such a call as `{}`).
pub(super) fn repair_arguments(message: &mut Message) {
    for part in &mut message.parts {
        if let ContentPart::ToolCall { arguments, .. } = part
            && let Some(object) = arguments_in_a_string(arguments)
        {
            *arguments = object;
        }
    }
}

/// The object inside arguments that arrived as a JSON string (`"{\"path\": \"a.py\"}"`),
/// as Chat Completions servers pass through what a small model wrote; `None` when the
/// arguments are anything else.
pub(super) fn arguments_in_a_string(arguments: &Value) -> Option<Value> {
    let Value::String(text) = arguments else {
        return None;
    };
    match serde_json::from_str::<Value>(text.trim()) {
        Ok(object @ Value::Object(_)) => Some(object),
        _ => None,
    }
}

/// What other coding agents call a tool, by the name this project gives it: Claude Code's,
/// gemini-cli's and codex's names, and the generic ones models were trained on.
const OTHER_NAMES: &[(&str, &[&str])] = &[
    (
        "shell",
        &[
            "bash",
            "run_shell",
            "run_shell_command",
            "shell_command",
            "run_command",
            "execute_command",
            "exec_command",
            "execute",
            "terminal",
            "run_terminal_cmd",
            "local_shell",
            "sh",
            "zsh",
            "powershell",
        ],
    ),
    (
        "read_file",
        &[
            "read",
            "cat",
            "open_file",
            "view",
            "view_file",
            "get_file_contents",
        ],
    ),
    (
        "write_file",
        &["write", "create_file", "write_to_file", "save_file"],
    ),
    (
        "edit_file",
        &[
            "edit",
            "str_replace",
            "str_replace_editor",
            "replace",
            "replace_in_file",
            "multiedit",
        ],
    ),
    ("apply_patch", &["patch", "apply_diff"]),
    ("list_dir", &["ls", "list", "list_directory", "list_files", "dir"]),
    (
        "grep",
        &[
            "search",
            "search_file_content",
            "grep_search",
            "ripgrep",
            "rg",
            "find_in_files",
        ],
    ),
    ("glob", &["find", "find_files", "file_search", "glob_search"]),
];

/// The tool of `available` the model most likely meant by `name`, if one is close: the same
/// name but for case and separators (`ReadFile`), another agent's name for it (`run_shell`),
/// or a small misspelling (`read_fille`).
pub(super) fn meant_tool<'a>(name: &str, available: &'a [String]) -> Option<&'a str> {
    let wanted = folded(name);
    let offered = |tool: &str| {
        available
            .iter()
            .find(|offered| *offered == tool)
            .map(String::as_str)
    };
    if let Some(tool) = available.iter().find(|tool| folded(tool) == wanted) {
        return Some(tool);
    }
    for (tool, others) in OTHER_NAMES {
        if others.iter().any(|other| folded(other) == wanted)
            && let Some(tool) = offered(tool)
        {
            return Some(tool);
        }
    }
    // One edit in a short name, two in a longer one: a slip, not another word.
    let allowed = if wanted.len() <= 6 { 1 } else { 2 };
    available
        .iter()
        .map(|tool| (strsim::levenshtein(&folded(tool), &wanted), tool))
        .filter(|(distance, _)| *distance <= allowed)
        .min_by_key(|(distance, _)| *distance)
        .map(|(_, tool)| tool.as_str())
}

/// Lower case without separators: `Read_File`, `read-file` and `readFile` are one name.
fn folded(name: &str) -> String {
    name.chars()
        .filter(|c| !matches!(c, '_' | '-' | '.' | ' '))
        .flat_map(char::to_lowercase)
        .collect()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use serde_json::json;

    fn tools(names: &[&str]) -> Vec<String> {
        names.iter().map(|n| n.to_string()).collect()
    }

    #[test]
    fn an_object_sent_as_a_json_string_is_taken_as_the_object() {
        let sent = Value::String(" {\"path\": \"calc.py\", \"limit\": 5}\n".to_string());
        assert_eq!(
            arguments_in_a_string(&sent),
            Some(json!({"path": "calc.py", "limit": 5}))
        );
        for other in [
            json!({"path": "calc.py"}),
            json!("not json"),
            json!("[1, 2]"),
            json!("\"calc.py\""),
            json!(42),
        ] {
            assert_eq!(arguments_in_a_string(&other), None, "{other}");
        }
    }

    #[test]
    fn another_agents_name_for_a_tool_points_to_ours() {
        let openai = tools(&["read_file", "apply_patch", "shell", "grep", "glob", "list_dir"]);
        assert_eq!(meant_tool("run_shell", &openai), Some("shell"));
        assert_eq!(meant_tool("Bash", &openai), Some("shell"));
        assert_eq!(meant_tool("sh", &openai), Some("shell"));
        assert_eq!(meant_tool("run_shell_command", &openai), Some("shell"));
        assert_eq!(meant_tool("Read", &openai), Some("read_file"));
        assert_eq!(meant_tool("LS", &openai), Some("list_dir"));
        assert_eq!(meant_tool("search_file_content", &openai), Some("grep"));
        // edit_file is not in this profile: no tool is proposed that the model cannot call.
        assert_eq!(meant_tool("str_replace", &openai), None);
        let anthropic = tools(&["read_file", "write_file", "edit_file", "shell"]);
        assert_eq!(meant_tool("str_replace_editor", &anthropic), Some("edit_file"));
        assert_eq!(meant_tool("create_file", &anthropic), Some("write_file"));
    }

    #[test]
    fn case_separators_and_slips_are_forgiven_but_other_words_are_not() {
        let available = tools(&["read_file", "write_file", "edit_file", "shell", "grep"]);
        assert_eq!(meant_tool("ReadFile", &available), Some("read_file"));
        assert_eq!(meant_tool("write-file", &available), Some("write_file"));
        assert_eq!(meant_tool("read_fille", &available), Some("read_file"));
        assert_eq!(meant_tool("shel", &available), Some("shell"));
        assert_eq!(meant_tool("delete_file", &available), None);
        assert_eq!(meant_tool("web_search", &available), None);
        assert_eq!(meant_tool("git", &available), None);
    }
}
