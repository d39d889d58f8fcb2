//! Layered configuration: a user file, a project file, environment variables and
//! flags overriding each other, `config show` naming each value's source with keys
//! redacted, refused literal keys and unknown keys, and the effective values reaching a real
//! `run` against the scripted server.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests may panic

mod common;

use common::{agent_host, stderr, stdout};
use scripted_llm::anthropic::{message, text, tool_use};
use scripted_llm::{Script, ScriptedServer};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};

/// A user configuration folder and a workspace with a project file.
struct Layers {
    user_dir: tempfile::TempDir,
    work: tempfile::TempDir,
}

impl Layers {
    fn new(user: &str, project: &str) -> Self {
        let layers = Self {
            user_dir: tempfile::tempdir().unwrap(),
            work: tempfile::tempdir().unwrap(),
        };
        std::fs::write(layers.user_file(), user).unwrap();
        std::fs::create_dir(layers.work.path().join(".agent")).unwrap();
        std::fs::write(layers.project_file(), project).unwrap();
        layers.trust();
        layers
    }

    /// The user trusts the project file as it is now (`agent-host trust`): these tests are
    /// about the layers, and an untrusted project file gives up most of its settings.
    fn trust(&self) {
        agent_host::config::TrustStore::next_to(Some(&self.user_file()))
            .unwrap()
            .trust(&self.project_file())
            .unwrap();
    }

    fn user_file(&self) -> PathBuf {
        self.user_dir.path().join("config.toml")
    }

    fn project_file(&self) -> PathBuf {
        self.work.path().join(".agent/config.toml")
    }

    /// `agent-host ARGS --cwd WORK` with the user folder set.
    fn command(&self, args: &[&str]) -> tokio::process::Command {
        let mut cmd = agent_host();
        cmd.args(args)
            .arg("--cwd")
            .arg(self.work.path())
            .env("AGENT_HOST_CONFIG_DIR", self.user_dir.path());
        cmd
    }

    async fn show(&self, extra: &[&str], env: &[(&str, &str)]) -> Value {
        let mut cmd = self.command(&[&["config", "show", "--json"], extra].concat());
        cmd.envs(env.iter().copied());
        let output = cmd.output().await.unwrap();
        assert!(output.status.success(), "{}", stderr(&output));
        serde_json::from_str(&stdout(&output)).unwrap()
    }
}

fn source(shown: &Value, key: &str) -> String {
    shown["settings"][key]["source"].as_str().unwrap().to_string()
}

fn value(shown: &Value, key: &str) -> Value {
    shown["settings"][key]["value"].clone()
}

fn at(kind: &str, path: &Path, line: usize) -> String {
    format!("{kind} file {}:{line}", path.display())
}

const USER: &str = r#"
model = "user-model"
reasoning_effort = "low"
approval = "ask"
env_policy = "core"

[limits]
max_turns = 5
default_command_timeout_ms = 20000
"#;

const PROJECT: &str = r#"reasoning_effort = "medium"

[limits]
max_turns = 7
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn flags_beat_environment_beat_project_file_beat_user_file_beat_defaults() {
    let layers = Layers::new(USER, PROJECT);
    let (user, project) = (layers.user_file(), layers.project_file());

    // Files only: the project file wins where both set a value.
    let shown = layers.show(&[], &[("ANTHROPIC_API_KEY", "k")]).await;
    assert_eq!(shown["files"]["user"]["path"], user.display().to_string());
    assert_eq!(shown["files"]["project"]["found"], true);
    assert_eq!(value(&shown, "provider"), "anthropic");
    assert_eq!(source(&shown, "provider"), "default");
    assert_eq!(value(&shown, "model"), "user-model");
    assert_eq!(source(&shown, "model"), at("user", &user, 2));
    assert_eq!(value(&shown, "reasoning_effort"), "medium");
    assert_eq!(source(&shown, "reasoning_effort"), at("project", &project, 1));
    assert_eq!(value(&shown, "limits.max_turns"), 7);
    assert_eq!(source(&shown, "limits.max_turns"), at("project", &project, 4));
    assert_eq!(value(&shown, "limits.default_command_timeout_ms"), 20000);
    assert_eq!(
        source(&shown, "limits.default_command_timeout_ms"),
        at("user", &user, 9)
    );
    assert_eq!(value(&shown, "approval"), "ask");
    assert_eq!(value(&shown, "env_policy"), "core");
    // A runaway input stops after 200 tool rounds unless configured otherwise.
    assert_eq!(value(&shown, "limits.max_tool_rounds_per_input"), 200);
    assert_eq!(source(&shown, "limits.max_tool_rounds_per_input"), "default");

    // The environment over the files, flags over the environment.
    let env = [
        ("ANTHROPIC_API_KEY", "k"),
        ("AGENT_REASONING_EFFORT", "high"),
        ("AGENT_MODEL", "env-model"),
        ("AGENT_APPROVAL", "read-only"),
    ];
    let shown = layers
        .show(&["--max-turns", "9", "--approval", "auto"], &env)
        .await;
    assert_eq!(value(&shown, "reasoning_effort"), "high");
    assert_eq!(source(&shown, "reasoning_effort"), "env AGENT_REASONING_EFFORT");
    assert_eq!(value(&shown, "model"), "env-model");
    assert_eq!(source(&shown, "model"), "env AGENT_MODEL");
    assert_eq!(value(&shown, "limits.max_turns"), 9);
    assert_eq!(source(&shown, "limits.max_turns"), "flag --max-turns");
    assert_eq!(value(&shown, "approval"), "auto");
    assert_eq!(source(&shown, "approval"), "flag --approval");
    let shown = layers
        .show(
            &["--model", "flag-model", "--effort", "low", "--vars", "none"],
            &env,
        )
        .await;
    assert_eq!(source(&shown, "model"), "flag --model");
    assert_eq!(source(&shown, "reasoning_effort"), "flag --effort");
    assert_eq!(value(&shown, "env_policy"), "none");
    assert_eq!(source(&shown, "env_policy"), "flag --vars");

    // --config replaces the project file.
    let other = layers.work.path().join("other.toml");
    std::fs::write(&other, "\n\nmodel = \"other-model\"\n").unwrap();
    let shown = layers
        .show(
            &["--config", other.to_str().unwrap()],
            &[("ANTHROPIC_API_KEY", "k")],
        )
        .await;
    assert_eq!(value(&shown, "model"), "other-model");
    assert_eq!(source(&shown, "model"), at("project", &other, 3));
    assert_eq!(
        value(&shown, "reasoning_effort"),
        "low",
        "the workspace's file is not read"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_file_model_stays_with_the_file_provider() {
    let layers = Layers::new("provider = \"anthropic\"\nmodel = \"claude-opus-4-1\"\n", "");
    let env = [("ANTHROPIC_API_KEY", "a"), ("OPENAI_API_KEY", "o")];
    let shown = layers.show(&[], &env).await;
    assert_eq!(value(&shown, "model"), "claude-opus-4-1");
    let shown = layers.show(&["--provider", "openai"], &env).await;
    assert_eq!(value(&shown, "provider"), "openai");
    assert_eq!(value(&shown, "model"), "gpt-5");
    assert_eq!(source(&shown, "model"), "default");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn keys_are_never_shown_only_whether_set_and_from_which_variable() {
    let layers = Layers::new(
        "",
        "[endpoints.local]\nbase_url = \"https://bob:hunter2@llm.example/v1\"\napi_key_env = \"LOCAL_TOKEN\"\n",
    );
    let env = [
        ("ANTHROPIC_API_KEY", "sk-ant-secret-abcd"),
        ("LOCAL_TOKEN", "tok-secret-wxyz"),
    ];
    let shown = layers.show(&[], &env).await;
    assert_eq!(value(&shown, "endpoints.anthropic.api_key"), "<set>");
    assert_eq!(
        source(&shown, "endpoints.anthropic.api_key"),
        "env ANTHROPIC_API_KEY"
    );
    assert_eq!(value(&shown, "endpoints.openai.api_key"), "<not set>");
    assert_eq!(value(&shown, "endpoints.local.api_key_env"), "LOCAL_TOKEN");
    assert_eq!(
        source(&shown, "endpoints.local.api_key_env"),
        at("project", &layers.project_file(), 3)
    );
    assert_eq!(source(&shown, "endpoints.local.api_key"), "env LOCAL_TOKEN");
    assert_eq!(
        value(&shown, "endpoints.local.base_url"),
        "https://bob:***@llm.example/v1"
    );
    assert_eq!(value(&shown, "endpoints.local.protocol"), "chat-completions");
    for mode in [vec!["config", "show", "--json"], vec!["config", "show"]] {
        let output = layers.command(&mode).envs(env).output().await.unwrap();
        let printed = stdout(&output) + &stderr(&output);
        assert!(output.status.success(), "{printed}");
        for secret in ["secret", "hunter2", "abcd", "wxyz"] {
            assert!(!printed.contains(secret), "{secret} leaked:\n{printed}");
        }
    }
    let text = stdout(
        &layers
            .command(&["config", "show"])
            .envs(env)
            .output()
            .await
            .unwrap(),
    );
    assert!(
        text.contains("endpoints.anthropic.api_key = \"<set>\"") && text.contains("# env ANTHROPIC_API_KEY"),
        "{text}"
    );
    assert!(
        text.contains(&format!("# user file: {}", layers.user_file().display())),
        "{text}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_literal_key_or_an_unknown_key_is_an_error_naming_the_file_and_line() {
    let layers = Layers::new(
        "",
        "[endpoints.local]\nbase_url = \"http://x\"\napi_key = \"sk-live-1234\"\n",
    );
    let output = layers.command(&["config", "show"]).output().await.unwrap();
    assert_eq!(output.status.code(), Some(2));
    let message = stderr(&output);
    assert!(
        message.contains(&format!(
            "{}:3: endpoints.local.api_key",
            layers.project_file().display()
        )) && message.contains("api_key_env")
            && !message.contains("sk-live-1234"),
        "{message}"
    );

    let layers = Layers::new("model = \"m\"\nmodle = \"typo\"\n", "");
    let output = layers.command(&["config", "show"]).output().await.unwrap();
    assert_eq!(output.status.code(), Some(2));
    let message = stderr(&output);
    assert!(
        message.contains(&layers.user_file().display().to_string())
            && message.contains("line 2")
            && message.contains("unknown field `modle`"),
        "{message}"
    );

    let layers = Layers::new("[limits]\nmax_turns = 3\napproval = \"sometimes\"\n", "");
    let output = layers.command(&["config", "show"]).output().await.unwrap();
    let message = stderr(&output);
    assert!(
        message.contains("unknown field `approval`"),
        "inside [limits]: {message}"
    );

    let layers = Layers::new("approval = \"sometimes\"\n", "");
    let output = layers.command(&["config", "show"]).output().await.unwrap();
    let message = stderr(&output);
    assert!(
        message.contains(&format!("{}:1: approval", layers.user_file().display()))
            && message.contains("use auto, ask or read-only"),
        "{message}"
    );

    // [[tools]] run commands of a project: not from the user's file.
    let layers = Layers::new(
        "[[tools]]\nname = \"x\"\ndescription = \"x\"\ncategory = \"read\"\ncmd = \"true\"\n",
        "",
    );
    let output = layers.command(&["config", "show"]).output().await.unwrap();
    assert!(
        stderr(&output).contains("belong in its .agent/config.toml"),
        "{}",
        stderr(&output)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_uses_the_files_endpoint_model_effort_limits_and_env_policy() {
    let server = ScriptedServer::start(Script {
        replies: vec![
            message(&[tool_use(
                "t1",
                "shell",
                json!({"command": "echo \"home=[$HOME]\""}),
            )]),
            message(&[text("done")]),
        ],
        require_api_key: Some("file-key".to_string()),
    })
    .await
    .unwrap();
    let project = format!(
        "provider = \"local\"\nmodel = \"file-model\"\nreasoning_effort = \"medium\"\nenv_policy = \"none\"\n\n\
         [endpoints.local]\nbase_url = \"{}\"\nprotocol = \"anthropic\"\napi_key_env = \"LOCAL_KEY\"\n",
        server.base_url()
    );
    let layers = Layers::new("[limits]\nmax_turns = 4\n", &project);
    let output = layers
        .command(&["run", "say where home is"])
        .env("LOCAL_KEY", "file-key")
        .output()
        .await
        .unwrap();
    assert!(
        output.status.success(),
        "{}\n{}",
        stdout(&output),
        stderr(&output)
    );
    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    let first = requests[0].json();
    assert_eq!(requests[0].path, "/v1/messages");
    assert_eq!(first["model"], "file-model");
    assert_eq!(first["thinking"]["budget_tokens"], 8192, "{first}");
    let results = requests[1].tool_results();
    let shell = results[0]["content"].as_str().unwrap();
    assert!(shell.starts_with("home=[]"), "env_policy none: {shell}");

    // A project limit of one turn stops the same run after the first answer (exit 3), and
    // the environment's model replaces the file's.
    let server = ScriptedServer::start(Script {
        replies: vec![message(&[tool_use("t1", "shell", json!({"command": "true"}))])],
        require_api_key: Some("file-key".to_string()),
    })
    .await
    .unwrap();
    let project = format!(
        "{}\n[limits]\nmax_turns = 1\n",
        project.replace(&server_url_of(&project), &server.base_url())
    );
    std::fs::write(layers.project_file(), project).unwrap();
    layers.trust();
    let output = layers
        .command(&["run", "again"])
        .env("LOCAL_KEY", "file-key")
        .env("AGENT_MODEL", "env-model")
        .output()
        .await
        .unwrap();
    assert_eq!(output.status.code(), Some(3), "{}", stderr(&output));
    let requests = server.requests();
    assert_eq!(requests.len(), 1);
    assert_eq!(requests[0].json()["model"], "env-model");
}

/// The base URL written in a project file.
fn server_url_of(project: &str) -> String {
    let start = project.find("base_url = \"").unwrap() + "base_url = \"".len();
    let end = project[start..].find('"').unwrap();
    project[start..start + end].to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn plugins_come_from_the_user_file_unless_the_project_has_its_own() {
    let layers = Layers::new(
        "[plugins]\npaths = [\"user.wasm\"]\n",
        "[[tools]]\nname = \"greet\"\ndescription = \"Say hello\"\ncategory = \"read\"\ncmd = \"echo\"\n",
    );
    let shown = layers.show(&[], &[]).await;
    let user_plugin = layers.user_dir.path().join("user.wasm");
    assert_eq!(
        value(&shown, "plugins.paths"),
        json!([user_plugin.display().to_string()])
    );
    assert_eq!(
        source(&shown, "plugins.paths"),
        at("user", &layers.user_file(), 1)
    );
    assert_eq!(value(&shown, "tools"), json!(["greet"]));
    assert_eq!(source(&shown, "tools"), at("project", &layers.project_file(), 1));

    std::fs::write(layers.project_file(), "[plugins]\npaths = []\n").unwrap();
    layers.trust();
    let shown = layers.show(&[], &[]).await;
    assert_eq!(value(&shown, "plugins.paths"), json!([]));
    assert_eq!(
        source(&shown, "plugins.paths"),
        at("project", &layers.project_file(), 1)
    );
}
