//! LLM answers from a function in the same process: no socket, no HTTP client. For
//! embedders' tests and benchmarks (make bench measures the loop with it), and for hosts
//! whose model runs in-process. The function sees each request as the component sent it and
//! returns the response head and body chunks, which stream to the component one by one.

use crate::transport::response::ResponseHandle;
use agent_protocol::ports::{HttpRequest, TransportError};
use bytes::Bytes;
use std::sync::Arc;

/// A response produced in-process.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InProcessReply {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    /// Body pieces, read by the component one `next-chunk` at a time.
    pub chunks: Vec<Bytes>,
}

impl InProcessReply {
    /// A `200 OK` server-sent event stream.
    pub fn event_stream(chunks: impl IntoIterator<Item = Bytes>) -> Self {
        Self {
            status: 200,
            headers: vec![("content-type".to_string(), "text/event-stream".to_string())],
            chunks: chunks.into_iter().collect(),
        }
    }
}

type Responder = dyn Fn(&HttpRequest) -> Result<InProcessReply, TransportError> + Send + Sync;

/// Serves every LLM request of a session from `responder`. Cheap to clone.
#[derive(Clone)]
pub struct InProcessTransport {
    responder: Arc<Responder>,
}

impl InProcessTransport {
    pub fn new(
        responder: impl Fn(&HttpRequest) -> Result<InProcessReply, TransportError> + Send + Sync + 'static,
    ) -> Self {
        Self {
            responder: Arc::new(responder),
        }
    }

    pub fn send(&self, request: &HttpRequest) -> Result<ResponseHandle, TransportError> {
        let reply = (self.responder)(request)?;
        let body = futures_util::stream::iter(reply.chunks.into_iter().map(Ok));
        Ok(ResponseHandle::new(reply.status, reply.headers, Box::pin(body)))
    }
}

impl std::fmt::Debug for InProcessTransport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("InProcessTransport").finish_non_exhaustive()
    }
}
