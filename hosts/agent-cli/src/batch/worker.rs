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
    /// The queue: a Redis address (`redis://[:PASSWORD@]host:6379/0`, `redis+unix:///path`;
    /// no TLS yet). From $AGENT_HOST_QUEUE when not given, which keeps a password off the
    /// command line (given here, it is blanked in the process list once read, but visible
    /// until then).
    #[arg(long, value_name = "URL", env = "AGENT_HOST_QUEUE", hide_env_values = true)]
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
    super::hidden_argument::hide_queue_password(&args.queue);
    if let Some(message) = args.options.refused_flag() {
        return crate::fail(crate::exit::USAGE, message);
    }
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
        args.queue_name,
        super::queue::shown(&args.queue)
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
    // Checked again here: whoever can write to the queue chose the task, and its id names a
    // folder. Each delivery has its own folder, so two runs of one task never share one.
    let parsed = serde_json::from_str::<Task>(&task)
        .map_err(|e| format!("the queued task is not a task: {e}"))
        .and_then(|task| match task.id == id {
            true => Ok(task),
            false => Err("the queued task's id is not its entry's".to_string()),
        })
        .and_then(|task| super::task::check(&task).map(|()| task));
    let folder = args.work_dir.join(format!("{}.{entry}", safe_name(&id)));
    let keeper = keep_fresh(
        queue.clone(),
        name.to_string(),
        entry.clone(),
        args.visibility_timeout_sec,
    );
    let result = match parsed {
        _ if attempts > args.max_attempts => given_up(&id, attempts - 1),
        Err(error) => run_task::failed(&id, error),
        // One task at a time: what still runs after its session is its own.
        Ok(task) => run_task::run(component, &args.options, &task, &folder, true).await,
    };
    let read = |file: &str| std::fs::read_to_string(folder.join(file)).unwrap_or_default();
    let stored = Stored {
        result: serde_json::to_string(&result).unwrap_or_default(),
        patch: read("changes.patch"),
        events: read("events.jsonl"),
    };
    // Still kept fresh while the result is stored, so a slow store is no reason to run the
    // task again elsewhere.
    let kept = store(queue, name, &entry, &id, &stored).await;
    keeper.abort();
    eprintln!(
        "agent-host worker {name}: {}: {}",
        crate::terminal_text::one_line(&id),
        state_name(&result)
    );
    // A result that could not be stored stays on this machine.
    if kept && folder.join(report::RESULT).is_file() {
        let _ = std::fs::remove_dir_all(&folder);
    }
}

/// A folder name from an id that may not be one (a queued task that failed its checks).
fn safe_name(id: &str) -> String {
    id.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '-' | '_') {
                c
            } else {
                '_'
            }
        })
        .take(100)
        .collect()
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
            match queue.keep(&name, &entry).await {
                Ok(true) => {}
                // Another worker took it (this one was thought dead: Redis away longer than
                // the visibility timeout); it is not taken back, and the first result stored
                // wins.
                Ok(false) => {
                    return eprintln!("agent-host worker {name}: task entry {entry} went to another worker");
                }
                Err(message) => eprintln!("agent-host worker {name}: {message}"),
            }
        }
    })
}

/// Stores the outcome, trying again while the queue is away for up to two minutes; whether
/// it was stored (by this worker or, first, by another).
async fn store(queue: &mut Queue, name: &str, entry: &str, id: &str, stored: &Stored) -> bool {
    for attempt in 1..=120 {
        match queue.finish(entry, id, stored).await {
            Ok(_) => return true,
            Err(message) => {
                eprintln!("agent-host worker {name}: {message}; trying again ({attempt} of 120)");
                tokio::time::sleep(Duration::from_secs(1)).await;
            }
        }
    }
    eprintln!(
        "agent-host worker {name}: the result of entry {entry} could not be stored; it stays in the \
         work folder, and the task will run again"
    );
    false
}

fn given_up(id: &str, attempts: u64) -> TaskResult {
    run_task::failed(
        id,
        format!("attempted {attempts} times without a result (each attempt's worker stopped); not run again"),
    )
}

fn state_name(result: &TaskResult) -> String {
    match &result.error {
        Some(error) => format!("failed: {}", crate::terminal_text::one_line(error)),
        None => format!("{:?}", result.state).to_lowercase(),
    }
}
