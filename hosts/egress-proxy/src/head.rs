//! Reading a request head, bounded in size so a client cannot make the proxy buffer without
//! end.

use std::io;

use tokio::io::{AsyncRead, AsyncReadExt};

pub(crate) const MAX_HEAD: usize = 64 * 1024;
const MAX_HEADERS: usize = 100;

/// A parsed request head and the bytes the client sent after it.
#[derive(Debug)]
pub(crate) struct Head {
    pub method: String,
    pub target: String,
    pub minor_version: u8,
    pub headers: Vec<(String, Vec<u8>)>,
    pub rest: Vec<u8>,
}

#[derive(Debug, thiserror::Error)]
pub(crate) enum HeadError {
    #[error("the client closed the connection without sending anything")]
    Nothing,
    #[error("the client closed the connection before the request head was complete")]
    ClosedEarly,
    #[error("the request head is larger than 64 KiB")]
    TooLarge,
    #[error("malformed request head: {0}")]
    Malformed(String),
    #[error("reading the request head failed: {0}")]
    Io(#[from] io::Error),
}

/// Reads until the head is complete. `buf` keeps what was read, so a caller whose timeout
/// fired can still tell which host the client asked for; reads go through a local chunk so
/// that cancelling leaves `buf` holding only received bytes.
pub(crate) async fn read_head<R: AsyncRead + Unpin>(
    reader: &mut R,
    buf: &mut Vec<u8>,
) -> Result<Head, HeadError> {
    let mut chunk = [0u8; 8192];
    loop {
        if let Some(head) = parse(buf)? {
            return Ok(head);
        }
        if buf.len() >= MAX_HEAD {
            return Err(HeadError::TooLarge);
        }
        let room = (MAX_HEAD - buf.len()).min(chunk.len());
        let n = reader.read(&mut chunk[..room]).await?;
        if n == 0 {
            return Err(if buf.is_empty() {
                HeadError::Nothing
            } else {
                HeadError::ClosedEarly
            });
        }
        buf.extend_from_slice(&chunk[..n]);
    }
}

fn parse(buf: &[u8]) -> Result<Option<Head>, HeadError> {
    let mut headers = [httparse::EMPTY_HEADER; MAX_HEADERS];
    let mut request = httparse::Request::new(&mut headers);
    let len = match request.parse(buf) {
        Ok(httparse::Status::Complete(len)) => len,
        Ok(httparse::Status::Partial) => return Ok(None),
        Err(httparse::Error::TooManyHeaders) => {
            return Err(HeadError::Malformed(format!(
                "more than {MAX_HEADERS} header lines"
            )));
        }
        Err(error) => return Err(HeadError::Malformed(error.to_string())),
    };
    Ok(Some(Head {
        method: request.method.unwrap_or_default().to_owned(),
        target: request.path.unwrap_or_default().to_owned(),
        minor_version: request.version.unwrap_or(1),
        headers: request
            .headers
            .iter()
            .map(|h| (h.name.to_owned(), h.value.to_vec()))
            .collect(),
        rest: buf[len..].to_vec(),
    }))
}

/// Method and target from a head that never completed, when at least its first line came.
pub(crate) fn request_line(buf: &[u8]) -> Option<(String, String)> {
    let end = buf.iter().position(|&b| b == b'\n')?;
    let line = String::from_utf8_lossy(&buf[..end]);
    let mut parts = line.trim_end_matches('\r').split(' ');
    let method = parts.next().filter(|m| !m.is_empty())?;
    let target = parts.next().filter(|t| !t.is_empty())?;
    Some((method.to_owned(), target.to_owned()))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    async fn read(input: &[u8]) -> (Result<Head, HeadError>, Vec<u8>) {
        let mut reader = input;
        let mut buf = Vec::new();
        let head = read_head(&mut reader, &mut buf).await;
        (head, buf)
    }

    #[tokio::test]
    async fn parses_a_head_and_keeps_what_follows() {
        let (head, _) =
            read(b"CONNECT a.example:443 HTTP/1.1\r\nHost: a.example:443\r\n\r\n\x16\x03\x01").await;
        let head = head.unwrap();
        assert_eq!(head.method, "CONNECT");
        assert_eq!(head.target, "a.example:443");
        assert_eq!(head.minor_version, 1);
        assert_eq!(head.headers, vec![("Host".to_owned(), b"a.example:443".to_vec())]);
        assert_eq!(head.rest, b"\x16\x03\x01");
    }

    #[tokio::test]
    async fn reports_why_a_head_is_missing() {
        assert!(matches!(read(b"").await.0, Err(HeadError::Nothing)));
        let (head, buf) = read(b"GET http://a.example/ HTTP/1.1\r\nHost: a").await;
        assert!(matches!(head, Err(HeadError::ClosedEarly)));
        assert_eq!(
            request_line(&buf),
            Some(("GET".to_owned(), "http://a.example/".to_owned()))
        );
        assert!(matches!(
            read(b"GET / HTTP/1.1\r\nBad Header\r\n\r\n").await.0,
            Err(HeadError::Malformed(_))
        ));
        let many = format!("GET / HTTP/1.1\r\n{}\r\n", "A: b\r\n".repeat(101));
        assert!(matches!(read(many.as_bytes()).await.0, Err(HeadError::Malformed(m)) if m.contains("100")));
    }

    #[tokio::test]
    async fn refuses_heads_over_64_kib() {
        let big = format!(
            "GET http://a.example/ HTTP/1.1\r\nX: {}\r\n\r\n",
            "x".repeat(MAX_HEAD)
        );
        let (head, buf) = read(big.as_bytes()).await;
        assert!(matches!(head, Err(HeadError::TooLarge)));
        assert_eq!(buf.len(), MAX_HEAD);
        assert!(request_line(&buf).is_some());
    }

    #[test]
    fn request_line_needs_a_whole_first_line() {
        assert_eq!(request_line(b"GET http://a.exa"), None);
        assert_eq!(request_line(b"\r\n"), None);
    }
}
