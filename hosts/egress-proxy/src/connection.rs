//! One client connection: read the head, decide, connect, relay.

use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt, copy_bidirectional_with_sizes};
use tokio::net::TcpStream;
use tokio::time::timeout;

use crate::head::{HeadError, read_head, request_line};
use crate::progress::{Counted, Progress};
use crate::proxy::Shared;
use crate::reply::Reply;
use crate::target::{BadTarget, Request, forward_head, parse_request};
use crate::upstream::Upstream;

/// Each direction's buffer: large enough that a bulk download moves in few system calls.
/// Relaying with splice(2) instead was measured and moved no more bytes per second over
/// loopback (examples/throughput.rs), so the portable copy stays.
const RELAY_BUFFER: usize = 64 * 1024;

/// How long a refused client may take to close after the reply, so that unread request bytes
/// do not make the kernel reset the connection before the reply is read.
const LINGER: Duration = Duration::from_secs(2);

/// `overflow`: the proxy is full; the client gets a 503 once its head names the target.
pub(crate) async fn handle(shared: &Shared, mut client: TcpStream, progress: &Progress, overflow: bool) {
    client.set_nodelay(true).ok();
    let limits = &shared.limits;
    let head_timeout = if overflow {
        limits.head_timeout.min(Duration::from_secs(2))
    } else {
        limits.head_timeout
    };
    let mut buf = Vec::new();
    let head = match timeout(head_timeout, read_head(&mut client, &mut buf)).await {
        Ok(Ok(head)) => head,
        Ok(Err(HeadError::Nothing)) => return,
        Ok(Err(error)) => {
            note_partial(&buf, progress);
            return refuse(&mut client, progress, Reply::bad_request(400, &error.to_string())).await;
        }
        Err(_) => {
            note_partial(&buf, progress);
            let detail = format!(
                "the request head did not arrive within {} s",
                head_timeout.as_secs_f32()
            );
            return refuse(&mut client, progress, Reply::bad_request(408, &detail)).await;
        }
    };
    let request = match parse_request(&head.method, &head.target) {
        Ok(request) => request,
        Err(BadTarget { target, reason }) => {
            if let Some((target, method)) = target {
                progress.target(target.host.as_string(), target.port, method);
            }
            return refuse(&mut client, progress, Reply::bad_request(400, &reason)).await;
        }
    };
    let target = request.target();
    let host = target.host.as_string();
    progress.target(host.clone(), target.port, request.method());
    if overflow {
        let detail = format!(
            "too many open connections through the proxy (at most {} for a command, fewer when \
             other commands hold many)",
            limits.max_connections
        );
        return refuse(
            &mut client,
            progress,
            Reply::refused(503, &host, target.port, &detail),
        )
        .await;
    }
    let upstream = Upstream {
        allow: &shared.allow,
        resolver: shared.resolver.as_ref(),
        resolve_timeout: limits.resolve_timeout,
        connect_timeout: limits.connect_timeout,
        list_name: "network_allow",
    };
    let mut server = match upstream.open(target, progress).await {
        Ok(server) => server,
        Err(reply) => return refuse(&mut client, progress, reply).await,
    };
    let first_up = match &request {
        Request::Connect(_) => {
            if let Err(error) = client
                .write_all(b"HTTP/1.1 200 Connection established\r\n\r\n")
                .await
            {
                tracing::debug!(%host, %error, "egress proxy: client went away");
                return;
            }
            head.rest
        }
        Request::Forward { .. } => [forward_head(&head, &request), head.rest].concat(),
    };
    if let Err(error) = relay(&mut client, &mut server, &first_up, progress).await {
        tracing::debug!(%host, %error, "egress proxy: relay ended with an error");
    }
}

/// Sends `first_up` (what the client sent with its head, and for Forward the rewritten head)
/// and then copies both ways until both sides have closed.
async fn relay(
    client: &mut TcpStream,
    server: &mut TcpStream,
    first_up: &[u8],
    progress: &Progress,
) -> std::io::Result<()> {
    let mut server = Counted::new(server, &progress.up);
    server.write_all(first_up).await?;
    let mut client = Counted::new(client, &progress.down);
    copy_bidirectional_with_sizes(&mut client, &mut server, RELAY_BUFFER, RELAY_BUFFER).await?;
    Ok(())
}

/// Records the target of a head that never completed, when its first line names one.
fn note_partial(buf: &[u8], progress: &Progress) {
    let Some((method, raw)) = request_line(buf) else {
        return;
    };
    let target = match parse_request(&method, &raw) {
        Ok(request) => Some((request.target().clone(), request.method())),
        Err(BadTarget { target, .. }) => target,
    };
    if let Some((target, method)) = target {
        progress.target(target.host.as_string(), target.port, method);
    }
}

async fn refuse(client: &mut TcpStream, progress: &Progress, reply: Reply) {
    tracing::debug!(status = reply.status, message = %reply.message, "egress proxy: refused");
    if let Some(reason) = reply.reason.clone() {
        progress.refused(reason);
    }
    if client.write_all(&reply.render()).await.is_err() || client.shutdown().await.is_err() {
        return;
    }
    let mut sink = [0u8; 4096];
    let drain = async {
        let mut total = 0usize;
        while let Ok(n @ 1..) = client.read(&mut sink).await {
            total += n;
            if total > 1 << 20 {
                break;
            }
        }
    };
    let _ = timeout(LINGER, drain).await;
}
