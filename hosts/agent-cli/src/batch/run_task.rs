//! One task: its folder made afresh (only a folder a batch made is ever cleared), its
//! workspace prepared, its session run with `run`'s settings tightened by the task's own, its
//! changes diffed once the session has ended and with it every command the task started, and
//! its result written. A task past its deadline is given up: its session aborted (which kills
//! its running commands), no patch taken, failed with that reason, so that a task stuck
//! anywhere (a clone, a model, a command) neither holds a batch up nor keeps a worker's queue
//! entry fresh for ever.

use super::report::{self, TaskResult, TaskState};
use super::task::{Limits, Task};
use super::{TaskOptions, patch, workspace};
use agent_host::embed::{EventData, Host, Session, SessionOptions, StopReason};
use agent_host::sandbox::{AllowList, NetworkAccess};
use agent_protocol::UsageTotals;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// The copy of the workspace as it was, for the patch; removed once the patch is written.
const BASE: &str = ".base";
/// Marks a folder a batch made, which a later run may clear.
const MARKER: &str = ".agent-host-batch";
/// How long an aborted session has to stop, the killing of its running commands included
/// (SIGTERM, a grace period, SIGKILL, then the sweep for what they left running).
const STOP_GRACE: Duration = Duration::from_secs(30);

/// How a task's session ended.
enum Ending {
    /// It ran to its end, each of its commands' calls ending with what the command started
    /// (the sandbox's PID namespace; without it, the process group and the call's tag).
    Finished,
    /// Past the deadline; `why` ends the sentence that says so.
    GivenUp { why: &'static str },
}

/// Runs `task` in `folder` (started again from nothing if an earlier run left it
/// unfinished) and writes its result there. `alone`: no other task runs in this process (a
/// worker's, `batch --jobs 1`), so any command still running once the session has ended is
/// this task's, and is killed before the patch is taken.
pub async fn run(
    component: &Path,
    args: &TaskOptions,
    task: &Task,
    folder: &Path,
    alone: bool,
) -> TaskResult {
    let started = Instant::now();
    let allowed = time_allowed(args.task_timeout_sec, task.timeout_sec);
    let deadline = tokio::time::Instant::now() + allowed;
    // Failed with the reason; what the session used so far is kept.
    let give_up = |result: &TaskResult, why: &str| TaskResult {
        prompt_tokens: result.prompt_tokens,
        output_tokens: result.output_tokens,
        cost_usd: result.cost_usd,
        ..failed(
            &task.id,
            format!(
                "given up at its deadline of {} s (--task-timeout-sec, or the task's timeout_sec){why}",
                allowed.as_secs()
            ),
        )
    };
    let (mut result, ending) = match tokio::time::timeout_at(deadline, prepare(task, folder)).await {
        Err(_) => {
            let why = " while its workspace was prepared";
            (failed(&task.id, String::new()), Ending::GivenUp { why })
        }
        Ok(Err(error)) => (failed(&task.id, error), Ending::Finished),
        Ok(Ok(())) => session(component, args, task, folder, deadline).await,
    };
    if alone {
        // Normally nothing is left: each command's call ended with all it started. This
        // ends what an abandoned session's commands still run.
        let _ = tokio::task::spawn_blocking(agent_host::environments::kill_every_command).await;
    }
    let (base, work) = (folder.join(BASE), folder.join("workspace"));
    match ending {
        // No patch of a task given up: it is not finished, and its session may not be.
        Ending::GivenUp { why } => {
            result = give_up(&result, why);
            let _ = tokio::task::spawn_blocking(move || std::fs::remove_dir_all(&base)).await;
        }
        Ending::Finished if base.is_dir() => {
            let diffed = tokio::task::spawn_blocking(move || {
                let changes = patch::changes(&base, &work);
                let _ = std::fs::remove_dir_all(&base);
                changes
            });
            match tokio::time::timeout_at(deadline, diffed).await {
                Ok(Ok(Ok((patch, changed)))) => {
                    result.changed_files = changed;
                    if let Err(e) = std::fs::write(folder.join("changes.patch"), patch) {
                        result.state = TaskState::Failed;
                        result.error = Some(format!(
                            "cannot write {}: {e}",
                            folder.join("changes.patch").display()
                        ));
                    }
                }
                Ok(Ok(Err(error))) => {
                    result.state = TaskState::Failed;
                    result.error = Some(format!("cannot take the patch: {error}"));
                }
                Ok(Err(e)) => {
                    result.state = TaskState::Failed;
                    result.error = Some(format!("diffing the workspace stopped: {e}"));
                }
                Err(_) => result = give_up(&result, " while its patch was taken"),
            }
        }
        Ending::Finished => {}
    }
    result.duration_ms = started.elapsed().as_millis() as u64;
    // Never into a folder this batch did not make (the result is still in the summary).
    if folder.join(MARKER).is_file()
        && let Err(error) = report::write(folder, &result)
    {
        eprintln!("agent-host: {error}");
    }
    result
}

/// The time a task may take: `--task-timeout-sec`, or the task's own when lower.
fn time_allowed(configured_sec: u64, asked_sec: Option<u64>) -> Duration {
    Duration::from_secs(asked_sec.map_or(configured_sec, |asked| asked.min(configured_sec)))
}

/// A task that did not get to run (or whose session failed), with why.
pub(super) fn failed(id: &str, error: String) -> TaskResult {
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
        duration_ms: 0,
    }
}

/// `folder` made afresh, marked as a batch's. Only a folder a batch made is cleared: `--out .`
/// with a task named `src` must not clear the user's own folder.
pub(super) fn make_folder(folder: &Path) -> Result<(), String> {
    if folder.exists() {
        if !folder.join(MARKER).is_file() {
            return Err(format!(
                "{} exists and was not made by agent-host batch; move it or choose another --out",
                folder.display()
            ));
        }
        std::fs::remove_dir_all(folder).map_err(|e| format!("cannot clear {}: {e}", folder.display()))?;
    }
    std::fs::create_dir_all(folder).map_err(|e| format!("cannot create {}: {e}", folder.display()))?;
    std::fs::write(folder.join(MARKER), "").map_err(|e| format!("cannot write in {}: {e}", folder.display()))
}

/// The task's folder, its workspace and the workspace's copy for the patch; the files
/// copied off the async threads the sessions run on.
async fn prepare(task: &Task, folder: &Path) -> Result<(), String> {
    let (made, workspace) = (folder.to_path_buf(), folder.join("workspace"));
    off_the_async_threads(move || make_folder(&made)).await?;
    workspace::prepare(&task.workspace, &workspace).await?;
    let base = folder.join(BASE);
    off_the_async_threads(move || workspace::copy_tree(&workspace, &base, true)).await
}

async fn off_the_async_threads(
    work: impl FnOnce() -> Result<(), String> + Send + 'static,
) -> Result<(), String> {
    tokio::task::spawn_blocking(work)
        .await
        .unwrap_or_else(|e| Err(format!("preparing the workspace stopped: {e}")))
}

/// `configured` tightened by a task's `asked` (0 means no limit in both).
fn tighter<T: PartialOrd + Default + Copy>(configured: T, asked: Option<T>) -> T {
    match asked {
        Some(asked) if configured == T::default() => asked,
        Some(asked) if asked != T::default() && asked < configured => asked,
        _ => configured,
    }
}

/// The network a task's commands get: its `sandbox_network` and `network_allow` only
/// narrow `access` and `allowed` (the configuration's and flags'). A task's list keeps the
/// entries `allowed` covers (all of them when the network is on, which any list narrows).
fn task_network(
    task: &Task,
    access: NetworkAccess,
    allowed: &[String],
) -> Result<(NetworkAccess, Vec<String>), String> {
    let mut network = match &task.sandbox_network {
        Some(asked) => asked
            .parse::<NetworkAccess>()
            .map_err(|e| format!("sandbox_network: {e}"))?
            .min(access),
        None => access,
    };
    let Some(list) = &task.network_allow else {
        return Ok((network, allowed.to_vec()));
    };
    let asked = AllowList::parse(list).map_err(|e| format!("network_allow: {e}"))?;
    let kept = match access {
        NetworkAccess::On => asked,
        _ => {
            let base = AllowList::parse(allowed).map_err(|e| format!("network_allow: {e}"))?;
            asked.narrowed_to(&base).0
        }
    };
    if network == NetworkAccess::On {
        network = NetworkAccess::AllowList;
    }
    Ok((network, kept.entries().iter().map(ToString::to_string).collect()))
}

fn tighten_limits(limits: &mut agent_protocol::Limits, asked: &Limits) {
    limits.max_turns = tighter(limits.max_turns, asked.max_turns);
    limits.max_tool_rounds_per_input = tighter(limits.max_tool_rounds_per_input, asked.max_tool_rounds);
    limits.max_session_tokens = tighter(limits.max_session_tokens, asked.max_session_tokens);
    limits.max_cost_cents = tighter(limits.max_cost_cents, asked.max_cost_cents);
}

/// The task's session over its workspace, with `run`'s settings (a task's sandbox and limits
/// only tighten them); its events written to `events.jsonl` as they come. At `deadline` the
/// session is aborted, which kills its running commands and waits for them.
async fn session(
    component: &Path,
    args: &TaskOptions,
    task: &Task,
    folder: &Path,
    deadline: tokio::time::Instant,
) -> (TaskResult, Ending) {
    let fail = |error: String| failed(&task.id, error);
    let (host, session) = match tokio::time::timeout_at(deadline, open(component, args, task, folder)).await {
        Ok(Ok(opened)) => opened,
        Ok(Err(error)) => return (fail(error), Ending::Finished),
        // Nothing ran yet.
        Err(_) => {
            let why = " while its session was opened";
            return (fail(String::new()), Ending::GivenUp { why });
        }
    };
    let mut recorder = tokio::spawn(record(session.events(), folder.join("events.jsonl")));
    let (outcome, ending) = {
        let submitting = session.submit(&task.instruction);
        tokio::pin!(submitting);
        tokio::select! {
            outcome = &mut submitting => (Some(outcome), Ending::Finished),
            () = tokio::time::sleep_until(deadline) => {
                session.abort();
                let why = match tokio::time::timeout(STOP_GRACE, &mut submitting).await {
                    Ok(_) => "; its running commands were killed",
                    // Dropping it below drops its commands' handles, which kills them.
                    Err(_) => "; its session did not stop when aborted",
                };
                (None, Ending::GivenUp { why })
            }
        }
    };
    let _ = tokio::time::timeout(STOP_GRACE, session.close()).await;
    // The event stream ends with the session.
    drop(session);
    drop(host);
    let (usage, log_error) = match tokio::time::timeout(STOP_GRACE, &mut recorder).await {
        Ok(recorded) => recorded.unwrap_or_default(),
        Err(_) => {
            recorder.abort();
            (UsageTotals::default(), None)
        }
    };
    let mut result = match outcome {
        None => fail(String::new()),
        Some(Err(error)) => fail(error.to_string()),
        Some(Ok(outcome)) => TaskResult {
            id: task.id.clone(),
            state: match outcome.stop_reason {
                StopReason::Completed => TaskState::Completed,
                _ => TaskState::Stopped,
            },
            stop_reason: serde_json::to_value(outcome.stop_reason)
                .ok()
                .and_then(|v| v.as_str().map(str::to_string)),
            error: None,
            turns: outcome.turns,
            prompt_tokens: 0,
            output_tokens: 0,
            cost_usd: None,
            final_text: outcome.final_text,
            changed_files: Vec::new(),
            duration_ms: 0,
        },
    };
    if let Some(error) = log_error {
        result.error.get_or_insert(error);
    }
    result.prompt_tokens = usage.prompt_tokens;
    result.output_tokens = usage.output_tokens;
    result.cost_usd = usage.cost_usd;
    (result, ending)
}

/// The host and the open session a task runs in.
async fn open(
    component: &Path,
    args: &TaskOptions,
    task: &Task,
    folder: &Path,
) -> Result<(Host, Session), String> {
    let mut env = args.env.clone();
    env.cwd = Some(folder.join("workspace"));
    let overrides = args.settings.overrides(
        task.provider.clone().or_else(|| args.provider.clone()),
        task.model.clone().or_else(|| args.model.clone()),
        None,
        &env,
    );
    let settings = crate::load_settings(&env, args.plugins.config.as_deref(), overrides)?;
    let target = settings.target()?;
    let mut env_options = settings.env_options(env);
    if let Some(mode) = &task.sandbox {
        let mode = mode
            .parse::<agent_host::sandbox::SandboxMode>()
            .map_err(|e| format!("sandbox: {e}"))?;
        // The stricter of the two: read-only < workspace-write < danger-full-access.
        env_options.sandbox = Some(mode.min(env_options.sandbox.unwrap_or_default()));
    }
    let (network, allowed) = task_network(task, env_options.network_access(), &env_options.network_allow)?;
    env_options.sandbox_network = Some(network);
    env_options.network_allow = allowed;
    let policy = settings.approval_policy(None, env_options.allow_dangerous_commands);
    let environment = env_options.build().await?;
    let mut config = settings.session_config(&target);
    tighten_limits(&mut config.limits, &task.limits);
    let (host, _mcp) = crate::host_for(
        component,
        settings.endpoints.clone(),
        policy,
        (environment.clone(), &env_options),
        &args.plugins,
        &mut config,
        Default::default(),
    )
    .await
    .map_err(|(_, e)| e)?;
    let options = SessionOptions {
        config: Some(config),
        environment: Some(environment),
        read_only: env_options.read_only,
        ..SessionOptions::default()
    };
    let session = host.open_session(options).await.map_err(|e| e.to_string())?;
    Ok((host, session))
}

/// Writes each event to `log` as a JSON line until the session ends; the session's usage
/// as last reported, and the log's write error if there was one.
async fn record(mut events: agent_host::embed::Events, log: PathBuf) -> (UsageTotals, Option<String>) {
    let mut file = std::fs::File::create(&log).map_err(|e| format!("cannot write {}: {e}", log.display()));
    let mut usage = UsageTotals::default();
    while let Some(event) = events.next().await {
        if let Ok(writer) = file.as_mut()
            && let Err(e) = writeln!(writer, "{}", event.to_json())
        {
            file = Err(format!("cannot write {}: {e}", log.display()));
        }
        if let (None, EventData::ProcessingEnd { session_usage, .. }) = (&event.agent_id, &event.data) {
            usage = *session_usage;
        }
    }
    (usage, file.err())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_task_only_narrows_the_network() {
        use agent_host::sandbox::NetworkAccess::{AllowList, Off, On};
        let task = |access: Option<&str>, list: Option<&[&str]>| Task {
            sandbox_network: access.map(str::to_string),
            network_allow: list.map(|l| l.iter().map(|e| e.to_string()).collect()),
            ..crate::batch::task::parse(
                "{\"id\": \"t\", \"instruction\": \"i\", \"workspace\": {\"dir\": \"d\"}}",
                std::path::Path::new("/tasks/tasks.jsonl"),
            )
            .unwrap()
            .remove(0)
        };
        let users = ["*.example.com".to_string(), "pypi.org".to_string()];
        // A task cannot turn the network on, nor add a host.
        assert_eq!(
            task_network(&task(Some("on"), None), AllowList, &users).unwrap(),
            (AllowList, users.to_vec())
        );
        assert_eq!(
            task_network(
                &task(None, Some(&["evil.example", "api.example.com"])),
                AllowList,
                &users
            )
            .unwrap(),
            (AllowList, vec!["api.example.com".to_string()])
        );
        assert_eq!(
            task_network(&task(Some("allow-list"), None), Off, &[]).unwrap().0,
            Off
        );
        // Its list narrows a network that is on; "off" always wins.
        assert_eq!(
            task_network(&task(None, Some(&["pypi.org"])), On, &[]).unwrap(),
            (AllowList, vec!["pypi.org".to_string()])
        );
        assert_eq!(task_network(&task(Some("off"), None), On, &[]).unwrap().0, Off);
        assert!(task_network(&task(Some("sometimes"), None), On, &[]).is_err());
    }

    #[test]
    fn a_task_only_tightens_the_configured_limits() {
        assert_eq!(tighter(50u32, Some(10)), 10);
        assert_eq!(tighter(10u32, Some(50)), 10, "a task cannot raise a limit");
        assert_eq!(tighter(0u32, Some(10)), 10, "0 (no limit) takes the task's");
        assert_eq!(tighter(10u32, Some(0)), 10, "nor lift it with 0");
        assert_eq!(tighter(10u32, None), 10);
    }

    #[test]
    fn a_task_only_shortens_the_configured_deadline() {
        assert_eq!(time_allowed(7200, None), Duration::from_secs(7200));
        assert_eq!(time_allowed(7200, Some(3)), Duration::from_secs(3));
        assert_eq!(
            time_allowed(60, Some(7200)),
            Duration::from_secs(60),
            "a task cannot raise it"
        );
    }
}
