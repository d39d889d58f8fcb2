//! `agent-host run` against each provider protocol beyond Anthropic's (covered by
//! `cli_run`): OpenAI Responses through `OPENAI_BASE_URL`, and a named OpenAI-compatible
//! server (Chat Completions, as vLLM, llama.cpp and Ollama serve it). The scripted server on
//! 127.0.0.1 speaks each real wire format and checks the bearer key.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests may panic

mod common;

use common::{agent_host, stderr, stdout};
use scripted_llm::anthropic::{text, tool_use};
use scripted_llm::chat_completions::message;
use scripted_llm::{Script, ScriptedServer};
use serde_json::{Value, json};

/// The system prompt has the environment block and exactly the profile's project docs.
fn assert_prompt_for(system: &str, own_notes: &str) {
    assert!(
        system.contains("<environment>") && system.contains("Working directory: "),
        "{system}"
    );
    assert!(system.contains("Shared agent notes."), "{system}");
    for notes in ["Claude notes.", "Gemini notes.", "Codex notes."] {
        assert_eq!(
            system.contains(notes),
            notes == own_notes,
            "{notes} in:\n{system}"
        );
    }
}

/// The `name` of each object of a JSON array (the tools of a request).
fn names(list: &Value) -> Vec<&str> {
    list.as_array()
        .into_iter()
        .flatten()
        .filter_map(|t| t["name"].as_str())
        .collect()
}

/// The names of Chat Completions tools (`{"type": "function", "function": {"name": ...}}`).
fn function_names(list: &Value) -> Vec<&str> {
    list.as_array()
        .into_iter()
        .flatten()
        .filter_map(|t| t["function"]["name"].as_str())
        .collect()
}

/// Runs the create-hello.py task with `--provider` in a fresh folder; checks that it
/// succeeded and that the file has the right content.
async fn create_hello(
    mut command: tokio::process::Command,
    provider: &str,
) -> anyhow::Result<std::process::Output> {
    let work = tempfile::tempdir()?;
    // Every profile's instruction file is there; each profile must pick its own.
    std::fs::write(work.path().join("AGENTS.md"), "Shared agent notes.")?;
    std::fs::write(work.path().join("CLAUDE.md"), "Claude notes.")?;
    std::fs::write(work.path().join("GEMINI.md"), "Gemini notes.")?;
    std::fs::create_dir_all(work.path().join(".codex"))?;
    std::fs::write(work.path().join(".codex/instructions.md"), "Codex notes.")?;
    let output = command
        .args([
            "run",
            "Create hello.py that prints Hello",
            "--provider",
            provider,
            "--cwd",
        ])
        .arg(work.path())
        .output()
        .await?;
    assert!(
        output.status.success(),
        "stdout:\n{}\nstderr:\n{}",
        stdout(&output),
        stderr(&output)
    );
    assert_eq!(
        std::fs::read_to_string(work.path().join("hello.py"))?,
        "print(\"Hello\")\n"
    );
    Ok(output)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn create_a_file_task_runs_against_a_named_chat_completions_endpoint() -> anyhow::Result<()> {
    let server = ScriptedServer::start(Script {
        replies: vec![
            message(&[
                text("Creating it."),
                tool_use(
                    "call_1",
                    "write_file",
                    json!({"file_path": "hello.py", "content": "print(\"Hello\")\n"}),
                ),
            ]),
            message(&[text("Created hello.py.")]),
        ],
        require_api_key: Some("local-key".to_string()),
    })
    .await?;
    let mut command = agent_host();
    command
        .env(
            "OPENAI_COMPATIBLE_ENDPOINTS",
            format!("my-vllm={}/v1", server.base_url()),
        )
        .env("MY_VLLM_API_KEY", "local-key")
        .env("MY_VLLM_MODEL", "qwen3-coder");
    let output = create_hello(command, "my-vllm").await?;
    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    assert!(
        requests.iter().all(
            |r| r.path == "/v1/chat/completions" && r.header("authorization") == Some("Bearer local-key")
        )
    );
    let first = requests[0].json();
    assert_eq!(first["model"], "qwen3-coder");
    // A named Chat Completions endpoint gets the compact profile: Claude Code's
    // core tools without subagents, its instruction files, and the workspace's files.
    assert_prompt_for(first["messages"][0]["content"].as_str().unwrap(), "Claude notes.");
    assert_eq!(
        function_names(&first["tools"]),
        ["read_file", "write_file", "edit_file", "shell", "glob", "grep"]
    );
    assert!(
        first["messages"][1]["content"]
            .as_str()
            .unwrap()
            .contains("<workspace_files>"),
        "{first}"
    );
    assert_eq!(first["stream"], true);
    let second = requests[1].json();
    let tool_message = second["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "tool")
        .cloned()
        .unwrap_or(Value::Null);
    assert_eq!(tool_message["tool_call_id"], "call_1");
    assert!(
        tool_message["content"]
            .as_str()
            .unwrap()
            .starts_with("Created hello.py")
    );
    assert!(stdout(&output).contains("Created hello.py."));
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_endpoint_section_chooses_the_profile_of_its_sessions() -> anyhow::Result<()> {
    let server = ScriptedServer::start(Script {
        replies: vec![
            message(&[tool_use(
                "call_1",
                "write_file",
                json!({"file_path": "hello.py", "content": "print(\"Hello\")\n"}),
            )]),
            message(&[text("Created hello.py.")]),
        ],
        require_api_key: None,
    })
    .await?;
    let config = tempfile::tempdir()?;
    std::fs::write(
        config.path().join("config.toml"),
        format!(
            "[endpoints.vllm]\nbase_url = \"{}/v1\"\nprofile = \"openai\"\n",
            server.base_url()
        ),
    )?;
    let mut command = agent_host();
    command
        .env("AGENT_HOST_CONFIG_DIR", config.path())
        .env("VLLM_MODEL", "qwen3-coder");
    create_hello(command, "vllm").await?;
    let first = server.requests()[0].json();
    assert_eq!(function_names(&first["tools"]), common::profile_tools("openai"));
    assert_prompt_for(first["messages"][0]["content"].as_str().unwrap(), "Codex notes.");
    assert!(!first["messages"].to_string().contains("<workspace_files>"));

    std::fs::write(
        config.path().join("config.toml"),
        "[endpoints.vllm]\nbase_url = \"http://127.0.0.1:9/v1\"\nprofile = \"tiny\"\n",
    )?;
    let refused = agent_host()
        .args(["run", "hi", "--provider", "vllm", "--model", "m"])
        .env("AGENT_HOST_CONFIG_DIR", config.path())
        .output()
        .await?;
    assert_eq!(refused.status.code(), Some(2), "{}", stderr(&refused));
    assert!(
        stderr(&refused).contains(
            "endpoints.vllm.profile: unknown profile \"tiny\": use anthropic, openai, gemini, compact"
        ),
        "{}",
        stderr(&refused)
    );
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_named_endpoint_needs_a_model_and_a_wrong_key_is_an_authentication_error() -> anyhow::Result<()> {
    let server = ScriptedServer::start(Script {
        replies: vec![],
        require_api_key: Some("right".to_string()),
    })
    .await?;
    let endpoints = format!("local={}", server.base_url());
    let no_model = agent_host()
        .args(["run", "hi", "--provider", "local"])
        .env("OPENAI_COMPATIBLE_ENDPOINTS", &endpoints)
        .output()
        .await?;
    assert_eq!(no_model.status.code(), Some(2));
    assert!(
        stderr(&no_model).contains("Pass --model or set LOCAL_MODEL"),
        "{}",
        stderr(&no_model)
    );

    let wrong_key = agent_host()
        .args(["run", "hi", "--provider", "local", "--model", "m"])
        .env("OPENAI_COMPATIBLE_ENDPOINTS", &endpoints)
        .env("LOCAL_API_KEY", "wrong")
        .output()
        .await?;
    assert_eq!(wrong_key.status.code(), Some(1));
    assert!(
        stderr(&wrong_key).contains("authentication error (HTTP 401): Incorrect API key provided"),
        "{}",
        stderr(&wrong_key)
    );
    assert_eq!(
        server.requests().len(),
        1,
        "an authentication error is not retried"
    );
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn create_a_file_task_runs_against_the_openai_responses_api() -> anyhow::Result<()> {
    let server = ScriptedServer::start(Script {
        replies: vec![
            scripted_llm::openai_responses::response(
                &[tool_use(
                    "call_1",
                    "write_file",
                    json!({"file_path": "hello.py", "content": "print(\"Hello\")\n"}),
                )],
                Some("gAAAA-opaque-reasoning"),
            ),
            scripted_llm::openai_responses::response(&[text("Created hello.py.")], None),
        ],
        require_api_key: Some("sk-test".to_string()),
    })
    .await?;
    let mut command = agent_host();
    command
        .env("OPENAI_BASE_URL", format!("{}/v1", server.base_url()))
        .env("OPENAI_API_KEY", "sk-test");
    create_hello(command, "openai").await?;
    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    assert!(requests.iter().all(|r| r.path == "/v1/responses"));
    let first = requests[0].json();
    assert_eq!(names(&first["tools"]), common::profile_tools("openai"));
    assert_prompt_for(first["instructions"].as_str().unwrap(), "Codex notes.");
    assert_eq!(first["store"], false);
    assert_eq!(first["input"][0]["content"][0]["type"], "input_text");
    assert_eq!(first["tools"][0]["type"], "function");
    // Stateless replay: the reasoning item with its encrypted content, the call, its output.
    let input = requests[1].json()["input"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let types: Vec<&str> = input
        .iter()
        .map(|i| i["type"].as_str().unwrap_or_default())
        .collect();
    assert_eq!(
        types,
        ["message", "reasoning", "function_call", "function_call_output"]
    );
    assert_eq!(input[1]["encrypted_content"], "gAAAA-opaque-reasoning");
    assert_eq!(input[1]["id"], "rs_scripted");
    assert_eq!(input[2]["call_id"], "call_1");
    assert_eq!(input[3]["call_id"], "call_1");
    assert!(
        input[3]["output"]
            .as_str()
            .unwrap()
            .starts_with("Created hello.py")
    );
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn create_a_file_task_runs_against_the_gemini_api() -> anyhow::Result<()> {
    let server = ScriptedServer::start(Script {
        replies: vec![
            scripted_llm::gemini::response(
                &[
                    text("Writing the file."),
                    tool_use(
                        "unused",
                        "write_file",
                        json!({"file_path": "hello.py", "content": "print(\"Hello\")\n"}),
                    ),
                ],
                Some("EpwICpkIAXLI-signature"),
            ),
            scripted_llm::gemini::response(&[text("Created hello.py.")], None),
        ],
        require_api_key: Some("g-key".to_string()),
    })
    .await?;
    let mut command = agent_host();
    command
        .env("GEMINI_BASE_URL", server.base_url())
        .env("GEMINI_API_KEY", "g-key")
        .env("GEMINI_MODEL", "gemini-3-pro-preview");
    create_hello(command, "gemini").await?;
    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    assert!(requests.iter().all(|r| {
        r.path == "/v1beta/models/gemini-3-pro-preview:streamGenerateContent?alt=sse"
            && r.header("x-goog-api-key") == Some("g-key")
    }));
    let first = requests[0].json();
    assert_prompt_for(
        first["systemInstruction"]["parts"][0]["text"].as_str().unwrap(),
        "Gemini notes.",
    );
    assert_eq!(
        names(&first["tools"][0]["functionDeclarations"]),
        common::profile_tools("gemini")
    );
    // The model turn is replayed with the signature on its call; the result names the call.
    let contents = requests[1].json()["contents"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    assert_eq!(contents.len(), 3);
    let model_parts = contents[1]["parts"].as_array().cloned().unwrap_or_default();
    assert_eq!(contents[1]["role"], "model");
    let call = model_parts
        .iter()
        .find(|p| p.get("functionCall").is_some())
        .unwrap();
    assert_eq!(call["thoughtSignature"], "EpwICpkIAXLI-signature");
    let response = &contents[2]["parts"][0]["functionResponse"];
    assert_eq!(response["name"], "write_file");
    assert_eq!(response["id"], call["functionCall"]["id"]);
    assert!(
        response["response"]["output"]
            .as_str()
            .unwrap()
            .starts_with("Created hello.py")
    );
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bad_gemini_key_is_an_authentication_error_naming_the_variable_to_set() -> anyhow::Result<()> {
    let server = ScriptedServer::start(Script {
        replies: vec![],
        require_api_key: Some("right".to_string()),
    })
    .await?;
    let output = agent_host()
        .args(["run", "hi", "--provider", "gemini"])
        .env("GEMINI_BASE_URL", server.base_url())
        .env("GEMINI_API_KEY", "wrong")
        .output()
        .await?;
    assert_eq!(output.status.code(), Some(1));
    let message = stderr(&output);
    assert!(
        message.contains("authentication error (HTTP 400): API key not valid"),
        "{message}"
    );
    assert!(
        message.contains(&format!(
            "the gemini endpoint ({}) rejected the request's credentials: check GEMINI_API_KEY",
            server.base_url()
        )),
        "{message}"
    );
    assert_eq!(server.requests().len(), 1, "not retried");
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rate_limited_twice_then_answered_takes_exactly_three_requests() -> anyhow::Result<()> {
    let limited = || {
        let mut reply = scripted_llm::anthropic::error(429, "rate_limit_error", "slow down");
        reply.headers.push(("retry-after".to_string(), "1".to_string()));
        reply
    };
    let server = ScriptedServer::start(Script {
        replies: vec![
            limited(),
            limited(),
            scripted_llm::anthropic::message(&[text("finally")]),
        ],
        require_api_key: None,
    })
    .await?;
    let started = std::time::Instant::now();
    let output = agent_host()
        .args(["run", "hi", "--provider", "anthropic", "--json"])
        .env("ANTHROPIC_BASE_URL", server.base_url())
        .output()
        .await?;
    assert!(output.status.success(), "{}", stderr(&output));
    assert_eq!(server.requests().len(), 3);
    // The provider asked for 1 s twice: the retries waited for it.
    assert!(started.elapsed() >= std::time::Duration::from_secs(2));
    let warnings = stdout(&output)
        .lines()
        .filter(|l| l.contains("\"llm_retry\""))
        .count();
    assert_eq!(warnings, 2);
    Ok(())
}
