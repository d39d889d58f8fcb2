//! A plain HTTP server on 127.0.0.1 for the network tests: it answers every request with
//! `hello` and counts the requests it answered. Threads, not a runtime, so any test can use
//! it.

use std::io::{Read, Write};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

/// The server's port and how many requests it has answered so far.
pub struct HelloServer {
    pub port: u16,
    answered: Arc<AtomicUsize>,
}

impl HelloServer {
    pub fn start() -> std::io::Result<Self> {
        let listener = std::net::TcpListener::bind("127.0.0.1:0")?;
        let port = listener.local_addr()?.port();
        let answered = Arc::new(AtomicUsize::new(0));
        let counted = answered.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(mut stream) = stream else { continue };
                let counted = counted.clone();
                std::thread::spawn(move || {
                    let mut head = Vec::new();
                    let mut buffer = [0u8; 1024];
                    while !head.windows(4).any(|w| w == b"\r\n\r\n") {
                        match stream.read(&mut buffer) {
                            Ok(0) | Err(_) => return,
                            Ok(n) => head.extend_from_slice(&buffer[..n]),
                        }
                    }
                    counted.fetch_add(1, Ordering::SeqCst);
                    let _ = stream.write_all(
                        b"HTTP/1.1 200 OK\r\nContent-Length: 6\r\nConnection: close\r\n\r\nhello\n",
                    );
                });
            }
        });
        Ok(Self { port, answered })
    }

    /// Requests answered so far (a request is counted before its answer is written).
    pub fn answered(&self) -> usize {
        self.answered.load(Ordering::SeqCst)
    }
}
