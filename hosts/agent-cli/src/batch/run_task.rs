//! One task: its folder made afresh (only a folder a batch made is ever cleared), its
//! workspace prepared, its session run with `run`'s settings tightened by the task's own, its
//! changes diffed and its result written.

use super::report::{self, TaskResult, TaskState};
use super::task::{Limits, Task};
use super::{TaskOptions, workspace};
use agent_host::embed::{EventData, SessionOptions, StopReason};
use agent_protocol::UsageTotals;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// The copy of the workspace as it was, for the patch; removed once the patch is written.
const BASE: &str = ".base";
/// Marks a folder a batch made, which a later run may clear.
const MARKER: &str = ".agent-host-batch";

/// Runs `task` in `folder` (started again from nothing if an earlier run left it
/// unfinished) and writes its result there.
pub async fn run(component: &Path, args: &TaskOptions, task: &Task, folder: &Path) -> TaskResult {
    let started = Instant::now();
    let prepared = {
        let (task, folder) = (task.clone(), folder.to_path_buf());
        // Copying and cloning block: off the async threads the sessions run on.
        tokio::task::spawn_blocking(move || prepare(&task, &folder))
            .await
            .unwrap_or_else(|e| Err(format!("preparing the workspace stopped: {e}")))
    };
    let mut result = match prepared {
        Ok(()) => session(component, args, task, folder).await,
        Err(error) => failed(&task.id, error),
    };
    let (base, work) = (folder.join(BASE), folder.join("workspace"));
    if base.is_dir() {
        let diffed = tokio::task::spawn_blocking(move || {
            let changes = workspace::changes(&base, &work);
            let _ = std::fs::remove_dir_all(&base);
            changes
        })
        .await;
        match diffed {
            Ok((patch, changed)) => {
                result.changed_files = changed;
                if let Err(e) = std::fs::write(folder.join("changes.patch"), patch) {
                    result.state = TaskState::Failed;
                    result.error = Some(format!(
                        "cannot write {}: {e}",
                        folder.join("changes.patch").display()
                    ));
                }
            }
            Err(e) => {
                result.state = TaskState::Failed;
                result.error = Some(format!("diffing the workspace stopped: {e}"));
            }
        }
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

fn prepare(task: &Task, folder: &Path) -> Result<(), String> {
    make_folder(folder)?;
    let workspace = folder.join("workspace");
    workspace::prepare(&task.workspace, &workspace)?;
    workspace::copy_tree(&workspace, &folder.join(BASE), true)
}

/// `configured` tightened by a task's `asked` (0 means no limit in both).
fn tighter<T: Ord + Default + Copy>(configured: T, asked: Option<T>) -> T {
    match asked {
        Some(asked) if configured == T::default() => asked,
        Some(asked) if asked != T::default() => configured.min(asked),
        _ => configured,
    }
}

fn tighten_limits(limits: &mut agent_protocol::Limits, asked: &Limits) {
    limits.max_turns = tighter(limits.max_turns, asked.max_turns);
    limits.max_tool_rounds_per_input = tighter(limits.max_tool_rounds_per_input, asked.max_tool_rounds);
    limits.max_session_tokens = tighter(limits.max_session_tokens, asked.max_session_tokens);
    limits.max_cost_cents = tighter(limits.max_cost_cents, asked.max_cost_cents);
}

/// The task's session over its workspace, with `run`'s settings (a task's sandbox and limits
/// only tighten them); its events written to `events.jsonl` as they come.
async fn session(component: &Path, args: &TaskOptions, task: &Task, folder: &Path) -> TaskResult {
    let fail = |error: String| failed(&task.id, error);
    let mut env = args.env.clone();
    env.cwd = Some(folder.join("workspace"));
    let overrides = args.settings.overrides(
        task.provider.clone().or_else(|| args.provider.clone()),
        task.model.clone().or_else(|| args.model.clone()),
        None,
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
    let mut env_options = settings.env_options(env);
    if let Some(mode) = &task.sandbox {
        match mode.parse::<agent_host::sandbox::SandboxMode>() {
            // The stricter of the two: read-only < workspace-write < danger-full-access.
            Ok(mode) => env_options.sandbox = Some(mode.min(env_options.sandbox.unwrap_or_default())),
            Err(e) => return fail(format!("sandbox: {e}")),
        }
    }
    let policy = settings.approval_policy(None, env_options.allow_dangerous_commands);
    let environment = match env_options.build().await {
        Ok(environment) => environment,
        Err(e) => return fail(e),
    };
    let mut config = settings.session_config(&target);
    tighten_limits(&mut config.limits, &task.limits);
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
    let recorder = tokio::spawn(record(session.events(), folder.join("events.jsonl")));
    let outcome = session.submit(&task.instruction).await;
    let _ = session.close().await;
    drop(session);
    let (usage, log_error) = recorder.await.unwrap_or_default();
    let mut result = match outcome {
        Err(error) => fail(error.to_string()),
        Ok(outcome) => TaskResult {
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
    result
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
    fn a_task_only_tightens_the_configured_limits() {
        assert_eq!(tighter(50u32, Some(10)), 10);
        assert_eq!(tighter(10u32, Some(50)), 10, "a task cannot raise a limit");
        assert_eq!(tighter(0u32, Some(10)), 10, "0 (no limit) takes the task's");
        assert_eq!(tighter(10u32, Some(0)), 10, "nor lift it with 0");
        assert_eq!(tighter(10u32, None), 10);
    }
}
