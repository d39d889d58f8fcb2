//! What replay compares: a request body with the parts that differ between two faithful
//! runs of the same session normalised, then compared exactly.
//!
//! Normalised, in both the recorded and the live request:
//! - the working directory: the path named on the system prompt's `Working directory:`
//!   line becomes `<workspace>` wherever it occurs in the body (prompt, tool results, tool
//!   arguments), so a recording replays in another folder;
//! - the machine lines of the environment block: `Today's date:`, `Platform:`,
//!   `OS version:`, `Is git repository:`, `Git branch:`, and the contents of the
//!   `<git_status>` block (uncommitted count, recent commits);
//! - the wall time the shell tool reports after each command (`Exit code: 0 (duration
//!   335 ms)`); the exit code and the output stay compared;
//! - per-user or per-session identifiers a provider option may add at the top level:
//!   `metadata.user_id`, `user`, `prompt_cache_key`, `safety_identifier`;
//! - text shaped like an API key (the recording holds `<redacted>` there).
//!
//! Everything else (model, messages, tool calls and results, tool definitions, limits) must be
//! equal.

use crate::transport::recorder::redact;
use regex::Regex;
use serde_json::Value;
use std::sync::LazyLock;

/// What replaces the working directory.
pub const WORKSPACE: &str = "<workspace>";

struct Patterns {
    workspace: Regex,
    machine_lines: Regex,
    git_status: Regex,
    duration: Regex,
}

static PATTERNS: LazyLock<Option<Patterns>> = LazyLock::new(|| {
    Some(Patterns {
        workspace: Regex::new(r"Working directory: ([^\n]+)").ok()?,
        machine_lines: Regex::new(
            r"(?m)^(Today's date|Platform|OS version|Is git repository|Git branch): [^\n]*$",
        )
        .ok()?,
        git_status: Regex::new(r"(?s)<git_status>.*?</git_status>").ok()?,
        duration: Regex::new(r"\(duration \d+ ms\)").ok()?,
    })
});

/// Top-level fields that identify a user or session rather than the conversation.
const VOLATILE_FIELDS: [&[&str]; 4] = [
    &["metadata", "user_id"],
    &["user"],
    &["prompt_cache_key"],
    &["safety_identifier"],
];

/// The body as replay compares it.
pub fn normalize(body: &Value) -> Value {
    let mut body = body.clone();
    for path in VOLATILE_FIELDS {
        remove_path(&mut body, path);
    }
    let Some(patterns) = PATTERNS.as_ref() else {
        return body;
    };
    let workspace = find_workspace(&body, patterns).filter(|w| w.len() > 1);
    rewrite_strings(&mut body, &|text: &str| {
        let mut text = match &workspace {
            Some(dir) => text.replace(dir.as_str(), WORKSPACE),
            None => text.to_string(),
        };
        if text.contains(": ") {
            text = patterns
                .machine_lines
                .replace_all(&text, "$1: <normalised>")
                .into_owned();
        }
        if text.contains("(duration ") {
            text = patterns
                .duration
                .replace_all(&text, "(duration <normalised> ms)")
                .into_owned();
        }
        if text.contains("<git_status>") {
            text = patterns
                .git_status
                .replace_all(&text, "<git_status>normalised</git_status>")
                .into_owned();
        }
        redact(&text, &[])
    });
    body
}

fn remove_path(value: &mut Value, path: &[&str]) {
    let Some((last, parents)) = path.split_last() else {
        return;
    };
    let mut current = value;
    for key in parents {
        match current.get_mut(*key) {
            Some(next) => current = next,
            None => return,
        }
    }
    if let Some(object) = current.as_object_mut() {
        object.remove(*last);
    }
}

/// The path on the first `Working directory:` line of any string in the body.
fn find_workspace(value: &Value, patterns: &Patterns) -> Option<String> {
    match value {
        Value::String(text) => patterns
            .workspace
            .captures(text)
            .and_then(|c| c.get(1))
            .map(|m| m.as_str().trim_end().to_string()),
        Value::Array(items) => items.iter().find_map(|v| find_workspace(v, patterns)),
        Value::Object(map) => map.values().find_map(|v| find_workspace(v, patterns)),
        _ => None,
    }
}

fn rewrite_strings(value: &mut Value, rewrite: &dyn Fn(&str) -> String) {
    match value {
        Value::String(text) => *text = rewrite(text),
        Value::Array(items) => items.iter_mut().for_each(|v| rewrite_strings(v, rewrite)),
        Value::Object(map) => map.values_mut().for_each(|v| rewrite_strings(v, rewrite)),
        _ => {}
    }
}

/// The first place two JSON values differ: its JSON pointer (RFC 6901) and a description
/// of both sides there; `None` when they are equal.
pub fn first_difference(recorded: &Value, live: &Value) -> Option<(String, String)> {
    difference_at(recorded, live, String::new())
}

fn difference_at(recorded: &Value, live: &Value, pointer: String) -> Option<(String, String)> {
    match (recorded, live) {
        (Value::Object(a), Value::Object(b)) => {
            let mut keys: Vec<&String> = a.keys().chain(b.keys()).collect();
            keys.sort();
            keys.dedup();
            keys.into_iter().find_map(|key| {
                let at = format!("{pointer}/{}", key.replace('~', "~0").replace('/', "~1"));
                match (a.get(key), b.get(key)) {
                    (Some(x), Some(y)) => difference_at(x, y, at),
                    (x, y) => Some((at, sides(x, y))),
                }
            })
        }
        (Value::Array(a), Value::Array(b)) => (0..a.len().max(b.len())).find_map(|i| {
            let at = format!("{pointer}/{i}");
            match (a.get(i), b.get(i)) {
                (Some(x), Some(y)) => difference_at(x, y, at),
                (x, y) => Some((at, sides(x, y))),
            }
        }),
        (Value::String(a), Value::String(b)) if a != b => Some((pointer, string_sides(a, b))),
        (a, b) if a != b => Some((pointer, sides(Some(a), Some(b)))),
        _ => None,
    }
}

/// The longest shown value, in characters.
const SHOWN: usize = 160;

fn sides(recorded: Option<&Value>, live: Option<&Value>) -> String {
    let show = |value: Option<&Value>| match value {
        None => "(absent)".to_string(),
        Some(value) => shorten(&value.to_string(), SHOWN),
    };
    format!(
        "the recording has {} but the agent sent {}",
        show(recorded),
        show(live)
    )
}

/// Two long strings (a system prompt, a tool result) are shown around their first
/// differing character.
fn string_sides(recorded: &str, live: &str) -> String {
    let at = recorded
        .chars()
        .zip(live.chars())
        .take_while(|(a, b)| a == b)
        .count();
    let window = |text: &str| {
        let start = at.saturating_sub(40);
        let piece: String = text.chars().skip(start).take(SHOWN).collect();
        let more = text.chars().count() > start + SHOWN;
        format!(
            "{}{:?}{}",
            if start > 0 { "…" } else { "" },
            piece,
            if more { "…" } else { "" }
        )
    };
    let position = if at == 0 {
        String::new()
    } else {
        format!(" (from character {at})")
    };
    format!(
        "the recording has {} but the agent sent {}{position}",
        window(recorded),
        window(live)
    )
}

fn shorten(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_string();
    }
    let mut short: String = text.chars().take(max).collect();
    short.push('…');
    short
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use serde_json::json;

    fn prompt(dir: &str, date: &str) -> String {
        format!(
            "You are an agent.\n\n<environment>\nWorking directory: {dir}\nIs git repository: false\n\
             Platform: linux\nOS version: Linux 6.1\nToday's date: {date}\nModel: m\n</environment>"
        )
    }

    #[test]
    fn workspace_dates_and_identifiers_are_normalised() {
        let recorded = json!({
            "system": prompt("/home/a/proj", "2025-01-01"),
            "metadata": {"user_id": "u1"},
            "messages": [{"role": "user", "content": "list /home/a/proj/src"},
                         {"role": "user", "content": "ok\nExit code: 0 (duration 335 ms)\n"}],
        });
        let live = json!({
            "system": prompt("/tmp/x", "2026-03-04"),
            "metadata": {"user_id": "u2"},
            "messages": [{"role": "user", "content": "list /tmp/x/src"},
                         {"role": "user", "content": "ok\nExit code: 0 (duration 12 ms)\n"}],
        });
        assert_eq!(normalize(&recorded), normalize(&live));
        assert_eq!(normalize(&live)["messages"][0]["content"], "list <workspace>/src");
    }

    #[test]
    fn the_first_difference_names_its_pointer_and_both_values() {
        let recorded = json!({"messages": [{"content": "Create hello.py"}], "model": "m"});
        let live = json!({"messages": [{"content": "Create bye.py"}], "model": "m"});
        let (pointer, text) = first_difference(&recorded, &live).unwrap();
        assert_eq!(pointer, "/messages/0/content");
        assert!(
            text.contains("\"Create hello.py\"") && text.contains("\"Create bye.py\""),
            "{text}"
        );
        assert!(text.contains("from character 7"), "{text}");

        let (pointer, text) = first_difference(&json!({"a/b": [1]}), &json!({"a/b": [1, 2]})).unwrap();
        assert_eq!(pointer, "/a~1b/1");
        assert_eq!(text, "the recording has (absent) but the agent sent 2");
        assert_eq!(first_difference(&recorded, &recorded), None);
    }
}
