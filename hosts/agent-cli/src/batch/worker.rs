//! `agent-host worker --queue redis://...`: takes tasks from the queue one at a time and runs
//! each as `batch` does, until SIGTERM or Ctrl-C (the task running then is finished first).
//! A task past `--max-attempts` (each earlier attempt ended its worker, or was given up) is
//! failed without running.

use super::queue::{Delivery, Queue, Stored};
use super::report::{self, TaskResult};
use super::task::Task;
use super::{TaskOptions, run_task};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

#[derive(clap::Args)]
pub struct WorkerArgs {
    /// The queue: a Redis address (`redis://host:6379/0`, `rediss://...`, `redis+unix:///path`).
    #[arg(long, value_name = "URL")]
    pub queue: String,
    /// The queue's name, the prefix of its keys (as given to `batch --queue`).
    #[arg(long, default_value = "agent-host")]
    pub queue_name: String,
    /// This worker's name in the consumer group (default: host name and process id).
    #[arg(long)]
    pub name: Option<String>,
    /// Where tasks run on this machine (a task's folder is removed once its result is stored).
    #[arg(long, default_value = "agent-host-worker")]
    pub work_dir: PathBuf,
    /// A task its worker stopped answering for this long goes to another worker.
    #[arg(long, default_value_t = 300, value_parser = clap::value_parser!(u64).range(1..))]
    pub visibility_timeout_sec: u64,
    /// Attempts at a task before it is failed without running again.
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u64).range(1..))]
    pub max_attempts: u64,
    #[command(flatten)]
    pub options: TaskOptions,
}

pub async fn run(component: PathBuf, args: WorkerArgs) -> ExitCode {
    let mut queue = match Queue::connect(&args.queue, &args.queue_name).await {
        Ok(queue) => queue,
        Err(message) => return crate::fail(crate::exit::USAGE, message),
    };
    let name = args.name.clone().unwrap_or_else(|| {
        let host = nix::unistd::gethostname()
            .map(|h| h.to_string_lossy().into_owned())
            .unwrap_or_default();
        format!("{host}-{}", std::process::id())
    });
    let stop = Arc::new(AtomicBool::new(false));
    stop_on_signals(stop.clone());
    let visibility = Duration::from_secs(args.visibility_timeout_sec);
    eprintln!(
        "agent-host worker {name}: taking tasks from {} ({})",
        args.queue_name, args.queue
    );
    while !stop.load(Ordering::SeqCst) {
        match queue.claim(&name, visibility, Duration::from_secs(1)).await {
            Ok(Some(delivery)) => handle(&component, &args, &name, &mut queue, delivery).await,
            Ok(None) => {}
            Err(message) => {
                // Redis restarting, say: the connection comes back by itself.
                eprintln!("agent-host worker {name}: {message}; trying again");
                tokio::time::sleep(Duration::from_secs(1)).await;
                let _ = queue.ensure_group().await;
            }
        }
    }
    eprintln!("agent-host worker {name}: stopped");
    ExitCode::SUCCESS
}

/// SIGTERM (a deployment scaling down) or Ctrl-C: no new task is taken; the running one
/// finishes and its result is stored.
fn stop_on_signals(stop: Arc<AtomicBool>) {
    tokio::spawn(async move {
        let Ok(mut term) = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) else {
            return;
        };
        tokio::select! {
            _ = term.recv() => {}
            _ = tokio::signal::ctrl_c() => {}
        }
        stop.store(true, Ordering::SeqCst);
    });
}

async fn handle(component: &Path, args: &WorkerArgs, name: &str, queue: &mut Queue, delivery: Delivery) {
    let Delivery { entry, id, task } = delivery;
    // Finished already (by a worker thought dead): nothing runs twice.
    if queue.finished(&id).await.unwrap_or(false) {
        let _ = queue.done(&entry).await;
        return;
    }
    let attempts = match queue.attempt(&id).await {
        Ok(attempts) => attempts,
        Err(message) => return eprintln!("agent-host worker {name}: {message}"),
    };
    let folder = args.work_dir.join(&id);
    let result = if attempts > args.max_attempts {
        given_up(&id, attempts - 1)
    } else {
        match serde_json::from_str::<Task>(&task) {
            Err(e) => given_up_with(&id, format!("the queued task is not a task: {e}")),
            Ok(task) => {
                let keeper = keep_fresh(
                    queue.clone(),
                    name.to_string(),
                    entry.clone(),
                    args.visibility_timeout_sec,
                );
                let result = run_task::run(component, &args.options, &task, &folder).await;
                keeper.abort();
                result
            }
        }
    };
    let read = |file: &str| std::fs::read_to_string(folder.join(file)).unwrap_or_default();
    let stored = Stored {
        result: serde_json::to_string(&result).unwrap_or_default(),
        patch: read("changes.patch"),
        events: read("events.jsonl"),
    };
    store(queue, name, &entry, &id, &stored).await;
    eprintln!("agent-host worker {name}: {id}: {}", state_name(&result));
    if folder.join(report::RESULT).is_file() {
        let _ = std::fs::remove_dir_all(&folder);
    }
}

/// Keeps the task's entry fresh in the group while it runs, so that it goes to another
/// worker only if this one stops answering.
fn keep_fresh(
    mut queue: Queue,
    name: String,
    entry: String,
    visibility_sec: u64,
) -> tokio::task::JoinHandle<()> {
    let every = Duration::from_millis((visibility_sec * 1000 / 3).max(100));
    tokio::spawn(async move {
        loop {
            tokio::time::sleep(every).await;
            let _ = queue.keep(&name, &entry).await;
        }
    })
}

/// Stores the outcome, trying again while the queue is away (a result is never dropped:
/// without it the task would run again).
async fn store(queue: &mut Queue, name: &str, entry: &str, id: &str, stored: &Stored) {
    for attempt in 1.. {
        match queue.finish(entry, id, stored).await {
            Ok(_) => return,
            Err(message) if attempt < 120 => {
                eprintln!("agent-host worker {name}: {message}; trying again");
                tokio::time::sleep(Duration::from_secs(1)).await;
            }
            Err(message) => return eprintln!("agent-host worker {name}: {id}'s result is lost: {message}"),
        }
    }
}

fn given_up(id: &str, attempts: u64) -> TaskResult {
    given_up_with(
        id,
        format!("attempted {attempts} times without a result (each attempt's worker stopped); not run again"),
    )
}

fn given_up_with(id: &str, error: String) -> TaskResult {
    run_task::failed(id, error)
}

fn state_name(result: &TaskResult) -> String {
    match &result.error {
        Some(error) => format!("failed: {error}"),
        None => format!("{:?}", result.state).to_lowercase(),
    }
}
