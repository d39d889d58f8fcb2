//! Staged compaction end to end: a session driven past a small context window by the
//! scripted server on 127.0.0.1, for each of the four wire protocols. Old tool outputs are
//! elided first; a context-length refusal is followed by a summary and success; every
//! request keeps each tool call paired with its result as that protocol requires.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests may panic

mod common;

use agent_host::config::session_config;
use agent_host::protocol::{EventData, StopReason, WireProtocol};
use agent_host::{AgentEvent, LocalEnvironment};
use scripted_llm::anthropic::{text, tool_use};
use scripted_llm::{Reply, anthropic, chat_completions, gemini, openai_responses};
use serde_json::{Value, json};
use std::sync::Arc;

const WINDOW: u64 = 30_000;

#[derive(Clone, Copy, Debug)]
enum Api {
    Anthropic,
    ChatCompletions,
    Responses,
    Gemini,
}

impl Api {
    fn reply(self, blocks: &[scripted_llm::anthropic::Block]) -> Reply {
        match self {
            Self::Anthropic => anthropic::message(blocks),
            Self::ChatCompletions => chat_completions::message(blocks),
            Self::Responses => openai_responses::response(blocks, None),
            Self::Gemini => gemini::response(blocks, None),
        }
    }

    /// The provider's own refusal of a prompt that is too long.
    fn too_long(self) -> Reply {
        match self {
            Self::Anthropic => anthropic::error(
                400,
                "invalid_request_error",
                "prompt is too long: 31000 tokens > 30000 maximum",
            ),
            Self::ChatCompletions | Self::Responses => chat_completions::error(
                400,
                "invalid_request_error",
                "context_length_exceeded",
                "This model's maximum context length is 30000 tokens. However, your messages resulted in 31000 tokens.",
            ),
            Self::Gemini => gemini::error(
                400,
                "INVALID_ARGUMENT",
                "The input token count (31000) exceeds the maximum number of tokens allowed (30000).",
            ),
        }
    }

    /// (provider, base-URL variable, protocol, path suffix of the URL).
    fn endpoint(self) -> (&'static str, &'static str, WireProtocol, &'static str) {
        match self {
            Self::Anthropic => (
                "anthropic",
                "ANTHROPIC_BASE_URL",
                WireProtocol::AnthropicMessages,
                "",
            ),
            Self::ChatCompletions => ("openai", "OPENAI_BASE_URL", WireProtocol::ChatCompletions, "/v1"),
            Self::Responses => ("openai", "OPENAI_BASE_URL", WireProtocol::OpenaiResponses, "/v1"),
            Self::Gemini => ("gemini", "GEMINI_BASE_URL", WireProtocol::Gemini, ""),
        }
    }

    /// The call ids (Gemini: names) of a request's tool calls and of its tool results, in
    /// the order they appear.
    fn calls_and_results(self, body: &Value) -> (Vec<String>, Vec<String>) {
        let (mut calls, mut results) = (Vec::new(), Vec::new());
        let s = |v: &Value| v.as_str().unwrap_or_default().to_string();
        match self {
            Self::Anthropic => {
                for block in body["messages"].as_array().unwrap().iter().flat_map(blocks) {
                    match block["type"].as_str() {
                        Some("tool_use") => calls.push(s(&block["id"])),
                        Some("tool_result") => results.push(s(&block["tool_use_id"])),
                        _ => {}
                    }
                }
            }
            Self::ChatCompletions => {
                for message in body["messages"].as_array().unwrap() {
                    for call in message["tool_calls"].as_array().into_iter().flatten() {
                        calls.push(s(&call["id"]));
                    }
                    if message["role"] == "tool" {
                        results.push(s(&message["tool_call_id"]));
                    }
                }
            }
            Self::Responses => {
                for item in body["input"].as_array().unwrap() {
                    match item["type"].as_str() {
                        Some("function_call") => calls.push(s(&item["call_id"])),
                        Some("function_call_output") => results.push(s(&item["call_id"])),
                        _ => {}
                    }
                }
            }
            Self::Gemini => {
                for content in body["contents"].as_array().unwrap() {
                    for part in content["parts"].as_array().into_iter().flatten() {
                        if let Some(call) = part.get("functionCall") {
                            calls.push(s(&call["name"]));
                        }
                        if let Some(result) = part.get("functionResponse") {
                            results.push(s(&result["name"]));
                        }
                    }
                }
            }
        }
        (calls, results)
    }
}

fn blocks(message: &Value) -> Vec<Value> {
    message["content"].as_array().cloned().unwrap_or_default()
}

fn compactions(events: &[AgentEvent]) -> Vec<(String, String)> {
    events
        .iter()
        .filter_map(|e| match &e.data {
            EventData::Compaction { trigger, stage, .. } => Some((
                json!(trigger).as_str().unwrap().to_string(),
                json!(stage).as_str().unwrap().to_string(),
            )),
            _ => None,
        })
        .collect()
}

async fn drive(api: Api) {
    let replies = vec![
        api.reply(&[tool_use("c1", "read_file", json!({"file_path": "one.txt"}))]),
        api.reply(&[tool_use("c2", "read_file", json!({"file_path": "two.txt"}))]),
        api.too_long(),
        api.reply(&[text(
            "TASK: read one.txt and two.txt. FILES: both read. STATE: compare them next.",
        )]),
        api.reply(&[text("Both files hold numbered lines.")]),
    ];
    let server = common::serve(replies).await;
    let (provider, variable, protocol, suffix) = api.endpoint();
    let runtime = common::runtime_at(variable, format!("{}{suffix}", server.base_url()));
    let work = tempfile::tempdir().unwrap();
    for (name, word) in [("one.txt", "first"), ("two.txt", "second")] {
        let text: String = (0..1000)
            .map(|n| format!("{word} file, line {n:04} ......\n"))
            .collect();
        std::fs::write(work.path().join(name), text).unwrap();
    }
    let env = Arc::new(LocalEnvironment::new(work.path()).unwrap());
    let mut config = session_config(provider, "m");
    config.protocol = protocol;
    config.context_window_size = Some(WINDOW);
    let (mut session, mut events) = runtime.start_session(config, env).await.unwrap();

    let outcome = session.submit("Read one.txt and two.txt").await.unwrap().unwrap();
    let events: Vec<AgentEvent> = std::iter::from_fn(|| events.try_recv().ok()).collect();
    let notable: Vec<_> = events
        .iter()
        .filter(|e| matches!(e.data, EventData::Compaction { .. } | EventData::Warning(_)))
        .map(|e| e.data.to_data_json())
        .collect();
    assert_eq!(
        outcome.stop_reason,
        StopReason::Completed,
        "{api:?}: {notable:#?}"
    );
    assert_eq!(outcome.final_text, "Both files hold numbered lines.", "{api:?}");
    assert_eq!(
        compactions(&events),
        [
            ("threshold".to_string(), "tool_outputs_elided".to_string()),
            ("context_length".to_string(), "summarised".to_string()),
        ],
        "{api:?}"
    );

    let requests = server.requests();
    assert_eq!(requests.len(), 5, "{api:?}");
    for request in &requests {
        let (calls, results) = api.calls_and_results(&request.json());
        assert_eq!(
            calls, results,
            "{api:?}: calls and results unpaired in {}",
            request.body
        );
    }
    // The refused request had one.txt's output elided and two.txt's whole.
    let refused = &requests[2].body;
    assert!(refused.contains("Output elided to save context"), "{api:?}");
    assert!(!refused.contains("first file, line 0001"), "{api:?}");
    assert!(refused.contains("second file, line 0999"), "{api:?}");
    // The summary request: the summary prompt and the older turns as text, no tools.
    let summary = requests[3].json();
    assert!(requests[3].body.contains("compact the conversation"), "{api:?}");
    assert!(requests[3].body.contains("Read one.txt and two.txt"), "{api:?}");
    assert!(
        summary
            .get("tools")
            .is_none_or(|t| t.as_array().is_some_and(Vec::is_empty)),
        "{api:?}"
    );
    // The retried request starts from the summary, keeps the input word for word and the
    // latest call with its result.
    let last = &requests[4].body;
    assert!(last.contains("Summary of the conversation so far"), "{api:?}");
    assert!(last.contains("TASK: read one.txt and two.txt"), "{api:?}");
    assert!(last.contains("Read one.txt and two.txt"), "{api:?}");
    assert!(last.contains("second file, line 0999"), "{api:?}");
    let (calls, _) = api.calls_and_results(&requests[4].json());
    assert_eq!(calls.len(), 1, "{api:?}: only the latest call stays");
    session.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn anthropic_messages_compacts_and_finishes() {
    drive(Api::Anthropic).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn chat_completions_compacts_and_finishes() {
    drive(Api::ChatCompletions).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn openai_responses_compacts_and_finishes() {
    drive(Api::Responses).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gemini_compacts_and_finishes() {
    drive(Api::Gemini).await;
}

/// Output offloading, natively: a command's 1 MB output is cut for the model, saved in the
/// local environment's scratch folder (outside the workspace), and a scripted model reads it
/// back whole with read_file through the path the marker names.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cut_1_mb_command_output_is_read_back_whole_through_the_path_in_the_marker() {
    use agent_host::environments::Environment;
    let work = tempfile::tempdir().unwrap();
    let env = Arc::new(LocalEnvironment::new(work.path()).unwrap());
    let scratch = env
        .scratch_directory()
        .expect("a local environment has a scratch folder");
    assert!(
        !scratch.starts_with(&*work.path().to_string_lossy()),
        "outside the workspace"
    );
    let saved = format!("{scratch}/s-1/shell-c1.txt");
    let command = "python3 -c \"import sys; sys.stdout.write(''.join(('output line %05d' % i).ljust(99) + '\\n' for i in range(10000)))\"";
    let mut replies = vec![anthropic::message(&[tool_use(
        "c1",
        "shell",
        json!({"command": command}),
    )])];
    for page in 0..25 {
        let id = format!("r{page}");
        replies.push(anthropic::message(&[tool_use(
            &id,
            "read_file",
            json!({"file_path": saved, "offset": 1 + page * 400, "limit": 400}),
        )]));
    }
    replies.push(anthropic::message(&[text("Read it all.")]));
    let server = common::serve(replies).await;
    let runtime = common::runtime_at("ANTHROPIC_BASE_URL", server.base_url());
    let mut config = session_config("anthropic", "m");
    config.session_id = Some("s-1".to_string());
    let (mut session, _events) = runtime.start_session(config, env.clone()).await.unwrap();
    let outcome = session.submit("Dump, then read it back.").await.unwrap().unwrap();
    assert_eq!(outcome.final_text, "Read it all.");

    let requests = server.requests();
    let marker = requests[1].tool_results()[0]["content"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(marker.len() < 40_000, "the model sees a cut output");
    assert!(
        marker.contains(&format!(
            "The full output was saved to {saved}: read it with read_file"
        )),
        "{}",
        &marker[marker.len().saturating_sub(3_000)..]
    );
    let mut read_back = String::new();
    for request in &requests[2..27] {
        let results = request.tool_results();
        let page = results.last().unwrap()["content"].as_str().unwrap();
        for line in page.lines().filter(|l| !l.starts_with('[')) {
            read_back.push_str(line.split_once(" | ").unwrap().1);
            read_back.push('\n');
        }
    }
    let expected: String = (0..10_000)
        .map(|i| format!("{:<99}\n", format!("output line {i:05}")))
        .collect();
    assert_eq!(read_back.len(), 1_000_000);
    assert!(read_back == expected, "the 1 MB output read back whole");
    assert!(
        std::fs::read_dir(work.path()).unwrap().next().is_none(),
        "nothing was written into the workspace"
    );
    session.close().await.unwrap();
}
