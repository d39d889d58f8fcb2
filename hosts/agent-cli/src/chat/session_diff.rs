//! `/diff`: what the session changed in the workspace so far, from its checkpoints (so the
//! changes commands made count too, not only the file tools'), each file as the chat shows
//! a tool's change.

use super::diff;
use super::file_changes::FileChange;
use super::style::Palette;
use agent_host::embed::Session;

/// Diff lines shown per file before the rest is counted.
const LINES_PER_FILE: usize = 60;

pub async fn lines(session: &Session, palette: &Palette) -> Vec<String> {
    let diffs = match session.changes_since(None).await {
        Ok(diffs) => diffs,
        Err(e) => return vec![palette.red(&format!("error: {e}"))],
    };
    if diffs.is_empty() {
        return vec!["no changes since the session's first input".to_string()];
    }
    let mut lines = vec![format!(
        "{} changed since the session's first input:",
        match diffs.len() {
            1 => "1 file".to_string(),
            n => format!("{n} files"),
        }
    )];
    for file in diffs {
        let text = |bytes: Option<Vec<u8>>| bytes.map(String::from_utf8);
        let (before, after) = (text(file.before), text(file.after));
        let unreadable = file.too_large || matches!(before, Some(Err(_))) || matches!(after, Some(Err(_)));
        let change = FileChange {
            call_id: None,
            path: file.path,
            before: before.and_then(Result::ok),
            after: after.and_then(Result::ok),
            unreadable,
        };
        lines.extend(diff::render(&change, palette, LINES_PER_FILE));
    }
    lines
}
