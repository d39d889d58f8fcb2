//! A response body being streamed to the component (its `http-response` resource), from
//! the network, a recording or a function in this process.

use agent_protocol::ports::TransportError;
use bytes::Bytes;
use futures_util::{Stream, StreamExt};
use std::pin::Pin;
use std::time::Duration;

/// Longest silence tolerated between two body chunks.
const READ_IDLE_TIMEOUT: Duration = Duration::from_secs(300);

/// How long one LLM request may take, from sending it to the end of its answer, unless the
/// configuration (`request_timeout_secs`) or [`REQUEST_TIMEOUT_VAR`] says otherwise. The idle
/// timeout alone does not end a response a server keeps alive with a comment every few
/// seconds; this does. Half an hour is far above the longest reasoning answer.
pub const REQUEST_TIMEOUT_SECS: u64 = 30 * 60;
/// The variable that sets the limit, in seconds (0: none).
pub const REQUEST_TIMEOUT_VAR: &str = "AGENT_HOST_REQUEST_TIMEOUT_SECS";

/// An error answer's body is read whole, up to this much, so that a credential the server
/// repeats in it (a key quoted back in a 401) is hidden before the component reads it and
/// puts it in a message (the component reads at most 64 KiB of it).
const ERROR_BODY_KEPT: usize = 256 * 1024;

/// When a request must be over: its overall limit, counted from when it was sent.
#[derive(Debug, Clone, Copy)]
pub struct Deadline {
    at: tokio::time::Instant,
    limit: Duration,
}

impl Deadline {
    /// `limit` from now.
    pub fn after(limit: Duration) -> Self {
        Self {
            at: tokio::time::Instant::now() + limit,
            limit,
        }
    }

    /// The time left (zero once passed).
    pub fn remaining(&self) -> Duration {
        self.at.saturating_duration_since(tokio::time::Instant::now())
    }

    pub fn passed(&self) -> bool {
        self.remaining().is_zero()
    }

    /// The error of a request cut off at its deadline. A broken stream, not a timeout: the
    /// component retries timeouts, and a request that took the whole limit would take it
    /// again each time.
    pub fn error(&self) -> TransportError {
        TransportError::Io(format!(
            "the request was cut off at its overall time limit of {} s (the whole answer must \
             arrive within it; request_timeout_secs in the user's configuration or \
             {REQUEST_TIMEOUT_VAR} raises it, 0 removes it)",
            self.limit.as_secs()
        ))
    }
}

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
    deadline: Option<Deadline>,
    /// Whether an error answer's body was handed over (it is handed over whole, at once).
    error_body_read: bool,
}

impl ResponseHandle {
    pub fn new(status: u16, headers: Vec<(String, String)>, body: ChunkStream) -> Self {
        Self {
            status,
            headers,
            body,
            observer: None,
            read: 0,
            deadline: None,
            error_body_read: false,
        }
    }

    /// The same response, cut off at `deadline` (`None`: no overall limit).
    pub fn with_deadline(mut self, deadline: Option<Deadline>) -> Self {
        self.deadline = deadline;
        self
    }

    /// The same response, with every read of its body shown to `observer`.
    pub fn observed_by(mut self, observer: Box<dyn BodyObserver>) -> Self {
        self.observer = Some(observer);
        self
    }

    /// Next body chunk; `None` at its end. An error answer's body comes whole, in one
    /// chunk, with the credentials this process knows hidden.
    pub async fn next_chunk(&mut self) -> Result<Option<Vec<u8>>, TransportError> {
        let read = match (200..300).contains(&self.status) {
            true => self.read_chunk().await,
            false => self.error_body().await,
        };
        if let Some(observer) = &mut self.observer {
            observer.observe(&read);
        }
        read
    }

    /// The body of an error answer, whole (up to [`ERROR_BODY_KEPT`]) and redacted.
    async fn error_body(&mut self) -> Result<Option<Vec<u8>>, TransportError> {
        if self.error_body_read {
            return Ok(None);
        }
        let mut body = Vec::new();
        while body.len() < ERROR_BODY_KEPT {
            match self.read_chunk().await? {
                Some(chunk) => body.extend_from_slice(&chunk),
                None => break,
            }
        }
        body.truncate(ERROR_BODY_KEPT);
        self.error_body_read = true;
        if body.is_empty() {
            return Ok(None);
        }
        Ok(Some(match crate::secrets::known_matcher() {
            Some(known) => known
                .replace_all(&body, crate::secrets::REDACTED.as_bytes())
                .into_owned(),
            None => body,
        }))
    }

    /// The next chunk as the server sent it, within the idle timeout, the deadline and the
    /// cap.
    async fn read_chunk(&mut self) -> Result<Option<Vec<u8>>, TransportError> {
        // Checked first: a chunk already waiting would otherwise pass a deadline long gone.
        if let Some(deadline) = self.deadline.filter(Deadline::passed) {
            return Err(deadline.error());
        }
        let (wait, cut_by) = match self.deadline {
            Some(deadline) if deadline.remaining() < READ_IDLE_TIMEOUT => {
                (deadline.remaining(), Some(deadline))
            }
            _ => (READ_IDLE_TIMEOUT, None),
        };
        let read = match tokio::time::timeout(wait, self.body.next()).await {
            Err(_) => Err(match cut_by {
                Some(deadline) => deadline.error(),
                None => TransportError::Timeout(format!(
                    "no data for {} s while reading the response",
                    READ_IDLE_TIMEOUT.as_secs()
                )),
            }),
            Ok(None) => Ok(None),
            Ok(Some(chunk)) => chunk.map(|bytes| Some(bytes.to_vec())),
        };
        if let Ok(Some(chunk)) = &read {
            // Past the cap once, every later read fails too.
            self.read = self.read.saturating_add(chunk.len());
        }
        match read {
            Ok(Some(_)) if self.read > response_cap() => Err(TransportError::Io(format!(
                "the response passed {} bytes and was cut off ({RESPONSE_CAP_VAR} raises the cap)",
                response_cap()
            ))),
            other => other,
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    /// A body that sends `piece` every 10 ms, forever.
    fn endless(piece: &'static str) -> ChunkStream {
        Box::pin(futures_util::stream::unfold((), move |()| async move {
            tokio::time::sleep(Duration::from_millis(10)).await;
            Some((Ok(Bytes::from_static(piece.as_bytes())), ()))
        }))
    }

    #[tokio::test]
    async fn a_stream_kept_alive_by_comments_ends_at_its_deadline() {
        let deadline = Deadline::after(Duration::from_millis(300));
        let mut response =
            ResponseHandle::new(200, Vec::new(), endless(": keep-alive\n\n")).with_deadline(Some(deadline));
        // Ten times the deadline guards against a hang.
        let error = tokio::time::timeout(Duration::from_secs(3), async {
            loop {
                if let Err(error) = response.next_chunk().await {
                    return error;
                }
            }
        })
        .await
        .unwrap();
        let message = error.to_string();
        assert!(
            matches!(error, TransportError::Io(_)) && message.contains(REQUEST_TIMEOUT_VAR),
            "{message}"
        );
        // Every later read fails too.
        assert!(response.next_chunk().await.is_err());
    }

    #[tokio::test]
    async fn an_error_body_comes_whole_with_known_keys_hidden() {
        crate::secrets::redact::remember("repeated-key-0123456789");
        let pieces = ["{\"error\":\"bad key: repeated-key-01", "23456789\"}"];
        let body = futures_util::stream::iter(pieces.map(|p| Ok(Bytes::from_static(p.as_bytes()))));
        let mut response = ResponseHandle::new(401, Vec::new(), Box::pin(body));
        let whole = response.next_chunk().await.unwrap().unwrap();
        assert_eq!(
            String::from_utf8(whole).unwrap(),
            "{\"error\":\"bad key: <redacted>\"}"
        );
        assert_eq!(response.next_chunk().await.unwrap(), None);
        // A successful answer streams as it comes.
        let body = futures_util::stream::iter(pieces.map(|p| Ok(Bytes::from_static(p.as_bytes()))));
        let mut response = ResponseHandle::new(200, Vec::new(), Box::pin(body));
        assert_eq!(
            response.next_chunk().await.unwrap().unwrap(),
            pieces[0].as_bytes()
        );
    }
}
