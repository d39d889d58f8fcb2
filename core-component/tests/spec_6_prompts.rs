//! Section 6 of the spec: the layered system prompt (base, environment, git, project docs,
//! user instructions last), run natively over in-memory fakes.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests may panic

mod common;

use agent_core::SessionConfig;
use agent_core::fakes::FakeEnv;
use agent_core::ports::ExecResult;
use common::{Harness, text_reply};

fn repository() -> FakeEnv {
    let env = FakeEnv::new(Box::new(|req| {
        let stdout = if req.command.contains("git status") {
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
        "Is a git repository: yes",
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
fn the_openai_profile_reads_codex_instructions_and_no_repository_means_no_git_block() {
    let env = FakeEnv::default();
    env.put("AGENTS.md", "Shared.");
    env.put(".codex/instructions.md", "Codex-only advice.");
    env.put("CLAUDE.md", "Claude-only advice.");
    let prompt = system_prompt("openai", env);
    assert!(prompt.contains("Is a git repository: no"));
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
    assert!(openai.contains("change files with apply_patch") && openai.contains("*** Begin Patch"));
    let anthropic = system_prompt("anthropic", FakeEnv::default());
    assert!(anthropic.contains("change files with edit_file") && !anthropic.contains("apply_patch"));
    let gemini = system_prompt("gemini", FakeEnv::default());
    assert!(gemini.contains("read_many_files") && !gemini.contains("apply_patch"));
}
