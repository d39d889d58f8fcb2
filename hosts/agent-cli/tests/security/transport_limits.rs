//! What an LLM server says cannot make agent-host show the key it was sent, nor hold a run
//! forever: a 401 whose body quotes the key is shown with the key hidden (on stderr, in
//! `--json` events and in the session's files), and a response kept alive by a comment
//! every 100 ms (each resetting the idle timeout) ends at the request's overall deadline.

use crate::common::{stderr, stdout};
use crate::{UserDirs, llm};
use scripted_llm::{anthropic, chat_completions};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// Runs `cmd`, guarded against a hang (10x and more what each run here takes).
async fn finished(mut cmd: tokio::process::Command) -> std::process::Output {
    tokio::time::timeout(Duration::from_secs(120), cmd.output())
        .await
        .expect("agent-host did not end")
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_key_the_server_repeats_in_an_error_is_never_shown() {
    let anthropic_key = "user-anthropic-key-8c-0123456789";
    let openai_key = "sk-openai-key-8c-0123456789abcdef";
    let cases = [
        (
            "anthropic",
            "ANTHROPIC",
            anthropic_key,
            anthropic::error(
                401,
                "authentication_error",
                &format!("invalid x-api-key: {anthropic_key}"),
            ),
        ),
        (
            "openai",
            "OPENAI",
            openai_key,
            chat_completions::error(
                401,
                "invalid_request_error",
                "invalid_api_key",
                &format!("Incorrect API key provided: {openai_key}"),
            ),
        ),
    ];
    for (provider, prefix, key, reply) in cases {
        for json in [false, true] {
            // An authentication error is not retried; the spares answer if it were.
            let llm = llm(vec![reply.clone(), reply.clone(), reply.clone()]).await;
            let dirs = UserDirs::new();
            let work = tempfile::tempdir().unwrap();
            let mut cmd = dirs.agent_host();
            cmd.args(["run", "hello", "--provider", provider, "--cwd"])
                .arg(work.path())
                .args(json.then_some("--json"))
                .env(format!("{prefix}_API_KEY"), key)
                .env(format!("{prefix}_BASE_URL"), llm.base_url());
            let output = finished(cmd).await;
            let shown = format!("{}{}", stdout(&output), stderr(&output));
            assert_eq!(output.status.code(), Some(1), "{provider}: {shown}");
            assert!(!llm.requests().is_empty(), "{provider}: no request was made");
            assert!(
                !shown.contains(key),
                "{provider} (--json {json}): the key was shown: {shown}"
            );
            // The server's message is still there, with the key hidden.
            assert!(shown.contains("<redacted>"), "{provider}: {shown}");
            assert!(!dirs.state_text().contains(key), "{provider}: the key was saved");
        }
    }
}

/// A server that answers every request with an event stream's head, then only a comment
/// every 100 ms, forever; and how many requests it got.
async fn kept_alive_server() -> (String, Arc<AtomicUsize>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let requests = Arc::new(AtomicUsize::new(0));
    let counted = requests.clone();
    tokio::spawn(async move {
        while let Ok((mut socket, _)) = listener.accept().await {
            counted.fetch_add(1, Ordering::SeqCst);
            tokio::spawn(async move {
                let mut request = vec![0u8; 64 * 1024];
                let _ = socket.read(&mut request).await;
                let head = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nconnection: close\r\n\r\n";
                if socket.write_all(head.as_bytes()).await.is_err() {
                    return;
                }
                while socket.write_all(b": keep-alive\n\n").await.is_ok() {
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
            });
        }
    });
    (url, requests)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_response_kept_alive_by_comments_ends_at_the_request_deadline() {
    let (url, requests) = kept_alive_server().await;
    let work = tempfile::tempdir().unwrap();
    // Set by the variable, then by the user's configuration.
    let by_variable = UserDirs::new();
    let by_file = UserDirs::new();
    by_file.write_user_config("request_timeout_secs = 2\n");
    for (dirs, variable) in [(&by_variable, Some("2")), (&by_file, None)] {
        let before = requests.load(Ordering::SeqCst);
        let mut cmd = dirs.agent_host();
        cmd.args(["run", "talk", "--no-persist", "--cwd"])
            .arg(work.path())
            .env("ANTHROPIC_BASE_URL", &url);
        if let Some(seconds) = variable {
            cmd.env("AGENT_HOST_REQUEST_TIMEOUT_SECS", seconds);
        }
        let started = std::time::Instant::now();
        let output = finished(cmd).await;
        let message = stderr(&output);
        assert_eq!(output.status.code(), Some(1), "{message}");
        assert!(
            message.contains("overall time limit of 2 s")
                && message.contains("request_timeout_secs")
                && message.contains("AGENT_HOST_REQUEST_TIMEOUT_SECS"),
            "{message}"
        );
        // Cut off once, not tried again for as long each time.
        assert_eq!(requests.load(Ordering::SeqCst) - before, 1, "{message}");
        assert!(started.elapsed() >= Duration::from_secs(2));
    }
    // `config show` tells the limit and where it comes from.
    let show = by_file
        .agent_host()
        .args(["config", "show", "--json", "--cwd"])
        .arg(work.path())
        .output()
        .await
        .unwrap();
    let show: serde_json::Value = serde_json::from_slice(&show.stdout).unwrap();
    let entry = &show["settings"]["request_timeout_secs"];
    assert_eq!(entry["value"], 2, "{show}");
    assert!(
        entry["source"].as_str().unwrap().starts_with("user file"),
        "{show}"
    );
}
