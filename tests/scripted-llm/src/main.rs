//! `scripted-llm-server --script FILE`: serves a script on 127.0.0.1 until stdin closes or
//! the process is stopped, printing its base URL first and the recorded requests on exit.

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
    let text = std::fs::read_to_string(&args.script).with_context(|| format!("reading {}", args.script.display()))?;
    let script: Script = serde_json::from_str(&text).with_context(|| format!("parsing {}", args.script.display()))?;
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
