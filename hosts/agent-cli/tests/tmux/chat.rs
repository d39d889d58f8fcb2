//! The chat against a scripted server, in tmux: what the chat's terminal tests share.
#![allow(dead_code)]

use crate::common;
use crate::tmux::ChatPane;
use scripted_llm::{Reply, Script, ScriptedServer};
use serde_json::Value;

/// A scripted server, a workspace, and the chat running against them in tmux.
pub struct Chat {
    pub server: ScriptedServer,
    pub pane: ChatPane,
    pub work: tempfile::TempDir,
    _home: tempfile::TempDir,
}

pub async fn start_chat(replies: Vec<Reply>, extra_env: &[(&str, &str)]) -> Chat {
    start_chat_with(replies, extra_env, &[]).await
}

pub async fn start_chat_with(replies: Vec<Reply>, extra_env: &[(&str, &str)], args: &[&str]) -> Chat {
    start_chat_in(tempfile::tempdir().unwrap(), replies, extra_env, args).await
}

/// [`start_chat_with`] in the workspace `work` (an earlier chat's, to come back to it).
pub async fn start_chat_in(
    work: tempfile::TempDir,
    replies: Vec<Reply>,
    extra_env: &[(&str, &str)],
    args: &[&str],
) -> Chat {
    let server = ScriptedServer::start(Script {
        replies,
        require_api_key: Some("test-key".to_string()),
    })
    .await
    .unwrap();
    // A home of its own: no configuration or state of the machine's user is read or written.
    let home = tempfile::tempdir().unwrap();
    let mut env = vec![
        ("HOME", home.path().display().to_string()),
        (
            "XDG_CONFIG_HOME",
            home.path().join("config").display().to_string(),
        ),
        ("XDG_STATE_HOME", home.path().join("state").display().to_string()),
        ("XDG_DATA_HOME", home.path().join("data").display().to_string()),
        ("AGENT_CORE_COMPONENT", common::component().display().to_string()),
        ("AGENT_HOST_CACHE_DIR", common::cache_dir().display().to_string()),
        ("ANTHROPIC_BASE_URL", server.base_url()),
        ("ANTHROPIC_API_KEY", "test-key".to_string()),
    ];
    env.extend(extra_env.iter().map(|(k, v)| (*k, v.to_string())));
    let pane = ChatPane::start(work.path(), &env, args);
    pane.wait_for_prompt().await;
    Chat {
        server,
        pane,
        work,
        _home: home,
    }
}

/// A reply streamed slowly: `delay_ms` before each of its pieces.
pub fn slow(mut reply: Reply, delay_ms: u64) -> Reply {
    reply.delay_ms = delay_ms;
    reply
}

/// The text of a request's messages, all blocks of all turns.
pub fn conversation(request: &Value) -> Vec<String> {
    request["messages"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|m| m["content"].as_array().cloned().unwrap_or_default())
        .filter_map(|block| block["text"].as_str().map(str::to_string))
        .collect()
}

macro_rules! require_tmux {
    () => {
        if !crate::tmux::available() {
            println!("skipped: tmux not installed");
            return;
        }
    };
}
pub(crate) use require_tmux;

/// Whether `line` (with escapes) paints something in `colour`, however tmux encodes it.
pub fn painted(line: &str, colour: &str) -> bool {
    let codes: &[&str] = match colour {
        "green" => &["\u{1b}[32m", "\u{1b}[92m", "\u{1b}[38;5;2m", "\u{1b}[38;5;10m"],
        _ => &["\u{1b}[31m", "\u{1b}[91m", "\u{1b}[38;5;1m", "\u{1b}[38;5;9m"],
    };
    codes.iter().any(|code| line.contains(code))
}
