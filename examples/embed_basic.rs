//! Embedding agent-host in a Rust program: build a host, open a session, submit a task,
//! and stream what the agent does as it happens; Ctrl-C aborts the session cleanly.
//!
//! ```sh
//! cargo run -p agent-host --example embed_basic                  # scripted demo, no key needed
//! ANTHROPIC_API_KEY=sk-... cargo run -p agent-host --example embed_basic -- "Write fizzbuzz.py and run it"
//! WORKDIR=~/src/project ...                                       # where the agent works
//! ```

#[path = "support/demo_llm.rs"]
mod demo_llm;

use agent_host::embed::{EventKind, Host, SessionOptions, StopReason};
use scripted_llm::anthropic::{message, text, tool_use};
use serde_json::json;

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let task = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "Create hello.py that prints Hello, then run it to check.".to_string());
    // The replies the scripted server plays when no provider is configured.
    let (endpoints, _demo_server) = demo_llm::endpoints_or_demo(vec![
        message(&[
            text("I'll create hello.py."),
            tool_use(
                "toolu_1",
                "write_file",
                json!({"file_path": "hello.py", "content": "print(\"Hello\")\n"}),
            ),
        ]),
        message(&[tool_use(
            "toolu_2",
            "shell",
            json!({"command": "python3 hello.py"}),
        )]),
        message(&[text("Done: hello.py prints Hello.")]),
    ])
    .await?;

    let host = Host::builder()
        .component(demo_llm::component())
        .endpoints(endpoints)
        .build()
        .await?;
    let workspace = demo_llm::workspace()?;
    println!("== working in {}", workspace.display());
    let session = host
        .open_session(SessionOptions {
            workspace: workspace.clone(),
            max_turns: 30,
            ..SessionOptions::default()
        })
        .await?;

    // Events stream while `submit` runs; the stream ends when the session closes.
    let mut events = session.events();
    let printer = tokio::spawn(async move {
        while let Some(event) = events.next().await {
            if let Some(delta) = event.text_delta() {
                print!("{delta}");
            } else if let Some(call) = event.tool_call() {
                println!("\n-> {} {}", call.name, call.arguments);
            } else if let Some(result) = event.tool_result() {
                match result.output {
                    Ok(output) => println!("<- {}", output.trim_end()),
                    Err(error) => println!("<- error: {error}"),
                }
            } else if event.kind == EventKind::Warning {
                println!("\n[warning] {}", event.message().unwrap_or_default());
            }
        }
    });

    // Ctrl-C stops the agent gracefully: the running command or stream is cut.
    let handle = session.handle();
    tokio::spawn(async move {
        if tokio::signal::ctrl_c().await.is_ok() {
            handle.abort();
        }
    });

    let outcome = session.submit(&task).await;
    session.close().await?;
    let _ = printer.await;
    let outcome = outcome?;
    println!(
        "\n== {:?} after {} turns; files in {}:",
        outcome.stop_reason,
        outcome.turns,
        workspace.display()
    );
    for entry in std::fs::read_dir(&workspace)? {
        println!("   {}", entry?.file_name().to_string_lossy());
    }
    anyhow::ensure!(
        outcome.stop_reason == StopReason::Completed,
        "the agent stopped: {:?}",
        outcome.stop_reason
    );
    Ok(())
}
