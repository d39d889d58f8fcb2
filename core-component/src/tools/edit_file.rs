//! `edit_file`: replace a string in a file (Claude Code's old_string / new_string), exact
//! first, then through the fuzzy chain of `edit_match`; the result says which pass matched.

use super::traits::{Changes, ToolTraits};
use super::{ToolContext, required_str};
use crate::edit_match::{self, Pass};
use crate::llm::ToolDefinition;
use crate::truncation::Mode;
use agent_protocol::ToolCategory;
use serde_json::{Value, json};

/// Output limits and category (section 5.2 of the spec for the limits).
pub const TRAITS: ToolTraits =
    ToolTraits::new(ToolCategory::Write, 10_000, Mode::Tail).changes(Changes::Argument("file_path"));

pub fn definition() -> ToolDefinition {
    ToolDefinition {
        name: "edit_file".to_string(),
        description: "Replace text in a file. old_string must match the file's text, including \
            indentation; give enough surrounding lines to make it unique, or set replace_all to \
            change every occurrence. Read the file first."
            .to_string(),
        parameters: json!({
            "type": "object",
            "properties": {
                "file_path": {"type": "string", "description": "Path of the file, absolute or relative to the working directory."},
                "old_string": {"type": "string", "minLength": 1, "description": "The text to replace."},
                "new_string": {"type": "string", "description": "The replacement text (different from old_string)."},
                "replace_all": {"type": "boolean", "description": "Replace every occurrence (default false)."}
            },
            "required": ["file_path", "old_string", "new_string"],
            "additionalProperties": false
        }),
    }
}

/// A file this small is shown whole when old_string is not in it: the model's next attempt
/// can copy from it without a read in between (a small model, told to read the file, often
/// answers with text instead).
const SHOWN_ON_MISS_BYTES: usize = 4_000;
const SHOWN_ON_MISS_LINES: usize = 100;

/// The words that say the file is shown (the reminders point to it instead of a read).
pub const FILE_SHOWN: &str = "Copy old_string exactly from the file as it is now, between the markers";

fn not_found(path: &str, content: &str) -> String {
    let mut message =
        format!("old_string was not found in {path}, not even ignoring whitespace and indentation.");
    if content.len() <= SHOWN_ON_MISS_BYTES && content.lines().count() <= SHOWN_ON_MISS_LINES {
        message.push_str(&format!(
            " {FILE_SHOWN}:\n----- {path} -----\n{content}{}----- end of {path} -----",
            if content.ends_with('\n') || content.is_empty() {
                ""
            } else {
                "\n"
            }
        ));
    } else {
        message.push_str(" Read the file again and copy the exact text to replace.");
    }
    message
}

pub fn run(args: &Value, ctx: &ToolContext<'_>) -> Result<String, String> {
    let path = required_str(args, "file_path")?;
    let old = required_str(args, "old_string")?;
    let new = required_str(args, "new_string")?;
    let replace_all = args.get("replace_all").and_then(Value::as_bool).unwrap_or(false);
    if old == new {
        return Err("old_string and new_string are the same: there is nothing to change".to_string());
    }
    let bytes = ctx.env.read_file(path, None).map_err(|e| e.to_string())?;
    let working_dir = ctx.env.working_directory();
    ctx.stamps.check(path, &working_dir, Some(&bytes), false)?;
    let content = String::from_utf8(bytes).map_err(|_| format!("{path} is not a UTF-8 text file"))?;
    // Files whose every line ends in CRLF are matched as LF and written back with CRLF; a
    // file of mixed endings is matched as it is (the line passes ignore a `\r`), so the
    // lines the edit does not touch keep their endings.
    let crlf = content.contains("\r\n") && content.matches('\n').count() == content.matches("\r\n").count();
    let content = if crlf {
        content.replace("\r\n", "\n")
    } else {
        content
    };
    let old = old.replace("\r\n", "\n");
    let Some((pass, regions)) = edit_match::find(&content, &old) else {
        return Err(not_found(path, &content));
    };
    if regions.len() > 1 && !replace_all {
        let lines: Vec<String> = regions
            .iter()
            .map(|r| (content[..r.start].matches('\n').count() + 1).to_string())
            .collect();
        return Err(format!(
            "old_string matches {} places in {path} (lines {}); add surrounding lines to make it \
             unique, or set replace_all to change all of them",
            regions.len(),
            lines.join(", ")
        ));
    }
    let new = new.replace("\r\n", "\n");
    let mut updated = content.clone();
    for region in regions.iter().rev() {
        // In a file of mixed endings the line passes' regions end before `\n` but after a
        // `\r`, which belongs to the break the file keeps.
        let region = match pass {
            Pass::Exact => region.clone(),
            _ if content[region.clone()].ends_with('\r') => region.start..region.end - 1,
            _ => region.clone(),
        };
        let replacement = match pass {
            Pass::Exact => new.clone(),
            _ => {
                let found = &content[region.clone()];
                let fitted = fit_indentation(found, &old, &new);
                // The line passes find whole lines without their last break; a break that
                // ends both old_string and new_string is the one the file keeps.
                match fitted.strip_suffix('\n') {
                    Some(trimmed) if old.ends_with('\n') && !found.ends_with('\n') => trimmed.to_string(),
                    _ => fitted,
                }
            }
        };
        updated.replace_range(region.clone(), &replacement);
    }
    let updated = if crlf {
        updated.replace('\n', "\r\n")
    } else {
        updated
    };
    ctx.env
        .write_file(path, updated.as_bytes())
        .map_err(|e| e.to_string())?;
    ctx.stamps.saw(path, &working_dir, updated.as_bytes());
    let count = regions.len();
    let noun = if count == 1 { "occurrence" } else { "occurrences" };
    let how = match pass {
        Pass::Exact => String::new(),
        other => format!(
            " (matched by the {} pass: the file's text differed from old_string)",
            other.name()
        ),
    };
    Ok(format!("Edited {path}: replaced {count} {noun}{how}"))
}

/// `new` re-indented for a region the fuzzy passes matched although its indentation
/// differs from `old`'s: where `old`'s first indented line has indentation A and the
/// file's has B, and `new` was written at A too (its first line at A, not already at B,
/// every line starting with A), every line of `new` starts with B instead, so the
/// replacement lands at the file's indentation rather than the model's.
fn fit_indentation(region: &str, old: &str, new: &str) -> String {
    if let Some(left_out) = first_indentation_left_out(region, old)
        && !new.starts_with([' ', '\t'])
    {
        return format!("{left_out}{new}");
    }
    let first_indent = |text: &str| -> Option<String> {
        text.lines()
            .find(|line| !line.trim().is_empty())
            .map(|line| indent(line).to_string())
    };
    let (Some(model), Some(file), Some(written)) =
        (first_indent(old), first_indent(region), first_indent(new))
    else {
        return new.to_string();
    };
    let relative = |text: &str, base: &str| -> Vec<Option<String>> {
        text.lines()
            .filter(|line| !line.trim().is_empty())
            .map(|line| indent(line).strip_prefix(base).map(str::to_string))
            .collect()
    };
    // The file's block must be old_string's shifted as a whole (not a first line whose
    // indentation old_string left out while the others kept theirs), and new_string
    // written at old_string's level throughout.
    let shifted = relative(old, &model) == relative(region, &file);
    let consistent = new
        .lines()
        .all(|line| line.trim().is_empty() || line.starts_with(model.as_str()));
    if model == file || written == file || written != model || !shifted || !consistent {
        return new.to_string();
    }
    let fitted: Vec<String> = new
        .split('\n')
        .map(|line| match line.strip_prefix(model.as_str()) {
            Some(rest) if !line.trim().is_empty() => format!("{file}{rest}"),
            _ => line.to_string(),
        })
        .collect();
    fitted.join("\n")
}

/// The indentation of the region's first line when old_string left out just that (copied
/// from after it, as models do) and matched every other line's indentation exactly.
fn first_indentation_left_out(region: &str, old: &str) -> Option<String> {
    let found: Vec<&str> = region.lines().collect();
    let wanted: Vec<&str> = old.lines().collect();
    let (first_found, first_wanted) = (found.first()?, wanted.first()?);
    let left_out = indent(first_found);
    let rest_same = found.len() == wanted.len()
        && found[1..]
            .iter()
            .zip(&wanted[1..])
            .all(|(a, b)| (a.trim().is_empty() && b.trim().is_empty()) || indent(a) == indent(b));
    (!left_out.is_empty() && indent(first_wanted).is_empty() && rest_same).then(|| left_out.to_string())
}

/// A line's leading whitespace.
fn indent(line: &str) -> &str {
    &line[..line.len() - line.trim_start().len()]
}

#[cfg(test)]
mod tests {
    use super::{SHOWN_ON_MISS_BYTES, fit_indentation, not_found};

    #[test]
    fn a_miss_in_a_small_file_shows_the_file_and_a_large_one_asks_for_a_read() {
        let small = not_found("c.json", "{\n  \"port\": 8080\n}");
        assert!(
            small.ends_with(
                "between the markers:\n----- c.json -----\n{\n  \"port\": 8080\n}\n----- end of c.json -----"
            ),
            "{small}"
        );
        let large = not_found("big.txt", &"x".repeat(SHOWN_ON_MISS_BYTES + 1));
        assert!(large.ends_with("Read the file again and copy the exact text to replace."));
        let many_lines = not_found("lines.txt", &"a\n".repeat(101));
        assert!(!many_lines.contains("-----"), "{many_lines}");
    }

    #[test]
    fn a_replacement_takes_the_indentation_the_file_has() {
        let region = "        if x:\n            y()";
        let fitted = fit_indentation(region, "if x:\n    y()", "if x:\n    z()\n\nw()");
        assert_eq!(fitted, "        if x:\n            z()\n\n        w()");
        assert_eq!(
            fit_indentation("  a", "  a", "  b"),
            "  b",
            "same indentation: as written"
        );
        let fitted = fit_indentation(
            region,
            "    if x:\n        y()",
            "    if x:\n        z()\n    w()",
        );
        assert_eq!(fitted, "        if x:\n            z()\n        w()");
        assert_eq!(
            fit_indentation(region, "if x:\n    y()", "        if x:\n            z()"),
            "        if x:\n            z()",
            "new already at the file's indentation: as written"
        );
        // Only the first line's indentation was left out: the first line gets it back, the
        // others stay as written.
        assert_eq!(
            fit_indentation(
                "    if x:  \n        y()",
                "if x:\n        y()",
                "if x:\n        z()"
            ),
            "    if x:\n        z()"
        );
    }
}
