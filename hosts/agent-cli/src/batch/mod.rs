//! `agent-host batch TASKS.jsonl`: many tasks on this machine, `--jobs` at a time, each in its
//! own copy of its workspace, each leaving its result, its changes as a patch and its event
//! log in the output folder; a re-run skips the tasks that completed or stopped.
//!
//! A tasks file may come from someone else: a task can only tighten what the user's flags and
//! configuration allow (sandbox, limits), and its sources must lie under `--sources`.

mod report;
mod run_task;
mod sources;
mod task;
mod workspace;

use agent_host::environments::EnvOptions;
use report::{TaskResult, TaskState};
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

/// `agent-host batch`'s options; those of `run` apply to every task, and a task's own line
/// may only tighten them.
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
    /// The folder workspace.dir folders and local repositories must be in (default: the
    /// tasks file's folder).
    #[arg(long, value_name = "DIR")]
    pub sources: Option<PathBuf>,
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

/// A task's result, and whether an earlier run left it.
struct Row {
    result: TaskResult,
    earlier: bool,
}

pub async fn run(component: PathBuf, args: BatchArgs) -> ExitCode {
    let usage = |message: String| crate::fail(crate::exit::USAGE, message);
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
    let (args, component) = (Arc::new(args), Arc::new(component));
    let slots = Arc::new(tokio::sync::Semaphore::new(args.jobs as usize));
    let mut running = tokio::task::JoinSet::new();
    let mut rows: Vec<Option<Row>> = Vec::new();
    rows.resize_with(tasks.len(), || None);
    let ids: Vec<String> = tasks.iter().map(|t| t.id.clone()).collect();
    for (index, task) in tasks.into_iter().enumerate() {
        let folder = args.out.join(&task.id);
        // A failed task is tried again; one that completed or was stopped by a limit is not.
        if let Some(done) = report::finished(&folder).filter(|r| r.state != TaskState::Failed) {
            progress.inc(1);
            rows[index] = Some(Row {
                result: done,
                earlier: true,
            });
            continue;
        }
        let (args, component, slots, progress) =
            (args.clone(), component.clone(), slots.clone(), progress.clone());
        running.spawn(async move {
            // The semaphore is never closed, so a slot always comes.
            let _slot = slots.acquire_owned().await;
            progress.set_message(task.id.clone());
            let result = run_task::run(&component, &args, &task, &folder).await;
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
    let mut all_ran = true;
    while let Some(joined) = running.join_next().await {
        match joined {
            Ok((index, result)) => {
                rows[index] = Some(Row {
                    result,
                    earlier: false,
                })
            }
            Err(e) => {
                all_ran = false;
                eprintln!("agent-host: a batch task stopped unexpectedly: {e}");
            }
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
