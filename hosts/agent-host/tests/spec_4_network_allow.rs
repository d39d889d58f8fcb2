//! Sandboxed commands with a network allow-list (`sandbox_network = "allow-list"`): real
//! commands (curl, Python, pip) in the sandbox, real servers on this machine, names the
//! proxy resolves through a fixed map (`*.test`, loopback addresses). What the allow-list
//! lets through arrives; everything else (an unlisted name, a listed name resolving to an
//! unlisted loopback address, a direct TCP or UDP connection, a name lookup) does not, and
//! each connection through the proxy is reported once with what crossed it.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests may panic

use agent_host::LocalEnvironment;
use agent_host::environments::process::ProcessHandle;
use agent_host::sandbox::{NameResolution, NetworkAccess, Sandbox, SandboxConfig};
use egress_proxy::{AllowList, ConnectionRecord, Method, StaticResolver, Verdict};
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::sync::mpsc;

/// What one connection to a [`CountingServer`] carried.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Served {
    received: u64,
    sent: u64,
}

/// An HTTP server on every address of this machine (0.0.0.0) that answers each request
/// with `hello from PATH`, counts the connections it accepts and, once each has closed,
/// reports the bytes it carried.
struct CountingServer {
    port: u16,
    accepted: Arc<AtomicUsize>,
    served: tokio::sync::Mutex<mpsc::UnboundedReceiver<Served>>,
}

impl CountingServer {
    async fn start() -> Self {
        let listener = tokio::net::TcpListener::bind("0.0.0.0:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let (record, served) = mpsc::unbounded_channel();
        let accepted = Arc::new(AtomicUsize::new(0));
        let counted = accepted.clone();
        tokio::spawn(async move {
            loop {
                let Ok((mut stream, _)) = listener.accept().await else {
                    return;
                };
                counted.fetch_add(1, Ordering::SeqCst);
                let record = record.clone();
                tokio::spawn(async move {
                    let mut head = Vec::new();
                    let mut buffer = [0u8; 4096];
                    while !head.windows(4).any(|w| w == b"\r\n\r\n") {
                        match stream.read(&mut buffer).await {
                            Ok(0) | Err(_) => return,
                            Ok(n) => head.extend_from_slice(&buffer[..n]),
                        }
                    }
                    let text = String::from_utf8_lossy(&head);
                    let path = text.split_whitespace().nth(1).unwrap_or("?").to_string();
                    let body = format!("hello from {path}\n");
                    let answer = format!(
                        "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                        body.len()
                    );
                    stream.write_all(answer.as_bytes()).await.unwrap();
                    stream.shutdown().await.ok();
                    // What the client sends after the request (nothing) still counts.
                    let mut rest = Vec::new();
                    stream.read_to_end(&mut rest).await.ok();
                    let _ = record.send(Served {
                        received: (head.len() + rest.len()) as u64,
                        sent: answer.len() as u64,
                    });
                });
            }
        });
        Self {
            port,
            accepted,
            served: tokio::sync::Mutex::new(served),
        }
    }

    /// How many connections reached the server.
    fn accepted(&self) -> usize {
        self.accepted.load(Ordering::SeqCst)
    }

    /// The first `count` connections' records, as each closes: the server's side ends a
    /// moment after the proxy's (10 s guard against a hang only).
    async fn served(&self, count: usize) -> Vec<Served> {
        let mut served = self.served.lock().await;
        let mut records = Vec::new();
        for _ in 0..count {
            let record = tokio::time::timeout(Duration::from_secs(10), served.recv())
                .await
                .expect("a connection's record did not come")
                .unwrap();
            records.push(record);
        }
        records
    }
}

/// A workspace, a server, and the local environment with the allow-list sandbox:
/// `ok.test` (127.0.0.2, listed with its address), `private.test` (127.0.0.4, its address
/// not listed), `idx.test` (127.0.0.3, for pip).
struct Setup {
    work: tempfile::TempDir,
    server: CountingServer,
    env: LocalEnvironment,
}

async fn setup(extra_allowed: &[String]) -> Setup {
    let work = tempfile::tempdir().unwrap();
    let server = CountingServer::start().await;
    let port = server.port;
    let mut allowed = vec![
        format!("ok.test:{port}"),
        "127.0.0.2:*".to_string(),
        format!("private.test:{port}"),
    ];
    allowed.extend(extra_allowed.iter().cloned());
    let loopback = |last: u8| vec![IpAddr::from([127, 0, 0, last])];
    let resolver = StaticResolver::new([
        ("ok.test".to_string(), loopback(2)),
        ("idx.test".to_string(), loopback(3)),
        ("private.test".to_string(), loopback(4)),
        ("evil.test".to_string(), loopback(2)),
    ]);
    let config = SandboxConfig {
        network: NetworkAccess::AllowList,
        network_allow: AllowList::parse(&allowed).unwrap(),
        resolution: NameResolution::fixed(Arc::new(resolver)),
        ..SandboxConfig::default()
    };
    let plain = LocalEnvironment::new(work.path()).unwrap();
    let sandbox = Sandbox::new(&config, &plain.root_paths()).unwrap().unwrap();
    let env = plain.with_sandbox(Some(Arc::new(sandbox)));
    Setup { work, server, env }
}

struct Ran {
    exit_code: i32,
    stdout: String,
    stderr: String,
    connections: Vec<ConnectionRecord>,
}

/// Runs `command` in the sandbox to its end, with every connection it made.
async fn run(env: &LocalEnvironment, command: &str) -> Ran {
    let mut process: ProcessHandle = env.spawn(command, None, 60_000, &[]).unwrap();
    let result = tokio::time::timeout(Duration::from_secs(120), process.wait())
        .await
        .expect("the command did not end");
    let mut connections = Vec::new();
    while let Some(record) = process.next_connection().await {
        connections.push(record);
    }
    Ran {
        exit_code: result.exit_code,
        stdout: result.stdout,
        stderr: result.stderr,
        connections,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_allowed_name_is_reached_through_the_proxy_by_curl_and_python_with_each_connection_reported() {
    let Setup {
        server,
        env,
        work: _work,
    } = setup(&[]).await;
    let port = server.port;
    // A plain forward request (curl reads http_proxy), then a CONNECT tunnel.
    let ran = run(
        &env,
        &format!(
            "curl -sS http://ok.test:{port}/forward && curl -sS --proxytunnel http://ok.test:{port}/tunnel"
        ),
    )
    .await;
    assert_eq!(ran.exit_code, 0, "{}{}", ran.stdout, ran.stderr);
    assert_eq!(ran.stdout, "hello from /forward\nhello from /tunnel\n");
    // Python's standard library: urllib through the variables, http.client's tunnel.
    let script = format!(
        "import urllib.request, http.client\n\
         print(urllib.request.urlopen('http://ok.test:{port}/urllib').read().decode(), end='')\n\
         c = http.client.HTTPConnection('127.0.0.1', 3128)\n\
         c.set_tunnel('ok.test', {port})\n\
         c.request('GET', '/python-tunnel')\n\
         print(c.getresponse().read().decode(), end='')\n"
    );
    let python = run(&env, &format!("python3 -c \"{script}\"")).await;
    assert_eq!(python.exit_code, 0, "{}", python.stderr);
    assert_eq!(python.stdout, "hello from /urllib\nhello from /python-tunnel\n");

    // One record per connection, with exactly what the server received and sent.
    let records: Vec<_> = ran.connections.iter().chain(&python.connections).collect();
    let methods: Vec<_> = records.iter().map(|r| r.method.clone()).collect();
    assert_eq!(
        methods,
        [
            Method::Forward("GET".into()),
            Method::Connect,
            Method::Forward("GET".into()),
            Method::Connect
        ]
    );
    let served = server.served(4).await;
    assert_eq!(served.len(), 4, "{served:?}");
    let mut crossed: Vec<_> = records
        .iter()
        .map(|r| Served {
            received: r.bytes_up,
            sent: r.bytes_down,
        })
        .collect();
    let mut seen = served.clone();
    crossed.sort_by_key(|s| (s.received, s.sent));
    seen.sort_by_key(|s| (s.received, s.sent));
    assert_eq!(crossed, seen);
    for record in &records {
        assert_eq!(record.verdict, Verdict::Allowed);
        assert_eq!((record.host.as_str(), record.port), ("ok.test", port));
        assert_eq!(record.address, Some(SocketAddr::from(([127, 0, 0, 2], port))));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unlisted_name_and_a_listed_name_resolving_to_an_unlisted_private_address_are_refused() {
    let Setup {
        server,
        env,
        work: _work,
    } = setup(&[]).await;
    let port = server.port;
    let ran = run(
        &env,
        &format!("curl -sS http://evil.test:{port}/; curl -sS --proxytunnel http://private.test:{port}/"),
    )
    .await;
    assert!(
        ran.stdout.contains(&format!(
            "agent-host refused evil.test:{port}: not in network_allow"
        )) && ran.stdout.contains(&format!("--network-allow evil.test:{port}")),
        "{}",
        ran.stdout
    );
    // curl reports a refused tunnel by its status.
    assert!(ran.stderr.contains("403"), "{}", ran.stderr);
    let verdicts: Vec<_> = ran
        .connections
        .iter()
        .map(|r| (r.host.as_str(), r.verdict.clone()))
        .collect();
    assert_eq!(verdicts.len(), 2, "{verdicts:?}");
    assert!(
        matches!(&verdicts[0], ("evil.test", Verdict::Refused { reason }) if reason.contains("not in network_allow"))
    );
    assert!(
        matches!(&verdicts[1], ("private.test", Verdict::Refused { reason }) if reason.contains("127.0.0.4") && reason.contains("loopback")),
        "{verdicts:?}"
    );
    assert!(
        server.accepted() == 0,
        "the server was reached {} times",
        server.accepted()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn direct_connections_udp_and_name_lookups_reach_nothing() {
    let Setup { server, env, work } = setup(&[]).await;
    let port = server.port;
    let udp = std::net::UdpSocket::bind("0.0.0.0:0").unwrap();
    let udp_port = udp.local_addr().unwrap().port();
    // This machine's own non-loopback addresses, where the server listens too: reached
    // directly they would be, were the command in agent-host's network namespace.
    let own: Vec<IpAddr> = std::process::Command::new("hostname")
        .arg("-I")
        .output()
        .map(|out| String::from_utf8_lossy(&out.stdout).into_owned())
        .unwrap_or_default()
        .split_whitespace()
        .filter_map(|a| a.parse::<IpAddr>().ok())
        .filter(|ip| ip.is_ipv4() && !ip.is_loopback())
        .collect();
    let mut targets = vec![
        "127.0.0.2".to_string(),
        "127.0.0.1".to_string(),
        "::1".to_string(),
    ];
    targets.extend(own.iter().map(ToString::to_string));
    let script = format!(
        "import socket, sys
failed = 0
for host in {targets}:
    try:
        socket.create_connection((host, {port}), timeout=5).close()
        print('reached', host)
    except OSError as e:
        failed += 1
        print('failed', host, e.errno)
for host in {udp_targets}:
    try:
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        s.sendto(b'leak', (host, {udp_port}))
    except OSError as e:
        print('udp-failed', host, e.errno)
try:
    print('resolved', socket.getaddrinfo('localhost.example.com', 80))
except OSError as e:
    print('lookup-failed', e)
",
        targets = python_list(&targets),
        udp_targets = python_list(
            &["127.0.0.2".to_string()]
                .into_iter()
                .chain(own.iter().map(ToString::to_string))
                .collect::<Vec<_>>()
        ),
    );
    std::fs::write(work.path().join("probe.py"), script).unwrap();
    // Sockets that would reach below the namespace's routing: raw, packet (also as the
    // obsolete SOCK_PACKET type, which the kernel makes a packet socket, from a nested
    // user and network namespace where the command holds CAP_NET_RAW), netlink, SCTP.
    let sockets = "import ctypes, socket, sys
if len(sys.argv) > 1:
    # A user and network namespace of its own, without maps: capabilities there all the same.
    print('nested', ctypes.CDLL(None, use_errno=True).unshare(0x10000000 | 0x40000000), ctypes.get_errno())
for family, kind, protocol in [(2, 3, 1), (2, 10, 0), (17, 3, 0), (16, 3, 0), (2, 1, 132), (10, 2, 58)]:
    try:
        socket.socket(family, kind, protocol)
        print('made', family, kind, protocol)
    except OSError as e:
        print('refused', family, kind, protocol, e.errno)
";
    std::fs::write(work.path().join("sockets.py"), sockets).unwrap();
    let ran = run(
        &env,
        "python3 sockets.py; python3 sockets.py nested; \
         python3 probe.py; getent hosts example.com; echo getent $?",
    )
    .await;
    assert!(!ran.stdout.contains("made "), "{}{}", ran.stdout, ran.stderr);
    // Both runs, the second from its nested namespaces.
    assert!(ran.stdout.contains("nested 0 0"), "{}{}", ran.stdout, ran.stderr);
    assert_eq!(
        ran.stdout.matches("refused ").count(),
        12,
        "{}{}",
        ran.stdout,
        ran.stderr
    );
    assert!(!ran.stdout.contains("reached"), "{}", ran.stdout);
    assert_eq!(
        ran.stdout.lines().filter(|l| l.starts_with("failed ")).count(),
        targets.len(),
        "{}{}",
        ran.stdout,
        ran.stderr
    );
    assert!(ran.stdout.contains("lookup-failed"), "{}", ran.stdout);
    assert!(ran.stdout.contains("getent 2"), "{}", ran.stdout);
    assert!(ran.connections.is_empty(), "{:?}", ran.connections);
    assert_eq!(server.accepted(), 0);
    // No datagram arrived: the first one here is the one sent now, from outside.
    std::net::UdpSocket::bind("127.0.0.1:0")
        .unwrap()
        .send_to(b"marker", ("127.0.0.1", udp_port))
        .unwrap();
    let mut buffer = [0u8; 16];
    udp.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let (n, _) = udp.recv_from(&mut buffer).unwrap();
    assert_eq!(&buffer[..n], b"marker");
}

/// `items` as a Python list of strings.
fn python_list(items: &[String]) -> String {
    let quoted: Vec<String> = items.iter().map(|i| format!("'{i}'")).collect();
    format!("[{}]", quoted.join(", "))
}

/// The Python interpreter itself: a version manager's `python3` (pyenv's shim) may do
/// more than run it, such as rewriting its shims after `pip install`.
fn python() -> String {
    let out = std::process::Command::new("python3")
        .args(["-c", "import sys; print(sys.executable)"])
        .output()
        .unwrap();
    String::from_utf8(out.stdout).unwrap().trim().to_string()
}

/// A package index of one wheel (`tinypkg`), written by Python's zipfile.
fn package_index(root: &std::path::Path) {
    let script = r#"
import os, sys, zipfile, hashlib, base64
root = sys.argv[1]
os.makedirs(os.path.join(root, 'simple', 'tinypkg'), exist_ok=True)
wheel = 'tinypkg-1.0-py3-none-any.whl'
files = {
    'tinypkg/__init__.py': 'GREETING = "installed through the proxy"\n',
    'tinypkg-1.0.dist-info/METADATA': 'Metadata-Version: 2.1\nName: tinypkg\nVersion: 1.0\n',
    'tinypkg-1.0.dist-info/WHEEL': 'Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n',
}
def digest(text):
    return 'sha256=' + base64.urlsafe_b64encode(hashlib.sha256(text.encode()).digest()).rstrip(b'=').decode()
record = ''.join(f'{name},{digest(text)},{len(text.encode())}\n' for name, text in files.items())
record += 'tinypkg-1.0.dist-info/RECORD,,\n'
with zipfile.ZipFile(os.path.join(root, 'simple', 'tinypkg', wheel), 'w') as z:
    for name, text in files.items():
        z.writestr(name, text)
    z.writestr('tinypkg-1.0.dist-info/RECORD', record)
with open(os.path.join(root, 'simple', 'tinypkg', 'index.html'), 'w') as f:
    f.write(f'<html><body><a href="{wheel}">{wheel}</a></body></html>')
with open(os.path.join(root, 'simple', 'index.html'), 'w') as f:
    f.write('<html><body><a href="tinypkg/">tinypkg</a></body></html>')
"#;
    let status = std::process::Command::new("python3")
        .args(["-c", script, root.to_str().unwrap()])
        .status()
        .unwrap();
    assert!(status.success());
}

/// Python's `http.server` serving `root` on 127.0.0.3, on a free port.
struct IndexServer {
    child: std::process::Child,
    port: u16,
}

impl IndexServer {
    fn start(root: &std::path::Path) -> Self {
        let port = std::net::TcpListener::bind("127.0.0.3:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let child = std::process::Command::new("python3")
            .args(["-m", "http.server", "--bind", "127.0.0.3", &port.to_string()])
            .current_dir(root)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        // Ready once it accepts.
        let deadline = std::time::Instant::now() + Duration::from_secs(30);
        while std::net::TcpStream::connect(("127.0.0.3", port)).is_err() {
            assert!(std::time::Instant::now() < deadline, "http.server did not start");
            std::thread::sleep(Duration::from_millis(20));
        }
        Self { child, port }
    }
}

impl Drop for IndexServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pip_installs_from_the_only_index_allowed() {
    let index_root = tempfile::tempdir().unwrap();
    package_index(index_root.path());
    let index = IndexServer::start(index_root.path());
    let port = index.port;
    let Setup { env, work, .. } = setup(&[format!("idx.test:{port}"), "127.0.0.3".to_string() + ":*"]).await;
    let python = python();
    let ran = run(
        &env,
        &format!(
            "{python} -m pip install --disable-pip-version-check --no-cache-dir --index-url \
             http://idx.test:{port}/simple --trusted-host idx.test --target installed tinypkg && \
             PYTHONPATH=installed {python} -c 'import tinypkg; print(tinypkg.GREETING)'"
        ),
    )
    .await;
    assert_eq!(ran.exit_code, 0, "{}\n{}", ran.stdout, ran.stderr);
    assert!(
        ran.stdout.ends_with("installed through the proxy\n"),
        "{}",
        ran.stdout
    );
    assert!(work.path().join("installed/tinypkg/__init__.py").is_file());
    assert!(
        ran.connections
            .iter()
            .all(|r| r.host == "idx.test" && r.verdict == Verdict::Allowed),
        "{:?}",
        ran.connections
    );
    assert!(ran.connections.len() >= 2, "{:?}", ran.connections);
    // The same install from an index not on the list is refused, and says why.
    let refused = run(
        &env,
        &format!(
            "{python} -m pip install --disable-pip-version-check --no-cache-dir --retries 0 \
             --index-url http://evil.test:{port}/simple --trusted-host evil.test --target other \
             tinypkg"
        ),
    )
    .await;
    assert_ne!(refused.exit_code, 0);
    // pip says only that it found nothing; agent-host says why.
    assert!(
        refused.stderr.contains(&format!(
            "allow-list refused this command's requests: evil.test:{port}: not in network_allow"
        )),
        "{}\n{}",
        refused.stdout,
        refused.stderr
    );
}
