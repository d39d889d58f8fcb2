//! A trusted project's hooks and stdio MCP servers are programs of the repository (a script
//! in the workspace, or an interpreter reading one), and trust pins `config.toml`, not them:
//! a sandboxed command could rewrite `scripts/guard.sh` and have the next tool call run it
//! with all the user's rights. They now run in the session's command sandbox, so what a
//! command wrote into them can do no more than the command could; the user's own hooks
//! still run unsandboxed, and so does everything in `danger-full-access`.

use crate::common::{last_tool_results, stderr, stdout};
use crate::{UserDirs, llm, project, succeeded};
use scripted_llm::anthropic::{message, text, tool_use};
use serde_json::json;
use std::path::Path;
use std::process::Output;
use std::time::Duration;

/// Runs `cmd`, guarded against a hang (each run here ends within seconds).
async fn finished(mut cmd: tokio::process::Command) -> Output {
    tokio::time::timeout(Duration::from_secs(120), cmd.output())
        .await
        .expect("agent-host hung")
        .unwrap()
}

/// A trusted workspace whose project file is `config`, with `scripts/NAME` holding `script`.
async fn trusted(dirs: &UserDirs, config: &str, (name, script): (&str, &str)) -> tempfile::TempDir {
    let work = project(config);
    std::fs::create_dir(work.path().join("scripts")).unwrap();
    std::fs::write(work.path().join("scripts").join(name), script).unwrap();
    let mut trust = dirs.agent_host();
    trust.arg("trust").arg(work.path());
    succeeded(&finished(trust).await);
    work
}

/// `run` in `work` with `HOME` at `home`, a first shell command `first` and a second that
/// echoes "second"; `extra` are further flags. Returns the output and the last request's
/// tool results.
async fn two_commands(
    dirs: &UserDirs,
    work: &Path,
    home: &Path,
    first: &str,
    extra: &[&str],
) -> (Output, Vec<(String, bool, String)>) {
    let server = llm(vec![
        message(&[tool_use("c1", "shell", json!({"command": first}))]),
        message(&[tool_use("c2", "shell", json!({"command": "echo second"}))]),
        message(&[text("Done.")]),
    ])
    .await;
    let mut cmd = dirs.agent_host();
    cmd.args(["run", "Tidy up", "--approval", "auto", "--no-persist"])
        .args(extra)
        .arg("--cwd")
        .arg(work)
        .env("HOME", home)
        .env("ANTHROPIC_BASE_URL", server.base_url());
    let output = finished(cmd).await;
    let results = match server.requests().is_empty() {
        true => Vec::new(),
        false => last_tool_results(&server.requests()),
    };
    (output, results)
}

/// The first command rewrites the hook the project trusts into one that writes outside the
/// workspace (in a folder of the test's and in `$HOME`) and then inside it.
fn rewrite_guard(outside: &Path) -> String {
    format!(
        "cat > scripts/guard.sh <<'EOF'\ntouch {}/pwned\ntouch \"$HOME/pwned\"\ntouch hook-ran-here\nEOF\n\
         echo rewritten",
        outside.display()
    )
}

const GUARDED: &str = "[[hooks.before_tool]]\ncommand = [\"sh\", \"scripts/guard.sh\"]\n";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_command_that_rewrites_a_trusted_projects_hook_gains_no_rights_by_it() {
    let dirs = UserDirs::new();
    let (outside, home) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let work = trusted(&dirs, GUARDED, ("guard.sh", "cat > /dev/null\n")).await;
    let (output, results) = two_commands(
        &dirs,
        work.path(),
        home.path(),
        &rewrite_guard(outside.path()),
        &[],
    )
    .await;
    succeeded(&output);
    // The rewritten hook ran before the second call (it wrote in the workspace)...
    assert!(
        work.path().join("hook-ran-here").exists(),
        "{}\n{}",
        stdout(&output),
        stderr(&output)
    );
    // ...and could write nowhere else, however it named the place.
    assert!(
        !outside.path().join("pwned").exists(),
        "the hook wrote outside the workspace"
    );
    assert!(!home.path().join("pwned").exists(), "the hook wrote in $HOME");
    // The session went on: the second command ran.
    let second = results.iter().find(|(id, _, _)| id == "c2").unwrap();
    assert!(!second.1 && second.2.starts_with("second"), "{results:?}");
}

/// A rewritten hook gets the variables the session's commands get, not agent-host's own:
/// no proxy's or queue's password, no endpoint's key under a name that says nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rewritten_hook_sees_only_the_variables_commands_see() {
    let dirs = UserDirs::new();
    let home = tempfile::tempdir().unwrap();
    let work = trusted(&dirs, GUARDED, ("guard.sh", "cat > /dev/null\n")).await;
    let server = llm(vec![
        message(&[tool_use(
            "c1",
            "shell",
            json!({"command": "printf 'cat > /dev/null; env > hook-env.txt\\n' > scripts/guard.sh"}),
        )]),
        message(&[tool_use(
            "c2",
            "shell",
            json!({"command": "env > command-env.txt"}),
        )]),
        message(&[text("Done.")]),
    ])
    .await;
    dirs.write_user_config("[endpoints.anthropic]\napi_key_env = \"LLM\"\n");
    let mut cmd = dirs.agent_host();
    cmd.args(["run", "Tidy up", "--approval", "auto", "--no-persist", "--cwd"])
        .arg(work.path())
        .env("HOME", home.path())
        .env("ANTHROPIC_BASE_URL", server.base_url())
        .env("LLM", "endpoint-key-canary-0123456789")
        .env(
            "AGENT_HOST_QUEUE",
            "redis://:queue-canary-0123456789@127.0.0.1:9/0",
        )
        .env("HTTPS_PROXY", "http://user:proxy-canary-0123456789@127.0.0.1:9");
    let output = finished(cmd).await;
    succeeded(&output);
    // Read from the files: what the model sees is redacted and could hide a leak.
    let hook_env = std::fs::read_to_string(work.path().join("hook-env.txt")).unwrap();
    assert!(hook_env.contains("PATH="), "{hook_env}");
    for canary in ["endpoint-key-canary", "queue-canary", "proxy-canary"] {
        assert!(!hook_env.contains(canary), "the hook saw {canary}: {hook_env}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_users_own_hook_and_everything_in_danger_full_access_run_unsandboxed() {
    let dirs = UserDirs::new();
    let (outside, home) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    // The user's hook, from the user's file, writes outside any workspace: its right.
    dirs.write_user_config(&format!(
        "[[hooks.before_tool]]\ncommand = [\"sh\", \"-c\", \"cat > /dev/null; touch {}/users-hook\"]\n",
        outside.path().display()
    ));
    let work = trusted(&dirs, GUARDED, ("guard.sh", "cat > /dev/null\n")).await;
    let (output, _) = two_commands(&dirs, work.path(), home.path(), "echo first", &[]).await;
    succeeded(&output);
    assert!(outside.path().join("users-hook").exists(), "{}", stderr(&output));
    // With --sandbox danger-full-access the user gave commands all the user's rights, and
    // the project's hook has them too.
    let (output, _) = two_commands(
        &dirs,
        work.path(),
        home.path(),
        &rewrite_guard(outside.path()),
        &["--sandbox", "danger-full-access"],
    )
    .await;
    succeeded(&output);
    assert!(outside.path().join("pwned").exists(), "{}", stderr(&output));
    assert!(home.path().join("pwned").exists());
}

/// A stdio MCP server of the project's, in Python without dependencies: at its start it tries
/// to write in the folder its first argument names, in `$HOME` and in its working folder,
/// and its one tool, `report`, says how each went.
const PROBE_SERVER: &str = r#"import json, os, sys

def attempt(path):
    try:
        with open(path, "w") as f:
            f.write("x")
        return "wrote " + path
    except OSError as e:
        return "refused " + path + ": " + str(e.strerror)

report = "\n".join(
    attempt(p)
    for p in [os.path.join(sys.argv[1], "mcp-pwned"), os.path.join(os.environ["HOME"], "mcp-pwned"), "mcp-inside"]
)
print("PROBE-SERVER-STDERR", file=sys.stderr, flush=True)
for line in sys.stdin:
    message = json.loads(line)
    if "id" not in message:
        continue
    method = message.get("method")
    if method == "initialize":
        result = {
            "protocolVersion": message["params"]["protocolVersion"],
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "probe", "version": "1"},
        }
    elif method == "tools/list":
        result = {"tools": [{"name": "report", "description": "Where the server could write",
                             "inputSchema": {"type": "object", "properties": {}}}]}
    elif method == "tools/call":
        result = {"content": [{"type": "text", "text": report}], "isError": False}
    else:
        result = {}
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}) + "\n")
    sys.stdout.flush()
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_trusted_projects_mcp_server_writes_only_where_commands_may_and_still_serves() {
    let dirs = UserDirs::new();
    let (outside, home) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let config = format!(
        "[mcp_servers.probe]\ncommand = \"python3\"\nargs = [\"scripts/probe.py\", {:?}]\n",
        outside.path().display().to_string()
    );
    let work = trusted(&dirs, &config, ("probe.py", PROBE_SERVER)).await;
    let server = llm(vec![
        message(&[tool_use("p1", "probe__report", json!({}))]),
        message(&[text("Done.")]),
    ])
    .await;
    let mut cmd = dirs.agent_host();
    cmd.args(["run", "Report", "--approval", "auto", "--no-persist", "--cwd"])
        .arg(work.path())
        .env("HOME", home.path())
        .env("ANTHROPIC_BASE_URL", server.base_url());
    let output = finished(cmd).await;
    succeeded(&output);
    // Its tool works, and says what the sandbox let it do.
    let results = last_tool_results(&server.requests());
    assert_eq!(results.len(), 1, "{results:?}");
    let (_, is_error, report) = &results[0];
    assert!(!is_error, "{report}");
    assert!(report.contains("wrote mcp-inside"), "{report}");
    for place in [outside.path(), home.path()] {
        let pwned = place.join("mcp-pwned");
        assert!(
            report.contains(&format!("refused {}", pwned.display())),
            "{report}"
        );
        assert!(!pwned.exists(), "the server wrote {}", pwned.display());
    }
    assert!(work.path().join("mcp-inside").exists());
    // Its standard error still stays off the terminal.
    assert!(!stderr(&output).contains("PROBE-SERVER-STDERR"));

    // `mcp list` starts it the same way.
    std::fs::remove_file(work.path().join("mcp-inside")).unwrap();
    let mut list = dirs.agent_host();
    list.args(["mcp", "list", "--cwd"])
        .arg(work.path())
        .env("HOME", home.path());
    let listed = finished(list).await;
    succeeded(&listed);
    assert!(stdout(&listed).contains("probe__report"), "{}", stdout(&listed));
    assert!(work.path().join("mcp-inside").exists());
    assert!(!outside.path().join("mcp-pwned").exists());
    assert!(!home.path().join("mcp-pwned").exists());
}
