//! Credentials whose names the filter used to miss reached every command: a CI job's JWT, a
//! Sentry DSN, a Slack webhook, an auth header, agent-host's own queue address with its
//! Redis password in the query, a signed URL. Names around them that are no credential
//! (`AUTHOR`, `GIT_AUTHOR_NAME`, `DESKTOP_SESSION`) still reach commands.

use crate::common::{agent_host, stderr, stdout};

/// Each variable, its value, and the part of the value that gives the credential away (a
/// URL's host alone says nothing).
const WITHHELD: &[(&str, &str, &str)] = &[
    (
        "CI_JOB_JWT",
        "eyJhbGciOiJSUzI1NiJ9.ci-job-jwt-8a.c2ln",
        "ci-job-jwt-8a",
    ),
    (
        "CI_JOB_JWT_V2",
        "eyJhbGciOiJSUzI1NiJ9.ci-job-v2-8a.c2ln",
        "ci-job-v2-8a",
    ),
    (
        "SENTRY_DSN",
        "https://sentrykey8a0123@o1.ingest.sentry.io/42",
        "sentrykey8a0123",
    ),
    (
        "SLACK_WEBHOOK_URL",
        "https://hooks.slack.com/services/T0/B0/slack-hook-8a",
        "slack-hook-8a",
    ),
    ("AUTH_HEADER", "Bearer auth-header-8a-value", "auth-header-8a"),
    (
        "AGENT_HOST_QUEUE",
        "redis+unix:///run/redis.sock?db=0&pass=queue-pass-8a",
        "queue-pass-8a",
    ),
    (
        "CACHE_ADDRESS",
        "redis://:cache-pw-8a@cache.internal:6379",
        "cache-pw-8a",
    ),
    (
        "UPLOAD_TARGET",
        "https://acct.blob.core.windows.net/c/f?sv=2020&sig=signed-url-8a",
        "signed-url-8a",
    ),
];

const KEPT: &[(&str, &str)] = &[
    ("AUTHOR", "kept-author-8a"),
    ("GIT_AUTHOR_NAME", "kept-git-author-8a"),
    ("DESKTOP_SESSION", "kept-desktop-8a"),
];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn jwts_dsns_webhooks_auth_headers_and_the_queue_password_do_not_reach_commands() {
    let work = tempfile::tempdir().unwrap();
    // Without the sandbox: in it agent-host's environ cannot be read at all; this is what
    // holds when the user turns it off.
    // Into files: what the command prints is redacted of the credentials agent-host knows,
    // which would hide a variable that reached it.
    let script = "env > own-env.txt; tr '\\0' '\\n' < /proc/$PPID/environ > host-environ.txt";
    let mut cmd = agent_host();
    cmd.args(["tool", "shell", "--args"])
        .arg(serde_json::json!({ "command": script }).to_string())
        .args(["--sandbox", "danger-full-access", "--cwd"])
        .arg(work.path());
    for (name, value, _) in WITHHELD {
        cmd.env(name, value);
    }
    for (name, value) in KEPT {
        cmd.env(name, value);
    }
    let output = cmd.output().await.unwrap();
    assert!(output.status.success(), "{}{}", stdout(&output), stderr(&output));
    let own = std::fs::read_to_string(work.path().join("own-env.txt")).unwrap();
    let host = std::fs::read_to_string(work.path().join("host-environ.txt")).unwrap();
    assert!(
        host.contains("PATH="),
        "agent-host's environ was not read: {host}"
    );
    for (name, _, secret) in WITHHELD {
        assert!(!own.contains(secret), "{name} reached the command: {own}");
        // The queue's address stays in agent-host's own environment, which `worker` reads
        // it from when parsing its flags (the process is non-dumpable).
        if *name != "AGENT_HOST_QUEUE" {
            assert!(!host.contains(secret), "{name} in agent-host's /proc environ");
        }
    }
    for (name, value) in KEPT {
        assert!(
            own.contains(&format!("{name}={value}")),
            "{name} was withheld: {own}"
        );
    }
}
