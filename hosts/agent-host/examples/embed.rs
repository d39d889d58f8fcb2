//! Embedding the agent in a Rust program: start a session, print events as they stream,
//! steer it while it works.
//!
//! ```sh
//! make component
//! ANTHROPIC_API_KEY=... cargo run -p agent-host --example embed -- /path/to/project "Add a README"
//! ```

use agent_host::config::session_config;
use agent_host::protocol::EventData;
use agent_host::{AgentRuntime, Endpoints, HttpTransport, LocalEnvironment};
use std::sync::Arc;

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let mut args = std::env::args().skip(1);
    let dir = args.next().unwrap_or_else(|| ".".to_string());
    let task = args
        .next()
        .unwrap_or_else(|| "Describe this project in one paragraph.".to_string());

    let component = agent_host::config::locate_component(None).map_err(anyhow::Error::msg)?;
    let runtime = AgentRuntime::load(
        &component,
        agent_host::compile_cache::default_cache_dir().as_deref(),
        HttpTransport::new(Endpoints::from_env())?,
    )?;
    let env = Arc::new(LocalEnvironment::new(&dir)?);
    let (mut session, mut events) = runtime
        .start_session(session_config("anthropic", "claude-sonnet-4-5"), env)
        .await?;

    let control = session.controller();
    let printer = tokio::spawn(async move {
        while let Some(event) = events.recv().await {
            match event.data {
                EventData::AssistantTextDelta { delta } => print!("{delta}"),
                EventData::ToolCallStart {
                    tool_name, arguments, ..
                } => {
                    println!("\n[{tool_name}] {arguments}");
                    // A host can redirect the agent at any time; it sees this after the round.
                    control.steer("Keep the answer short.");
                }
                EventData::Error { message, .. } => eprintln!("\nerror: {message}"),
                _ => {}
            }
        }
    });

    let outcome = session.submit(&task).await?;
    session.close().await?;
    drop(session);
    printer.await?;
    match outcome {
        Ok(outcome) => println!("\n-- {:?} after {} turns", outcome.stop_reason, outcome.turns),
        Err(error) => eprintln!("\n-- failed: {error:?}"),
    }
    Ok(())
}
