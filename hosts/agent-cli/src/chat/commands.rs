//! The chat's slash commands.

use super::agent::Agent;
use super::style::Palette;
use agent_host::approval::ApprovalMode;
use agent_protocol::ReasoningEffort;

/// A line that starts with `/`, parsed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SlashCommand {
    Help,
    /// Show the model, or continue the conversation with another one.
    Model(Option<String>),
    /// Show the reasoning effort, or set it (`None`: the model's default).
    Effort(Option<Option<ReasoningEffort>>),
    Reset,
    /// Make the conversation smaller now (summarise older turns).
    Compact,
    /// Put the files back as they were before the last input (again: one further back).
    Undo,
    /// List the checkpoints, or put the files back as they were before input N.
    Rewind(Option<u32>),
    /// The model, modes, context, tokens and cost, and the session.
    Status,
    /// The session's tokens and cost.
    Cost,
    /// What the session changed in the workspace so far.
    Diff,
    /// The last tool call's whole output, in the pager.
    Expand,
    /// The saved sessions of this workspace.
    Sessions,
    /// Asks the agent to write an AGENTS.md for the repository.
    Init,
    /// Show the approval mode, or change it for the rest of the session.
    Approval(Option<ApprovalMode>),
    /// How commands are confined.
    Sandbox,
    /// The MCP servers, their state and their tools.
    Mcp,
    Quit,
}

/// Each command with its one-line description, for `/help` and for mistakes.
pub const COMMANDS: [(&str, &str); 17] = [
    ("/help", "list these commands"),
    (
        "/model [NAME]",
        "show the model, or continue this conversation with NAME",
    ),
    (
        "/effort [low|medium|high|default]",
        "show or set the reasoning effort",
    ),
    ("/reset", "forget this conversation and start a new session"),
    (
        "/compact",
        "summarise the older part of the conversation to free context (also automatic)",
    ),
    (
        "/undo",
        "put the files back as they were before the last input (again: one further back)",
    ),
    (
        "/rewind [N]",
        "list the checkpoints, or put the files back as they were before input N",
    ),
    (
        "/status",
        "the model, modes, context used, tokens and cost of this session",
    ),
    ("/cost", "the tokens and cost of this session"),
    ("/diff", "what this session changed in the workspace so far"),
    (
        "/expand",
        "the last tool call's whole output in a pager (also Ctrl-O)",
    ),
    (
        "/sessions",
        "the saved sessions of this workspace (chat --resume ID re-enters one)",
    ),
    (
        "/init",
        "ask the agent to write an AGENTS.md describing this repository",
    ),
    (
        "/approval [auto|ask|read-only]",
        "show the approval mode, or change it for the rest of this session",
    ),
    (
        "/sandbox",
        "how commands are confined: where they may write, what they may not read, the network",
    ),
    (
        "/mcp",
        "the MCP servers, whether each runs, and the tools it offers",
    ),
    (
        "/quit",
        "close the session and leave (also Ctrl-D, or Ctrl-C twice)",
    ),
];

/// The names Tab completes (without their slashes).
pub fn names() -> Vec<String> {
    COMMANDS
        .iter()
        .filter_map(|(usage, _)| usage.split_whitespace().next())
        .map(|name| name.trim_start_matches('/').to_string())
        .collect()
}

/// What the line asks for; `Err` says what was wrong and lists the commands.
pub fn parse(line: &str) -> Result<SlashCommand, String> {
    let mut words = line.split_whitespace();
    let name = words.next().unwrap_or_default();
    let argument = words.next();
    let extra = words.next();
    let no_argument = |command: SlashCommand| match argument {
        None => Ok(command),
        Some(_) => Err(format!("{name} takes no argument")),
    };
    let command = match name {
        "/help" | "/?" => no_argument(SlashCommand::Help),
        "/model" => Ok(SlashCommand::Model(argument.map(str::to_string))),
        "/effort" => match argument.map(str::to_ascii_lowercase).as_deref() {
            None => Ok(SlashCommand::Effort(None)),
            Some("low") => Ok(SlashCommand::Effort(Some(Some(ReasoningEffort::Low)))),
            Some("medium") => Ok(SlashCommand::Effort(Some(Some(ReasoningEffort::Medium)))),
            Some("high") => Ok(SlashCommand::Effort(Some(Some(ReasoningEffort::High)))),
            Some("default" | "none" | "off") => Ok(SlashCommand::Effort(Some(None))),
            Some(other) => Err(format!(
                "unknown effort {other:?}: use low, medium, high or default"
            )),
        },
        "/reset" | "/new" | "/clear" => no_argument(SlashCommand::Reset),
        "/undo" => no_argument(SlashCommand::Undo),
        "/compact" => no_argument(SlashCommand::Compact),
        "/rewind" => match argument.map(str::parse::<u32>) {
            None => Ok(SlashCommand::Rewind(None)),
            Some(Ok(n)) if n > 0 => Ok(SlashCommand::Rewind(Some(n))),
            Some(_) => Err(format!(
                "/rewind takes an input number (1 or more), not {:?}",
                argument.unwrap_or_default()
            )),
        },
        "/status" => no_argument(SlashCommand::Status),
        "/cost" => no_argument(SlashCommand::Cost),
        "/diff" => no_argument(SlashCommand::Diff),
        "/expand" => no_argument(SlashCommand::Expand),
        "/sessions" => no_argument(SlashCommand::Sessions),
        "/init" => no_argument(SlashCommand::Init),
        "/approval" | "/approvals" => match argument.map(str::parse::<ApprovalMode>) {
            None => Ok(SlashCommand::Approval(None)),
            Some(Ok(mode)) => Ok(SlashCommand::Approval(Some(mode))),
            Some(Err(message)) => Err(message),
        },
        "/sandbox" => no_argument(SlashCommand::Sandbox),
        "/mcp" => no_argument(SlashCommand::Mcp),
        "/quit" | "/exit" | "/q" => no_argument(SlashCommand::Quit),
        other => Err(format!("unknown command {other}\n{}", help())),
    };
    match (command, extra) {
        (Ok(_), Some(_)) => Err(format!("{name}: too many arguments")),
        (command, _) => command,
    }
}

/// Whether `name` (without its slash) is a built-in command, which a custom one cannot take.
pub fn is_builtin(name: &str) -> bool {
    matches!(
        name,
        "help"
            | "?"
            | "model"
            | "effort"
            | "reset"
            | "new"
            | "clear"
            | "undo"
            | "compact"
            | "rewind"
            | "status"
            | "cost"
            | "diff"
            | "expand"
            | "sessions"
            | "init"
            | "approval"
            | "approvals"
            | "sandbox"
            | "mcp"
            | "quit"
            | "exit"
            | "q"
    )
}

/// The custom commands, one per line, for `/help`.
pub fn custom_help(custom: &[agent_host::extensions::CustomCommand]) -> String {
    let width = custom.iter().map(|c| c.usage().len()).max().unwrap_or(0);
    let mut text = String::from("custom commands (.agent/commands, the user's commands folder):");
    for command in custom {
        // The repository's text, escaped; the line break is ours.
        let line = format!("  {:width$}  {}", command.usage(), command.summary());
        text.push('\n');
        text.push_str(&crate::terminal_text::one_line(&line));
    }
    text
}

/// The commands and the keys, one per line.
pub fn help() -> String {
    let width = COMMANDS.iter().map(|(c, _)| c.len()).max().unwrap_or(0);
    let mut text = String::from("commands:");
    for (command, description) in COMMANDS {
        text.push_str(&format!("\n  {command:width$}  {description}"));
    }
    text.push_str(
        "\nkeys: Enter sends; Alt-Enter, Ctrl-J or \\ then Enter start a new line\n      \
         a line typed while the agent works steers it\n      \
         Esc or Ctrl-C cancels the current input (Ctrl-C twice quits); Ctrl-D quits\n      \
         Up/Down browse earlier inputs (saved across chats); Ctrl-R searches them\n      \
         Tab completes commands and paths; Ctrl-G edits the input in $EDITOR; Ctrl-O shows the last output\n\
         input: @path attaches a file; !command runs it in the sandbox (its output goes with the next input)\n      \
         //text sends /text as a message",
    );
    text
}

/// Runs a command that acts on the idle session; what to print.
pub async fn apply(command: SlashCommand, agent: &mut Agent, p: &Palette) -> String {
    match command {
        SlashCommand::Help => help(),
        // The driver answers these itself.
        SlashCommand::Quit
        | SlashCommand::Status
        | SlashCommand::Cost
        | SlashCommand::Diff
        | SlashCommand::Expand
        | SlashCommand::Sessions
        | SlashCommand::Init
        | SlashCommand::Approval(None)
        | SlashCommand::Sandbox
        | SlashCommand::Mcp => String::new(),
        SlashCommand::Approval(Some(mode)) => match agent.set_approval(mode).await {
            Ok(()) => format!("approval: {mode} from the next call ({})", approval_meaning(mode)),
            Err(e) => p.red(&format!("error: cannot change the approval mode: {e:#}")),
        },
        SlashCommand::Model(None) => {
            let config = agent.config();
            format!("model: {} (provider {})", config.model, config.endpoint)
        }
        SlashCommand::Model(Some(model)) => match agent.switch_model(&model).await {
            Ok(()) => format!("model: {model} (the conversation continues)"),
            Err(e) => p.red(&format!("error: cannot switch to {model}: {e:#}")),
        },
        SlashCommand::Effort(None) => {
            format!(
                "reasoning effort: {}",
                effort_name(agent.config().reasoning_effort)
            )
        }
        SlashCommand::Effort(Some(effort)) => match agent.set_effort(effort).await {
            Ok(()) => format!(
                "reasoning effort: {} (from the next request)",
                effort_name(effort)
            ),
            Err(e) => p.red(&format!("error: {e:#}")),
        },
        SlashCommand::Compact => match agent.session().compact().await {
            Ok(report) => format!(
                "conversation compacted: {} → {} items, ~{} → ~{} tokens (estimated)",
                report.turns_before, report.turns_after, report.tokens_before, report.tokens_after
            ),
            Err(e) => p.red(&format!("error: {e}")),
        },
        SlashCommand::Undo => restored(agent.session().undo().await, agent, p),
        SlashCommand::Rewind(Some(n)) => restored(agent.session().restore(n).await, agent, p),
        SlashCommand::Rewind(None) => match agent.session().checkpoints().await {
            Ok(list) => crate::undo_cmd::list_text(&list, "/rewind N"),
            Err(e) => p.red(&format!("error: {e}")),
        },
        SlashCommand::Reset => match agent.reset().await {
            Ok(()) => format!("new session {}", agent.session_id()),
            Err(e) => p.red(&format!("error: {e:#}")),
        },
    }
}

/// What a restore did, or why it did not happen.
fn restored(
    result: Result<agent_host::embed::Restored, agent_host::embed::Error>,
    agent: &Agent,
    p: &Palette,
) -> String {
    match result {
        Ok(restored) => format!(
            "{}\n(the model is told with your next message)",
            crate::undo_cmd::restored_text(&restored, &agent.workspace())
        ),
        Err(e) => p.red(&format!("error: {e}")),
    }
}

/// What a mode does, in a few words.
pub fn approval_meaning(mode: ApprovalMode) -> &'static str {
    match mode {
        ApprovalMode::Auto => "writes and commands run without asking; dangerous commands are asked about",
        ApprovalMode::Ask => "you are asked before each write and command",
        ApprovalMode::ReadOnly => "only reading: writes and commands are refused",
    }
}

/// The effort as the user types it.
pub fn effort_name(effort: Option<ReasoningEffort>) -> &'static str {
    match effort {
        None => "default",
        Some(ReasoningEffort::Low) => "low",
        Some(ReasoningEffort::Medium) => "medium",
        Some(ReasoningEffort::High) => "high",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_and_their_arguments_parse() {
        assert_eq!(parse("/help"), Ok(SlashCommand::Help));
        assert_eq!(parse("/model"), Ok(SlashCommand::Model(None)));
        assert_eq!(
            parse("/model claude-opus-4-1"),
            Ok(SlashCommand::Model(Some("claude-opus-4-1".into())))
        );
        assert_eq!(
            parse("/effort HIGH"),
            Ok(SlashCommand::Effort(Some(Some(ReasoningEffort::High))))
        );
        assert_eq!(parse("/effort default"), Ok(SlashCommand::Effort(Some(None))));
        assert_eq!(parse("/quit"), Ok(SlashCommand::Quit));
        assert_eq!(parse("/undo"), Ok(SlashCommand::Undo));
        assert_eq!(parse("/compact"), Ok(SlashCommand::Compact));
        assert_eq!(parse("/rewind"), Ok(SlashCommand::Rewind(None)));
        assert_eq!(parse("/rewind 2"), Ok(SlashCommand::Rewind(Some(2))));
        assert_eq!(parse("/status"), Ok(SlashCommand::Status));
        assert_eq!(parse("/diff"), Ok(SlashCommand::Diff));
        assert_eq!(parse("/approval"), Ok(SlashCommand::Approval(None)));
        assert_eq!(
            parse("/approval read-only"),
            Ok(SlashCommand::Approval(Some(ApprovalMode::ReadOnly)))
        );
        assert_eq!(parse("/sandbox"), Ok(SlashCommand::Sandbox));
        assert_eq!(parse("/mcp"), Ok(SlashCommand::Mcp));
        for name in names() {
            assert!(is_builtin(&name), "{name}");
        }
    }

    #[test]
    fn mistakes_say_what_was_wrong() {
        let unknown = parse("/frobnicate").unwrap_err();
        assert!(unknown.contains("unknown command /frobnicate") && unknown.contains("/effort"));
        assert!(
            parse("/effort extreme")
                .unwrap_err()
                .contains("low, medium, high")
        );
        assert!(parse("/reset now").unwrap_err().contains("takes no argument"));
        assert!(parse("/model a b").unwrap_err().contains("too many"));
        assert!(parse("/undo 2").unwrap_err().contains("takes no argument"));
        assert!(
            parse("/approval never")
                .unwrap_err()
                .contains("use auto, ask or read-only")
        );
        for bad in ["/rewind 0", "/rewind two", "/rewind -1"] {
            assert!(
                parse(bad).unwrap_err().contains("input number (1 or more)"),
                "{bad}"
            );
        }
    }
}
