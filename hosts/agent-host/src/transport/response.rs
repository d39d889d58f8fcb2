//! A response body being streamed to the component (its `http-response` resource), from
//! the network, a recording or a function in this process.

use agent_protocol::ports::TransportError;
use bytes::Bytes;
use futures_util::{Stream, StreamExt};
use std::pin::Pin;
use std::time::Duration;

/// Longest silence tolerated between two body chunks.
const READ_IDLE_TIMEOUT: Duration = Duration::from_secs(300);

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
}

impl ResponseHandle {
    pub fn new(status: u16, headers: Vec<(String, String)>, body: ChunkStream) -> Self {
        Self {
            status,
            headers,
            body,
            observer: None,
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
        if let Some(observer) = &mut self.observer {
            observer.observe(&read);
        }
        read
    }
}
