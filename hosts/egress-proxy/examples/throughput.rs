//! Download throughput over loopback, directly and through a CONNECT tunnel of the proxy.
//!
//! `cargo run --release -p egress-proxy --example throughput [MEGABYTES] [ROUNDS]`
//!
//! The server and the client are plain blocking sockets on their own threads, as a remote
//! server and a sandboxed command would be; only the proxy runs on a tokio runtime, as it
//! does inside agent-host. For scale, a bare relay (a thread per connection copying through
//! a 64 KiB buffer, no parsing, no policy) shows what any user-space hop costs on this
//! machine. Rounds alternate the three; medians are shown.

use std::io::{self, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::Arc;
use std::time::Instant;

use egress_proxy::{AllowList, Proxy, StaticResolver};

/// Serves `total` bytes to every connection once it has sent anything.
fn server(total: u64) -> io::Result<u16> {
    let listener = TcpListener::bind("127.0.0.1:0")?;
    let port = listener.local_addr()?.port();
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            std::thread::spawn(move || serve(stream, total));
        }
    });
    Ok(port)
}

fn serve(mut stream: TcpStream, total: u64) -> io::Result<()> {
    let mut first = [0u8; 1024];
    let _ = stream.read(&mut first)?;
    let chunk = vec![0x5a; 64 * 1024];
    let mut left = total;
    while left > 0 {
        let n = left.min(chunk.len() as u64) as usize;
        stream.write_all(&chunk[..n])?;
        left -= n as u64;
    }
    stream.shutdown(Shutdown::Write)
}

/// Reads everything; returns MB/s.
fn download(mut stream: TcpStream, total: u64, started: Instant) -> io::Result<f64> {
    stream.write_all(b"GET / HTTP/1.1\r\n\r\n")?;
    let mut buf = vec![0u8; 64 * 1024];
    let mut got = 0u64;
    loop {
        let n = stream.read(&mut buf)?;
        if n == 0 {
            break;
        }
        got += n as u64;
    }
    if got != total {
        return Err(io::Error::other(format!(
            "short download: {got} of {total} bytes"
        )));
    }
    Ok(total as f64 / 1e6 / started.elapsed().as_secs_f64())
}

/// The cheapest possible hop: accept, connect to the server, copy.
fn bare_relay(server_port: u16) -> io::Result<SocketAddr> {
    let listener = TcpListener::bind("127.0.0.1:0")?;
    let addr = listener.local_addr()?;
    std::thread::spawn(move || {
        for client in listener.incoming().flatten() {
            std::thread::spawn(move || -> io::Result<()> {
                let mut server = TcpStream::connect(("127.0.0.1", server_port))?;
                let (mut client_in, mut server_out) = (client.try_clone()?, server.try_clone()?);
                std::thread::spawn(move || copy(&mut client_in, &mut server_out));
                let mut client = client;
                copy(&mut server, &mut client)
            });
        }
    });
    Ok(addr)
}

fn copy(from: &mut impl Read, to: &mut TcpStream) -> io::Result<()> {
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        let n = from.read(&mut buf)?;
        if n == 0 {
            return to.shutdown(Shutdown::Write);
        }
        to.write_all(&buf[..n])?;
    }
}

fn through_proxy(proxy: SocketAddr, port: u16) -> io::Result<TcpStream> {
    let mut stream = TcpStream::connect(proxy)?;
    stream.write_all(format!("CONNECT ok.test:{port} HTTP/1.1\r\n\r\n").as_bytes())?;
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        stream.read_exact(&mut byte)?;
        head.push(byte[0]);
    }
    if !head.starts_with(b"HTTP/1.1 200 ") {
        return Err(io::Error::other(String::from_utf8_lossy(&head).into_owned()));
    }
    Ok(stream)
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

fn main() -> io::Result<()> {
    let mut args = std::env::args().skip(1);
    let megabytes: u64 = args.next().and_then(|a| a.parse().ok()).unwrap_or(100);
    let rounds: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(5);
    let total = megabytes * 1_000_000;
    let port = server(total)?;

    let runtime = tokio::runtime::Runtime::new()?;
    let allow = AllowList::parse(&[format!("ok.test:{port}"), format!("127.0.0.1:{port}")])
        .map_err(io::Error::other)?;
    let resolver = StaticResolver::new([("ok.test".to_owned(), vec![[127, 0, 0, 1].into()])]);
    let listener = TcpListener::bind("127.0.0.1:0")?;
    let proxy_addr = listener.local_addr()?;
    let _handle = {
        let _entered = runtime.enter();
        Proxy::new(Arc::new(allow), Arc::new(resolver)).serve(listener, |_| {})?
    };

    let relay_addr = bare_relay(port)?;

    let (mut direct, mut relayed, mut proxied) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..rounds {
        let started = Instant::now();
        direct.push(download(
            TcpStream::connect(("127.0.0.1", port))?,
            total,
            started,
        )?);
        let started = Instant::now();
        relayed.push(download(TcpStream::connect(relay_addr)?, total, started)?);
        let started = Instant::now();
        proxied.push(download(through_proxy(proxy_addr, port)?, total, started)?);
    }
    let (direct, relayed, proxied) = (median(direct), median(relayed), median(proxied));
    println!(
        "{megabytes} MB x {rounds} rounds, median MB/s: direct {direct:.0}, bare relay {relayed:.0} ({:.2}), \
         proxy {proxied:.0} ({:.2} of direct, {:.2} of the bare relay)",
        relayed / direct,
        proxied / direct,
        proxied / relayed
    );
    Ok(())
}
