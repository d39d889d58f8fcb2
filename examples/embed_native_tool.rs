//! A native Rust tool: the application gives the model a tool implemented by an async
//! closure; the model calls it like its built-in tools and reads the result.
//!
//! ```sh
//! cargo run -p agent-host --example embed_native_tool                  # scripted demo
//! ANTHROPIC_API_KEY=sk-... cargo run -p agent-host --example embed_native_tool
//! ```

#[path = "support/demo_llm.rs"]
mod demo_llm;

use agent_host::embed::{Host, NativeTool, SessionOptions};
use scripted_llm::anthropic::{message, text, tool_use};
use serde_json::json;
use std::collections::BTreeMap;

const TEXT: &str = "the cat and the dog and the bird saw the cat";

/// The application's own capability, offered to the model.
fn word_frequencies() -> NativeTool {
    NativeTool::new(
        "word_frequencies",
        "Count how often each word occurs in a text; returns the most frequent words first.",
        json!({
            "type": "object",
            "properties": {
                "text": {"type": "string", "description": "The text to count words in."},
                "top": {"type": "integer", "minimum": 1, "description": "How many words to return."}
            },
            "required": ["text"]
        }),
        |args| async move {
            let text = args["text"].as_str().ok_or("text must be a string")?;
            let top = args["top"].as_u64().unwrap_or(3) as usize;
            let mut counts: BTreeMap<String, usize> = BTreeMap::new();
            for word in text.split_whitespace() {
                *counts.entry(word.to_lowercase()).or_default() += 1;
            }
            let mut ranked: Vec<(String, usize)> = counts.into_iter().collect();
            ranked.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
            ranked.truncate(top);
            Ok(serde_json::to_string(&ranked)?)
        },
    )
    .read_only()
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let (endpoints, _demo_server) = demo_llm::endpoints_or_demo(vec![
        message(&[tool_use(
            "toolu_1",
            "word_frequencies",
            json!({"text": TEXT, "top": 3}),
        )]),
        message(&[text(
            "The most frequent words are \"the\" (4 times), then \"and\" and \"cat\" (twice each).",
        )]),
    ])
    .await?;
    let host = Host::builder()
        .component(demo_llm::component())
        .endpoints(endpoints)
        .tool(word_frequencies())
        .build()
        .await?;
    let session = host
        .open_session(SessionOptions::in_workspace(demo_llm::workspace()?))
        .await?;
    let mut events = session.events();
    let printer = tokio::spawn(async move {
        while let Some(event) = events.next().await {
            if let Some(call) = event.tool_call() {
                println!("-> {} {}", call.name, call.arguments);
            } else if let Some(result) = event.tool_result() {
                println!("<- {:?}", result.output);
            }
        }
    });
    let outcome = session
        .submit(&format!(
            "Use the word_frequencies tool to find the three most frequent words in: {TEXT:?}"
        ))
        .await;
    session.close().await?;
    let _ = printer.await;
    println!("== answer: {}", outcome?.final_text);
    Ok(())
}
