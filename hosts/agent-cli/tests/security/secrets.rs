//! A command the agent runs is a child of agent-host (THREAT-MODEL.md, row 2). It must not
//! find the user's credentials in its own environment or in agent-host's
//! (`/proc/$PPID/environ`), and one that finds a credential anyway must not get it into the
//! session's files.

use crate::{UserDirs, llm, succeeded};
use scripted_llm::anthropic::{message, text, tool_use};
use scripted_llm::{Script, ScriptedServer};
use serde_json::json;

const SECRETS: &[(&str, &str)] = &[
    ("ANTHROPIC_API_KEY", "sk-ant-user-key-0123456789abcdef"),
    ("AWS_SECRET_ACCESS_KEY", "wJalrXUtnFEMI-K7MDENG-bPxRfiCY19"),
    ("PGPASSWORD", "pg-password-19-hunter2"),
    ("GITHUB_PAT", "github-pat-19-abcdefgh"),
    ("API_KEY", "plain-api-key-19-value"),
    ("DATABASE_URL", "postgres://app:db-password-19@db.internal/app"),
    // The named endpoint's key variable, whose name says nothing.
    ("LOCAL_LLM_CRED", "local-llm-cred-19-value"),
];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn commands_see_no_credential_of_the_host_and_the_session_files_hold_none() {
    // What the command saw is kept in files too: the model's view of a long output is cut
    // in the middle.
    let script = "tr '\\0' '\\n' < /proc/$PPID/environ > host-environ.txt; env > own-env.txt; \
                  cat host-environ.txt own-env.txt creds.txt";
    let llm = ScriptedServer::start(Script {
        replies: vec![
            message(&[tool_use("t1", "shell", json!({"command": script}))]),
            message(&[text("Done.")]),
        ],
        require_api_key: Some(SECRETS[0].1.to_string()),
    })
    .await
    .unwrap();
    let dirs = UserDirs::new();
    dirs.write_user_config(&format!(
        "[endpoints.local]\nbase_url = \"{}\"\nprotocol = \"anthropic\"\napi_key_env = \"LOCAL_LLM_CRED\"\n",
        llm.base_url()
    ));
    let work = tempfile::tempdir().unwrap();
    // A file in the workspace holding a key the host knows: printed, it is redacted.
    std::fs::write(work.path().join("creds.txt"), format!("found {}\n", SECRETS[6].1)).unwrap();
    let mut cmd = dirs.agent_host();
    // Without the sandbox: in it, agent-host's environ cannot be read at all (see
    // `sandbox::credentials_in_the_home_directory_cannot_be_read`); this is what holds
    // when the user turns it off.
    cmd.args(["run", "look around", "--sandbox", "danger-full-access", "--cwd"])
        .arg(work.path())
        .env("ANTHROPIC_BASE_URL", llm.base_url());
    for (name, value) in SECRETS {
        cmd.env(name, value);
    }
    let output = cmd.output().await.unwrap();
    succeeded(&output);
    let requests = llm.requests();
    assert_eq!(requests.len(), 2);
    let shown = requests[1].tool_results()[0]["content"]
        .as_str()
        .unwrap()
        .to_string();
    // The command read agent-host's environment (these tests run as root, which reads a
    // non-dumpable process's too): what the strings held is gone, and so is every
    // credential from the command's own environment.
    let host_environ = std::fs::read_to_string(work.path().join("host-environ.txt")).unwrap();
    let own_env = std::fs::read_to_string(work.path().join("own-env.txt")).unwrap();
    assert!(
        host_environ.contains("PATH=") && own_env.contains("PATH="),
        "/proc/$PPID/environ was not read: {host_environ}"
    );
    // The endpoint's key variable whose name says nothing stays in agent-host's own environ
    // (THREAT-MODEL.md); it is withheld from commands like every other credential.
    for (name, value) in &SECRETS[..6] {
        assert!(
            !host_environ.contains(value),
            "{name} in agent-host's /proc environ"
        );
    }
    for (name, value) in SECRETS {
        assert!(!own_env.contains(value), "{name} in the command's environment");
    }
    for (name, value) in SECRETS {
        assert!(
            !shown.contains(value),
            "{name}'s value reached the model: {shown}"
        );
    }
    assert!(shown.contains("found <redacted>"), "{shown}");
    let saved = dirs.state_text();
    assert!(saved.contains("PATH="), "the session was not saved");
    for (name, value) in SECRETS {
        assert!(!saved.contains(value), "{name}'s value was saved");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_credential_the_user_allows_by_name_reaches_commands() {
    let check = "test \"$PGPASSWORD\" = allowed-pg && echo pg-seen; \
                 test -z \"$AWS_SECRET_ACCESS_KEY\" && echo aws-hidden";
    let llm = llm(vec![
        message(&[tool_use("t1", "shell", json!({"command": check}))]),
        message(&[text("Done.")]),
    ])
    .await;
    let dirs = UserDirs::new();
    let work = tempfile::tempdir().unwrap();
    let output = dirs
        .agent_host()
        .args([
            "run",
            "check",
            "--no-persist",
            "--env-allow",
            "PGPASSWORD",
            "--cwd",
        ])
        .arg(work.path())
        .env("ANTHROPIC_BASE_URL", llm.base_url())
        .env("PGPASSWORD", "allowed-pg")
        .env("AWS_SECRET_ACCESS_KEY", "not-allowed-aws")
        .output()
        .await
        .unwrap();
    succeeded(&output);
    let shown = llm.requests()[1].tool_results()[0]["content"].to_string();
    assert!(
        shown.contains("pg-seen") && shown.contains("aws-hidden"),
        "{shown}"
    );
}
