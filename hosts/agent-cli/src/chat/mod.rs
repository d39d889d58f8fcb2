//! `agent-host chat`: an interactive session in the terminal. Assistant text streams as it
//! arrives, a spinner says what the agent is doing and for how long, tool calls show as
//! one line each with their results folded and file changes as coloured diffs. A line
//! typed while the agent works steers it; when idle it is the next input of the same
//! session. Ctrl-C cancels the current input, twice quits; slash commands change the model,
//! the reasoning effort, or start over.
//!
//! Input is read on its own task (crossterm's event stream in raw mode) and fed to a small
//! line editor, and one task draws everything: a line editor that owned the terminal
//! (rustyline, reedline) would fight the streamed output and the spinner for it.

pub(crate) mod agent;
mod approval_preview;
pub(crate) mod approvals;
mod commands;
pub(crate) mod compose;
mod diff;
mod driver;
mod external;
pub(crate) mod file_changes;
mod history;
mod input;
mod inspect;
mod line_editor;
mod notify;
mod reentry;
mod screen;
mod session_diff;
pub(crate) mod setup;
mod slash;
mod spinner;
mod status_bar;
mod style;
pub(crate) mod tool_lines;
mod view;

use crate::sessions::{PersistOptions, default_store, short};
use crate::{exit, fail};
use agent_host::config::{PluginOptions, SettingsFlags};
use agent_host::environments::EnvOptions;
use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;

/// The flags of `agent-host chat`.
#[derive(Debug, clap::Args)]
pub struct ChatArgs {
    #[command(flatten)]
    pub env: EnvOptions,
    /// Provider: anthropic, openai, gemini, or a server named in
    /// OPENAI_COMPATIBLE_ENDPOINTS (default: the first built-in one configured, else the only
    /// other endpoint configured).
    #[arg(long, help_heading = "Model")]
    pub provider: Option<String>,
    /// Model name (default: $<PROVIDER>_MODEL, else the profile's default); `/model`
    /// changes it during the chat.
    #[arg(short = 'm', long, help_heading = "Model")]
    pub model: Option<String>,
    /// --effort (`/effort` changes it during the chat) and --approval (ask: writes and
    /// commands are asked about in the chat).
    #[command(flatten)]
    pub settings: SettingsFlags,
    #[command(flatten)]
    pub plugins: PluginOptions,
    /// --no-persist: the chat is not saved (by default it is, like a run, for `resume`).
    #[command(flatten)]
    pub persist: PersistOptions,
    /// Re-enter the last session of this workspace, its earlier turns shown.
    #[arg(
        short = 'c',
        long = "continue",
        help_heading = "Sessions",
        conflicts_with = "resume"
    )]
    pub continue_last: bool,
    /// Re-enter a saved session (an id or its beginning); without ID, pick one of this
    /// workspace's from a list.
    #[arg(
        short = 'r',
        long,
        value_name = "ID",
        num_args = 0..=1,
        default_missing_value = "",
        help_heading = "Sessions"
    )]
    pub resume: Option<String>,
}

/// Runs the chat until the user quits.
pub async fn run(component: PathBuf, mut args: ChatArgs) -> ExitCode {
    let here = match &args.env.cwd {
        Some(dir) => dir.clone(),
        None => std::env::current_dir().unwrap_or_default(),
    };
    let resumed = match reentry::choose(args.continue_last, args.resume.as_deref(), &here) {
        Ok(resumed) => resumed,
        Err((code, message)) => return fail(code, message),
    };
    if let Some(stored) = &resumed {
        if args.persist.no_persist {
            return fail(
                exit::USAGE,
                "--no-persist cannot re-enter a saved session (it would not be saved)",
            );
        }
        // The session's own provider, model and workspace, unless the flags say otherwise.
        args.provider = Some(stored.meta.endpoint.clone());
        args.model.get_or_insert_with(|| stored.meta.model.clone());
        if args.env.cwd.is_none() && args.env.env.is_none() {
            args.env.cwd = Some(PathBuf::from(&stored.meta.workspace));
        }
        for warning in &stored.warnings {
            eprintln!("agent-host: warning: {warning}");
        }
    }
    let prepared = match setup::prepare(&component, &args, setup::FromEditor::default()).await {
        Ok(prepared) => prepared,
        Err((code, message)) => return fail(code, message),
    };
    let working_dir = prepared.env.working_directory();
    let saved = !args.persist.no_persist;
    // A built-in command keeps its name.
    let mut custom = crate::custom_commands(&args.env, std::path::Path::new(&working_dir));
    custom.retain(|c| !commands::is_builtin(&c.name));
    let config = prepared.config.clone();
    let store = match args.persist.no_persist {
        true => None,
        false => match default_store() {
            Ok(store) => Some(store),
            Err(message) => return fail(exit::USAGE, message),
        },
    };
    // The input history is kept beside the sessions, and like them not with --no-persist.
    let store_dir = store
        .as_ref()
        .and_then(|s| s.root().parent().map(std::path::Path::to_path_buf));
    let agent = match agent::Agent::start(
        prepared.host,
        prepared.env,
        prepared.config,
        store,
        prepared.changes.clone(),
        resumed.as_ref(),
        agent::Mode {
            approval: prepared.approval,
            read_only: prepared.read_only.clone(),
        },
    )
    .await
    {
        Ok(agent) => agent,
        Err(e) => {
            let (code, message) = crate::sessions::start_failure(e);
            return fail(code, message);
        }
    };
    // Keys one by one only where there is a terminal to type on and to draw on.
    let interactive = std::io::stdin().is_terminal() && std::io::stdout().is_terminal();
    let raw = match interactive {
        true => match input::RawTerminal::enable() {
            Ok(raw) => Some(raw),
            Err(e) => return fail(exit::AGENT_ERROR, format!("cannot set up the terminal: {e}")),
        },
        false => None,
    };
    let palette = style::Palette::detect();
    let mut screen = screen::Screen::new(interactive);
    screen.line(&format!(
        "{} · {} {} · approval {} · sandbox {} · {working_dir}",
        palette.bold("agent-host chat"),
        crate::terminal_text::one_line(&config.endpoint),
        crate::terminal_text::one_line(&config.model),
        prepared.approval,
        prepared.sandbox
    ));
    if resumed.is_some() {
        for line in reentry::earlier_turns(agent.session(), &palette).await {
            screen.line(&line);
        }
    } else if agent.is_saved() {
        let id = short(agent.session_id());
        screen.line(&palette.dim(&format!(
            "session {id}… (come back with: agent-host chat --resume {id})"
        )));
    }
    if interactive {
        screen.line(
            &palette.dim(
                "/help for commands · typing while the agent works steers it · Esc cancels · Ctrl-D quits",
            ),
        );
    }
    let bar = status_bar::StatusBar::new(&config, prepared.approval.to_string(), prepared.sandbox.clone());
    let view = view::ChatView::new(palette, prepared.changes, working_dir, bar, interactive);
    let (inputs, input_control) = input::spawn_reader(interactive);
    let channels = driver::Channels {
        inputs,
        input_control,
        questions: Some(prepared.questions),
    };
    let history = match (&store_dir, interactive) {
        (Some(dir), true) => history::History::load(dir.join(history::FILE_NAME)),
        _ => history::History::unsaved(),
    };
    let editor = line_editor::LineEditor::new(history);
    let mut driver = driver::Driver::new(
        agent,
        screen,
        view,
        palette,
        channels,
        prepared.credential_hint,
        editor,
    );
    driver.custom_commands = custom;
    driver.sandbox_rules = prepared.sandbox_rules;
    driver.mcp = prepared.mcp;
    let (stopped, session_id) = driver.run().await;
    drop(raw);
    if saved {
        // Where the user looks once the chat is gone: how to come back.
        eprintln!(
            "come back to this chat with: agent-host chat --resume {}",
            short(&session_id)
        );
    }
    if !stopped {
        // Returning would drop the runtime, which waits for the worker still running the
        // instance: end here instead (the journal is written line by line, nothing is lost).
        eprintln!("agent-host: the agent did not stop; exiting without waiting for it");
        agent_host::environments::kill_every_command();
        std::process::exit(0);
    }
    ExitCode::SUCCESS
}
