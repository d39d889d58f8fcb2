//! The answers the proxy itself gives. The message is also the status line's reason phrase,
//! because that is what Python's http.client and pip print when a proxy says no.

use crate::host_name::host_port;

/// The message a refused request gets; starts with "agent-host refused HOST:PORT: " so it can
/// be recognised in a failing command's stderr.
pub const REFUSAL_PREFIX: &str = "agent-host refused";

/// An error reply, and the reason recorded for it (`None`: the policy allowed the request and
/// the verdict stays `Allowed`, as when the server cannot be reached).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Reply {
    pub status: u16,
    pub message: String,
    pub reason: Option<String>,
}

impl Reply {
    /// A policy refusal: 403 (or 503 when full), recorded with the detail after `HOST:PORT: `.
    pub(crate) fn refused(status: u16, host: &str, port: u16, detail: &str) -> Self {
        let detail = sanitise(detail);
        Self {
            status,
            message: format!("{REFUSAL_PREFIX} {}: {detail}", sanitise(&host_port(host, port))),
            reason: Some(detail),
        }
    }

    pub(crate) fn not_listed(host: &str, port: u16) -> Self {
        let entry = host_port(host, port);
        let detail = format!(
            "not in network_allow (allow it with --network-allow {entry} or network_allow in config.toml)"
        );
        Self::refused(403, host, port, &detail)
    }

    pub(crate) fn bad_request(status: u16, detail: &str) -> Self {
        let reason = format!("bad request: {}", sanitise(detail));
        Self {
            status,
            message: format!("agent-host: {reason}"),
            reason: Some(reason),
        }
    }

    pub(crate) fn unresolved(host: &str, error: &str) -> Self {
        let reason = sanitise(&format!("could not resolve {host}: {error}"));
        Self {
            status: 502,
            message: format!("agent-host {reason}"),
            reason: Some(reason),
        }
    }

    pub(crate) fn unreachable(host: &str, port: u16, addr: std::net::SocketAddr, error: &str) -> Self {
        let message = format!(
            "agent-host could not connect to {} ({addr}): {error}",
            host_port(host, port)
        );
        Self {
            status: 502,
            message: sanitise(&message),
            reason: None,
        }
    }

    /// The whole response: the message as reason phrase and as a one-line body.
    pub(crate) fn render(&self) -> Vec<u8> {
        let body = format!("{}\n", self.message);
        format!(
            "HTTP/1.1 {} {}\r\nContent-Type: text/plain\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            self.status,
            self.message,
            body.len()
        )
        .into_bytes()
    }
}

/// Printable ASCII only and at most 500 characters: what the client sent must not be able to
/// end the status line or inject headers.
pub(crate) fn sanitise(text: &str) -> String {
    text.chars()
        .take(500)
        .map(|c| if c == ' ' || c.is_ascii_graphic() { c } else { '?' })
        .collect()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    #[test]
    fn refusal_carries_the_message_in_the_status_line() {
        let reply = Reply::not_listed("evil.example", 443);
        let text = String::from_utf8(reply.render()).unwrap();
        let message = "agent-host refused evil.example:443: not in network_allow (allow it with --network-allow evil.example:443 or network_allow in config.toml)";
        assert!(text.starts_with(&format!("HTTP/1.1 403 {message}\r\n")), "{text}");
        assert!(text.ends_with(&format!("\r\n\r\n{message}\n")), "{text}");
        assert!(text.contains(&format!("Content-Length: {}\r\n", message.len() + 1)));
        assert_eq!(
            reply.reason.as_deref(),
            Some(&message["agent-host refused evil.example:443: ".len()..])
        );
    }

    #[test]
    fn client_text_cannot_break_the_reply() {
        let reply = Reply::bad_request(400, "bad\r\nSet-Cookie: x=1\u{7f}é");
        assert_eq!(reply.message, "agent-host: bad request: bad??Set-Cookie: x=1??");
        let text = String::from_utf8(reply.render()).unwrap();
        assert_eq!(text.matches("\r\n").count(), 5);
        assert_eq!(sanitise(&"x".repeat(1000)).len(), 500);
    }

    #[test]
    fn ipv6_hosts_are_bracketed() {
        let reply = Reply::not_listed("::1", 8080);
        assert!(reply.message.starts_with("agent-host refused [::1]:8080: "));
        assert!(reply.message.contains("--network-allow [::1]:8080 "));
    }
}
