//! The merge's edge cases, without processes: endpoints from files and variables, bad
//! variables, and what a run is refused for.

use super::*;
use agent_protocol::WireProtocol;

/// Settings from a project file's text and some variables (no user file).
fn settings(project: &str, vars: &[(&str, &str)]) -> Result<Settings, String> {
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let path = dir.path().join("config.toml");
    std::fs::write(&path, project).map_err(|e| e.to_string())?;
    let locations = FileLocations {
        user: None,
        project: Some(path),
        project_explicit: true,
    };
    let vars: Vec<(String, String)> = vars.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
    let lookup = move |name: &str| vars.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone());
    Settings::load(&locations, Overrides::default(), &lookup)
}

#[test]
fn a_variable_beats_the_file_for_a_base_url_and_the_file_names_the_key_variable() {
    let file = "[endpoints.anthropic]\nbase_url = \"http://file\"\napi_key_env = \"MY_KEY\"\n";
    let s = settings(file, &[("MY_KEY", "k")]).unwrap();
    let anthropic = s.endpoints.get("anthropic").unwrap();
    assert_eq!(anthropic.base_url, "http://file");
    assert_eq!(anthropic.api_key.as_deref(), Some("k"));
    assert_eq!(anthropic.key_var, "MY_KEY");
    let s = settings(file, &[("ANTHROPIC_BASE_URL", "http://env")]).unwrap();
    let anthropic = s.endpoints.get("anthropic").unwrap();
    assert_eq!(anthropic.base_url, "http://env");
    assert_eq!(
        s.endpoint_sources["anthropic"].base_url,
        Source::env("ANTHROPIC_BASE_URL")
    );
    assert!(anthropic.configured && anthropic.api_key.is_none());
}

#[test]
fn endpoint_mistakes_are_explained() {
    let error = settings("[endpoints.openai]\nprotocol = \"gemini\"\n", &[]).unwrap_err();
    assert!(
        error.contains(":2: endpoints.openai.protocol") && error.contains("openai-responses"),
        "{error}"
    );
    let error = settings("\n[endpoints.local]\nprotocol = \"anthropic\"\n", &[]).unwrap_err();
    assert!(
        error.contains(":2: endpoints.local: base_url is required"),
        "{error}"
    );
    let error = settings(
        "[endpoints.local]\nbase_url = \"http://x\"\napi_key_env = \"sk-abc123456\"\n",
        &[],
    )
    .unwrap_err();
    assert!(
        error.contains("not an environment variable's name") && !error.contains("abc123456"),
        "{error}"
    );
    let error = settings("api_key = \"sk-1\"\n", &[]).unwrap_err();
    assert!(
        error.contains(":1: api_key") && error.contains("api_key_env"),
        "{error}"
    );
}

#[test]
fn bad_variables_name_themselves() {
    let error = settings("", &[("AGENT_APPROVAL", "sometimes")]).unwrap_err();
    assert!(
        error.starts_with("AGENT_APPROVAL: unknown approval mode"),
        "{error}"
    );
    let error = settings("", &[("AGENT_REASONING_EFFORT", "max")]).unwrap_err();
    assert!(
        error.starts_with("AGENT_REASONING_EFFORT: unknown reasoning effort"),
        "{error}"
    );
}

#[test]
fn a_run_needs_a_known_configured_provider_and_a_model() {
    let s = settings("", &[]).unwrap();
    assert!(
        s.target()
            .unwrap_err()
            .starts_with("no LLM provider is configured")
    );
    let s = settings("provider = \"nowhere\"\n", &[]).unwrap();
    assert!(s.target().unwrap_err().contains("unknown provider \"nowhere\""));
    let s = settings("provider = \"gemini\"\n", &[]).unwrap();
    assert!(s.target().unwrap_err().contains("set GEMINI_API_KEY"));
    let local = "provider = \"local\"\n[endpoints.local]\nbase_url = \"http://x/v1\"\n";
    let error = settings(local, &[]).unwrap().target().unwrap_err();
    assert!(
        error.contains("which model should local run?") && error.contains("LOCAL_MODEL"),
        "{error}"
    );
    let target = settings(local, &[("LOCAL_MODEL", "qwen")])
        .unwrap()
        .target()
        .unwrap();
    assert_eq!(
        target,
        RunTarget {
            provider: "local".into(),
            protocol: WireProtocol::ChatCompletions,
            // A Chat Completions endpoint with no profile named gets the compact one.
            profile: "compact",
            model: "qwen".into(),
        }
    );
}

#[test]
fn the_session_configuration_carries_effort_and_limits() {
    let file = "reasoning_effort = \"high\"\n[limits]\nmax_turns = 3\nenable_loop_detection = false\nmax_output_tokens = 999\n";
    let s = settings(file, &[("ANTHROPIC_API_KEY", "k")]).unwrap();
    let config = s.session_config(&s.target().unwrap());
    assert_eq!(config.model, "claude-sonnet-4-5");
    assert_eq!(
        config.reasoning_effort,
        Some(agent_protocol::ReasoningEffort::High)
    );
    assert_eq!(config.limits.max_turns, 3);
    assert!(!config.limits.enable_loop_detection);
    assert_eq!(config.limits.max_command_timeout_ms, 600_000);
    assert_eq!(config.max_output_tokens, Some(999));
}

/// `approval = "ask"` in an untrusted project is kept (it is stricter),
/// but must not open the rerun-without-the-sandbox question that `ask` brings.
#[test]
fn an_untrusted_projects_ask_mode_offers_no_rerun_without_the_sandbox() {
    struct Never;
    #[async_trait::async_trait]
    impl crate::approval::ApprovalPrompt for Never {
        async fn ask(&self, _: &crate::approval::ApprovalQuestion) -> crate::approval::ApprovalAnswer {
            crate::approval::ApprovalAnswer::Deny { reason: None }
        }
    }
    let mut s = settings("approval = \"ask\"\n", &[]).unwrap();
    let prompt = || Some(std::sync::Arc::new(Never) as std::sync::Arc<dyn crate::approval::ApprovalPrompt>);
    assert!(s.approval_policy(prompt(), false).offers_unsandboxed_reruns());
    s.untrusted_project = Some(crate::config::trust::UntrustedProject {
        file: "/p/.agent/config.toml".into(),
        ignored: Vec::new(),
    });
    let policy = s.approval_policy(prompt(), false);
    assert_eq!(policy.mode(), crate::approval::ApprovalMode::Ask);
    assert!(!policy.offers_unsandboxed_reruns());
}

#[test]
fn mcp_servers_are_read_with_their_sources_and_mistakes_name_the_line() {
    let file = "model = \"m\"\n\n[mcp_servers.docs]\ncommand = \"node\"\nargs = [\"server.js\"]\n\n\
                [mcp_servers.off]\ncommand = \"x\"\nenabled = false\n";
    let s = settings(file, &[]).unwrap();
    assert_eq!(s.agent.mcp_servers["docs"].args, ["server.js"]);
    assert!(!s.agent.mcp_servers["off"].enabled);
    assert!(
        s.mcp_server_sources["docs"].to_string().contains(":3"),
        "{}",
        s.mcp_server_sources["docs"]
    );
    let error = settings(
        "\n[mcp_servers.web]\nurl = \"http://127.0.0.1:1/mcp\"\nargs = [\"x\"]\n",
        &[],
    )
    .unwrap_err();
    assert!(
        error.contains(":2: mcp_servers.web: args, env, env_vars and cwd are for command servers"),
        "{error}"
    );
    let error = settings("[mcp_servers.a]\ncommand = \"x\"\nbearer_token = \"t\"\n", &[]).unwrap_err();
    assert!(error.contains("bearer_token"), "{error}");
}

#[test]
fn hooks_are_read_from_both_files_in_order_and_mistakes_name_the_line() {
    let s = settings("[[hooks.stop]]\ncommand = [\"notify\"]\n", &[]).unwrap();
    assert_eq!(s.agent.hooks.stop[0].command, ["notify"]);
    let error = settings("model = \"m\"\n[[hooks.stop]]\ncommand = []\n", &[]).unwrap_err();
    assert!(error.contains(":2: hooks: stop[0]: command is empty"), "{error}");
    let error = settings("[[hooks.pre_tool_use]]\ncommand = [\"x\"]\n", &[]).unwrap_err();
    assert!(error.contains("pre_tool_use"), "{error}");
}

#[test]
fn the_users_servers_and_hooks_start_in_the_users_folder_a_projects_in_the_workspace() {
    use crate::config::file::FileLayer;
    use std::path::Path;
    let text = "[mcp_servers.docs]\ncommand = \"node\"\nargs = [\"server.js\"]\n\
                [mcp_servers.tools]\ncommand = \"./run.sh\"\ncwd = \"mcp\"\n\
                [[hooks.before_tool]]\ncommand = [\"./guard.sh\"]\n";
    let user = FileLayer::parse(
        text,
        Path::new("/home/u/.config/agent-host/config.toml"),
        LayerKind::User,
    )
    .unwrap();
    let workspace = Path::new("/work/repo");
    let servers = &user.agent.mcp_servers;
    assert_eq!(
        servers["docs"].start_dir(workspace),
        Path::new("/home/u/.config/agent-host")
    );
    assert_eq!(
        servers["tools"].start_dir(workspace),
        Path::new("/home/u/.config/agent-host/mcp")
    );
    let hook_dir = user.agent.hooks.before_tool[0].base_dir.as_deref();
    assert_eq!(hook_dir, Some(Path::new("/home/u/.config/agent-host")));
    let project = FileLayer::parse(
        text,
        Path::new("/work/repo/.agent/config.toml"),
        LayerKind::Project,
    )
    .unwrap();
    assert_eq!(project.agent.mcp_servers["docs"].start_dir(workspace), workspace);
    assert_eq!(
        project.agent.mcp_servers["tools"].start_dir(workspace),
        Path::new("/work/repo/mcp")
    );
    assert_eq!(project.agent.hooks.before_tool[0].base_dir, None);
}

#[test]
fn a_config_files_servers_and_hooks_start_in_its_own_folder() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("mine.toml");
    std::fs::write(
        &file,
        "[mcp_servers.docs]\ncommand = \"node\"\n[[hooks.stop]]\ncommand = [\"./notify.sh\"]\n",
    )
    .unwrap();
    let workspace = tempfile::tempdir().unwrap();
    let (_, project) = FileLocations::new(Some(workspace.path()), Some(&file))
        .load()
        .unwrap();
    let agent = project.unwrap().agent;
    assert_eq!(agent.mcp_servers["docs"].start_dir(workspace.path()), dir.path());
    assert_eq!(agent.hooks.stop[0].base_dir.as_deref(), Some(dir.path()));
}

/// A project file is read before it is trusted: a line the parser stops at is named by its
/// place, never quoted (it could hold anything, a credential if the file is not what it
/// claims to be).
#[test]
fn a_toml_error_names_the_line_and_column_but_never_quotes_the_line() {
    use crate::config::file::FileLayer;
    use std::path::Path;
    let path = Path::new("/w/.agent/config.toml");
    let error = FileLayer::parse(
        "model = \"m\"\npassword = hunter2-secret\n",
        path,
        LayerKind::Project,
    )
    .unwrap_err();
    assert!(
        error.starts_with("/w/.agent/config.toml: line 2, column 12: "),
        "{error}"
    );
    assert!(!error.contains("hunter2") && !error.contains('\n'), "{error}");
    let error = FileLayer::parse(
        "url = \"https://bob:not-shaped-secret@github.com\"\n",
        path,
        LayerKind::Project,
    )
    .unwrap_err();
    assert!(
        error.contains("line 1, column 1: unknown field `url`") && !error.contains("not-shaped-secret"),
        "{error}"
    );
    // A key's shape in a parser's message is hidden too.
    let error = FileLayer::parse(
        "sandbox_network = \"ghp_abcdefghijklmnopqrstuvwxyz0123456789\"\n",
        path,
        LayerKind::Project,
    )
    .unwrap_err();
    assert!(!error.contains("ghp_abc"), "{error}");
    // Nor a value the parser quotes, whatever its shape.
    let error = FileLayer::parse(
        "[limits]\nmax_turns = \"my db password is hunter2\"\n",
        path,
        LayerKind::Project,
    )
    .unwrap_err();
    assert!(
        error.contains("line 2, column 13") && error.contains("expected u32"),
        "{error}"
    );
    assert!(!error.contains("hunter2"), "{error}");
}

#[test]
fn the_request_deadline_comes_from_the_files_then_the_variable() {
    let s = settings("", &[]).unwrap();
    assert_eq!(s.request_timeout_secs.value, 1800);
    assert_eq!(
        s.endpoints.request_timeout(),
        Some(std::time::Duration::from_secs(1800))
    );
    let s = settings("request_timeout_secs = 60\n", &[]).unwrap();
    assert_eq!(
        s.endpoints.request_timeout(),
        Some(std::time::Duration::from_secs(60))
    );
    assert!(s.request_timeout_secs.source.to_string().contains(":1"));
    let s = settings(
        "request_timeout_secs = 60\n",
        &[("AGENT_HOST_REQUEST_TIMEOUT_SECS", "0")],
    )
    .unwrap();
    assert_eq!(s.endpoints.request_timeout(), None);
    assert_eq!(
        s.request_timeout_secs.source,
        Source::env("AGENT_HOST_REQUEST_TIMEOUT_SECS")
    );
    let error = settings("", &[("AGENT_HOST_REQUEST_TIMEOUT_SECS", "soon")]).unwrap_err();
    assert!(
        error.starts_with("AGENT_HOST_REQUEST_TIMEOUT_SECS: \"soon\" is not a number of seconds"),
        "{error}"
    );
}

/// An untrusted project may shorten the deadline, not lengthen or remove it.
#[test]
fn an_untrusted_project_only_shortens_the_request_deadline() {
    let untrusted = |text: &str| {
        let work = tempfile::tempdir().unwrap();
        std::fs::create_dir(work.path().join(".agent")).unwrap();
        std::fs::write(work.path().join(".agent/config.toml"), text).unwrap();
        let locations = FileLocations::new(Some(work.path()), None);
        let locations = FileLocations {
            user: None,
            ..locations
        };
        Settings::load(&locations, Overrides::default(), &|_| None).unwrap()
    };
    assert_eq!(
        untrusted("request_timeout_secs = 60\n")
            .request_timeout_secs
            .value,
        60
    );
    for looser in ["request_timeout_secs = 0\n", "request_timeout_secs = 99999\n"] {
        let s = untrusted(looser);
        assert_eq!(s.request_timeout_secs.value, 1800, "{looser}");
        assert!(
            s.untrusted_project.unwrap().ignored[0].starts_with("request_timeout_secs"),
            "{looser}"
        );
    }
}

#[test]
fn a_cost_budget_in_a_file_is_an_amount_of_cents_or_an_error() {
    let kept = settings("[limits]\nmax_cost_cents = 0.4\n", &[]).unwrap();
    assert_eq!(kept.limits.max_cost_cents.value, 0.4);
    for bad in ["-1", "nan", "inf"] {
        let error = settings(&format!("[limits]\nmax_cost_cents = {bad}\n"), &[]).unwrap_err();
        assert!(
            error.contains("limits.max_cost_cents") && error.contains("is not an amount of US cents"),
            "{bad}: {error}"
        );
    }
}

/// Settings from a user file's and an untrusted project file's texts.
fn user_and_untrusted_project(user: &str, project: &str, overrides: Overrides) -> Settings {
    let home = tempfile::tempdir().unwrap();
    let user_path = home.path().join("config.toml");
    std::fs::write(&user_path, user).unwrap();
    let work = tempfile::tempdir().unwrap();
    std::fs::create_dir(work.path().join(".agent")).unwrap();
    std::fs::write(work.path().join(".agent/config.toml"), project).unwrap();
    let locations = FileLocations {
        user: Some(user_path),
        ..FileLocations::new(Some(work.path()), None)
    };
    Settings::load(&locations, overrides, &|_| None).unwrap()
}

fn entries(settings: &Settings) -> Vec<String> {
    settings
        .network_allow
        .value
        .entries()
        .iter()
        .map(ToString::to_string)
        .collect()
}

#[test]
fn the_network_setting_reads_names_and_booleans_and_a_list_alone_turns_the_allow_list_on() {
    use crate::sandbox::NetworkAccess;
    for (text, access) in [
        ("sandbox_network = true\n", NetworkAccess::On),
        ("sandbox_network = false\n", NetworkAccess::Off),
        ("sandbox_network = \"allow-list\"\n", NetworkAccess::AllowList),
        ("network_allow = [\"example.com\"]\n", NetworkAccess::AllowList),
        ("", NetworkAccess::Off),
        (
            "sandbox_network = \"off\"\nnetwork_allow = [\"example.com\"]\n",
            NetworkAccess::Off,
        ),
    ] {
        assert_eq!(
            settings(text, &[]).unwrap().sandbox_network.value,
            access,
            "{text}"
        );
    }
    let s = settings("network_allow = [\"@python\", \"*.example.com:8443\"]\n", &[]).unwrap();
    assert_eq!(
        entries(&s),
        ["pypi.org", "files.pythonhosted.org", "*.example.com:8443"]
    );
    let error = settings("\nnetwork_allow = [\"@nothing\"]\n", &[]).unwrap_err();
    assert!(
        error.contains(":2: network_allow") && error.contains("@python"),
        "{error}"
    );
    let error = settings("sandbox_network = \"sometimes\"\n", &[]).unwrap_err();
    assert!(error.contains("off, allow-list or on"), "{error}");
    // --network-allow adds to the files' list and turns the allow-list on, unless
    // --sandbox-network says otherwise.
    let flags = Overrides {
        network_allow: vec!["example.org".into()],
        ..Overrides::default()
    };
    let s = user_and_untrusted_project(
        "sandbox_network = true\nnetwork_allow = [\"a.example\"]\n",
        "",
        flags.clone(),
    );
    assert_eq!(s.sandbox_network.value, NetworkAccess::AllowList);
    assert_eq!(entries(&s), ["a.example", "example.org"]);
    let s = user_and_untrusted_project(
        "",
        "",
        Overrides {
            sandbox_network: Some(NetworkAccess::On),
            ..flags
        },
    );
    assert_eq!(s.sandbox_network.value, NetworkAccess::On);
}

/// An untrusted project may narrow the user's list and never widen it: an entry survives
/// only when the user's list covers it, and the mode only goes down.
#[test]
fn an_untrusted_project_only_narrows_the_network_allow_list() {
    use crate::sandbox::NetworkAccess;
    let user = "network_allow = [\"*.example.com\", \"pypi.org\"]\n";
    let s = user_and_untrusted_project(
        user,
        "network_allow = [\"api.example.com\", \"evil.example\", \"pypi.org:*\", \"10.0.0.0/8\"]\n",
        Overrides::default(),
    );
    assert_eq!(s.sandbox_network.value, NetworkAccess::AllowList);
    assert_eq!(entries(&s), ["api.example.com"]);
    let ignored = s.untrusted_project.unwrap().ignored;
    for dropped in ["evil.example", "pypi.org:*", "10.0.0.0/8"] {
        assert!(
            ignored.iter().any(|i| i.contains(dropped)),
            "{dropped}: {ignored:?}"
        );
    }
    // Nothing to narrow when the user allows no host: the project's list reaches nothing.
    let s = user_and_untrusted_project("", "network_allow = [\"evil.example\"]\n", Overrides::default());
    assert_eq!(s.sandbox_network.value, NetworkAccess::Off);
    // Nor may it turn the network on, or the allow-list on over "off".
    for project in ["sandbox_network = true\n", "sandbox_network = \"on\"\n"] {
        let s = user_and_untrusted_project(user, project, Overrides::default());
        assert_eq!(s.sandbox_network.value, NetworkAccess::AllowList, "{project}");
    }
    let s = user_and_untrusted_project("", "sandbox_network = \"allow-list\"\n", Overrides::default());
    assert_eq!(s.sandbox_network.value, NetworkAccess::Off);
    // With the network on for the user, any list narrows it.
    let s = user_and_untrusted_project(
        "sandbox_network = \"on\"\n",
        "sandbox_network = \"allow-list\"\nnetwork_allow = [\"pypi.org\"]\n",
        Overrides::default(),
    );
    assert_eq!(s.sandbox_network.value, NetworkAccess::AllowList);
    assert_eq!(entries(&s), ["pypi.org"]);
    // When the command line names the network, the project's list is not mixed in: neither
    // added to (--network-allow) nor made the one enforced (--sandbox-network=allow-list).
    let wide = "network_allow = [\"127.0.0.1:*\", \"169.254.169.254\", \"0.0.0.0/0:*\"]\n";
    for flags in [
        Overrides {
            network_allow: vec!["pypi.org".into()],
            ..Overrides::default()
        },
        Overrides {
            sandbox_network: Some(NetworkAccess::AllowList),
            ..Overrides::default()
        },
    ] {
        let s = user_and_untrusted_project("sandbox_network = true\n", wide, flags.clone());
        assert!(
            entries(&s).iter().all(|e| e == "pypi.org"),
            "{flags:?}: {:?}",
            entries(&s)
        );
        let ignored = s.untrusted_project.unwrap().ignored;
        assert!(
            ignored.iter().any(|i| i.starts_with("network_allow")),
            "{ignored:?}"
        );
    }
}
