//! Programs the chat lends the terminal to: the user's editor for the input (Ctrl-G) and a
//! pager for a tool call's whole output (Ctrl-O, `/expand`). The key reader is paused and
//! raw mode is off while they run, and both come back afterwards.

use super::input::InputControl;
use crossterm::{execute, terminal};
use std::io::Write;
use std::process::Command;

/// Runs `program` (a shell word list, e.g. `less -R`) with `file` as its last argument,
/// on the terminal as a normal program. The error says what could not be run.
async fn lend_terminal(input: &InputControl, program: &str, file: &std::path::Path) -> Result<(), String> {
    input.pause().await;
    let _ = execute!(
        std::io::stdout(),
        crossterm::event::DisableBracketedPaste,
        crossterm::event::DisableFocusChange
    );
    let _ = terminal::disable_raw_mode();
    // Through the shell, as git runs $EDITOR: the variable may hold arguments.
    let status = Command::new("sh")
        .arg("-c")
        .arg(format!("{program} \"$1\""))
        .arg("sh")
        .arg(file)
        .status();
    let _ = terminal::enable_raw_mode();
    let _ = execute!(
        std::io::stdout(),
        crossterm::event::EnableBracketedPaste,
        crossterm::event::EnableFocusChange
    );
    input.resume();
    match status {
        Ok(status) if status.success() => Ok(()),
        Ok(status) => Err(format!("{program} ended with {status}")),
        Err(e) => Err(format!("cannot run {program}: {e}")),
    }
}

/// Edits `text` in `$VISUAL`, else `$EDITOR`, else `vi`; the edited text.
pub async fn edit(input: &InputControl, text: &str) -> Result<String, String> {
    let editor = ["VISUAL", "EDITOR"]
        .iter()
        .find_map(|v| std::env::var(v).ok().filter(|e| !e.trim().is_empty()))
        .unwrap_or_else(|| "vi".to_string());
    let mut file = tempfile::Builder::new()
        .prefix("agent-host-input-")
        .suffix(".md")
        .tempfile()
        .map_err(|e| format!("cannot make a file for the editor: {e}"))?;
    file.write_all(text.as_bytes())
        .map_err(|e| format!("cannot write the file for the editor: {e}"))?;
    lend_terminal(input, &editor, file.path()).await?;
    let edited = std::fs::read_to_string(file.path())
        .map_err(|e| format!("cannot read back the edited input: {e}"))?;
    // Editors end the file with a newline the user did not type.
    Ok(edited.strip_suffix('\n').unwrap_or(&edited).to_string())
}

/// Shows `text` in `$PAGER`, else `less -R`.
pub async fn page(input: &InputControl, text: &str) -> Result<(), String> {
    let pager = std::env::var("PAGER")
        .ok()
        .filter(|p| !p.trim().is_empty())
        .unwrap_or_else(|| "less -R".to_string());
    let mut file = tempfile::Builder::new()
        .prefix("agent-host-output-")
        .tempfile()
        .map_err(|e| format!("cannot make a file for the pager: {e}"))?;
    file.write_all(text.as_bytes())
        .map_err(|e| format!("cannot write the file for the pager: {e}"))?;
    lend_terminal(input, &pager, file.path()).await
}
