//! Shared helpers of the command line's integration tests (the `agent-host` binary).
#![allow(dead_code)]

use std::path::PathBuf;
use std::process::Output;

#[allow(unused_imports, reason = "each test binary uses its own part of this module")]
pub use agent_test_support::paths::{component, plugin};

/// A cache directory shared by the tests of one run, so only the first compiles.
pub fn cache_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("component-cache")
}

/// The `agent-host` binary with a clean environment: no provider variables of the machine
/// leak in, and the test's component and cache are used.
pub fn agent_host() -> tokio::process::Command {
    let mut cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_agent-host"));
    for (name, _) in std::env::vars() {
        if ["ANTHROPIC_", "OPENAI_", "GEMINI_"]
            .iter()
            .any(|p| name.starts_with(p))
        {
            cmd.env_remove(name);
        }
    }
    // Nor the machine's own settings (user configuration file, AGENT_* variables).
    for name in [
        "AGENT_PROVIDER",
        "AGENT_MODEL",
        "AGENT_REASONING_EFFORT",
        "AGENT_APPROVAL",
    ] {
        cmd.env_remove(name);
    }
    cmd.env("AGENT_HOST_CONFIG_DIR", user_config_dir());
    // Runs save their sessions: into the tests' own state directory, never the user's.
    cmd.env("AGENT_CORE_COMPONENT", component())
        .env("AGENT_HOST_CACHE_DIR", cache_dir())
        .env(
            "AGENT_HOST_STATE_DIR",
            PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("state"),
        )
        .kill_on_drop(true);
    cmd
}

/// The user configuration folder of [`agent_host`]: it has no `config.toml`, only the list
/// of project files the tests trust.
pub fn user_config_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("no-user-config")
}

/// The user trusts `work`'s `.agent/config.toml` as it is now (`agent-host trust`), for
/// tests whose project file declares tools or plugins.
pub fn trust_project(work: &std::path::Path) {
    agent_host::config::TrustStore::next_to(Some(&user_config_dir().join("config.toml")))
        .unwrap()
        .trust(&work.join(".agent/config.toml"))
        .unwrap();
}

/// Runs `cmd` (e.g. `chat` without a terminal) with `input` on its stdin, then closed.
pub async fn with_input(mut cmd: tokio::process::Command, input: &[u8]) -> Output {
    use tokio::io::AsyncWriteExt;
    let mut child = cmd
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(input).await.unwrap();
    drop(stdin);
    child.wait_with_output().await.unwrap()
}

pub fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

pub fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}
pub mod sshd;

/// A profile's tool names in the order the model is offered them: its own, then the
/// subagent tools every profile has.
pub fn profile_tools(provider: &str) -> Vec<&'static str> {
    let mut tools = vec!["read_file", "write_file", "shell"];
    match provider {
        "openai" => tools.extend(["apply_patch", "grep", "glob"]),
        "gemini" => tools.extend(["edit_file", "grep", "glob", "list_dir", "read_many_files"]),
        _ => tools.extend(["edit_file", "grep", "glob"]),
    }
    tools.extend(["update_plan", "spawn_agent", "send_input", "wait", "close_agent"]);
    tools
}

/// Whether the process whose id is written in `pid` (as a command's `echo $$` left it)
/// still runs: a zombie waiting for its parent to reap it counts as gone. On `Some`, the
/// process's `/proc` stat line, for the failure message.
pub fn still_running(pid: &str) -> Option<String> {
    let stat = std::fs::read_to_string(format!("/proc/{}/stat", pid.trim())).ok()?;
    (!stat.contains(") Z ")).then_some(stat)
}

/// The live processes (not zombies) whose command line contains `marker`, with it: what a
/// test can find of a process from outside a sandboxed command's PID namespace, where the
/// command's own pids mean nothing.
pub fn processes_with(marker: &str) -> Vec<(u32, String)> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .filter_map(|entry| entry.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| *pid != std::process::id())
        .filter_map(|pid| {
            let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).ok()?;
            let cmdline = String::from_utf8_lossy(&cmdline).replace('\0', " ");
            (cmdline.contains(marker) && still_running(&pid.to_string()).is_some()).then_some((pid, cmdline))
        })
        .collect()
}

/// [`processes_with`] once the processes were just sent a kill: asks again until none is
/// left, for 10 s at most (a guard against a hang only: a killed process is gone within
/// milliseconds).
pub async fn processes_with_after_kill(marker: &str) -> Vec<(u32, String)> {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        let left = processes_with(marker);
        if left.is_empty() || std::time::Instant::now() > deadline {
            return left;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
}

/// [`still_running`] for a process that was just sent a kill: a signal takes effect a moment
/// after it is sent, so this asks again until the process is gone. The 10 s it asks for at
/// most guard against a hang only: a killed process is gone within milliseconds.
pub async fn still_running_after_kill(pid: &str) -> Option<String> {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        let running = still_running(pid);
        if running.is_none() || std::time::Instant::now() > deadline {
            return running;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
}

/// The library: a host whose Anthropic endpoint is `server`.
pub async fn host_at(server: &scripted_llm::ScriptedServer) -> agent_host::embed::Host {
    let url = server.base_url();
    let endpoints =
        agent_host::Endpoints::from_lookup(move |name| (name == "ANTHROPIC_BASE_URL").then(|| url.clone()));
    agent_host::embed::Host::builder()
        .component(component())
        .cache_dir(cache_dir())
        .endpoints(endpoints)
        .build()
        .await
        .unwrap()
}

/// `agent-host` with its sessions in `state` and its LLM (Anthropic) at `server`.
pub fn agent_host_at(
    state: &std::path::Path,
    server: &scripted_llm::ScriptedServer,
) -> tokio::process::Command {
    let mut cmd = agent_host();
    cmd.env("AGENT_HOST_STATE_DIR", state)
        .env("ANTHROPIC_BASE_URL", server.base_url())
        .env("ANTHROPIC_API_KEY", "test-key");
    cmd
}

/// Runs `git ARGS` in `dir` as a test user; panics when it fails.
pub fn git(dir: &std::path::Path, args: &[&str]) {
    let status = std::process::Command::new("git")
        .args(["-c", "user.email=t@example.com", "-c", "user.name=t"])
        .args(args)
        .current_dir(dir)
        .status()
        .unwrap();
    assert!(status.success(), "git {args:?}");
}

/// The tool results of the last recorded request, as (tool_use_id, is_error, text): the
/// content's text blocks joined (Anthropic's shape).
pub fn last_tool_results(requests: &[scripted_llm::RecordedRequest]) -> Vec<(String, bool, String)> {
    use serde_json::Value;
    requests
        .last()
        .expect("no request was recorded")
        .tool_results()
        .iter()
        .map(|r| {
            let content = match &r["content"] {
                Value::String(s) => s.clone(),
                Value::Array(blocks) => blocks.iter().filter_map(|b| b["text"].as_str()).collect(),
                other => other.to_string(),
            };
            (
                r["tool_use_id"].as_str().unwrap_or_default().to_string(),
                r["is_error"].as_bool().unwrap_or(false),
                content,
            )
        })
        .collect()
}

/// The scripted Anthropic server with `replies`, no key required.
pub async fn scripted_server(replies: Vec<scripted_llm::Reply>) -> scripted_llm::ScriptedServer {
    scripted_llm::ScriptedServer::start(scripted_llm::Script {
        replies,
        require_api_key: None,
    })
    .await
    .expect("the scripted server did not start")
}
