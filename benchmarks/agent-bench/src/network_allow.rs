//! The network allow-list's cost (`sandbox_network = "allow-list"`): what a command's start
//! pays for its network namespace, its loopback and the proxy's listening socket (against a
//! command with the network off), and how fast a 100 MB download runs through agent-host's
//! proxy (a forwarded request and a CONNECT tunnel) against the same download made directly
//! by a sandboxed command with the network on. curl runs in the sandbox and reports its own
//! speed; the server is a plain thread on 127.0.0.1; the proxy runs on agent-host's
//! multi-threaded runtime, as in agent-host.

use crate::context::Context;
use crate::stats::{median, millis};
use crate::table::{Row, Target};
use agent_host::LocalEnvironment;
use agent_host::sandbox::{NameResolution, NetworkAccess, Sandbox, SandboxConfig};
use anyhow::Context as _;
use std::io::{Read, Write};
use std::net::IpAddr;
use std::sync::Arc;
use std::time::Instant;

/// At most 2 ms added per command by the allow-list.
const START_TARGET_MS: f64 = 2.0;
/// At least 0.9 of the direct download's speed through the proxy.
const THROUGHPUT_TARGET: f64 = 0.9;
/// A fast internet connection's speed (about 800 Mbit/s), for the context row.
const REALISTIC_MIB_S: u32 = 100;

pub fn run(ctx: &Context) -> anyhow::Result<Vec<Row>> {
    let (runs, downloads, megabytes) = if ctx.quick { (5, 1, 1) } else { (200, 7, 100) };
    let work = ctx.out.join("network-workspace");
    std::fs::create_dir_all(&work).context("creating the workspace")?;
    let port = serve_bytes(megabytes << 20)?;
    let plain = LocalEnvironment::new(&work)?;
    let sandboxed = |network: NetworkAccess| -> anyhow::Result<LocalEnvironment> {
        let config = SandboxConfig {
            network,
            network_allow: egress_proxy::AllowList::parse(&[
                format!("big.test:{port}"),
                format!("127.0.0.1:{port}"),
            ])?,
            resolution: NameResolution::fixed(Arc::new(egress_proxy::StaticResolver::new([(
                "big.test".to_string(),
                vec![IpAddr::from([127, 0, 0, 1])],
            )]))),
            ..SandboxConfig::default()
        };
        let sandbox = Sandbox::new(&config, &plain.root_paths())?.context("no sandbox was made")?;
        Ok(plain.clone().with_sandbox(Some(Arc::new(sandbox))))
    };
    let (off, allow_list, on) = (
        sandboxed(NetworkAccess::Off)?,
        sandboxed(NetworkAccess::AllowList)?,
        sandboxed(NetworkAccess::On)?,
    );
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    let output = |env: &LocalEnvironment, command: &str| -> anyhow::Result<String> {
        runtime.block_on(async {
            let mut process = env.spawn(command, None, 600_000, &[])?;
            let result = process.wait().await;
            anyhow::ensure!(
                result.exit_code == 0,
                "`{command}` failed: {}{}",
                result.stdout,
                result.stderr
            );
            Ok(result.stdout)
        })
    };
    let time = |env: &LocalEnvironment| -> anyhow::Result<f64> {
        let started = Instant::now();
        output(env, "true")?;
        Ok(millis(started.elapsed()))
    };
    let (mut without, mut with) = (Vec::new(), Vec::new());
    time(&off)?;
    time(&allow_list)?;
    for i in 0..runs {
        if i % 2 == 0 {
            without.push(time(&off)?);
            with.push(time(&allow_list)?);
        } else {
            with.push(time(&allow_list)?);
            without.push(time(&off)?);
        }
    }
    let (without, with) = (median(&without), median(&with));

    let speed = |env: &LocalEnvironment, flags: &str, url: &str| -> anyhow::Result<f64> {
        let mut speeds = Vec::new();
        for _ in 0..downloads {
            let shown = output(
                env,
                &format!("curl -sS {flags} -o /dev/null -w '%{{speed_download}}' {url}"),
            )?;
            let bytes_per_second: f64 = shown
                .trim()
                .parse()
                .with_context(|| format!("curl printed {shown:?}"))?;
            speeds.push(bytes_per_second / (1024.0 * 1024.0));
        }
        Ok(median(&speeds))
    };
    let direct = speed(&on, "--noproxy '*'", &format!("http://127.0.0.1:{port}/"))?;
    let forwarded = speed(&allow_list, "", &format!("http://big.test:{port}/"))?;
    let tunnelled = speed(&allow_list, "--proxytunnel", &format!("http://big.test:{port}/"))?;
    // At a fast connection's speed rather than loopback's: what a download from a registry
    // pays.
    let limited = format!("--limit-rate {REALISTIC_MIB_S}M");
    let direct_limited = speed(
        &on,
        &format!("{limited} --noproxy '*'"),
        &format!("http://127.0.0.1:{port}/"),
    )?;
    let tunnelled_limited = speed(
        &allow_list,
        &format!("{limited} --proxytunnel"),
        &format!("http://big.test:{port}/"),
    )?;
    let size = format!("{megabytes} MB");
    Ok(vec![
        Row::new(
            "network: command `true` with the network off (median)",
            without,
            "ms",
        ),
        Row::new("network: command `true` with the allow-list (median)", with, "ms"),
        Row::new(
            "network: start-up added by the allow-list per command",
            with - without,
            "ms",
        )
        .target(Target::AtMost(START_TARGET_MS)),
        Row::new(
            format!("network: {size} downloaded directly (network on), median"),
            direct,
            "MiB/s",
        ),
        Row::new(
            format!("network: {size} through the proxy, forwarded request"),
            forwarded,
            "MiB/s",
        ),
        Row::new(
            format!("network: {size} through the proxy, CONNECT tunnel"),
            tunnelled,
            "MiB/s",
        ),
        Row::new(
            "network: forwarded download against the direct one",
            forwarded / direct,
            "x",
        )
        .target(Target::AtLeast(THROUGHPUT_TARGET)),
        Row::new(
            "network: tunnelled download against the direct one",
            tunnelled / direct,
            "x",
        )
        .target(Target::AtLeast(THROUGHPUT_TARGET)),
        Row::new(
            format!("network: tunnelled against direct, both limited to {REALISTIC_MIB_S} MiB/s"),
            tunnelled_limited / direct_limited,
            "x",
        ),
    ])
}

/// A server on 127.0.0.1 answering every request with `size` bytes, a thread per
/// connection; returns its port.
fn serve_bytes(size: usize) -> anyhow::Result<u16> {
    let listener = std::net::TcpListener::bind("127.0.0.1:0")?;
    let port = listener.local_addr()?.port();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            std::thread::spawn(move || {
                let mut head = Vec::new();
                let mut buffer = [0u8; 4096];
                while !head.windows(4).any(|w| w == b"\r\n\r\n") {
                    match stream.read(&mut buffer) {
                        Ok(0) | Err(_) => return,
                        Ok(n) => head.extend_from_slice(&buffer[..n]),
                    }
                }
                let chunk = vec![b'x'; 1 << 20];
                let header =
                    format!("HTTP/1.1 200 OK\r\nContent-Length: {size}\r\nConnection: close\r\n\r\n");
                if stream.write_all(header.as_bytes()).is_err() {
                    return;
                }
                let mut left = size;
                while left > 0 {
                    let n = left.min(chunk.len());
                    if stream.write_all(&chunk[..n]).is_err() {
                        return;
                    }
                    left -= n;
                }
            });
        }
    });
    Ok(port)
}
