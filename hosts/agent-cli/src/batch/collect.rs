//! `batch --queue`: the tasks go on the queue for the workers, and their results, patches and
//! event logs come back into the output folder as each is stored. A task whose stored result
//! failed is forgotten and queued again; one queued by an earlier batch is not queued twice,
//! and one the queue lost (Redis restarted without its data) is queued again. The batch waits
//! for every result (workers may start later); Ctrl-C leaves the queue as it is, and running
//! the batch again goes on collecting.

use super::queue::{Queue, Stored};
use super::report::{self, TaskResult, TaskState};
use super::task::Task;
use std::path::Path;
use std::time::{Duration, Instant};

/// How often results are looked for, and how often the queue is checked for lost tasks.
const POLL: Duration = Duration::from_millis(250);
const RECHECK: Duration = Duration::from_secs(10);

/// Each pending task's index and result, once all are stored.
pub async fn run(
    url: &str,
    name: &str,
    out: &Path,
    pending: Vec<(usize, Task)>,
    finished: &dyn Fn(&TaskResult),
) -> Result<Vec<Option<(usize, TaskResult)>>, String> {
    let mut queue = Queue::connect(url, name).await?;
    for (_, task) in &pending {
        if let Some(Some(stored)) = queue.stored(&[task.id.as_str()]).await?.pop()
            && result_of(&stored).is_none_or(|r| r.state == TaskState::Failed)
        {
            queue.forget(&task.id).await?;
        }
        enqueue(&mut queue, task).await?;
    }
    let mut waiting = pending;
    let mut outcomes = Vec::new();
    let mut checked = Instant::now();
    while !waiting.is_empty() {
        let ids: Vec<&str> = waiting.iter().map(|(_, t)| t.id.as_str()).collect();
        let stored = match queue.stored(&ids).await {
            Ok(stored) => stored,
            Err(message) => {
                // Redis restarting, say: asked again on the next round.
                eprintln!("agent-host: {message}; trying again");
                tokio::time::sleep(POLL).await;
                continue;
            }
        };
        let mut still = Vec::new();
        for ((index, task), stored) in waiting.into_iter().zip(stored) {
            match stored {
                Some(stored) => {
                    let result = keep(out, &task.id, &stored)?;
                    finished(&result);
                    outcomes.push(Some((index, result)));
                }
                None => still.push((index, task)),
            }
        }
        waiting = still;
        if checked.elapsed() >= RECHECK {
            checked = Instant::now();
            for (_, task) in &waiting {
                if let Ok(false) = queue.is_queued(&task.id).await {
                    let _ = queue.ensure_group().await;
                    enqueue(&mut queue, task).await?;
                }
            }
        }
        if !waiting.is_empty() {
            tokio::time::sleep(POLL).await;
        }
    }
    Ok(outcomes)
}

async fn enqueue(queue: &mut Queue, task: &Task) -> Result<(), String> {
    let line = serde_json::to_string(task).map_err(|e| format!("task {}: {e}", task.id))?;
    queue.enqueue(&task.id, &line).await
}

fn result_of(stored: &Stored) -> Option<TaskResult> {
    serde_json::from_str(&stored.result).ok()
}

/// Writes a stored task into `out/ID/` as a local run leaves it (without its workspace,
/// which stayed with its worker).
fn keep(out: &Path, id: &str, stored: &Stored) -> Result<TaskResult, String> {
    let result =
        result_of(stored).ok_or_else(|| format!("the queue holds a result for {id} that is not one"))?;
    let folder = out.join(id);
    super::run_task::make_folder(&folder)?;
    let failed = |e: std::io::Error| format!("cannot write {}: {e}", folder.display());
    std::fs::write(folder.join("changes.patch"), &stored.patch).map_err(failed)?;
    std::fs::write(folder.join("events.jsonl"), &stored.events).map_err(failed)?;
    report::write(&folder, &result)?;
    Ok(result)
}
