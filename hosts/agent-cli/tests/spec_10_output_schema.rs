//! `run --output-schema FILE` over each protocol against the scripted server: the request
//! asks for the schema through the protocol's own structured output (where the protocol takes
//! it together with tools) and in the instructions, the answer is checked
//! and returned as the RESULT line's `structured_output`, an answer that does not match gets
//! one repair round naming what was wrong, and one that still does not match ends the run with
//! exit code 4.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests may panic

mod common;

use common::{agent_host, stderr, stdout};
use scripted_llm::anthropic::text;
use scripted_llm::{Reply, ScriptedServer, anthropic, chat_completions, gemini, openai_responses};
use serde_json::{Value, json};
use std::path::Path;

fn schema() -> Value {
    json!({
        "type": "object",
        "properties": {"files": {"type": "integer"}, "summary": {"type": "string"}},
        "required": ["files", "summary"]
    })
}

const GOOD: &str = r#"{"files": 3, "summary": "three files"}"#;
const BAD: &str = r#"{"files": "three"}"#;

/// A protocol: how the scripted server answers in it, how agent-host is pointed at it, and
/// where its request carries the schema.
struct Protocol {
    name: &'static str,
    reply: fn(&str) -> Reply,
    point: fn(&mut tokio::process::Command, &ScriptedServer),
    /// The schema in the request's structured-output field (`Null` where the protocol gets
    /// it in the instructions only, because its servers refuse it together with tools).
    schema_in: fn(&Value) -> Value,
    /// The request's instructions (system prompt).
    instructions: fn(&Value) -> String,
}

fn protocols() -> Vec<Protocol> {
    vec![
        Protocol {
            name: "anthropic",
            reply: |answer| anthropic::message(&[text(answer)]),
            point: |cmd, server| {
                cmd.env("ANTHROPIC_BASE_URL", server.base_url());
            },
            schema_in: |body| {
                assert_eq!(body["output_config"]["format"]["type"], "json_schema");
                body["output_config"]["format"]["schema"].clone()
            },
            instructions: |body| body["system"].to_string(),
        },
        Protocol {
            name: "openai-responses",
            reply: |answer| openai_responses::response(&[text(answer)], None),
            point: |cmd, server| {
                cmd.env("OPENAI_BASE_URL", format!("{}/v1", server.base_url()));
            },
            schema_in: |body| {
                assert_eq!(body["text"]["format"]["type"], "json_schema");
                body["text"]["format"]["schema"].clone()
            },
            instructions: |body| body["instructions"].to_string(),
        },
        Protocol {
            name: "chat-completions",
            reply: |answer| chat_completions::message(&[text(answer)]),
            point: |cmd, server| {
                cmd.env(
                    "OPENAI_COMPATIBLE_ENDPOINTS",
                    format!("local={}/v1", server.base_url()),
                )
                .env("LOCAL_MODEL", "qwen2.5-coder");
            },
            // llama.cpp, vLLM and Ollama turn response_format into a grammar without tool calls.
            schema_in: |body| body["response_format"].clone(),
            instructions: |body| body["messages"][0]["content"].to_string(),
        },
        Protocol {
            name: "gemini",
            reply: |answer| gemini::response(&[text(answer)], None),
            point: |cmd, server| {
                // Gemini 3 takes a JSON answer format together with tools (2.5 does not).
                cmd.env("GEMINI_BASE_URL", server.base_url())
                    .env("GEMINI_API_KEY", "g-key")
                    .env("GEMINI_MODEL", "gemini-3-pro-preview");
            },
            schema_in: |body| {
                assert_eq!(body["generationConfig"]["responseMimeType"], "application/json");
                body["generationConfig"]["responseJsonSchema"].clone()
            },
            instructions: |body| body["systemInstruction"].to_string(),
        },
    ]
}

async fn run(protocol: &Protocol, server: &ScriptedServer, work: &Path) -> std::process::Output {
    let schema_file = work.join("schema.json");
    std::fs::write(&schema_file, schema().to_string()).unwrap();
    let mut cmd = agent_host();
    (protocol.point)(&mut cmd, server);
    cmd.args([
        "run",
        "Count the files",
        "--json",
        "--no-persist",
        "--output-schema",
    ])
    .arg(&schema_file)
    .arg("-C")
    .arg(work)
    .stdin(std::process::Stdio::null());
    cmd.output().await.unwrap()
}

fn result_line(output: &std::process::Output) -> Value {
    serde_json::from_str(stdout(output).lines().last().unwrap()).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_protocol_asks_for_the_schema_and_the_answer_comes_back_as_an_object() {
    for protocol in protocols() {
        let server = common::scripted_server(vec![(protocol.reply)(GOOD)]).await;
        let work = tempfile::tempdir().unwrap();
        let output = run(&protocol, &server, work.path()).await;
        assert!(output.status.success(), "{}: {}", protocol.name, stderr(&output));
        let request = server.requests()[0].json();
        let expected = match protocol.name {
            "chat-completions" => Value::Null,
            _ => schema(),
        };
        assert_eq!(
            (protocol.schema_in)(&request),
            expected,
            "{}: {request}",
            protocol.name
        );
        // Every model is told the shape in its instructions (JSON-escaped in the body).
        let told = (protocol.instructions)(&request);
        assert!(
            told.contains("must be only a JSON value")
                && told.contains(r#"\"required\":[\"files\",\"summary\"]"#),
            "{}: {told}",
            protocol.name
        );
        let result = result_line(&output);
        assert_eq!(
            result["data"]["state"], "completed",
            "{}: {result}",
            protocol.name
        );
        assert_eq!(
            result["data"]["structured_output"],
            json!({"files": 3, "summary": "three files"}),
            "{}",
            protocol.name
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_answer_that_does_not_match_gets_one_repair_round() {
    for protocol in protocols() {
        let server = common::scripted_server(vec![(protocol.reply)(BAD), (protocol.reply)(GOOD)]).await;
        let work = tempfile::tempdir().unwrap();
        let output = run(&protocol, &server, work.path()).await;
        assert!(output.status.success(), "{}: {}", protocol.name, stderr(&output));
        let requests = server.requests();
        assert_eq!(requests.len(), 2, "{}", protocol.name);
        // The repair round names what was wrong, and still asks for the schema.
        let repair = requests[1].body.clone();
        assert!(
            repair.contains("does not match the schema") && repair.contains("/files"),
            "{}: {repair}",
            protocol.name
        );
        if protocol.name != "chat-completions" {
            assert_eq!(
                (protocol.schema_in)(&requests[1].json()),
                schema(),
                "{}",
                protocol.name
            );
        }
        assert_eq!(result_line(&output)["data"]["structured_output"]["files"], 3);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_answer_that_still_does_not_match_exits_with_4_naming_the_violation() {
    let protocol = &protocols()[0];
    let server =
        common::scripted_server(vec![(protocol.reply)(BAD), (protocol.reply)("no JSON at all")]).await;
    let work = tempfile::tempdir().unwrap();
    let output = run(protocol, &server, work.path()).await;
    assert_eq!(output.status.code(), Some(4), "{}", stderr(&output));
    assert!(
        stderr(&output).contains("not a JSON value"),
        "{}",
        stderr(&output)
    );
    let result = result_line(&output);
    assert_eq!(result["data"]["state"], "schema_mismatch", "{result}");
    assert_eq!(server.requests().len(), 2, "one repair round, no more");

    // A schema that is not one is refused before any request.
    let broken = work.path().join("broken.json");
    std::fs::write(&broken, r#"{"type": 12}"#).unwrap();
    let output = agent_host()
        .env("ANTHROPIC_BASE_URL", server.base_url())
        .args(["run", "x", "--no-persist", "--output-schema"])
        .arg(&broken)
        .arg("-C")
        .arg(work.path())
        .output()
        .await
        .unwrap();
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    assert!(
        stderr(&output).contains("not a usable JSON Schema"),
        "{}",
        stderr(&output)
    );
    assert_eq!(server.requests().len(), 2);
}
