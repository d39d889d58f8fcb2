//! `agent-host run`: one task to completion, each event printed as it happens; `resume`
//! runs through here too.

use crate::event_view::EventView;
use crate::task_input::{Pipe, TaskInput};
use crate::{
    custom_commands, error_hints, exit, fail, host_for, output_schema, run_result, sessions, terminal_prompt,
    terminal_text,
};
use agent_host::config::{PluginOptions, Settings, SettingsFlags, Source, Sourced};
use agent_host::embed::{Error, SessionOptions, StopReason};
use agent_host::environments::EnvOptions;
use agent_host::transport::RecordReplayOptions;
use agent_host::transport::options::REPLAY_REFUSES_CHANGES;
use std::path::PathBuf;
use std::process::ExitCode;

/// How long `run` waits for an interrupted session to stop before it exits anyway.
const INTERRUPT_GRACE: std::time::Duration = std::time::Duration::from_secs(5);

/// The provider and model of a session.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct ModelChoice {
    /// Model name (default: $<PROVIDER>_MODEL, else the provider's default).
    #[arg(short = 'm', long, help_heading = "Model")]
    pub model: Option<String>,
    /// Provider: anthropic, openai, gemini, an endpoint of the configuration or of
    /// OPENAI_COMPATIBLE_ENDPOINTS, or replay (with --replay FILE) (default: the first
    /// built-in one configured, else the only other endpoint configured).
    #[arg(long, help_heading = "Model")]
    pub provider: Option<String>,
}

/// `agent-host run`'s arguments.
#[derive(Debug, clap::Args)]
pub struct RunArgs {
    #[command(flatten)]
    input: TaskInput,
    /// Run a custom command (.agent/commands/NAME.md, or commands/NAME.md in the user's
    /// configuration folder) with TASK as its arguments.
    #[arg(long, value_name = "NAME")]
    command: Option<String>,
    /// Print one JSON object per event instead of readable text, and last a RESULT line: the
    /// state, stop reason, final text, usage, cost, duration and session id.
    #[arg(long)]
    json: bool,
    /// A JSON Schema the final answer must match: asked for through the provider's
    /// structured output, checked, given one repair round, else exit code 4.
    #[arg(long, value_name = "FILE")]
    output_schema: Option<PathBuf>,
    /// Write the agent's final message to FILE when the run ends (emptied if it fails).
    #[arg(short = 'o', long, value_name = "FILE")]
    output_last_message: Option<PathBuf>,
    /// Continue the most recent session of the workspace with TASK, instead of a new one.
    #[arg(short = 'c', long = "continue", conflicts_with = "resume")]
    continue_last: bool,
    /// Continue the saved session ID (or its beginning) with TASK, instead of a new one.
    #[arg(long, value_name = "ID")]
    resume: Option<String>,
    #[command(flatten)]
    model: ModelChoice,
    /// Stop after this many LLM turns (0 = unlimited; default: the configuration, else 0).
    #[arg(long, value_name = "N", help_heading = "Approvals and budgets")]
    max_turns: Option<u32>,
    #[command(flatten)]
    settings: SettingsFlags,
    #[command(flatten)]
    env: EnvOptions,
    #[command(flatten)]
    plugins: PluginOptions,
    #[command(flatten)]
    record_replay: RecordReplayOptions,
    #[command(flatten)]
    persist: sessions::PersistOptions,
}

/// `agent-host run`.
pub async fn run_command(component: PathBuf, args: RunArgs) -> ExitCode {
    let RunArgs {
        input,
        command,
        json,
        output_schema,
        output_last_message,
        continue_last,
        resume,
        model,
        max_turns,
        settings,
        env,
        plugins,
        record_replay,
        persist,
    } = args;
    // A custom command's arguments may be empty; a task may not.
    let pipe = match command {
        Some(_) => Pipe::OnlyWhenAsked,
        None => Pipe::IsTheTask,
    };
    let task = match input.read(pipe) {
        Ok(Some(task)) => Some(task),
        Ok(None) if command.is_some() => None,
        Ok(None) => {
            return fail(
                exit::USAGE,
                "no task: give it as an argument (agent-host run \"fix the failing test\"), with -f FILE, \
                 or on standard input (echo TASK | agent-host run)",
            );
        }
        Err(message) => return fail(exit::USAGE, message),
    };
    let task = match custom_command_prompt(command.as_deref(), task, &env) {
        Ok(task) => task,
        Err(message) => return fail(exit::USAGE, message),
    };
    // Emptied now: a run that fails before it answers leaves no earlier run's answer there.
    if let Some(file) = &output_last_message
        && let Err(message) = run_result::write_last_message(file, None)
    {
        return fail(exit::USAGE, message);
    }
    let output_schema = match output_schema.as_deref().map(output_schema::OutputSchema::read) {
        None => None,
        Some(Ok(schema)) => Some(schema),
        Some(Err(message)) => return fail(exit::USAGE, message),
    };
    let continuing = match (continue_last, resume) {
        (false, None) => None,
        (_, Some(id)) => Some(id),
        (true, None) => match sessions::latest_session_of(env.cwd.as_deref()) {
            Ok(id) => Some(id),
            Err(message) => return fail(exit::USAGE, message),
        },
    };
    if let Some(id) = continuing {
        let refused = [
            (model.provider.is_some(), "--provider (the session keeps its own)"),
            (
                record_replay.record.is_some() || record_replay.replay.is_some(),
                "--record and --replay",
            ),
            (persist.no_persist, "--no-persist"),
            // The saved configuration holds these; a resumed session keeps it.
            (
                settings.effort.is_some()
                    || settings.max_tokens.is_some()
                    || settings.max_cost_cents.is_some(),
                "--effort, --max-session-tokens and --max-cost (the session keeps its own)",
            ),
            (output_schema.is_some(), "--output-schema"),
        ];
        if let Some((_, flag)) = refused.iter().find(|(given, _)| *given) {
            return fail(
                exit::USAGE,
                format!("{flag} cannot be used to continue a session"),
            );
        }
        let continued = sessions::Continued {
            id,
            task: Some(task),
            json,
            output_last_message,
            model: model.model,
            max_turns: max_turns.unwrap_or(0),
            settings,
            env,
            plugins,
        };
        return sessions::continue_session(component, continued).await;
    }
    let choice = RunChoice {
        provider: model.provider,
        model: model.model,
        json,
        output_schema,
        output_last_message,
        max_turns,
        settings,
        record_replay,
        persistence: persist.persistence(),
    };
    run(component, task, env, plugins, choice).await
}

/// What `run` was asked to use.
pub(crate) struct RunChoice {
    pub provider: Option<String>,
    pub model: Option<String>,
    pub json: bool,
    pub output_schema: Option<output_schema::OutputSchema>,
    pub output_last_message: Option<PathBuf>,
    pub max_turns: Option<u32>,
    pub settings: SettingsFlags,
    pub record_replay: RecordReplayOptions,
    pub persistence: sessions::Persistence,
}

pub(crate) async fn run(
    component: PathBuf,
    task: String,
    env_options: EnvOptions,
    plugin_options: PluginOptions,
    choice: RunChoice,
) -> ExitCode {
    let RunChoice {
        mut provider,
        mut model,
        json,
        output_schema,
        output_last_message,
        max_turns,
        settings,
        record_replay,
        persistence,
    } = choice;
    let overrides = settings.overrides(provider.clone(), model.clone(), max_turns, &env_options);
    let mut settings = match Settings::for_command(&env_options, plugin_options.config.as_deref(), overrides)
    {
        Ok(settings) => settings,
        Err(message) => return fail(exit::USAGE, message),
    };
    if let Some(warning) = settings.untrusted_project.as_ref().and_then(|p| p.warning()) {
        // It quotes keys of the untrusted file.
        eprintln!("agent-host: warning: {}", terminal_text::one_line(&warning));
    }
    let replay = match record_replay.open_replay(&mut settings.endpoints, &mut provider, &mut model) {
        Ok(replay) => replay,
        Err(message) => return fail(exit::USAGE, message),
    };
    if let (Some(recording), Some(provider), Some(model)) = (&replay, provider, model) {
        // The recorded session's profile, whatever the endpoint's default is today.
        if let Some(profile) = agent_protocol::Profile::parse(&recording.session().provider) {
            settings
                .endpoint_profile
                .insert(provider.clone(), Sourced::new(profile, Source::flag("--replay")));
        }
        settings.set_target(provider, model, Source::flag("--replay"));
    }
    let target = match settings.target() {
        Ok(target) => target,
        Err(message) => return fail(exit::USAGE, message),
    };
    let provider = target.provider.clone();
    let mut env_options = settings.env_options(env_options);
    if replay.is_some() && !record_replay.replay_trusted {
        env_options.changes_refused = Some(REPLAY_REFUSES_CHANGES.to_string());
    }
    let (approvals, approval_warning) = terminal_prompt::terminal_approvals(&settings, &mut env_options);
    if let Some(warning) = approval_warning {
        eprintln!("agent-host: {warning}");
    }
    let env = match env_options.build().await {
        Ok(env) => env,
        Err(message) => return fail(exit::USAGE, message),
    };
    let mut config = settings.session_config(&target);
    config.output_schema = output_schema.as_ref().map(|schema| schema.value.clone());
    let host = match host_for(
        &component,
        settings.endpoints.clone(),
        approvals,
        (env.clone(), &env_options),
        &plugin_options,
        &mut config,
        Default::default(),
    )
    .await
    {
        Ok((host, _mcp)) => host,
        Err((code, message)) => return fail(code, message),
    };
    if let Some(schema) = &output_schema {
        config.user_instructions = Some(output_schema::with_instructions(
            config.user_instructions.take(),
            schema,
        ));
    }
    // For the hint after an error: what the run used.
    let endpoint = host.endpoints().get(&provider).cloned();
    let model_name = config.model.clone();
    let untrusted_replay = replay.is_some() && !record_replay.replay_trusted;
    let options = SessionOptions {
        config: Some(config),
        environment: Some(env),
        record: record_replay.record.clone(),
        replay: replay.and(record_replay.replay.clone()),
        read_only: env_options.read_only,
        ..SessionOptions::default()
    };
    let session = match persistence.open(&host, options, json).await {
        Ok(session) => session,
        Err((code, message)) => return fail(code, message),
    };
    let mut events = session.events();
    let printer = tokio::spawn(async move {
        let mut view = EventView::new(json);
        while let Some(event) = events.next().await {
            view.show(&event);
        }
        view.finish()
    });
    // Ctrl-C asks for a graceful abort; the loop notices it at its next check (a running
    // command or stream is cut at once) and returns, so the instance stays consistent. A
    // session stuck where no check comes (a host call that never returns) does not hold
    // the user: after a grace period, or at a second Ctrl-C, the process exits.
    let interrupter = {
        let handle = session.handle();
        tokio::spawn(async move {
            if tokio::signal::ctrl_c().await.is_ok() {
                handle.abort();
                let _ = tokio::time::timeout(INTERRUPT_GRACE, tokio::signal::ctrl_c()).await;
                eprintln!(
                    "agent-host: the session did not stop within {} s of Ctrl-C; exiting",
                    INTERRUPT_GRACE.as_secs()
                );
                agent_host::environments::kill_every_command();
                std::process::exit(i32::from(exit::INTERRUPTED));
            }
        })
    };
    let started = std::time::Instant::now();
    let outcome = session.submit(&task).await;
    let (outcome, checked) = match &output_schema {
        Some(schema) => output_schema::settle(&session, schema, outcome).await,
        None => (outcome, None),
    };
    interrupter.abort();
    let session_id = session.id().to_string();
    let _ = session.close().await;
    // The event stream ends with the session.
    drop(session);
    let seen = printer.await.unwrap_or_default();
    let ending_error = seen.ending_error;
    if let Some(file) = &output_last_message
        && let Err(message) = run_result::write_last_message(file, outcome.as_ref().ok())
    {
        eprintln!("agent-host: {message}");
    }
    if json {
        let result = run_result::RunResult {
            session_id: &session_id,
            outcome: outcome.as_ref().map_err(ToString::to_string),
            usage: seen.session_usage,
            duration: started.elapsed(),
            checked: checked.as_ref(),
        };
        println!("{}", result.json_line());
    }
    match outcome {
        Err(error) => {
            let context = error_hints::RunContext {
                provider: &provider,
                model: &model_name,
                endpoint: endpoint.as_ref(),
                untrusted_replay,
            };
            let mut message = error.to_string();
            if let (Error::Llm(_), Some(hint)) =
                (&error, ending_error.and_then(|k| error_hints::hint(k, &context)))
            {
                message = format!("{message}\nhint: {hint}");
            }
            fail(exit::AGENT_ERROR, message)
        }
        Ok(_) if let Some(Err(problem)) = &checked => fail(
            exit::SCHEMA_MISMATCH,
            format!("{problem} (after a repair round); the schema is --output-schema's"),
        ),
        Ok(outcome) => match outcome.stop_reason {
            StopReason::Completed => ExitCode::SUCCESS,
            StopReason::TurnLimit | StopReason::RoundLimit => fail(
                exit::LIMIT,
                format!("stopped by a limit after {} turns", outcome.turns),
            ),
            StopReason::AwaitingInput => ExitCode::SUCCESS,
            StopReason::ContextLength => fail(
                exit::AGENT_ERROR,
                "the conversation no longer fits the model's context window",
            ),
            StopReason::Cancelled | StopReason::Aborted => fail(exit::INTERRUPTED, "interrupted"),
        },
    }
}

/// The task of a run: TASK itself, or with `--command NAME` that command's prompt with TASK
/// as its arguments.
fn custom_command_prompt(
    command: Option<&str>,
    task: Option<String>,
    env: &EnvOptions,
) -> Result<String, String> {
    let Some(name) = command else {
        return Ok(task.unwrap_or_default());
    };
    let name = name.strip_prefix('/').unwrap_or(name);
    let workspace = match &env.cwd {
        Some(dir) => dir.clone(),
        None => std::env::current_dir().map_err(|e| format!("no working directory: {e}"))?,
    };
    let commands = custom_commands(env, &workspace);
    match agent_host::extensions::commands::find(&commands, name) {
        Some(command) => Ok(command.expand(task.as_deref().unwrap_or_default())),
        None => {
            let names: Vec<String> = commands.iter().map(|c| c.name.clone()).collect();
            Err(format!(
                "there is no custom command {name:?} (.agent/commands/{name}.md, or commands/{name}.md in \
                 the user's configuration folder); the commands are: {}",
                if names.is_empty() {
                    "none".to_string()
                } else {
                    names.join(", ")
                }
            ))
        }
    }
}
