//! What the embedding examples talk to: the LLM endpoints configured in the environment
//! (`ANTHROPIC_API_KEY`, `OPENAI_API_KEY`, `GEMINI_API_KEY`, or their `*_BASE_URL`), or,
//! when none is, a scripted LLM server on 127.0.0.1 that plays the model (like `make run`'s
//! demo). Everything else is real either way: the component, its wire protocol over HTTP,
//! the files written and the commands run.

use agent_host::Endpoints;
use scripted_llm::{Reply, Script, ScriptedServer};
use std::path::PathBuf;

/// The endpoints to use, and the scripted server when it stands in for a model (keep it
/// alive for the session's lifetime).
pub async fn endpoints_or_demo(replies: Vec<Reply>) -> anyhow::Result<(Endpoints, Option<ScriptedServer>)> {
    let endpoints = Endpoints::from_env();
    if let Some(endpoint) = endpoints.first_configured() {
        println!("== using the {} endpoint ({})", endpoint.name, endpoint.base_url);
        return Ok((endpoints, None));
    }
    let server = ScriptedServer::start(Script {
        replies,
        require_api_key: None,
    })
    .await?;
    println!(
        "No LLM provider is configured (set ANTHROPIC_API_KEY, OPENAI_API_KEY or GEMINI_API_KEY\n\
         to use a real model).\n\
         ============================  SCRIPTED DEMO  ============================\n\
         The model's replies come from a scripted LLM server on {}; the\n\
         component, its HTTP requests, the tools, files and commands are real.\n\
         =========================================================================",
        server.base_url()
    );
    let url = server.base_url();
    let endpoints = Endpoints::from_lookup(move |name| (name == "ANTHROPIC_BASE_URL").then(|| url.clone()));
    Ok((endpoints, Some(server)))
}

/// The core component: `$AGENT_CORE_COMPONENT`, else the checkout's `target/agent-core.wasm`
/// (built by `make component`).
pub fn component() -> PathBuf {
    std::env::var_os("AGENT_CORE_COMPONENT")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/../../target/agent-core.wasm"
            ))
        })
}

/// The folder to work in: `$WORKDIR`, else a new temporary one (kept, so you can look).
pub fn workspace() -> anyhow::Result<PathBuf> {
    match std::env::var_os("WORKDIR") {
        Some(dir) => {
            std::fs::create_dir_all(&dir)?;
            Ok(PathBuf::from(dir))
        }
        None => Ok(tempfile::Builder::new().prefix("agent-embed.").tempdir()?.keep()),
    }
}
