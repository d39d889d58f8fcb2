//! Shared helpers of the agent-host integration tests.
#![allow(dead_code)]

use std::path::PathBuf;
use std::process::Output;

#[allow(unused_imports, reason = "each test binary uses its own part of this module")]
pub use agent_test_support::paths::{component, plugin};

/// A cache directory shared by the tests of one run, so only the first compiles.
pub fn cache_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("component-cache")
}

pub fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

pub fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// The runtime over the built component, its requests sent to `url` as the base URL that
/// the environment variable `variable` names (e.g. `ANTHROPIC_BASE_URL`).
pub fn runtime_at(variable: &'static str, url: String) -> agent_host::AgentRuntime {
    let endpoints = agent_host::Endpoints::from_lookup(move |name| (name == variable).then(|| url.clone()));
    agent_host::AgentRuntime::load(
        &component(),
        Some(&cache_dir()),
        agent_host::HttpTransport::new(endpoints).expect("an HTTP client"),
    )
    .expect("the component loads")
}

/// The scripted LLM server on 127.0.0.1, answering with `replies` in order, no key checked.
pub async fn serve(replies: Vec<scripted_llm::Reply>) -> scripted_llm::ScriptedServer {
    scripted_llm::ScriptedServer::start(scripted_llm::Script {
        replies,
        require_api_key: None,
    })
    .await
    .expect("the scripted server starts")
}
