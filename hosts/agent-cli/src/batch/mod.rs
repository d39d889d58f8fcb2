//! `agent-host batch TASKS.jsonl`: many tasks on this machine, `--jobs` at a time, each in its
//! own copy of its workspace, each leaving its result, its changes as a patch and its event
//! log in the output folder; a re-run skips the tasks that completed or stopped.
//!
//! A tasks file may come from someone else: a task can only tighten what the user's flags and
//! configuration allow (sandbox, limits), and its sources must lie under `--sources`.

mod collect;
mod hidden_argument;
mod patch;
mod queue;
mod report;
mod run_task;
mod sources;
mod task;
pub mod worker;
mod workspace;

use agent_host::environments::EnvOptions;
use report::{TaskResult, TaskState};
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use task::Task;

/// `agent-host batch`'s options; those of `run` apply to every task, and a task's own line
/// may only tighten them.
#[derive(clap::Args)]
pub struct BatchArgs {
    /// The tasks, one JSON object per line: id, instruction, workspace ({"dir": ...} or
    /// {"git": ..., "rev": ...}), and optionally provider, model, limits, sandbox,
    /// timeout_sec.
    pub tasks: PathBuf,
    /// Tasks run at once.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=256))]
    pub jobs: u32,
    /// Where each task's folder goes (workspace/, result.json, changes.patch, events.jsonl).
    #[arg(long, default_value = "batch-out")]
    pub out: PathBuf,
    /// The folder workspace.dir folders and local repositories must be in (default: the
    /// tasks file's folder).
    #[arg(long, value_name = "DIR")]
    pub sources: Option<PathBuf>,
    /// Queue the tasks on Redis for `agent-host worker`s instead of running them here (--jobs
    /// then does not apply), and collect their results (`redis://[:PASSWORD@]host:6379/0`,
    /// `redis+unix:///path`; no TLS yet; or $AGENT_HOST_QUEUE, which keeps a password out of
    /// the process list). Workers must see a task's workspace.dir at the same path, and
    /// give tasks their own --task-timeout-sec.
    #[arg(long, value_name = "URL", env = "AGENT_HOST_QUEUE", hide_env_values = true)]
    pub queue: Option<String>,
    /// The queue's name, the prefix of its keys.
    #[arg(long, default_value = "agent-host")]
    pub queue_name: String,
    #[command(flatten)]
    pub options: TaskOptions,
}

/// What every task of a batch (or of a worker) runs with: `run`'s options.
/// Each task runs in its own copy of its workspace, so `--cd` is not offered (and refused).
#[derive(clap::Args)]
#[command(mut_arg("cwd", |arg| arg.hide(true)))]
pub struct TaskOptions {
    /// Provider of tasks that name none.
    #[arg(long, help_heading = "Model")]
    pub provider: Option<String>,
    /// Model of tasks that name none.
    #[arg(short = 'm', long, help_heading = "Model")]
    pub model: Option<String>,
    /// A task still running after this many seconds is given up: its session aborted, its
    /// commands killed, no patch taken, failed with that reason. A task's timeout_sec may
    /// only lower it.
    #[arg(long, default_value_t = 7200, value_parser = clap::value_parser!(u64).range(1..=MAX_TIMEOUT_SEC))]
    pub task_timeout_sec: u64,
    #[command(flatten)]
    pub env: EnvOptions,
    #[command(flatten)]
    pub settings: agent_host::config::SettingsFlags,
    #[command(flatten)]
    pub plugins: agent_host::config::PluginOptions,
}

impl TaskOptions {
    /// A flag that does not apply to tasks, named with why.
    pub fn refused_flag(&self) -> Option<String> {
        self.env.cwd.as_ref().map(|_| {
            "--cd does not apply to tasks: each runs in its own copy of its workspace (the task's \
             \"workspace\": {\"dir\": ...} or {\"git\": ...})"
                .to_string()
        })
    }
}

/// The longest deadline a task can be given (a year): a deadline must stay a time the
/// clock can name.
const MAX_TIMEOUT_SEC: u64 = 365 * 24 * 3600;

/// A task's result, and whether an earlier run left it.
struct Row {
    result: TaskResult,
    earlier: bool,
}

pub async fn run(component: PathBuf, args: BatchArgs) -> ExitCode {
    if let Some(url) = &args.queue {
        hidden_argument::hide_queue_password(url);
    }
    let usage = |message: String| crate::fail(crate::exit::USAGE, message);
    if let Some(message) = args.options.refused_flag() {
        return usage(message);
    }
    let text = match std::fs::read_to_string(&args.tasks) {
        Ok(text) => text,
        Err(e) => return usage(format!("cannot read {}: {e}", args.tasks.display())),
    };
    let tasks = match task::parse(&text, &args.tasks) {
        Ok(tasks) => tasks,
        Err(message) => return usage(message),
    };
    if let Err(e) = std::fs::create_dir_all(&args.out) {
        return usage(format!("cannot create {}: {e}", args.out.display()));
    }
    let root = args.sources.clone().unwrap_or_else(|| match args.tasks.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir.to_path_buf(),
        _ => PathBuf::from("."),
    });
    if let Err(message) = sources::check_all(&tasks, &root, &args.out) {
        return usage(message);
    }
    stop_commands_on_ctrl_c();
    let progress = indicatif::ProgressBar::new(tasks.len() as u64).with_style(
        indicatif::ProgressStyle::with_template("{bar:30} {pos}/{len} tasks  {elapsed}  {msg}")
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
    );
    let mut rows: Vec<Option<Row>> = Vec::new();
    rows.resize_with(tasks.len(), || None);
    let ids: Vec<String> = tasks.iter().map(|t| t.id.clone()).collect();
    let mut pending = Vec::new();
    for (index, task) in tasks.into_iter().enumerate() {
        // A failed task is tried again; one that completed or was stopped by a limit is not.
        match report::finished(&args.out.join(&task.id)).filter(|r| r.state != TaskState::Failed) {
            Some(done) => {
                progress.inc(1);
                rows[index] = Some(Row {
                    result: done,
                    earlier: true,
                });
            }
            None => pending.push((index, task)),
        }
    }
    let finished = |result: &TaskResult| {
        let line = format!(
            "{}: {}",
            result.id,
            crate::terminal_text::one_line(&outcome_line(result))
        );
        // Off a terminal the bar is hidden, and so is what it prints.
        if progress.is_hidden() {
            eprintln!("{line}");
        } else {
            progress.println(line);
        }
        progress.inc(1);
    };
    let outcomes = match &args.queue {
        Some(url) => match collect::run(url, &args.queue_name, &args.out, pending, &finished).await {
            Ok(outcomes) => outcomes,
            Err(message) => return crate::fail(crate::exit::AGENT_ERROR, message),
        },
        None => {
            let here = Here {
                component: Arc::new(component),
                options: Arc::new(args.options),
                jobs: args.jobs,
                out: args.out.clone(),
            };
            here.run(pending, &progress, &finished).await
        }
    };
    let mut all_ran = true;
    for outcome in outcomes {
        match outcome {
            Some((index, result)) => {
                rows[index] = Some(Row {
                    result,
                    earlier: false,
                })
            }
            None => all_ran = false,
        }
    }
    progress.finish_and_clear();
    let missing: Vec<&String> = ids
        .iter()
        .zip(&rows)
        .filter(|(_, r)| r.is_none())
        .map(|(id, _)| id)
        .collect();
    let rows: Vec<Row> = rows.into_iter().flatten().collect();
    let table: Vec<(&TaskResult, bool)> = rows.iter().map(|r| (&r.result, r.earlier)).collect();
    print!("{}", report::table(&table));
    if !missing.is_empty() {
        println!(
            "no result for: {}",
            missing.iter().map(|s| s.as_str()).collect::<Vec<_>>().join(", ")
        );
    }
    let _ = std::io::stdout().flush();
    if all_ran && rows.iter().all(|r| r.result.state == TaskState::Completed) {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(crate::exit::AGENT_ERROR)
    }
}

/// Runs tasks on this machine, `jobs` at a time.
struct Here {
    component: Arc<PathBuf>,
    options: Arc<TaskOptions>,
    jobs: u32,
    out: PathBuf,
}

impl Here {
    /// Each task's index and result, as they end (`None` for one that stopped unexpectedly).
    async fn run(
        self,
        pending: Vec<(usize, Task)>,
        progress: &indicatif::ProgressBar,
        finished: &dyn Fn(&TaskResult),
    ) -> Vec<Option<(usize, TaskResult)>> {
        let slots = Arc::new(tokio::sync::Semaphore::new(self.jobs as usize));
        // One task at a time: whatever command is still running after a task's session is
        // that task's.
        let alone = self.jobs == 1;
        let mut running = tokio::task::JoinSet::new();
        for (index, task) in pending {
            let folder = self.out.join(&task.id);
            let (component, options, slots, progress) = (
                self.component.clone(),
                self.options.clone(),
                slots.clone(),
                progress.clone(),
            );
            running.spawn(async move {
                // The semaphore is never closed, so a slot always comes.
                let _slot = slots.acquire_owned().await;
                progress.set_message(task.id.clone());
                (
                    index,
                    run_task::run(&component, &options, &task, &folder, alone).await,
                )
            });
        }
        let mut outcomes = Vec::new();
        while let Some(joined) = running.join_next().await {
            match joined {
                Ok((index, result)) => {
                    finished(&result);
                    outcomes.push(Some((index, result)));
                }
                Err(e) => {
                    eprintln!("agent-host: a batch task stopped unexpectedly: {e}");
                    outcomes.push(None);
                }
            }
        }
        outcomes
    }
}

/// Ctrl-C ends the batch at once, with every command its sessions started (they run in
/// their own process groups, which the terminal's signal does not reach). Unfinished tasks
/// have no result and run again next time.
fn stop_commands_on_ctrl_c() {
    tokio::spawn(async {
        if tokio::signal::ctrl_c().await.is_ok() {
            agent_host::environments::kill_every_command();
            eprintln!("agent-host: batch interrupted; unfinished tasks run again next time");
            std::process::exit(i32::from(crate::exit::INTERRUPTED));
        }
    });
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
