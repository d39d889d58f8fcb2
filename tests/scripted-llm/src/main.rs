//! `scripted-llm-server --script FILE`: serves a script on 127.0.0.1 until stopped (SIGINT
//! or SIGTERM), printing its base URL first, and writing the recorded requests on exit.
//!
//! A script file is either a raw `Script` (`{"replies": [...]}`) or, more conveniently,
//! `{"anthropic": [[block, ...], ...]}` (or `"chat_completions"`): one streamed message per
//! entry in that protocol.

use anyhow::Context;
use clap::Parser;
use scripted_llm::{Script, ScriptedServer};
use std::path::PathBuf;

#[derive(Parser)]
#[command(about = "Replay scripted LLM replies on 127.0.0.1")]
struct Args {
    /// JSON file with a `Script` (see the crate docs).
    #[arg(long)]
    script: PathBuf,
    /// Write the recorded requests here (JSON) when stopping.
    #[arg(long)]
    requests_out: Option<PathBuf>,
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    let text = std::fs::read_to_string(&args.script)
        .with_context(|| format!("reading {}", args.script.display()))?;
    let script = parse_script(&text).with_context(|| format!("parsing {}", args.script.display()))?;
    let server = ScriptedServer::start(script).await?;
    println!("{}", server.base_url());
    let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())?;
    tokio::select! {
        _ = tokio::signal::ctrl_c() => {}
        _ = term.recv() => {}
    }
    if let Some(path) = args.requests_out {
        std::fs::write(&path, serde_json::to_string_pretty(&server.requests())?)?;
    }
    Ok(())
}

/// The convenient forms: one streamed message per entry, in one protocol.
#[derive(serde::Deserialize)]
struct BlockScript {
    #[serde(default)]
    anthropic: Vec<Vec<scripted_llm::anthropic::Block>>,
    #[serde(default)]
    chat_completions: Vec<Vec<scripted_llm::anthropic::Block>>,
    #[serde(default)]
    require_api_key: Option<String>,
}

fn parse_script(text: &str) -> anyhow::Result<Script> {
    let value: serde_json::Value = serde_json::from_str(text)?;
    if value.get("anthropic").is_some() || value.get("chat_completions").is_some() {
        let script: BlockScript = serde_json::from_value(value)?;
        let anthropic = script
            .anthropic
            .iter()
            .map(|b| scripted_llm::anthropic::message(b));
        let chat = script
            .chat_completions
            .iter()
            .map(|b| scripted_llm::chat_completions::message(b));
        return Ok(Script {
            replies: anthropic.chain(chat).collect(),
            require_api_key: script.require_api_key,
        });
    }
    Ok(serde_json::from_value(value)?)
}
