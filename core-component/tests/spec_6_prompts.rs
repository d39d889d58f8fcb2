//! Section 6 of the spec: the layered system prompt (base, environment, git, project docs,
//! user instructions last), run natively over in-memory fakes.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests may panic

mod common;

use agent_core::SessionConfig;
use agent_core::ports::ExecResult;
use agent_test_support::fakes::FakeEnv;
use common::{Harness, text_reply};

fn repository() -> FakeEnv {
    let env = FakeEnv::new(Box::new(|req| {
        let stdout = if req.command.contains("status --porcelain") {
            "3\n--- commits\nabc1234 Add the parser\ndef5678 Initial commit\n".to_string()
        } else {
            String::new()
        };
        ExecResult {
            stdout,
            ..ExecResult::default()
        }
    }));
    env.put(".git/HEAD", "ref: refs/heads/feature/x\n");
    env.put("AGENTS.md", "Run cargo test before finishing.");
    env.put("CLAUDE.md", "Prefer small functions.");
    env.put("GEMINI.md", "Gemini-only advice.");
    env.put(".codex/instructions.md", "Codex-only advice.");
    env
}

fn system_prompt(provider: &str, env: FakeEnv) -> String {
    // Whatever the profile, the fake server speaks Anthropic's protocol, where the system
    // prompt is easy to read back.
    let mut config = SessionConfig::new(provider, "m");
    config.protocol = agent_core::llm::WireProtocol::AnthropicMessages;
    config.user_instructions = Some("Answer tersely.".to_string());
    let mut h = Harness::with(env, config, vec![text_reply("ok")]);
    h.session.submit("hi").unwrap();
    let body = &h.transport.request_bodies()[0];
    body["system"][0]["text"].as_str().unwrap_or_default().to_string()
}

#[test]
fn the_prompt_has_the_environment_git_snapshot_and_the_profiles_project_docs_in_order() {
    let prompt = system_prompt("anthropic", repository());
    for expected in [
        "Working directory: /work",
        "Is git repository: true",
        "Git branch: feature/x",
        "Files with uncommitted changes: 3",
        "abc1234 Add the parser",
        "## /work/AGENTS.md\nRun cargo test before finishing.",
        "## /work/CLAUDE.md\nPrefer small functions.",
    ] {
        assert!(prompt.contains(expected), "missing {expected:?} in:\n{prompt}");
    }
    assert!(!prompt.contains("Gemini-only") && !prompt.contains("Codex-only"));
    let order = [
        "<environment>",
        "<git_status>",
        "<project_instructions>",
        "Answer tersely.",
    ];
    let positions: Vec<usize> = order.iter().map(|m| prompt.find(m).unwrap()).collect();
    assert!(positions.windows(2).all(|w| w[0] < w[1]), "{positions:?}");
    assert!(prompt.ends_with("Answer tersely."));
}

#[test]
fn a_browser_environment_is_described_as_one_that_cannot_run_processes() {
    for provider in ["anthropic", "openai", "gemini"] {
        let prompt = system_prompt(provider, FakeEnv::browser());
        assert!(prompt.contains("Platform: browser"), "{prompt}");
        assert!(prompt.contains("<no_processes>"), "{provider}: {prompt}");
        assert!(prompt.contains("A shell call fails"), "{provider}");
    }
    let native = system_prompt("anthropic", FakeEnv::default());
    assert!(!native.contains("<no_processes>"));
}

#[test]
fn the_openai_profile_reads_codex_instructions_and_no_repository_means_no_git_block() {
    let env = FakeEnv::default();
    env.put("AGENTS.md", "Shared.");
    env.put(".codex/instructions.md", "Codex-only advice.");
    env.put("CLAUDE.md", "Claude-only advice.");
    let prompt = system_prompt("openai", env);
    assert!(prompt.contains("Is git repository: false"));
    assert!(!prompt.contains("<git_status>"));
    assert!(prompt.contains("## /work/.codex/instructions.md\nCodex-only advice."));
    assert!(!prompt.contains("Claude-only"));
}

#[test]
fn project_docs_stay_within_32_kb_with_a_marker() {
    let env = FakeEnv::default();
    env.put("AGENTS.md", &"x".repeat(40_000));
    env.put("CLAUDE.md", "never reached");
    let prompt = system_prompt("anthropic", env);
    let start = prompt.find("## /work/AGENTS.md").unwrap();
    let end = prompt.find("</project_instructions>").unwrap();
    let docs = &prompt[start..end];
    assert!(docs.contains("[... project instructions truncated at 32 KB ...]"));
    assert!(docs.len() <= 32 * 1024 + 16, "{} bytes", docs.len());
    assert!(!prompt.contains("never reached"));
}

#[test]
fn each_profile_is_told_to_edit_with_its_own_tool() {
    let openai = system_prompt("openai", FakeEnv::default());
    assert!(openai.contains("Change files with apply_patch") && openai.contains("*** Begin Patch"));
    assert!(openai.contains("AGENTS.md and .codex/instructions.md"));
    let anthropic = system_prompt("anthropic", FakeEnv::default());
    assert!(anthropic.contains("edit_file replaces old_string") && !anthropic.contains("apply_patch"));
    assert!(anthropic.contains("CLAUDE.md"));
    let gemini = system_prompt("gemini", FakeEnv::default());
    assert!(gemini.contains("read_many_files") && !gemini.contains("apply_patch"));
    assert!(gemini.contains("GEMINI.md"));
    // Each prompt covers identity, tool use, editing and coding practice (spec 6.2).
    for prompt in [&openai, &anthropic, &gemini] {
        for topic in ["You are", "# Tools", "# Coding", "shell"] {
            let topic = if topic == "# Coding" && prompt == &gemini {
                "# Core rules"
            } else {
                topic
            };
            assert!(prompt.contains(topic), "missing {topic:?}");
        }
    }
}

fn prompt_for(config: SessionConfig) -> String {
    let mut config = config;
    config.protocol = agent_core::llm::WireProtocol::AnthropicMessages;
    let mut h = Harness::with(FakeEnv::default(), config, vec![text_reply("ok")]);
    h.session.submit("hi").unwrap();
    let body = &h.transport.request_bodies()[0];
    body["system"][0]["text"].as_str().unwrap_or_default().to_string()
}

#[test]
fn the_environment_block_names_the_model_and_its_knowledge_cutoff_from_the_catalog() {
    let prompt = prompt_for(SessionConfig::new("anthropic", "claude-sonnet-4-5-20250929"));
    assert!(
        prompt.contains("Model: Claude Sonnet 4.5 (claude-sonnet-4-5-20250929)\n"),
        "{prompt}"
    );
    assert!(prompt.contains("Knowledge cutoff: 2025-01\n"));
    let prompt = prompt_for(SessionConfig::new("openai", "my-finetune"));
    assert!(
        prompt.contains("Model: my-finetune\nKnowledge cutoff: unknown\n"),
        "{prompt}"
    );
    let mut config = SessionConfig::new("openai", "my-finetune");
    config.knowledge_cutoff = Some("2025-06".to_string());
    assert!(prompt_for(config).contains("Knowledge cutoff: 2025-06\n"));
}

#[test]
fn describe_reports_capabilities_tools_and_the_system_prompt() {
    let mut h = Harness::with(
        FakeEnv::default(),
        SessionConfig::new("openai", "gpt-4.1"),
        Vec::new(),
    );
    let d = h.session.describe().unwrap();
    assert_eq!(d["id"], "openai");
    assert_eq!(d["model_display_name"], "GPT-4.1");
    assert_eq!(d["supports_reasoning"], false);
    assert_eq!(d["supports_streaming"], true);
    assert_eq!(d["supports_parallel_tool_calls"], true);
    assert_eq!(d["supports_images"], true);
    assert_eq!(d["context_window_size"], 1_047_576);
    assert_eq!(d["knowledge_cutoff"], "2024-06-01");
    let tools: Vec<&str> = d["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert!(
        tools.contains(&"apply_patch") && !tools.contains(&"edit_file"),
        "{tools:?}"
    );
    assert!(d["system_prompt"].as_str().unwrap().contains("<environment>"));
    // Describing makes no LLM request.
    assert!(h.transport.request_bodies().is_empty());
    let mut bad = Harness::with(FakeEnv::default(), SessionConfig::new("mistral", "m"), Vec::new());
    assert!(
        bad.session
            .describe()
            .unwrap_err()
            .to_string()
            .contains("provider")
    );
}

#[test]
fn the_shell_tool_tells_each_model_its_profiles_default_timeout() {
    let shell = |provider: &str| {
        let mut h = Harness::with(FakeEnv::default(), SessionConfig::new(provider, "m"), Vec::new());
        let d = h.session.describe().unwrap();
        d["tools"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["name"] == "shell")
            .unwrap()["description"]
            .as_str()
            .unwrap()
            .to_string()
    };
    assert!(shell("anthropic").contains("after 120 seconds"));
    assert!(shell("openai").contains("after 10 seconds"));
    assert!(shell("gemini").contains("after 10 seconds"));
}

#[test]
fn a_model_without_reasoning_is_not_sent_a_reasoning_effort() {
    let mut config = SessionConfig::new("anthropic", "claude-sonnet-4-5");
    config.reasoning_effort = Some(agent_core::llm::ReasoningEffort::High);
    let mut h = Harness::with(FakeEnv::default(), config, vec![text_reply("ok")]);
    h.session.submit("hi").unwrap();
    assert!(h.transport.request_bodies()[0]["thinking"].is_object());

    // The catalog says GPT-4o has no reasoning; an effort would be rejected by the API.
    let mut config = SessionConfig::new("openai", "gpt-4o");
    config.reasoning_effort = Some(agent_core::llm::ReasoningEffort::High);
    config.protocol = agent_core::llm::WireProtocol::AnthropicMessages;
    let mut h = Harness::with(FakeEnv::default(), config, vec![text_reply("ok")]);
    h.session.submit("hi").unwrap();
    assert!(h.transport.request_bodies()[0].get("thinking").is_none());
}
