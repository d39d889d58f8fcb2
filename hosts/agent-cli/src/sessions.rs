//! Saved sessions on the command line: how `run` saves its session, `agent-host sessions`
//! and `agent-host resume`.

use crate::run_cmd::{RunChoice, run};
use crate::task_input::{Pipe, TaskInput};
use crate::terminal_text::{multi_line, one_line};
use crate::{exit, fail};
use agent_host::config::{PluginOptions, SettingsFlags};
use agent_host::embed::{Error, Host, ResumeOptions, Session, SessionOptions};
use agent_host::environments::EnvOptions;
use agent_host::persist::{PersistError, SessionMeta, SessionStore, StoredSession, continuation_prompt};
use std::io::{BufRead, IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// `run`'s flag about saving.
#[derive(Debug, Clone, Default, clap::Args)]
#[command(next_help_heading = "Sessions")]
pub struct PersistOptions {
    /// Do not save the session (by default every run is saved, as it goes, under
    /// $AGENT_HOST_STATE_DIR, else ~/.local/state/agent-host, for `agent-host resume`).
    #[arg(long)]
    pub no_persist: bool,
}

impl PersistOptions {
    pub fn persistence(&self) -> Persistence {
        match self.no_persist {
            true => Persistence::Off,
            false => Persistence::New,
        }
    }
}

/// Whether and how a run's session is saved.
pub enum Persistence {
    /// Journaled in memory only (traps are still recovered).
    Off,
    /// Saved as a new session.
    New,
    /// Continues a saved session.
    Resume(Box<StoredSession>),
}

impl Persistence {
    /// Starts (or resumes) the run's session; `options` is what a new session gets (its
    /// configuration also starts a resumed session's subagents). The error is the exit code
    /// and the message to show.
    pub async fn open(
        self,
        host: &Host,
        mut options: SessionOptions,
        json: bool,
    ) -> Result<Session, (u8, String)> {
        let started = start_failure;
        match self {
            Self::Off => host.open_session(options).await.map_err(started),
            Self::New => {
                options.store = Some(default_store().map_err(|m| (exit::USAGE, m))?);
                let session = host.open_session(options).await.map_err(started)?;
                if !json {
                    let id = session.id();
                    eprintln!("session {id} (resume with: agent-host resume {})", short(id));
                }
                Ok(session)
            }
            Self::Resume(stored) => {
                let config = options.config.clone();
                let resume = ResumeOptions {
                    environment: options.environment.clone(),
                    model: config.as_ref().map(|c| c.model.clone()),
                    more_turns: config.as_ref().map(|c| c.limits.max_turns),
                    config,
                    read_only: options.read_only,
                };
                let session = host.resume_session(&stored, resume).await.map_err(|e| match e {
                    Error::Options(message) => (exit::USAGE, message),
                    other => (
                        exit::AGENT_ERROR,
                        format!("cannot resume session {}: {other}", stored.id()),
                    ),
                })?;
                if !json {
                    let summary = stored.summary();
                    eprintln!(
                        "resumed session {} ({} inputs, {} tool calls, {} turns so far)",
                        stored.id(),
                        summary.inputs.len(),
                        summary.tool_calls,
                        summary.turns
                    );
                }
                Ok(session)
            }
        }
    }
}

/// The exit code and message for a session that did not start.
pub(crate) fn start_failure(error: Error) -> (u8, String) {
    match error {
        // A bad option or a name clash among host tools is the configuration's fault.
        Error::Options(message) => (exit::USAGE, message),
        Error::Storage(message) => (
            exit::AGENT_ERROR,
            format!("cannot save the session ({message}); --no-persist runs without saving"),
        ),
        other => (
            exit::AGENT_ERROR,
            format!("the component failed to start a session: {other}"),
        ),
    }
}

pub(crate) fn default_store() -> Result<SessionStore, String> {
    SessionStore::open_default().ok_or_else(|| {
        "cannot tell where to save sessions (no home directory): set AGENT_HOST_STATE_DIR, or pass --no-persist"
            .to_string()
    })
}

/// The start of an id that `resume` accepts (ids are UUIDs: 8 characters are plenty).
pub(crate) fn short(id: &str) -> &str {
    id.get(..8).unwrap_or(id)
}

#[derive(Debug, Clone, clap::Args)]
pub struct SessionsArgs {
    /// Print the sessions as one JSON array.
    #[arg(long)]
    json: bool,
    /// Sessions of every workspace (default: those of the working directory).
    #[arg(long)]
    all: bool,
    /// The workspace whose sessions to list (default: the current directory).
    #[arg(short = 'C', long = "cd", visible_alias = "cwd", value_name = "DIR")]
    cwd: Option<PathBuf>,
}

/// `agent-host sessions`: newest first.
pub fn list(args: SessionsArgs) -> ExitCode {
    let store = match default_store() {
        Ok(store) => store,
        Err(message) => return fail(exit::USAGE, message),
    };
    let (sessions, warnings) = match store.list() {
        Ok(listed) => listed,
        Err(e) => return fail(exit::AGENT_ERROR, e),
    };
    for warning in warnings {
        eprintln!("agent-host: warning: skipped {warning}");
    }
    let total = sessions.len();
    let sessions: Vec<SessionMeta> = match args.all {
        true => sessions,
        false => {
            let dir = match args.cwd.map_or_else(std::env::current_dir, Ok) {
                Ok(dir) => std::fs::canonicalize(&dir).unwrap_or(dir),
                Err(e) => return fail(exit::USAGE, format!("cannot read the current directory: {e}")),
            };
            let dir = dir.to_string_lossy();
            sessions.into_iter().filter(|s| s.workspace == dir).collect()
        }
    };
    if args.json {
        return match serde_json::to_string_pretty(&sessions) {
            Ok(text) => {
                println!("{text}");
                ExitCode::SUCCESS
            }
            Err(e) => fail(exit::AGENT_ERROR, e),
        };
    }
    if sessions.len() < total {
        eprintln!(
            "({} sessions of other workspaces are not shown: --all lists them)",
            total - sessions.len()
        );
    }
    if sessions.is_empty() {
        eprintln!("no saved sessions in {}", store.root().display());
        return ExitCode::SUCCESS;
    }
    let mut out = std::io::stdout().lock();
    let workspace_column = |s: &str| {
        if args.all {
            format!("{s:<30}  ")
        } else {
            String::new()
        }
    };
    let _ = writeln!(
        out,
        "{:<8}  {:<16}  {:<14}  {:>5}  {}TASK",
        "ID",
        "UPDATED",
        "STATUS",
        "TURNS",
        workspace_column("WORKSPACE")
    );
    for session in &sessions {
        let _ = writeln!(
            out,
            "{:<8}  {:<16}  {:<14}  {:>5}  {}{}",
            short(&session.id),
            local_time(&session.updated),
            session.status,
            session.turns,
            workspace_column(&elide(&session.workspace, 30, true)),
            elide(
                &one_line(session.first_input.as_deref().unwrap_or("-")),
                60,
                false
            )
        );
    }
    ExitCode::SUCCESS
}

/// The saved sessions of `workspace` that started (one that never did has nothing to
/// continue), newest first.
pub(crate) fn sessions_of(workspace: &Path) -> Result<Vec<SessionMeta>, String> {
    let store = default_store()?;
    let here = std::fs::canonicalize(workspace).unwrap_or_else(|_| workspace.to_path_buf());
    let here = here.to_string_lossy();
    let (sessions, _) = store.list().map_err(|e| e.to_string())?;
    Ok(sessions
        .into_iter()
        .filter(|s| s.workspace == here && !s.endpoint.is_empty())
        .collect())
}

/// One line per session (at most `max`): its short id, when, its turns and first input.
pub(crate) fn picker_lines(sessions: &[SessionMeta], max: usize) -> Vec<String> {
    sessions
        .iter()
        .take(max)
        .map(|s| {
            format!(
                "{}  {}  {:>3} turns  {}",
                short(&s.id),
                local_time(&s.updated),
                s.turns,
                elide(&one_line(s.first_input.as_deref().unwrap_or("-")), 60, false)
            )
        })
        .collect()
}

fn local_time(rfc3339: &str) -> String {
    chrono::DateTime::parse_from_rfc3339(rfc3339)
        .map(|t| {
            t.with_timezone(&chrono::Local)
                .format("%Y-%m-%d %H:%M")
                .to_string()
        })
        .unwrap_or_else(|_| rfc3339.to_string())
}

/// `text` in at most `width` characters, cut at its start (paths) or its end.
fn elide(text: &str, width: usize, keep_end: bool) -> String {
    let count = text.chars().count();
    if count <= width {
        return text.to_string();
    }
    match keep_end {
        true => format!("…{}", text.chars().skip(count + 1 - width).collect::<String>()),
        false => format!("{}…", text.chars().take(width - 1).collect::<String>()),
    }
}

#[derive(Debug, Clone, clap::Args)]
#[command(mut_arg("cwd", |arg| arg.help("Working directory of the agent (default: the session's own workspace)")))]
pub struct ResumeArgs {
    /// The session's id, or its beginning (`agent-host sessions` lists them).
    id: String,
    /// What to do next (`-`: read it from standard input). Without it, an input the session
    /// was interrupted in is continued; otherwise the task is asked for on a terminal.
    #[command(flatten)]
    input: TaskInput,
    /// Print one JSON object per event instead of readable text.
    #[arg(long)]
    json: bool,
    /// Another model of the session's provider (default: the session's model). The provider
    /// stays: the history holds calls of its profile's tools.
    #[arg(short = 'm', long, help_heading = "Model")]
    model: Option<String>,
    /// Stop after this many more LLM turns (0 = unlimited).
    #[arg(
        long,
        value_name = "N",
        default_value_t = 0,
        help_heading = "Approvals and budgets"
    )]
    max_turns: u32,
    /// auto, ask or read-only (default: the configuration's). The session keeps its own
    /// effort, budgets and other settings: they are part of its saved configuration.
    #[arg(
        short = 'a',
        long,
        value_name = "MODE",
        help_heading = "Approvals and budgets"
    )]
    approval: Option<agent_host::approval::ApprovalMode>,
    /// Where tools run (default: the session's own workspace).
    #[command(flatten)]
    env: EnvOptions,
    #[command(flatten)]
    plugins: PluginOptions,
}

/// `agent-host resume`: the saved session in a fresh instance over its workspace, run like
/// `agent-host run`.
pub async fn resume(component: PathBuf, args: ResumeArgs) -> ExitCode {
    let ResumeArgs {
        id,
        input,
        json,
        model,
        max_turns,
        approval,
        env,
        plugins,
    } = args;
    let task = match input.read(Pipe::OnlyWhenAsked) {
        Ok(task) => task,
        Err(message) => return fail(exit::USAGE, message),
    };
    let continued = Continued {
        id,
        task,
        json,
        output_last_message: None,
        model,
        max_turns,
        settings: SettingsFlags {
            approval,
            ..SettingsFlags::default()
        },
        env,
        plugins,
    };
    continue_session(component, continued).await
}

/// A saved session to continue (`resume`, `run --continue`, `run --resume ID`).
pub struct Continued {
    /// The session's id or its beginning.
    pub id: String,
    /// What to do next; `None`: the interrupted input, else asked for on a terminal.
    pub task: Option<String>,
    pub json: bool,
    pub output_last_message: Option<PathBuf>,
    /// Another model of the session's provider.
    pub model: Option<String>,
    /// More LLM turns allowed (0: no limit).
    pub max_turns: u32,
    pub settings: SettingsFlags,
    pub env: EnvOptions,
    pub plugins: PluginOptions,
}

/// Runs the next input of a saved session in a fresh instance over its workspace.
pub async fn continue_session(component: PathBuf, continued: Continued) -> ExitCode {
    let Continued {
        id,
        task,
        json,
        output_last_message,
        model,
        max_turns,
        settings,
        mut env,
        plugins,
    } = continued;
    let store = match default_store() {
        Ok(store) => store,
        Err(message) => return fail(exit::USAGE, message),
    };
    let stored = match store.load(&id) {
        Ok(stored) => stored,
        Err(e @ (PersistError::NotFound(_) | PersistError::Ambiguous { .. })) => return fail(exit::USAGE, e),
        Err(e) => return fail(exit::AGENT_ERROR, format!("cannot read session {id}: {e}")),
    };
    for warning in &stored.warnings {
        eprintln!("agent-host: warning: {warning}");
    }
    if stored.meta.endpoint.is_empty() {
        return fail(
            exit::AGENT_ERROR,
            format!(
                "session {} never started: there is nothing to resume",
                stored.id()
            ),
        );
    }
    let task = match task {
        Some(task) => task,
        None => match next_task(&stored) {
            Ok(task) => task,
            Err(code) => return code,
        },
    };
    if env.cwd.is_none() && env.env.is_none() {
        env.cwd = Some(PathBuf::from(&stored.meta.workspace));
    }
    let choice = RunChoice {
        provider: Some(stored.meta.endpoint.clone()),
        model: Some(model.unwrap_or_else(|| stored.meta.model.clone())),
        json,
        output_schema: None,
        output_last_message,
        max_turns: Some(max_turns),
        settings,
        record_replay: Default::default(),
        persistence: Persistence::Resume(Box::new(stored)),
    };
    run(component, task, env, plugins, choice).await
}

/// The id of the most recently updated session of `workspace` (default: the current
/// directory).
pub(crate) fn latest_session_of(workspace: Option<&Path>) -> Result<String, String> {
    let here = match workspace {
        Some(dir) => dir.to_path_buf(),
        None => std::env::current_dir().map_err(|e| format!("cannot read the current directory: {e}"))?,
    };
    sessions_of(&here)?
        .into_iter()
        .next()
        .map(|s| s.id)
        .ok_or_else(|| {
            format!(
                "no saved session of {}: name one (`agent-host sessions --all` lists them)",
                std::fs::canonicalize(&here).unwrap_or(here).display()
            )
        })
}

/// Without a task: the interrupted input if there is one, else a task typed on the
/// terminal (like Claude Code's `--resume`, which restores and waits for a prompt).
fn next_task(stored: &StoredSession) -> Result<String, ExitCode> {
    if let Some(input) = stored.interrupted_input() {
        eprintln!(
            "continuing the interrupted input: {}",
            elide(&one_line(input.lines().next().unwrap_or_default()), 70, false)
        );
        return Ok(continuation_prompt(&input));
    }
    let summary = stored.summary();
    eprintln!(
        "session {}: {} inputs, {} tool calls, {} turns, last input: {}",
        stored.id(),
        summary.inputs.len(),
        summary.tool_calls,
        summary.turns,
        summary.inputs.last().map_or("-".to_string(), |i| elide(
            &one_line(i.lines().next().unwrap_or_default()),
            60,
            false
        ))
    );
    if let Some(answer) = &summary.last_answer {
        // The model's words, shown again: escaped like when they were first shown.
        eprintln!("last answer: {}", elide(&multi_line(answer.trim()), 200, false));
    }
    let usage = || {
        fail(
            exit::USAGE,
            format!(
                "session {} finished its last input: say what to do next, e.g. agent-host resume {} \"TASK\"",
                stored.id(),
                short(stored.id())
            ),
        )
    };
    if !std::io::stdin().is_terminal() {
        return Err(usage());
    }
    eprint!("task> ");
    let _ = std::io::stderr().flush();
    let mut line = String::new();
    match std::io::stdin().lock().read_line(&mut line) {
        Ok(_) if !line.trim().is_empty() => Ok(line.trim().to_string()),
        _ => Err(usage()),
    }
}
