//! Any WebAssembly component as a tool: components with plain WIT exports (Rust's
//! text-stats and fetcher, Python's csv-stats) called by the model through `agent-host run`
//! against the scripted Anthropic server, with nested record, list, option, enum, flags and
//! variant arguments and typed results; the hostile component's attacks (reading outside
//! its folders, unlisted variables and hosts, spinning, allocating, writing read-only
//! folders) end as error results while the session goes on; `plugin inspect` shows the
//! derived tools and the policy; `plugin serve` offers the tools to the official MCP Python
//! SDK's client over stdio and streamable HTTP.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests may panic

mod common;

use agent_host::host_tools::component::sha256_hex;
use agent_test_support::http::HelloServer;
use agent_test_support::paths::{mcp_python, mcp_server, plain_component};
use common::{agent_host, stderr, stdout};
use scripted_llm::anthropic::{message, text, tool_use};
use serde_json::{Value, json};
use std::path::Path;

const NOTES: &str = "The cat sat on the mat.\nThe dog sat too, said the cat.\n";
const CSV: &str = "name,age,city\nann,31,Oslo\nbob,40,\ncid,29,Rome\n";

/// A workspace with notes/, a CSV file, a secret outside the granted folders, and a
/// trusted project file loading `components` under `policies` (TOML).
fn workspace(components: &[&str], policies: &str) -> tempfile::TempDir {
    let work = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(work.path().join("notes")).unwrap();
    std::fs::create_dir_all(work.path().join(".agent")).unwrap();
    std::fs::write(work.path().join("notes/cat.txt"), NOTES).unwrap();
    std::fs::write(work.path().join("people.csv"), CSV).unwrap();
    std::fs::write(work.path().join("secret.txt"), "the password is hunter2\n").unwrap();
    let paths: Vec<String> = components
        .iter()
        .map(|c| format!("{:?}", plain_component(c).display().to_string()))
        .collect();
    std::fs::write(
        work.path().join(".agent/config.toml"),
        format!("[plugins]\npaths = [{}]\n\n{policies}", paths.join(", ")),
    )
    .unwrap();
    common::trust_project(work.path());
    work
}

async fn run(
    server: &scripted_llm::ScriptedServer,
    work: &Path,
    envs: &[(&str, &str)],
) -> std::process::Output {
    let mut command = agent_host();
    command
        .args([
            "run",
            "Look at the files",
            "--approval",
            "auto",
            "--cwd",
            &work.display().to_string(),
        ])
        .env("ANTHROPIC_BASE_URL", server.base_url());
    for (name, value) in envs {
        command.env(name, value);
    }
    command.output().await.unwrap()
}

fn parsed(result: &(String, bool, String)) -> Value {
    assert!(!result.1, "an error result: {}", result.2);
    serde_json::from_str(&result.2).unwrap_or_else(|e| panic!("{e}: {}", result.2))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_model_calls_rust_and_python_components_with_typed_arguments() {
    let work = workspace(
        &["text-stats", "csv-stats"],
        "[plugins.policy.text-stats]\nfiles.read = [\"notes\"]\n\n[plugins.policy.csv-stats]\nfiles.read = [\".\"]\n",
    );
    let server = common::scripted_server(vec![
        message(&[
            tool_use(
                "t1",
                "stats_analyze",
                json!({"path": "notes/cat.txt", "options": {
                    "top-words": 2, "case": "insensitive", "stop-words": ["the"], "count": ["lines", "words"]
                }}),
            ),
            tool_use(
                "t2",
                "stats_compare",
                json!({"sources": [{"inline": "to be or not to be"}, {"file": "notes/cat.txt"}]}),
            ),
            tool_use(
                "t3",
                "csv_summarize",
                json!({"path": "people.csv", "options": {"columns": ["age", "city"], "max-rows": null}}),
            ),
            tool_use(
                "t4",
                "stats_analyze",
                json!({"path": "notes/missing.txt", "options": {
                    "case": "sensitive", "stop-words": [], "count": []
                }}),
            ),
            tool_use(
                "t5",
                "stats_analyze",
                json!({"path": "notes/cat.txt", "options": {"case": "loud"}}),
            ),
        ]),
        message(&[text("Counted.")]),
    ])
    .await;
    let output = run(&server, work.path(), &[]).await;
    assert!(
        output.status.success(),
        "{}\n{}",
        stdout(&output),
        stderr(&output)
    );
    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    // Offered with schemas derived from the WIT types, described from its doc comments.
    let offered = requests[0].json()["tools"].as_array().unwrap().clone();
    let analyze = offered.iter().find(|t| t["name"] == "stats_analyze").unwrap();
    let options = &analyze["input_schema"]["properties"]["options"];
    assert_eq!(
        options["properties"]["case"]["enum"],
        json!(["sensitive", "insensitive"])
    );
    assert_eq!(
        options["properties"]["count"]["items"]["enum"],
        json!(["lines", "words", "chars", "bytes"])
    );
    assert_eq!(options["required"], json!(["case", "stop-words", "count"]));
    assert!(
        analyze["description"]
            .as_str()
            .unwrap()
            .starts_with("Analyzes one text file")
    );
    assert!(offered.iter().any(|t| t["name"] == "csv_summarize"));
    assert!(
        !offered.iter().any(|t| t["name"] == "exports_init"),
        "componentize-py's init is not a tool"
    );

    let results = common::last_tool_results(&requests);
    assert_eq!(results.len(), 5, "{results:?}");
    assert_eq!(
        parsed(&results[0]),
        json!({"path": "notes/cat.txt", "lines": 2, "words": 13, "chars": null, "bytes": null,
               "top": [{"word": "cat", "count": 2}, {"word": "sat", "count": 2}],
               "longest-line": {"number": 2, "length": 30}})
    );
    let compared = parsed(&results[1]);
    assert_eq!(compared[0]["signature"], json!({"ok": ["be", 2]}));
    assert_eq!(compared[1]["label"], "notes/cat.txt");
    assert_eq!(compared[1]["words"], 13);
    let table = parsed(&results[2]);
    assert_eq!(table["rows"], 3);
    assert_eq!(
        table["columns"][0],
        json!({"name": "age", "kind": "numeric", "non-empty": 3, "min": 29.0, "max": 40.0,
               "mean": 33.333333333333336, "distinct": 3})
    );
    assert_eq!(table["columns"][1]["kind"], "text");
    assert_eq!(table["columns"][1]["non-empty"], 2);
    // A result's error case is the tool's error, in the variant's JSON shape.
    let (_, error, missing) = &results[3];
    assert!(error, "{missing}");
    let missing = missing
        .strip_prefix("Tool error (stats_analyze): ")
        .unwrap_or(missing);
    assert_eq!(
        serde_json::from_str::<Value>(missing).unwrap(),
        json!({"not-found": "notes/missing.txt"})
    );
    // Arguments that do not fit the derived schema are an error naming where, which the
    // model can correct.
    let (_, error, bad) = &results[4];
    assert!(error);
    assert!(
        bad.contains("`options.case`: value must be one of 'sensitive', 'insensitive'"),
        "{bad}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hostile_component_gets_error_results_and_the_session_goes_on() {
    let work = workspace(
        &["hostile-plain", "fetcher"],
        "[plugins.policy.hostile-plain]\nfiles.read = [\"notes\"]\nfiles.write = [\"out\"]\n\
         env.vars = [\"PLAIN_LISTED\", \"PLAIN_API_KEY\"]\nlimits.cpu_ms = 300\nlimits.memory_mib = 32\n",
    );
    std::fs::create_dir_all(work.path().join("out/deep")).unwrap();
    // A link the user has in a writable folder: harmless where it is, out of the workspace
    // from one level down.
    std::os::unix::fs::symlink("../secret.txt", work.path().join("out/up")).unwrap();
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("key"), "outside secret\n").unwrap();
    std::os::unix::fs::symlink(outside.path().join("key"), work.path().join("notes/link")).unwrap();
    let web = HelloServer::start().unwrap();
    let url = format!("http://127.0.0.1:{}/", web.port);
    let server = common::scripted_server(vec![
        message(&[
            tool_use("r1", "attacks_read_file", json!({"path": "../secret.txt"})),
            tool_use("r2", "attacks_read_file", json!({"path": "/etc/passwd"})),
            tool_use("r3", "attacks_read_file", json!({"path": "notes/link"})),
            tool_use("r4", "attacks_read_file", json!({"path": "notes/cat.txt"})),
            tool_use("v1", "attacks_get_var", json!({"name": "PLAIN_SECRET"})),
            tool_use("v2", "attacks_get_var", json!({"name": "PLAIN_LISTED"})),
            tool_use(
                "w1",
                "attacks_write_file",
                json!({"path": "notes/new.txt", "text": "x"}),
            ),
            tool_use("s1", "attacks_spin", json!({"seconds": 60})),
            tool_use("m1", "attacks_allocate", json!({"mib": 256})),
            tool_use("f1", "web_fetch", json!({"url": url})),
            tool_use("p1", "attacks_list_preopens", json!({})),
            tool_use("k1", "attacks_get_var", json!({"name": "PLAIN_API_KEY"})),
            tool_use(
                "l1",
                "attacks_make_link",
                json!({"target": "../secret.txt", "path": "out/secret"}),
            ),
            tool_use(
                "w2",
                "attacks_write_file",
                json!({"path": "out/report.txt", "text": "written"}),
            ),
            tool_use(
                "h1",
                "attacks_make_hard_link",
                json!({"existing": "out/up", "path": "out/deep/copy"}),
            ),
        ]),
        message(&[text("Tried.")]),
    ])
    .await;
    let envs = [
        ("PLAIN_SECRET", "s3cret-value"),
        ("PLAIN_LISTED", "listed-value"),
        ("PLAIN_API_KEY", "sk-plain-0123456789abcdef"),
    ];
    let output = run(&server, work.path(), &envs).await;
    assert!(
        output.status.success(),
        "{}\n{}",
        stdout(&output),
        stderr(&output)
    );
    let requests = server.requests();
    assert_eq!(requests.len(), 2, "the session goes on to the model's answer");
    let results = common::last_tool_results(&requests);
    let by_id = |id: &str| results.iter().find(|r| r.0 == id).unwrap().clone();
    for id in ["r1", "r2", "r3"] {
        let (_, error, text) = by_id(id);
        assert!(error, "{id} read something: {text}");
        assert!(
            !text.contains("hunter2") && !text.contains("outside secret") && !text.contains("root:"),
            "{text}"
        );
    }
    assert_eq!(by_id("r4").2, NOTES, "its own folder is readable");
    assert_eq!(
        by_id("v1"),
        ("v1".into(), false, "null".into()),
        "an unlisted variable is not there"
    );
    assert_eq!(by_id("v2").2, "\"listed-value\"");
    let (_, error, write) = by_id("w1");
    assert!(error, "{write}");
    assert!(!work.path().join("notes/new.txt").exists());
    let (_, error, spin) = by_id("s1");
    assert!(error && spin.contains("CPU limit of 300 ms"), "{spin}");
    let (_, error, alloc) = by_id("m1");
    assert!(error && alloc.contains("memory limit of 32 MiB"), "{alloc}");
    let (_, error, fetch) = by_id("f1");
    assert!(error, "{fetch}");
    assert!(
        fetch.contains(&format!(
            "agent-host refused 127.0.0.1:{}: not in the http.allow of component fetcher's policy",
            web.port
        )),
        "{fetch}"
    );
    assert_eq!(web.answered(), 0, "no request reached the server");
    assert_eq!(by_id("p1").2, "[\"notes\",\"out\"]");
    // A credential it was given by name does not come back to the model.
    let (_, error, key) = by_id("k1");
    assert!(!error && !key.contains("sk-plain-0123456789abcdef"), "{key}");
    // No link out of a writable folder for a later reader to follow; plain writes work.
    let (_, error, link) = by_id("l1");
    assert!(error && link.contains("not-permitted"), "{link}");
    assert!(work.path().join("out/secret").symlink_metadata().is_err());
    assert!(!by_id("w2").1);
    let (_, error, hard) = by_id("h1");
    assert!(error && hard.contains("not-permitted"), "{hard}");
    assert!(work.path().join("out/deep/copy").symlink_metadata().is_err());
    assert_eq!(
        std::fs::read_to_string(work.path().join("out/report.txt")).unwrap(),
        "written"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_component_fetches_only_the_hosts_its_policy_lists() {
    let web = HelloServer::start().unwrap();
    let port = web.port;
    let work = workspace(
        &["fetcher"],
        &format!(
            "[plugins.policy.fetcher]\nhttp.allow = [\"ok.test:{port}\", \"127.0.0.1:{port}\", \"far.test:{port}\"]\n"
        ),
    );
    let server = common::scripted_server(vec![
        message(&[
            tool_use(
                "ok",
                "web_fetch",
                json!({"url": format!("http://ok.test:{port}/page"), "max-bytes": 100}),
            ),
            tool_use(
                "name",
                "web_fetch",
                json!({"url": format!("http://other.test:{port}/")}),
            ),
            tool_use(
                "rebind",
                "web_fetch",
                json!({"url": format!("http://far.test:{port}/")}),
            ),
            tool_use(
                "port",
                "web_fetch",
                json!({"url": format!("http://ok.test:{}/", port.wrapping_add(1))}),
            ),
        ]),
        message(&[text("Fetched.")]),
    ])
    .await;
    // other.test is not listed; far.test is, but resolves to a loopback address that is not.
    let resolve = "ok.test=127.0.0.1,other.test=127.0.0.1,far.test=127.0.0.3";
    let output = run(&server, work.path(), &[("AGENT_HOST_TEST_RESOLVE", resolve)]).await;
    assert!(
        output.status.success(),
        "{}\n{}",
        stdout(&output),
        stderr(&output)
    );
    let results = common::last_tool_results(&server.requests());
    assert_eq!(
        parsed(&results[0]),
        json!({"status": 200, "content-type": null, "body": "hello\n", "truncated": false})
    );
    for (result, host) in results[1..].iter().zip(["other.test", "far.test", "ok.test"]) {
        assert!(result.1, "{result:?}");
        assert!(
            result.2.contains(&format!("agent-host refused {host}:")),
            "{result:?}"
        );
    }
    assert!(
        results[2].2.contains(
            "it resolves to 127.0.0.3, a loopback address, which the http.allow of component fetcher's policy does not list"
        ),
        "{:?}",
        results[2]
    );
    assert_eq!(web.answered(), 1, "only the listed host was reached");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn plugin_inspect_shows_the_derived_tools_and_the_effective_policy() {
    let work = workspace(
        &["text-stats"],
        "[plugins.policy.text-stats]\nfiles.read = [\"notes\"]\nlimits.cpu_ms = 1000\n",
    );
    let file = plain_component("text-stats").display().to_string();
    let output = agent_host()
        .args(["plugin", "inspect", &file])
        .current_dir(work.path())
        .output()
        .await
        .unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
    let shown = stdout(&output);
    for expected in [
        "Component text-stats",
        "Descriptions: WIT from its `agent-tool-wit` section",
        "Folders: notes (read-only)",
        "HTTP hosts: none",
        "1000 ms CPU",
        "stats_analyze",
        "stats_compare",
        "\"top-words\"",
    ] {
        assert!(shown.contains(expected), "{expected:?} missing from:\n{shown}");
    }
    let json_output = agent_host()
        .args(["plugin", "inspect", "--json", &file])
        .current_dir(work.path())
        .output()
        .await
        .unwrap();
    let description: Value = serde_json::from_slice(&json_output.stdout).unwrap();
    assert_eq!(description["kind"], "plain");
    assert_eq!(
        description["policy"]["folders"],
        json!([{"path": "notes", "access": "read-only"}])
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_policy_cannot_reach_outside_the_workspace_nor_hold_for_a_component_the_model_could_replace() {
    let work = workspace(
        &["text-stats"],
        "[plugins.policy.text-stats]\nfiles.read = [\"/etc\"]\n",
    );
    let server = common::scripted_server(vec![message(&[text("Never.")])]).await;
    let output = run(&server, work.path(), &[]).await;
    assert!(!output.status.success());
    assert!(
        stderr(&output).contains(
            "\"/etc\" is outside the workspace: only the user's own configuration may grant such a folder"
        ),
        "{}",
        stderr(&output)
    );
    assert_eq!(server.requests().len(), 0);

    // A component inside the workspace, which the model's tools could rewrite: a policy
    // beside it grants nothing, and the configuration's holds only for the file it pins.
    let inside = tempfile::tempdir().unwrap();
    let plugins = inside.path().join(".agent/plugins");
    std::fs::create_dir_all(&plugins).unwrap();
    std::fs::create_dir(inside.path().join("notes")).unwrap();
    std::fs::write(inside.path().join("notes/cat.txt"), NOTES).unwrap();
    std::fs::copy(plain_component("text-stats"), plugins.join("text-stats.wasm")).unwrap();
    std::fs::write(
        plugins.join("text-stats.policy.toml"),
        "[files]\nread = [\"notes\"]\n",
    )
    .unwrap();
    let configure = |policy: &str| {
        std::fs::write(
            inside.path().join(".agent/config.toml"),
            format!("[plugins]\ndir = \"plugins\"\n{policy}"),
        )
        .unwrap();
        common::trust_project(inside.path());
    };
    let analyze = || {
        message(&[tool_use(
            "a",
            "stats_analyze",
            json!({"path": "notes/cat.txt", "options": {
                "case": "sensitive", "stop-words": [], "count": ["words"]
            }}),
        )])
    };
    configure("");
    let server = common::scripted_server(vec![analyze(), message(&[text("Done.")])]).await;
    let output = run(&server, inside.path(), &[]).await;
    assert!(output.status.success(), "{}", stderr(&output));
    let result = &common::last_tool_results(&server.requests())[0];
    assert!(
        result.1 && result.2.contains("unreadable"),
        "the file beside it granted a folder: {result:?}"
    );

    configure("[plugins.policy.text-stats]\nfiles.read = [\"notes\"]\n");
    let output = run(&server, inside.path(), &[]).await;
    assert!(!output.status.success());
    let digest = sha256_hex(&std::fs::read(plugins.join("text-stats.wasm")).unwrap());
    assert!(
        stderr(&output).contains(&format!(
            "add sha256 = \"{digest}\" to [plugins.policy.text-stats]"
        )),
        "{}",
        stderr(&output)
    );

    configure(&format!(
        "[plugins.policy.text-stats]\nsha256 = \"{digest}\"\nfiles.read = [\"notes\"]\n"
    ));
    let server = common::scripted_server(vec![analyze(), message(&[text("Done.")])]).await;
    let output = run(&server, inside.path(), &[]).await;
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(
        !common::last_tool_results(&server.requests())[0].1,
        "the pinned file keeps its policy"
    );

    // The model replaces the component: the policy no longer holds.
    std::fs::copy(plain_component("hostile-plain"), plugins.join("text-stats.wasm")).unwrap();
    let output = run(&server, inside.path(), &[]).await;
    assert!(!output.status.success());
    assert!(
        stderr(&output).contains("is not the file its policy pins"),
        "{}",
        stderr(&output)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_read_only_server_keeps_components_from_writing_and_fetching() {
    let web = HelloServer::start().unwrap();
    let work = workspace(
        &["hostile-plain", "fetcher"],
        &format!(
            "[plugins.policy.hostile-plain]\nfiles.write = [\"out\"]\n\n[plugins.policy.fetcher]\nhttp.allow = [\"127.0.0.1:{}\"]\n",
            web.port
        ),
    );
    std::fs::create_dir(work.path().join("out")).unwrap();
    let mut command = tokio::process::Command::new(mcp_python());
    command.arg(mcp_server("py_client.py"));
    command.args([
        "--call",
        r#"attacks_write_file={"path": "out/x.txt", "text": "x"}"#,
    ]);
    command.args([
        "--call",
        &format!(r#"web_fetch={{"url": "http://127.0.0.1:{}/"}}"#, web.port),
    ]);
    copy_env(&mut command);
    command
        .args([
            "--",
            env!("CARGO_BIN_EXE_agent-host"),
            "plugin",
            "serve",
            "--read-only",
        ])
        .current_dir(work.path());
    let served = client_output(&command.output().await.unwrap());
    let calls = served["calls"].as_array().unwrap();
    assert_eq!(calls[0]["isError"], true, "{calls:?}");
    assert!(!work.path().join("out/x.txt").exists());
    assert_eq!(calls[1]["isError"], true, "{calls:?}");
    assert!(
        calls[1]["text"]
            .as_str()
            .unwrap()
            .contains("agent-host runs with --read-only"),
        "{calls:?}"
    );
    assert_eq!(web.answered(), 0);
}

/// The client starts the server with the environment it was given: [`agent_host`]'s.
fn copy_env(command: &mut tokio::process::Command) {
    let server = agent_host();
    for (name, value) in server.as_std().get_envs() {
        match value {
            Some(value) => command.env(name, value),
            None => command.env_remove(name),
        };
    }
}

fn client_output(output: &std::process::Output) -> Value {
    assert!(output.status.success(), "{}\n{}", stdout(output), stderr(output));
    let last = stdout(output).lines().last().unwrap_or_default().to_string();
    serde_json::from_str(&last).unwrap_or_else(|e| panic!("{e}: {}", stdout(output)))
}

fn check_served(served: &Value) {
    let names: Vec<&str> = served["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["stats_analyze", "stats_compare"]);
    assert_eq!(served["tools"][0]["readOnly"], true);
    assert_eq!(
        served["tools"][0]["inputSchema"]["required"],
        json!(["path", "options"])
    );
    let calls = served["calls"].as_array().unwrap();
    assert_eq!(calls[0]["isError"], false, "{calls:?}");
    let report: Value = serde_json::from_str(calls[0]["text"].as_str().unwrap()).unwrap();
    assert_eq!(report["words"], 13);
    assert_eq!(calls[1]["isError"], true);
    assert!(
        calls[1]["text"].as_str().unwrap().contains("unreadable"),
        "{calls:?}"
    );
}

const CALLS: [&str; 2] = [
    r#"stats_analyze={"path": "notes/cat.txt", "options": {"case": "sensitive", "stop-words": [], "count": ["words"]}}"#,
    r#"stats_analyze={"path": "secret.txt", "options": {"case": "sensitive", "stop-words": [], "count": ["words"]}}"#,
];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_official_mcp_client_lists_and_calls_the_served_tools_over_stdio() {
    let work = workspace(
        &["text-stats"],
        "[plugins.policy.text-stats]\nfiles.read = [\"notes\"]\n",
    );
    let mut command = tokio::process::Command::new(mcp_python());
    command.arg(mcp_server("py_client.py"));
    for call in CALLS {
        command.args(["--call", call]);
    }
    copy_env(&mut command);
    command
        .args(["--", env!("CARGO_BIN_EXE_agent-host"), "plugin", "serve"])
        .current_dir(work.path());
    let output = command.output().await.unwrap();
    check_served(&client_output(&output));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_official_mcp_client_lists_and_calls_the_served_tools_over_http() {
    use tokio::io::AsyncBufReadExt;
    let work = workspace(
        &["text-stats"],
        "[plugins.policy.text-stats]\nfiles.read = [\"notes\"]\n",
    );
    let mut serve = agent_host();
    serve
        .args(["plugin", "serve", "--http", "127.0.0.1:0"])
        .current_dir(work.path())
        .stderr(std::process::Stdio::piped());
    let mut child = serve.spawn().unwrap();
    let mut lines = tokio::io::BufReader::new(child.stderr.take().unwrap()).lines();
    let url = tokio::time::timeout(std::time::Duration::from_secs(120), async {
        while let Some(line) = lines.next_line().await.unwrap() {
            if let Some(url) = line.strip_prefix("agent-host: serving the tools over MCP at ") {
                return url.to_string();
            }
        }
        panic!("plugin serve ended without serving");
    })
    .await
    .unwrap();
    let mut client = tokio::process::Command::new(mcp_python());
    client.arg(mcp_server("py_client.py")).args(["--url", &url]);
    for call in CALLS {
        client.args(["--call", call]);
    }
    let output = client.output().await.unwrap();
    check_served(&client_output(&output));
    child.kill().await.unwrap();
    // Anyone who can reach the port can call the tools: only loopback is served.
    let refused = agent_host()
        .args(["plugin", "serve", "--http", "0.0.0.0:0"])
        .current_dir(work.path())
        .output()
        .await
        .unwrap();
    assert!(!refused.status.success());
    assert!(
        stderr(&refused).contains("is not a loopback address"),
        "{}",
        stderr(&refused)
    );
}
