//! `scripted-llm-server --script FILE`: serves a script on 127.0.0.1 until stopped (SIGINT
//! or SIGTERM), printing its base URL first, and writing the recorded requests on exit.
//!
//! A script file is either a raw `Script` (`{"replies": [...]}`) or, more conveniently,
//! `{"anthropic": [[block, ...], ...]}` (or `"chat_completions"`): one streamed message per
//! entry in that protocol. An entry may also be `{"blocks": [...], "delay_ms": N}` to pause N
//! ms before each piece of that message (a slow model, for steering and stopping), and, for
//! Anthropic, `"input_tokens": N` to report N prompt tokens (budgets).
//! `"routes": [{"marker": "...", "anthropic": [...]}]` gives the requests whose body contains
//! the marker (e.g. a subagent's prompt section) their own replies.

use anyhow::Context;
use clap::Parser;
use scripted_llm::{Route, Script, ScriptedServer};
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
    let (script, routes) =
        parse_script(&text).with_context(|| format!("parsing {}", args.script.display()))?;
    let server = ScriptedServer::start_routed(script, routes).await?;
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
    anthropic: Vec<Message>,
    #[serde(default)]
    chat_completions: Vec<Message>,
    #[serde(default)]
    require_api_key: Option<String>,
    #[serde(default)]
    routes: Vec<BlockRoute>,
}

/// Anthropic replies for the requests carrying a marker.
#[derive(serde::Deserialize)]
struct BlockRoute {
    marker: String,
    anthropic: Vec<Message>,
}

/// One message of a block script: its blocks, streamed at once or slowly.
#[derive(serde::Deserialize)]
#[serde(untagged)]
enum Message {
    Blocks(Vec<scripted_llm::anthropic::Block>),
    Detailed {
        blocks: Vec<scripted_llm::anthropic::Block>,
        #[serde(default)]
        delay_ms: u64,
        input_tokens: Option<u64>,
    },
}

impl Message {
    fn reply(
        &self,
        protocol: fn(&[scripted_llm::anthropic::Block]) -> scripted_llm::Reply,
    ) -> scripted_llm::Reply {
        match self {
            Message::Blocks(blocks) => protocol(blocks),
            Message::Detailed {
                blocks,
                delay_ms,
                input_tokens,
            } => {
                let reply = match input_tokens {
                    Some(input_tokens) => scripted_llm::anthropic::message_shaped(
                        blocks,
                        scripted_llm::anthropic::Shape {
                            input_tokens: *input_tokens,
                            ..scripted_llm::anthropic::Shape::API
                        },
                    ),
                    None => protocol(blocks),
                };
                scripted_llm::Reply {
                    delay_ms: *delay_ms,
                    ..reply
                }
            }
        }
    }
}

fn parse_script(text: &str) -> anyhow::Result<(Script, Vec<Route>)> {
    let value: serde_json::Value = serde_json::from_str(text)?;
    if value.get("anthropic").is_some() || value.get("chat_completions").is_some() {
        let script: BlockScript = serde_json::from_value(value)?;
        let anthropic = script
            .anthropic
            .iter()
            .map(|m| m.reply(scripted_llm::anthropic::message));
        if script.chat_completions.iter().any(|m| {
            matches!(
                m,
                Message::Detailed {
                    input_tokens: Some(_),
                    ..
                }
            )
        }) {
            anyhow::bail!("input_tokens is only for anthropic messages");
        }
        let chat = script
            .chat_completions
            .iter()
            .map(|m| m.reply(scripted_llm::chat_completions::message));
        let routes = script
            .routes
            .iter()
            .map(|r| Route {
                marker: r.marker.clone(),
                replies: r
                    .anthropic
                    .iter()
                    .map(|m| m.reply(scripted_llm::anthropic::message))
                    .collect(),
            })
            .collect();
        let script = Script {
            replies: anthropic.chain(chat).collect(),
            require_api_key: script.require_api_key,
        };
        return Ok((script, routes));
    }
    Ok((serde_json::from_value(value)?, Vec::new()))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::parse_script;

    #[test]
    fn block_scripts_take_slow_messages_and_routes() {
        let (script, routes) = parse_script(
            r#"{"anthropic": [
                [{"type": "text", "text": "quick"}],
                {"blocks": [{"type": "text", "text": "slow"}], "delay_ms": 250}
            ], "routes": [{"marker": "<subagent>", "anthropic": [[{"type": "text", "text": "child"}]]}]}"#,
        )
        .unwrap();
        assert_eq!(
            script.replies.iter().map(|r| r.delay_ms).collect::<Vec<_>>(),
            [0, 250]
        );
        assert!(script.replies[1].chunks.concat().contains("message_start"));
        assert_eq!(routes.len(), 1);
        assert_eq!(routes[0].marker, "<subagent>");
        assert!(routes[0].replies[0].chunks.concat().contains("message_start"));
    }

    #[test]
    fn a_message_that_is_neither_form_is_refused() {
        let error = parse_script(r#"{"anthropic": [{"blocks": "nope"}]}"#).unwrap_err();
        assert!(error.to_string().contains("did not match any variant"), "{error}");
    }
}
