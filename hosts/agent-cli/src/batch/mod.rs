//! `agent-host batch TASKS.jsonl`: many tasks on this machine, `--jobs` at a time, each in its
//! own copy of its workspace, each leaving its result, its changes as a patch and its event
//! log in the output folder; a re-run skips the tasks that completed or stopped.

mod report;
mod task;
mod workspace;

use agent_host::embed::{EventData, SessionOptions, StopReason};
use agent_host::environments::EnvOptions;
use report::{TaskResult, TaskState};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Instant;
use task::Task;

/// `agent-host batch`'s options; those of `run` apply to every task, a task's own line wins.
#[derive(clap::Args)]
pub struct BatchArgs {
    /// The tasks, one JSON object per line: id, instruction, workspace ({"dir": ...} or
    /// {"git": ..., "rev": ...}), and optionally provider, model, limits, sandbox.
    pub tasks: PathBuf,
    /// Tasks run at once.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=256))]
    pub jobs: u32,
    /// Where each task's folder goes (workspace/, result.json, changes.patch, events.jsonl).
    #[arg(long, default_value = "batch-out")]
    pub out: PathBuf,
    /// Provider of tasks that name none.
    #[arg(long)]
    pub provider: Option<String>,
    /// Model of tasks that name none.
    #[arg(long)]
    pub model: Option<String>,
    #[command(flatten)]
    pub env: EnvOptions,
    #[command(flatten)]
    pub settings: agent_host::config::SettingsFlags,
    #[command(flatten)]
    pub plugins: agent_host::config::PluginOptions,
}

pub async fn run(component: PathBuf, args: BatchArgs) -> ExitCode {
    let text = match std::fs::read_to_string(&args.tasks) {
        Ok(text) => text,
        Err(e) => {
            return crate::fail(
                crate::exit::USAGE,
                format!("cannot read {}: {e}", args.tasks.display()),
            );
        }
    };
    let tasks = match task::parse(&text, &args.tasks) {
        Ok(tasks) => tasks,
        Err(message) => return crate::fail(crate::exit::USAGE, message),
    };
    if let Err(e) = std::fs::create_dir_all(&args.out) {
        return crate::fail(
            crate::exit::USAGE,
            format!("cannot create {}: {e}", args.out.display()),
        );
    }
    let progress = indicatif::ProgressBar::new(tasks.len() as u64).with_style(
        indicatif::ProgressStyle::with_template("{bar:30} {pos}/{len} tasks  {elapsed}  {msg}")
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
    );
    let args = Arc::new(args);
    let component = Arc::new(component);
    let slots = Arc::new(tokio::sync::Semaphore::new(args.jobs as usize));
    let mut running = tokio::task::JoinSet::new();
    let mut results: Vec<Option<(TaskResult, bool)>> = vec![None; tasks.len()];
    for (index, task) in tasks.into_iter().enumerate() {
        let folder = args.out.join(&task.id);
        // A failed task is tried again; one that completed or was stopped by a limit is not.
        if let Some(done) = report::finished(&folder).filter(|r| r.state != TaskState::Failed) {
            progress.inc(1);
            results[index] = Some((done, true));
            continue;
        }
        let (args, component, slots, progress) =
            (args.clone(), component.clone(), slots.clone(), progress.clone());
        running.spawn(async move {
            let Ok(_slot) = slots.acquire_owned().await else {
                return (
                    index,
                    failed(&task.id, "the batch was stopped".to_string(), Instant::now()),
                );
            };
            progress.set_message(task.id.clone());
            let result = run_task(&component, &args, &task, &folder).await;
            let line = format!(
                "{}: {}",
                result.id,
                crate::terminal_text::one_line(&outcome_line(&result))
            );
            // Off a terminal the bar is hidden, and so is what it prints.
            if progress.is_hidden() {
                eprintln!("{line}");
            } else {
                progress.println(line);
            }
            progress.inc(1);
            (index, result)
        });
    }
    while let Some(joined) = running.join_next().await {
        match joined {
            Ok((index, result)) => results[index] = Some((result, false)),
            Err(e) => eprintln!("agent-host: a batch task panicked: {e}"),
        }
    }
    progress.finish_and_clear();
    let results: Vec<(TaskResult, bool)> = results.into_iter().flatten().collect();
    print!("{}", report::table(&results));
    let _ = std::io::stdout().flush();
    if results.iter().all(|(r, _)| r.state == TaskState::Completed) {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(crate::exit::AGENT_ERROR)
    }
}

fn outcome_line(result: &TaskResult) -> String {
    match (&result.error, &result.stop_reason) {
        (Some(error), _) => format!("failed: {error}"),
        (None, Some(stop)) => {
            let files = match result.changed_files.len() {
                1 => "1 file".to_string(),
                n => format!("{n} files"),
            };
            format!("{stop} after {} turns, {files} changed", result.turns)
        }
        (None, None) => "finished".to_string(),
    }
}

fn failed(id: &str, error: String, started: Instant) -> TaskResult {
    TaskResult {
        id: id.to_string(),
        state: TaskState::Failed,
        stop_reason: None,
        error: Some(error),
        turns: 0,
        prompt_tokens: 0,
        output_tokens: 0,
        cost_usd: None,
        final_text: String::new(),
        changed_files: Vec::new(),
        duration_ms: started.elapsed().as_millis() as u64,
    }
}

/// Runs one task in `folder` (started again from nothing if an earlier run left it
/// unfinished) and writes its result there.
async fn run_task(component: &Path, args: &BatchArgs, task: &Task, folder: &Path) -> TaskResult {
    let started = Instant::now();
    let mut result = match prepare(task, folder) {
        Ok(()) => session(component, args, task, folder, started).await,
        Err(error) => failed(&task.id, error, started),
    };
    let (base, workspace) = (folder.join(BASE), folder.join("workspace"));
    if base.is_dir() {
        let (patch, changed) = workspace::changes(&base, &workspace);
        result.changed_files = changed;
        if let Err(e) = std::fs::write(folder.join("changes.patch"), patch) {
            result = failed(&task.id, format!("cannot write its patch: {e}"), started);
        }
        let _ = std::fs::remove_dir_all(&base);
    }
    result.duration_ms = started.elapsed().as_millis() as u64;
    if let Err(error) = report::write(folder, &result) {
        eprintln!("agent-host: {error}");
    }
    result
}

/// The copy of the workspace as it was, for the patch; removed once the patch is written.
const BASE: &str = ".base";

fn prepare(task: &Task, folder: &Path) -> Result<(), String> {
    if folder.exists() {
        std::fs::remove_dir_all(folder).map_err(|e| format!("cannot clear {}: {e}", folder.display()))?;
    }
    std::fs::create_dir_all(folder).map_err(|e| format!("cannot create {}: {e}", folder.display()))?;
    let workspace = folder.join("workspace");
    workspace::prepare(&task.workspace, &workspace)?;
    workspace::copy_tree(&workspace, &folder.join(BASE), true)
}

/// The task's session over its workspace, with `run`'s settings and the task's own; its
/// events written to `events.jsonl` as they come.
async fn session(
    component: &Path,
    args: &BatchArgs,
    task: &Task,
    folder: &Path,
    started: Instant,
) -> TaskResult {
    let fail = |error: String| failed(&task.id, error, started);
    let mut env = args.env.clone();
    env.cwd = Some(folder.join("workspace"));
    if let Some(mode) = &task.sandbox {
        match mode.parse() {
            Ok(mode) => env.sandbox = Some(mode),
            Err(e) => return fail(format!("sandbox: {e}")),
        }
    }
    let overrides = args.settings.overrides(
        task.provider.clone().or_else(|| args.provider.clone()),
        task.model.clone().or_else(|| args.model.clone()),
        task.limits.max_turns,
        &env,
    );
    let settings = match crate::load_settings(&env, args.plugins.config.as_deref(), overrides) {
        Ok(settings) => settings,
        Err(e) => return fail(e),
    };
    let target = match settings.target() {
        Ok(target) => target,
        Err(e) => return fail(e),
    };
    let env_options = settings.env_options(env);
    let policy = settings.approval_policy(None, env_options.allow_dangerous_commands);
    let environment = match env_options.build().await {
        Ok(environment) => environment,
        Err(e) => return fail(e),
    };
    let mut config = settings.session_config(&target);
    let limits = &task.limits;
    if let Some(rounds) = limits.max_tool_rounds {
        config.limits.max_tool_rounds_per_input = rounds;
    }
    if let Some(tokens) = limits.max_session_tokens {
        config.limits.max_session_tokens = tokens;
    }
    if let Some(cents) = limits.max_cost_cents {
        config.limits.max_cost_cents = cents;
    }
    let host = match crate::host_for(
        component,
        settings.endpoints.clone(),
        policy,
        (environment.clone(), &env_options),
        &args.plugins,
        &mut config,
    )
    .await
    {
        Ok(host) => host,
        Err((_, e)) => return fail(e),
    };
    let options = SessionOptions {
        config: Some(config),
        environment: Some(environment),
        read_only: env_options.read_only,
        ..SessionOptions::default()
    };
    let session = match host.open_session(options).await {
        Ok(session) => session,
        Err(e) => return fail(e.to_string()),
    };
    let log = folder.join("events.jsonl");
    let mut events = session.events();
    let recorder = tokio::spawn(async move {
        let mut file = std::fs::File::create(&log).ok();
        let mut usage = None;
        while let Some(event) = events.next().await {
            if let Some(file) = file.as_mut() {
                let _ = writeln!(file, "{}", event.to_json());
            }
            if let (None, EventData::ProcessingEnd { session_usage, .. }) = (&event.agent_id, &event.data) {
                usage = Some(*session_usage);
            }
        }
        usage
    });
    let outcome = session.submit(&task.instruction).await;
    let _ = session.close().await;
    drop(session);
    let usage = recorder.await.ok().flatten().unwrap_or_default();
    let mut result = match outcome {
        Err(error) => fail(error.to_string()),
        Ok(outcome) => TaskResult {
            state: match outcome.stop_reason {
                StopReason::Completed => TaskState::Completed,
                _ => TaskState::Stopped,
            },
            stop_reason: serde_json::to_value(outcome.stop_reason)
                .ok()
                .and_then(|v| v.as_str().map(str::to_string)),
            turns: outcome.turns,
            final_text: outcome.final_text,
            ..fail(String::new())
        },
    };
    if result.state != TaskState::Failed {
        result.error = None;
    }
    result.prompt_tokens = usage.prompt_tokens;
    result.output_tokens = usage.output_tokens;
    result.cost_usd = usage.cost_usd;
    result
}
