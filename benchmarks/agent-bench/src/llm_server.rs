//! A stateless scripted Anthropic server on 127.0.0.1 for the benchmarks that go through
//! real HTTP: each reply is chosen from the request itself (how many tool results it
//! carries), so any number of concurrent sessions each get their own conversation. It can
//! answer after a fixed delay and note when each connection's first request byte arrived.

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::response::Response;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::net::{TcpListener, TcpStream};

/// Chooses the reply (Anthropic event-stream pieces) for a request body.
pub type Responder = dyn Fn(&str) -> Vec<String> + Send + Sync;

struct Shared {
    responder: Box<Responder>,
    delay: Duration,
}

/// A running server; it stops with its tokio runtime.
pub struct LlmServer {
    pub addr: SocketAddr,
    first_bytes: Arc<Mutex<Vec<Instant>>>,
}

impl LlmServer {
    /// Starts inside the current tokio runtime; with `note_first_bytes`, connections are
    /// accepted one at a time (see [`FirstByteListener`]).
    pub async fn start(
        delay: Duration,
        note_first_bytes: bool,
        responder: impl Fn(&str) -> Vec<String> + Send + Sync + 'static,
    ) -> anyhow::Result<Self> {
        let shared = Arc::new(Shared {
            responder: Box::new(responder),
            delay,
        });
        let app = Router::new().fallback(handle).with_state(shared);
        let listener = TcpListener::bind(("127.0.0.1", 0)).await?;
        let addr = listener.local_addr()?;
        let first_bytes = Arc::new(Mutex::new(Vec::new()));
        if note_first_bytes {
            let listener = FirstByteListener {
                inner: listener,
                first_bytes: first_bytes.clone(),
            };
            tokio::spawn(async move {
                let _ = axum::serve(listener, app).await;
            });
        } else {
            tokio::spawn(async move {
                let _ = axum::serve(listener, app).await;
            });
        }
        Ok(Self { addr, first_bytes })
    }

    pub fn base_url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// When the first byte of each connection arrived, in order.
    pub fn first_bytes(&self) -> Vec<Instant> {
        self.first_bytes.lock().map(|t| t.clone()).unwrap_or_default()
    }
}

async fn handle(State(shared): State<Arc<Shared>>, body: Bytes) -> Response {
    tokio::time::sleep(shared.delay).await;
    let chunks = (shared.responder)(&String::from_utf8_lossy(&body));
    Response::builder()
        .header("content-type", "text/event-stream")
        .body(Body::from(chunks.concat()))
        .unwrap_or_default()
}

/// Accepts connections and waits for each one's first byte before handing it to the HTTP
/// server, noting the time: "first request byte at the server" for the start-up figure.
/// (Accepting one connection at a time is fine for the benchmarks' connection counts: the
/// peek returns as soon as the client has written, which it does right after connecting.)
struct FirstByteListener {
    inner: TcpListener,
    first_bytes: Arc<Mutex<Vec<Instant>>>,
}

impl axum::serve::Listener for FirstByteListener {
    type Io = TcpStream;
    type Addr = SocketAddr;

    async fn accept(&mut self) -> (Self::Io, Self::Addr) {
        loop {
            let Ok((stream, addr)) = self.inner.accept().await else {
                tokio::time::sleep(Duration::from_millis(5)).await;
                continue;
            };
            let mut byte = [0u8; 1];
            if matches!(stream.peek(&mut byte).await, Ok(1..)) {
                let now = Instant::now();
                if let Ok(mut times) = self.first_bytes.lock() {
                    times.push(now);
                }
            }
            return (stream, addr);
        }
    }

    fn local_addr(&self) -> std::io::Result<Self::Addr> {
        self.inner.local_addr()
    }
}

/// The conversation of the HTTP benchmarks: `rounds` replies with one `read_file` call of
/// `notes/fNNN.txt` each, then "done"; the round is the number of tool results so far.
pub fn read_files_then_done(rounds: usize) -> impl Fn(&str) -> Vec<String> + Send + Sync + 'static {
    use scripted_llm::anthropic::{message, text, tool_use};
    move |body: &str| {
        let round = body.matches("\"tool_result\"").count();
        if round < rounds {
            let input = serde_json::json!({"file_path": format!("notes/f{round:03}.txt")});
            message(&[tool_use(&format!("toolu_{round:04}"), "read_file", input)]).chunks
        } else {
            message(&[text("done")]).chunks
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_reply_follows_the_number_of_tool_results() {
        let respond = read_files_then_done(2);
        // The call's id names the round (its input is streamed in pieces of JSON).
        assert!(respond("{\"messages\":[]}").concat().contains("toolu_0000"));
        let one = "{\"type\":\"tool_result\"}";
        assert!(respond(one).concat().contains("toolu_0001"));
        let two = format!("{one}{one}");
        let done = respond(&two).concat();
        assert!(done.contains("end_turn") && !done.contains("tool_use"), "{done}");
    }
}
