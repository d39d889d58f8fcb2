//! A response body being streamed to the component (its `http-response` resource), from
//! the network, a recording or a function in this process.

use agent_protocol::ports::TransportError;
use bytes::Bytes;
use futures_util::{Stream, StreamExt};
use std::pin::Pin;
use std::time::Duration;

/// Longest silence tolerated between two body chunks.
const READ_IDLE_TIMEOUT: Duration = Duration::from_secs(300);

/// Bytes one response body may have, unless [`RESPONSE_CAP_VAR`] says otherwise: a server
/// that streams without end (a hostile one, or a model stuck in a loop) must not grow the
/// host's memory and the session's log without bound. Far above any real answer.
pub const RESPONSE_CAP: usize = 16 * 1024 * 1024;
/// The variable that sets the cap, in bytes (`K`, `M` and `G` suffixes allowed).
pub const RESPONSE_CAP_VAR: &str = "AGENT_HOST_MAX_RESPONSE_BYTES";

/// The cap in effect.
pub fn response_cap() -> usize {
    static CAP: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *CAP.get_or_init(|| {
        std::env::var(RESPONSE_CAP_VAR)
            .ok()
            .and_then(|value| {
                let size = crate::environments::parse_size(&value);
                if size.is_none() {
                    tracing::warn!(
                        "{RESPONSE_CAP_VAR}={value:?} is not a size (e.g. 32M); using {RESPONSE_CAP} bytes"
                    );
                }
                size
            })
            .unwrap_or(RESPONSE_CAP)
    })
}

/// A response body as a stream of chunks (from the network, or from a recording).
pub type ChunkStream = Pin<Box<dyn Stream<Item = Result<Bytes, TransportError>> + Send>>;

/// Sees each result the component reads from a response body: the recorder tees them into
/// its file, exactly as they were delivered.
pub trait BodyObserver: Send {
    fn observe(&mut self, read: &Result<Option<Vec<u8>>, TransportError>);
}

/// A response body being streamed, as the component's `http-response` resource.
pub struct ResponseHandle {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    body: ChunkStream,
    observer: Option<Box<dyn BodyObserver>>,
    /// Body bytes read so far.
    read: usize,
}

impl ResponseHandle {
    pub fn new(status: u16, headers: Vec<(String, String)>, body: ChunkStream) -> Self {
        Self {
            status,
            headers,
            body,
            observer: None,
            read: 0,
        }
    }

    /// The same response, with every read of its body shown to `observer`.
    pub fn observed_by(mut self, observer: Box<dyn BodyObserver>) -> Self {
        self.observer = Some(observer);
        self
    }

    /// Next body chunk; `None` at its end.
    pub async fn next_chunk(&mut self) -> Result<Option<Vec<u8>>, TransportError> {
        let read = match tokio::time::timeout(READ_IDLE_TIMEOUT, self.body.next()).await {
            Err(_) => Err(TransportError::Timeout(format!(
                "no data for {} s while reading the response",
                READ_IDLE_TIMEOUT.as_secs()
            ))),
            Ok(None) => Ok(None),
            Ok(Some(chunk)) => chunk.map(|bytes| Some(bytes.to_vec())),
        };
        if let Ok(Some(chunk)) = &read {
            // Past the cap once, every later read fails too.
            self.read = self.read.saturating_add(chunk.len());
        }
        let read = match read {
            Ok(Some(_)) if self.read > response_cap() => Err(TransportError::Io(format!(
                "the response passed {} bytes and was cut off ({RESPONSE_CAP_VAR} raises the cap)",
                response_cap()
            ))),
            other => other,
        };
        if let Some(observer) = &mut self.observer {
            observer.observe(&read);
        }
        read
    }
}
