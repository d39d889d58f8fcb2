//! What is known about a connection so far, kept outside the connection's future so that a
//! connection cut short (the proxy stopping) is still reported with what crossed.

use std::io;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::task::{Context, Poll};
use std::time::Instant;

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

use crate::record::{ConnectionRecord, Method, Verdict};

pub(crate) struct Progress {
    started: Instant,
    state: Mutex<State>,
    pub up: AtomicU64,
    pub down: AtomicU64,
}

#[derive(Default)]
struct State {
    target: Option<(String, u16, Method)>,
    address: Option<SocketAddr>,
    verdict: Option<Verdict>,
}

impl Progress {
    pub(crate) fn new(started: Instant) -> Self {
        Self {
            started,
            state: Mutex::default(),
            up: AtomicU64::new(0),
            down: AtomicU64::new(0),
        }
    }

    fn with<T>(&self, f: impl FnOnce(&mut State) -> T) -> T {
        f(&mut self
            .state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner))
    }

    pub(crate) fn target(&self, host: String, port: u16, method: Method) {
        self.with(|s| s.target = Some((host, port, method)));
    }

    pub(crate) fn address(&self, address: SocketAddr) {
        self.with(|s| s.address = Some(address));
    }

    pub(crate) fn allowed(&self) {
        self.with(|s| s.verdict = Some(Verdict::Allowed));
    }

    pub(crate) fn refused(&self, reason: String) {
        self.with(|s| s.verdict = Some(Verdict::Refused { reason }));
    }

    /// The record, if the client got as far as naming a host.
    pub(crate) fn into_record(self) -> Option<ConnectionRecord> {
        let duration_ms = u64::try_from(self.started.elapsed().as_millis()).unwrap_or(u64::MAX);
        let state = self
            .state
            .into_inner()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let (host, port, method) = state.target?;
        let verdict = state.verdict.unwrap_or_else(|| Verdict::Refused {
            reason: "the proxy stopped before the request was decided".to_owned(),
        });
        Some(ConnectionRecord {
            host,
            port,
            address: state.address,
            method,
            verdict,
            bytes_up: self.up.into_inner(),
            bytes_down: self.down.into_inner(),
            duration_ms,
        })
    }
}

/// A stream that adds the bytes written through it to a counter: what was delivered, not
/// merely what was read from the other side.
pub(crate) struct Counted<'a, S> {
    inner: S,
    written: &'a AtomicU64,
}

impl<'a, S> Counted<'a, S> {
    pub(crate) fn new(inner: S, written: &'a AtomicU64) -> Self {
        Self { inner, written }
    }

    fn count(&self, poll: Poll<io::Result<usize>>) -> Poll<io::Result<usize>> {
        if let Poll::Ready(Ok(n)) = &poll {
            self.written.fetch_add(*n as u64, Ordering::Relaxed);
        }
        poll
    }
}

impl<S: AsyncRead + Unpin> AsyncRead for Counted<'_, S> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_read(cx, buf)
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for Counted<'_, S> {
    fn poll_write(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        let poll = Pin::new(&mut self.inner).poll_write(cx, buf);
        self.count(poll)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let poll = Pin::new(&mut self.inner).poll_write_vectored(cx, bufs);
        self.count(poll)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;
    use tokio::io::AsyncWriteExt;

    #[tokio::test]
    async fn counts_written_bytes_and_builds_the_record() {
        let progress = Progress::new(Instant::now());
        let mut sink = Vec::new();
        let mut counted = Counted::new(&mut sink, &progress.up);
        counted.write_all(b"hello").await.unwrap();
        assert_eq!(sink, b"hello");
        progress.target("ok.test".into(), 443, Method::Connect);
        progress.allowed();
        let record = progress.into_record().unwrap();
        assert_eq!((record.bytes_up, record.bytes_down), (5, 0));
        assert_eq!(record.verdict, Verdict::Allowed);
    }

    #[test]
    fn no_record_without_a_host() {
        assert!(Progress::new(Instant::now()).into_record().is_none());
        let cut_short = Progress::new(Instant::now());
        cut_short.target("ok.test".into(), 443, Method::Connect);
        assert!(matches!(
            cut_short.into_record().unwrap().verdict,
            Verdict::Refused { .. }
        ));
    }
}
