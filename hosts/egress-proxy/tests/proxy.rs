//! The proxy against real sockets on 127.0.0.1: a small HTTP upstream, raw clients and curl.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use egress_proxy::{
    AllowList, ConnectionRecord, Method, Proxy, REFUSAL_PREFIX, ServeHandle, StaticResolver, Verdict,
};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::mpsc;

const RESPONSE: &[u8] =
    b"HTTP/1.1 200 OK\r\nContent-Length: 19\r\nConnection: close\r\n\r\nhello from upstream";

/// Fails the test instead of hanging it.
async fn within<T>(test: impl Future<Output = T>) -> T {
    tokio::time::timeout(Duration::from_secs(20), test)
        .await
        .expect("the test took over 20 s")
}

/// What the upstream saw on one connection: its head, and every byte each way.
#[derive(Debug)]
struct Seen {
    head: String,
    received: u64,
    sent: u64,
}

/// An HTTP server answering every request with `RESPONSE` and closing its side (except for
/// `GET /hold`), then reading until the client closes so that `received` counts everything
/// that arrived.
async fn upstream() -> (u16, mpsc::UnboundedReceiver<Seen>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let (tx, rx) = mpsc::unbounded_channel();
    tokio::spawn(async move {
        while let Ok((mut stream, _)) = listener.accept().await {
            let tx = tx.clone();
            tokio::spawn(async move {
                let mut data = Vec::new();
                let mut chunk = [0u8; 4096];
                let mut sent = 0;
                let mut head = String::new();
                loop {
                    let n = stream.read(&mut chunk).await.unwrap_or(0);
                    if n == 0 {
                        break;
                    }
                    data.extend_from_slice(&chunk[..n]);
                    if head.is_empty()
                        && let Some(end) = data.windows(4).position(|w| w == b"\r\n\r\n")
                    {
                        head = String::from_utf8_lossy(&data[..end + 4]).into_owned();
                        stream.write_all(RESPONSE).await.unwrap();
                        if !head.starts_with("GET /hold ") {
                            stream.shutdown().await.unwrap();
                        }
                        sent = RESPONSE.len() as u64;
                    }
                }
                tx.send(Seen {
                    head,
                    received: data.len() as u64,
                    sent,
                })
                .ok();
            });
        }
    });
    (port, rx)
}

struct Running {
    addr: SocketAddr,
    handle: ServeHandle,
    records: mpsc::UnboundedReceiver<ConnectionRecord>,
}

impl Running {
    async fn record(&mut self) -> ConnectionRecord {
        self.records.recv().await.expect("the proxy stopped reporting")
    }
}

fn start(allow: &[String], names: &[(&str, &str)], tweak: impl FnOnce(Proxy) -> Proxy) -> Running {
    let allow = Arc::new(AllowList::parse(allow).unwrap());
    let resolver = StaticResolver::new(
        names
            .iter()
            .map(|(name, ip)| ((*name).to_owned(), vec![ip.parse().unwrap()])),
    );
    let proxy = tweak(Proxy::new(allow, Arc::new(resolver)));
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let (tx, records) = mpsc::unbounded_channel();
    let handle = proxy
        .serve(listener, move |record| drop(tx.send(record)))
        .unwrap();
    assert_eq!(handle.local_addr(), addr);
    Running {
        addr,
        handle,
        records,
    }
}

/// The usual setup: `ok.test` resolves to the upstream on 127.0.0.1, and both are listed.
fn start_listed(port: u16) -> Running {
    start(
        &[format!("ok.test:{port}"), format!("127.0.0.1:{port}")],
        &[("ok.test", "127.0.0.1")],
        |p| p,
    )
}

/// Sends `request` and reads the reply until the proxy closes.
async fn exchange(addr: SocketAddr, request: &[u8]) -> String {
    let mut client = TcpStream::connect(addr).await.unwrap();
    client.write_all(request).await.unwrap();
    let mut reply = Vec::new();
    client.read_to_end(&mut reply).await.unwrap();
    String::from_utf8(reply).unwrap()
}

/// Reads a reply head byte by byte, so nothing the tunnel carries next is consumed.
async fn read_head(client: &mut TcpStream) -> String {
    let mut head = Vec::new();
    while !head.ends_with(b"\r\n\r\n") {
        head.push(client.read_u8().await.unwrap());
    }
    String::from_utf8(head).unwrap()
}

async fn open_tunnel(addr: SocketAddr, authority: &str) -> TcpStream {
    let mut client = TcpStream::connect(addr).await.unwrap();
    client
        .write_all(format!("CONNECT {authority} HTTP/1.1\r\nHost: {authority}\r\n\r\n").as_bytes())
        .await
        .unwrap();
    assert_eq!(
        read_head(&mut client).await,
        "HTTP/1.1 200 Connection established\r\n\r\n"
    );
    client
}

fn refusal(record: &ConnectionRecord) -> &str {
    match &record.verdict {
        Verdict::Refused { reason } => reason,
        Verdict::Allowed => panic!("expected a refusal: {record:?}"),
    }
}

#[tokio::test]
async fn connect_tunnel_round_trip_counts_bytes_exactly() {
    within(async {
        let (port, mut seen) = upstream().await;
        let mut proxy = start_listed(port);
        let mut client = open_tunnel(proxy.addr, &format!("ok.test:{port}")).await;
        let request = b"GET /through HTTP/1.1\r\nHost: ok.test\r\n\r\nand a body";
        client.write_all(request).await.unwrap();
        let mut reply = Vec::new();
        client.read_to_end(&mut reply).await.unwrap();
        assert_eq!(reply, RESPONSE);
        drop(client);

        let seen = seen.recv().await.unwrap();
        assert_eq!(seen.received, request.len() as u64);
        let record = proxy.record().await;
        assert_eq!(record.host, "ok.test");
        assert_eq!(record.port, port);
        assert_eq!(record.address, Some(SocketAddr::from(([127, 0, 0, 1], port))));
        assert_eq!(record.method, Method::Connect);
        assert_eq!(record.verdict, Verdict::Allowed);
        assert_eq!((record.bytes_up, record.bytes_down), (seen.received, seen.sent));
    })
    .await;
}

#[tokio::test]
async fn bytes_sent_with_the_connect_head_go_through_first() {
    within(async {
        let (port, mut seen) = upstream().await;
        let mut proxy = start_listed(port);
        let payload = "GET / HTTP/1.1\r\nHost: ok.test\r\n\r\n";
        let request = format!("CONNECT ok.test:{port} HTTP/1.1\r\n\r\n{payload}");
        let reply = exchange(proxy.addr, request.as_bytes()).await;
        let expected = format!(
            "HTTP/1.1 200 Connection established\r\n\r\n{}",
            String::from_utf8_lossy(RESPONSE)
        );
        assert_eq!(reply, expected);
        let seen = seen.recv().await.unwrap();
        assert_eq!(seen.head, payload);
        let record = proxy.record().await;
        assert_eq!(
            (record.bytes_up, record.bytes_down),
            (payload.len() as u64, RESPONSE.len() as u64)
        );
    })
    .await;
}

#[tokio::test]
async fn forward_request_is_rewritten_to_origin_form() {
    within(async {
        let (port, mut seen) = upstream().await;
        let mut proxy = start_listed(port);
        let request = format!(
            "POST http://OK.test:{port}/path?q=1 HTTP/1.1\r\nHost: ok.test:{port}\r\nProxy-Connection: keep-alive\r\n\
             Proxy-Authorization: Basic eDp5\r\nConnection: keep-alive\r\nUser-Agent: test\r\nContent-Length: 4\r\n\r\nbody"
        );
        let reply = exchange(proxy.addr, request.as_bytes()).await;
        assert_eq!(reply.as_bytes(), RESPONSE);

        let seen = seen.recv().await.unwrap();
        assert_eq!(
            seen.head,
            format!(
                "POST /path?q=1 HTTP/1.1\r\nHost: ok.test:{port}\r\nUser-Agent: test\r\nContent-Length: 4\r\n\
                 Connection: close\r\n\r\n"
            )
        );
        assert_eq!(seen.received, seen.head.len() as u64 + 4);
        let record = proxy.record().await;
        assert_eq!(record.method, Method::Forward("POST".to_owned()));
        assert_eq!(record.verdict, Verdict::Allowed);
        assert_eq!((record.bytes_up, record.bytes_down), (seen.received, seen.sent));
    })
    .await;
}

#[tokio::test]
async fn unlisted_name_is_refused_with_the_message_as_reason_phrase() {
    within(async {
        let (port, _seen) = upstream().await;
        let mut proxy = start_listed(port);
        let reply = exchange(proxy.addr, b"CONNECT evil.example:443 HTTP/1.1\r\n\r\n").await;
        let message = "agent-host refused evil.example:443: not in network_allow (allow it with --network-allow \
                       evil.example:443 or network_allow in config.toml)";
        assert!(message.starts_with(REFUSAL_PREFIX));
        assert!(reply.starts_with(&format!("HTTP/1.1 403 {message}\r\n")), "{reply}");
        assert!(reply.ends_with(&format!("\r\n\r\n{message}\n")), "{reply}");
        let record = proxy.record().await;
        assert_eq!((record.host.as_str(), record.port), ("evil.example", 443));
        assert!(refusal(&record).starts_with("not in network_allow"), "{record:?}");
        assert_eq!((record.address, record.bytes_up, record.bytes_down), (None, 0, 0));
    })
    .await;
}

#[tokio::test]
async fn listed_name_resolving_to_unlisted_loopback_is_refused() {
    within(async {
        let (port, _seen) = upstream().await;
        let mut proxy = start(&[format!("ok.test:{port}")], &[("ok.test", "127.0.0.1")], |p| p);
        for request in [
            format!("CONNECT ok.test:{port} HTTP/1.1\r\n\r\n"),
            format!("GET http://ok.test:{port}/ HTTP/1.1\r\n\r\n"),
        ] {
            let reply = exchange(proxy.addr, request.as_bytes()).await;
            let message = format!(
                "agent-host refused ok.test:{port}: it resolves to 127.0.0.1, a loopback address, which \
                 network_allow does not list"
            );
            assert!(
                reply.starts_with(&format!("HTTP/1.1 403 {message}\r\n")),
                "{reply}"
            );
            let record = proxy.record().await;
            assert!(refusal(&record).contains("loopback"), "{record:?}");
        }
    })
    .await;
}

#[tokio::test]
async fn ip_literal_targets_need_a_net_entry() {
    within(async {
        let (port, _seen) = upstream().await;
        let mut proxy = start_listed(port);
        for request in [
            format!("CONNECT 127.0.0.2:{port} HTTP/1.1\r\n\r\n"),
            "GET http://10.1.2.3/ HTTP/1.1\r\n\r\n".to_owned(),
            format!("CONNECT [::1]:{port} HTTP/1.1\r\n\r\n"),
        ] {
            let reply = exchange(proxy.addr, request.as_bytes()).await;
            assert!(reply.starts_with("HTTP/1.1 403 agent-host refused "), "{reply}");
            assert!(reply.contains(": not in network_allow"), "{reply}");
            assert!(refusal(&proxy.record().await).starts_with("not in network_allow"));
        }
        // The listed address itself is reachable.
        drop(open_tunnel(proxy.addr, &format!("127.0.0.1:{port}")).await);
        assert_eq!(proxy.record().await.verdict, Verdict::Allowed);
    })
    .await;
}

#[tokio::test]
async fn unresolvable_name_gets_502() {
    within(async {
        let mut proxy = start(&["nope.test".to_owned()], &[], |p| p);
        let reply = exchange(proxy.addr, b"CONNECT nope.test:443 HTTP/1.1\r\n\r\n").await;
        let message = "agent-host could not resolve nope.test: no such host";
        assert!(
            reply.starts_with(&format!("HTTP/1.1 502 {message}\r\n")),
            "{reply}"
        );
        let record = proxy.record().await;
        assert_eq!(refusal(&record), "could not resolve nope.test: no such host");
    })
    .await;
}

#[tokio::test]
async fn unreachable_server_gets_502_but_was_allowed() {
    within(async {
        let port = {
            let unused = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
            unused.local_addr().unwrap().port()
        };
        let mut proxy = start_listed(port);
        let reply = exchange(
            proxy.addr,
            format!("CONNECT ok.test:{port} HTTP/1.1\r\n\r\n").as_bytes(),
        )
        .await;
        let prefix =
            format!("HTTP/1.1 502 agent-host could not connect to ok.test:{port} (127.0.0.1:{port}): ");
        assert!(reply.starts_with(&prefix), "{reply}");
        let record = proxy.record().await;
        assert_eq!(record.verdict, Verdict::Allowed);
        assert_eq!((record.bytes_up, record.bytes_down), (0, 0));
    })
    .await;
}

#[tokio::test]
async fn bad_requests_get_400() {
    within(async {
        let (port, _seen) = upstream().await;
        let mut proxy = start_listed(port);
        let reply = exchange(
            proxy.addr,
            format!("GET https://ok.test:{port}/ HTTP/1.1\r\n\r\n").as_bytes(),
        )
        .await;
        assert!(
            reply
                .starts_with("HTTP/1.1 400 agent-host: bad request: https:// URLs must go through a CONNECT")
        );
        let record = proxy.record().await;
        assert_eq!(
            (record.host.as_str(), record.method.clone()),
            ("ok.test", Method::Forward("GET".to_owned()))
        );
        assert!(refusal(&record).starts_with("bad request: "));

        // Without a host there is nothing to record: the next record is the next request's.
        for garbage in [
            &b"\x16\x03\x01\x02\x00\r\n\r\n"[..],
            b"GET /origin-form HTTP/1.1\r\n\r\n",
        ] {
            let reply = exchange(proxy.addr, garbage).await;
            assert!(
                reply.starts_with("HTTP/1.1 400 agent-host: bad request: "),
                "{reply}"
            );
        }
        exchange(proxy.addr, b"CONNECT evil.example:443 HTTP/1.1\r\n\r\n").await;
        assert_eq!(proxy.record().await.host, "evil.example");
    })
    .await;
}

#[tokio::test]
async fn a_head_that_never_completes_times_out() {
    within(async {
        let (port, _seen) = upstream().await;
        let mut proxy = start(
            &[format!("ok.test:{port}"), format!("127.0.0.1:{port}")],
            &[("ok.test", "127.0.0.1")],
            |p| p.with_head_timeout(Duration::from_millis(300)),
        );
        let partial = format!("GET http://ok.test:{port}/ HTTP/1.1\r\nHost: ok.te");
        let mut client = TcpStream::connect(proxy.addr).await.unwrap();
        client.write_all(partial.as_bytes()).await.unwrap();
        let mut reply = String::new();
        client.read_to_string(&mut reply).await.unwrap();
        drop(client);
        let message = "agent-host: bad request: the request head did not arrive within 0.3 s";
        assert!(
            reply.starts_with(&format!("HTTP/1.1 408 {message}\r\n")),
            "{reply}"
        );
        let record = proxy.record().await;
        assert_eq!((record.host.as_str(), record.port), ("ok.test", port));
        assert!(refusal(&record).starts_with("bad request: the request head did not arrive"));

        // A client that sends nothing gets the 408 too, but no record.
        let silent = exchange(proxy.addr, b"").await;
        assert!(silent.starts_with("HTTP/1.1 408 "), "{silent}");
        exchange(proxy.addr, b"CONNECT evil.example:443 HTTP/1.1\r\n\r\n").await;
        assert_eq!(proxy.record().await.host, "evil.example");
    })
    .await;
}

#[tokio::test]
async fn dropping_the_handle_closes_open_tunnels() {
    within(async {
        let (port, mut seen) = upstream().await;
        let Running {
            addr,
            handle,
            mut records,
        } = start_listed(port);
        let mut client = open_tunnel(addr, &format!("ok.test:{port}")).await;
        let request = b"GET /hold HTTP/1.1\r\n\r\n";
        client.write_all(request).await.unwrap();
        let mut reply = vec![0; RESPONSE.len()];
        client.read_exact(&mut reply).await.unwrap();
        // Both sides are still open: only the proxy stopping ends the tunnel.
        drop(handle);
        let mut rest = Vec::new();
        client.read_to_end(&mut rest).await.unwrap();
        assert!(rest.is_empty());
        assert_eq!(seen.recv().await.unwrap().received, request.len() as u64);
        let record = records.recv().await.unwrap();
        assert_eq!(record.verdict, Verdict::Allowed);
        assert_eq!(
            (record.bytes_up, record.bytes_down),
            (request.len() as u64, RESPONSE.len() as u64)
        );
        // Nothing else is reported, and the listener is gone.
        assert!(records.recv().await.is_none());
        assert!(TcpStream::connect(addr).await.is_err());
    })
    .await;
}

/// `finish` lets a connection whose client has gone end by itself, cuts one that stays
/// open past the grace, and returns only once both are reported.
#[tokio::test]
async fn finishing_reports_every_connection_before_it_returns() {
    within(async {
        let (port, _seen) = upstream().await;
        let Running {
            addr,
            handle,
            mut records,
        } = start_listed(port);
        let request = b"GET /hold HTTP/1.1\r\n\r\n";
        let mut gone = open_tunnel(addr, &format!("ok.test:{port}")).await;
        gone.write_all(request).await.unwrap();
        let mut reply = vec![0; RESPONSE.len()];
        gone.read_exact(&mut reply).await.unwrap();
        drop(gone);
        let mut held = open_tunnel(addr, &format!("ok.test:{port}")).await;
        held.write_all(request).await.unwrap();
        held.read_exact(&mut reply).await.unwrap();
        handle.finish(std::time::Duration::from_millis(200)).await;
        // Both reported by now, with what crossed.
        for _ in 0..2 {
            let record = records.try_recv().expect("a connection was not reported");
            assert_eq!(
                (record.bytes_up, record.bytes_down),
                (request.len() as u64, RESPONSE.len() as u64)
            );
        }
        let mut rest = Vec::new();
        held.read_to_end(&mut rest).await.unwrap();
        assert!(records.recv().await.is_none());
    })
    .await;
}

#[tokio::test]
async fn connections_over_the_limit_get_503() {
    within(async {
        let (port, _seen) = upstream().await;
        let mut proxy = start(
            &[format!("ok.test:{port}"), format!("127.0.0.1:{port}")],
            &[("ok.test", "127.0.0.1")],
            |p| p.with_max_connections(1),
        );
        let first = open_tunnel(proxy.addr, &format!("ok.test:{port}")).await;
        let reply = exchange(
            proxy.addr,
            format!("CONNECT ok.test:{port} HTTP/1.1\r\n\r\n").as_bytes(),
        )
        .await;
        let message = format!(
            "agent-host refused ok.test:{port}: too many open connections through the proxy (at most 1 for a command, fewer when other commands hold many)"
        );
        assert!(
            reply.starts_with(&format!("HTTP/1.1 503 {message}\r\n")),
            "{reply}"
        );
        assert!(refusal(&proxy.record().await).starts_with("too many open connections"));
        drop(first);
        assert_eq!(proxy.record().await.verdict, Verdict::Allowed);
        // The slot is free again.
        drop(open_tunnel(proxy.addr, &format!("ok.test:{port}")).await);
        assert_eq!(proxy.record().await.verdict, Verdict::Allowed);
    })
    .await;
}

/// Runs curl with no proxy settings from the environment; curl resolves nothing itself.
async fn curl(args: &[&str]) -> std::process::Output {
    tokio::process::Command::new("/usr/bin/curl")
        .args(["-sS", "--max-time", "10"])
        .args(args)
        .env_clear()
        .kill_on_drop(true)
        .output()
        .await
        .unwrap()
}

#[tokio::test]
async fn curl_forward_and_tunnel() {
    within(async {
        let (port, mut seen) = upstream().await;
        let mut proxy = start_listed(port);
        let via = format!("http://{}", proxy.addr);
        let url = format!("http://ok.test:{port}/curl");

        let out = curl(&["-x", &via, &url]).await;
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        assert_eq!(out.stdout, b"hello from upstream");
        assert!(
            seen.recv()
                .await
                .unwrap()
                .head
                .starts_with("GET /curl HTTP/1.1\r\n")
        );
        let record = proxy.record().await;
        assert_eq!(
            (record.method, record.verdict),
            (Method::Forward("GET".to_owned()), Verdict::Allowed)
        );

        let out = curl(&["--proxytunnel", "-x", &via, &url]).await;
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        assert_eq!(out.stdout, b"hello from upstream");
        let record = proxy.record().await;
        assert_eq!(
            (record.method, record.verdict),
            (Method::Connect, Verdict::Allowed)
        );

        let out = curl(&["--proxytunnel", "-x", &via, "https://evil.example/"]).await;
        assert!(!out.status.success());
        assert!(
            String::from_utf8_lossy(&out.stderr).contains("403"),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(proxy.record().await.host, "evil.example");
    })
    .await;
}

#[test]
fn serving_outside_a_runtime_is_an_error_not_a_panic() {
    let proxy = Proxy::new(
        Arc::new(AllowList::default()),
        Arc::new(StaticResolver::default()),
    );
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    assert!(proxy.serve(listener, |_| {}).is_err());
}
