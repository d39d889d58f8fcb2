//! Section 3 of the spec through the real binary and component: `agent-host profile` shows
//! each profile's capabilities, tools and system prompt, and an image read by read_file
//! reaches the scripted server as an image block.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests may panic

mod common;

use common::{agent_host, git, stderr, stdout};
use scripted_llm::anthropic::{message, text, tool_use};
use scripted_llm::{Script, ScriptedServer};
use serde_json::{Value, json};

/// A 1x1 PNG.
const PIXEL_PNG: &[u8] = &[
    0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0x00, 0x00, 0x00, 0x0D, 0x49, 0x48, 0x44, 0x52, 0x00,
    0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01, 0x08, 0x06, 0x00, 0x00, 0x00, 0x1F, 0x15, 0xC4, 0x89, 0x00,
    0x00, 0x00, 0x0D, 0x49, 0x44, 0x41, 0x54, 0x78, 0x9C, 0x63, 0x00, 0x01, 0x00, 0x00, 0x05, 0x00, 0x01,
    0x0D, 0x0A, 0x2D, 0xB4, 0x00, 0x00, 0x00, 0x00, 0x49, 0x45, 0x4E, 0x44, 0xAE, 0x42, 0x60, 0x82,
];

async fn describe(provider: &str, model: &str, cwd: &std::path::Path) -> anyhow::Result<Value> {
    let output = agent_host()
        .args([
            "profile",
            "--json",
            "--provider",
            provider,
            "--model",
            model,
            "--cwd",
        ])
        .arg(cwd)
        .output()
        .await?;
    assert!(output.status.success(), "{}", stderr(&output));
    Ok(serde_json::from_str(&stdout(&output))?)
}

fn tool_names(description: &Value) -> Vec<String> {
    description["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_string())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_profile_describes_its_own_tools_capabilities_and_prompt() -> anyhow::Result<()> {
    let work = tempfile::tempdir()?;
    std::fs::write(work.path().join("AGENTS.md"), "Shared notes.")?;
    std::fs::write(work.path().join("CLAUDE.md"), "Claude notes.")?;
    std::fs::write(work.path().join("GEMINI.md"), "Gemini notes.")?;

    let anthropic = describe("anthropic", "claude-sonnet-4-5", work.path()).await?;
    assert_eq!(tool_names(&anthropic), common::profile_tools("anthropic"));
    assert_eq!(anthropic["default_command_timeout_ms"], 120_000);
    assert_eq!(anthropic["context_window_size"], 200_000);
    assert_eq!(anthropic["knowledge_cutoff"], "2025-01");
    let prompt = anthropic["system_prompt"].as_str().unwrap();
    assert!(
        prompt.contains("Claude notes.")
            && prompt.contains("Shared notes.")
            && !prompt.contains("Gemini notes.")
    );
    assert!(prompt.contains(&format!("Working directory: {}", work.path().display())));

    let openai = describe("openai", "gpt-5.2-codex", work.path()).await?;
    assert_eq!(tool_names(&openai), common::profile_tools("openai"));
    assert_eq!(openai["default_command_timeout_ms"], 10_000);
    assert_eq!(openai["model_display_name"], "GPT-5.2 Codex");

    let gemini = describe("gemini", "gemini-2.5-pro", work.path()).await?;
    assert_eq!(tool_names(&gemini), common::profile_tools("gemini"));
    assert_eq!(gemini["context_window_size"], 1_048_576);
    assert!(
        gemini["system_prompt"]
            .as_str()
            .unwrap()
            .contains("Gemini notes.")
    );
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_readable_profile_view_and_an_unknown_profile() -> anyhow::Result<()> {
    let work = tempfile::tempdir()?;
    let output = agent_host()
        .args(["profile", "--provider", "openai", "--cwd"])
        .arg(work.path())
        .output()
        .await?;
    assert!(output.status.success(), "{}", stderr(&output));
    let shown = stdout(&output);
    for expected in [
        "Profile openai with",
        "Parallel tool calls",
        "apply_patch",
        "System prompt:",
        "<environment>",
    ] {
        assert!(shown.contains(expected), "missing {expected:?} in:\n{shown}");
    }
    let output = agent_host()
        .args(["profile", "--provider", "mistral", "--cwd"])
        .arg(work.path())
        .output()
        .await?;
    assert_eq!(output.status.code(), Some(2));
    assert!(
        stderr(&output).contains("unknown profile \"mistral\""),
        "{}",
        stderr(&output)
    );
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_image_read_by_the_model_reaches_the_server_as_an_image_block() -> anyhow::Result<()> {
    let server = ScriptedServer::start(Script {
        replies: vec![
            message(&[tool_use(
                "toolu_1",
                "read_file",
                json!({"file_path": "assets/logo.png"}),
            )]),
            message(&[text("A single transparent pixel.")]),
        ],
        require_api_key: None,
    })
    .await?;
    let work = tempfile::tempdir()?;
    std::fs::create_dir(work.path().join("assets"))?;
    std::fs::write(work.path().join("assets/logo.png"), PIXEL_PNG)?;
    let output = agent_host()
        .args(["run", "Describe the logo", "--cwd"])
        .arg(work.path())
        .env("ANTHROPIC_BASE_URL", server.base_url())
        .output()
        .await?;
    assert!(output.status.success(), "{}", stderr(&output));
    let second = server.requests()[1].json();
    let result = second["messages"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|m| m["content"].as_array().cloned().unwrap_or_default())
        .find(|b| b["type"] == "tool_result")
        .unwrap();
    let image = &result["content"][1];
    assert_eq!(image["type"], "image");
    assert_eq!(image["source"]["media_type"], "image/png");
    use base64::Engine;
    let sent = base64::engine::general_purpose::STANDARD.decode(image["source"]["data"].as_str().unwrap())?;
    assert_eq!(sent, PIXEL_PNG);
    Ok(())
}

/// A session confined to a folder below the repository's root still reads the instruction
/// files from the root down and takes the git snapshot, and nothing else of the repository
/// becomes readable.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_subfolder_workspace_gets_the_repository_roots_instructions_and_git_snapshot() -> anyhow::Result<()>
{
    let repo = tempfile::tempdir()?;
    let root = repo.path();
    git(root, &["init", "-q", "-b", "feature/x"]);
    std::fs::create_dir_all(root.join("pkg/app"))?;
    std::fs::write(root.join("AGENTS.md"), "Root notes.")?;
    std::fs::write(root.join("CLAUDE.md"), "Root Claude notes.")?;
    std::fs::write(root.join("pkg/AGENTS.md"), "Package notes.")?;
    std::fs::write(root.join("pkg/app/CLAUDE.md"), "App notes.")?;
    std::fs::write(root.join("secret.txt"), "Sibling secret.")?;
    git(root, &["add", "."]);
    git(root, &["commit", "-qm", "first commit"]);
    std::fs::write(root.join("pkg/changed.txt"), "new")?;
    let app = root.join("pkg/app");

    let described = describe("anthropic", "claude-sonnet-4-5", &app).await?;
    let system = described["system_prompt"].as_str().unwrap();
    for expected in ["Is git repository: true", "Git branch: feature/x", "first commit"] {
        assert!(system.contains(expected), "{expected} in:\n{system}");
    }
    let at = |text: &str| {
        system
            .find(text)
            .unwrap_or_else(|| panic!("{text} in:\n{system}"))
    };
    assert!(at("Root notes.") < at("Root Claude notes."));
    assert!(at("Root Claude notes.") < at("Package notes."));
    assert!(at("Package notes.") < at("App notes."));
    assert!(!system.contains("Sibling secret."));

    // A path boundary (`--deny-dir`) lets the same files through, and no more.
    std::fs::create_dir_all(app.join("private"))?;
    let output = agent_host()
        .args(["profile", "--json", "--provider", "anthropic", "--cwd"])
        .arg(&app)
        .arg("--deny-dir")
        .arg(app.join("private"))
        .output()
        .await?;
    assert!(output.status.success(), "{}", stderr(&output));
    let bounded: Value = serde_json::from_str(&stdout(&output))?;
    let bounded = bounded["system_prompt"].as_str().unwrap();
    for expected in [
        "Root notes.",
        "Package notes.",
        "App notes.",
        "Git branch: feature/x",
    ] {
        assert!(bounded.contains(expected), "{expected} in:\n{bounded}");
    }

    // The view shows those files only: the model's tools still stop at the workspace.
    for path in [
        root.join("secret.txt"),
        root.join(".git/config"),
        root.join("AGENTS.md"),
    ] {
        let args = json!({"file_path": path}).to_string();
        let read = agent_host()
            .args(["tool", "read_file", "--args", &args, "--cwd"])
            .arg(&app)
            .output()
            .await?;
        if path.ends_with("AGENTS.md") {
            assert!(stdout(&read).contains("Root notes."), "{}", stderr(&read));
        } else {
            assert!(!read.status.success(), "{}", stdout(&read));
            assert!(
                stderr(&read).contains("outside the workspace"),
                "{}",
                stderr(&read)
            );
        }
    }
    Ok(())
}
