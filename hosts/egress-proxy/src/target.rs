//! What a request asks for: a CONNECT authority or an absolute `http://` URL, and the head a
//! forwarded request is rewritten to.

use std::net::IpAddr;

use crate::head::Head;
use crate::host_name::{HostName, host_port};
use crate::record::Method;

/// The host and port a request wants to reach.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Target {
    pub host: HostName,
    pub port: u16,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Request {
    Connect(Target),
    /// `origin` is the request line's new target (`/path?query`); `host_header` the value
    /// the Host header gets.
    Forward {
        method: String,
        target: Target,
        origin: String,
        host_header: String,
    },
}

/// Why a target is unusable, with the target when it could be read (to be recorded).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct BadTarget {
    pub target: Option<(Target, Method)>,
    pub reason: String,
}

impl Request {
    pub(crate) fn target(&self) -> &Target {
        match self {
            Self::Connect(target) | Self::Forward { target, .. } => target,
        }
    }

    pub(crate) fn method(&self) -> Method {
        match self {
            Self::Connect(_) => Method::Connect,
            Self::Forward { method, .. } => Method::Forward(method.clone()),
        }
    }
}

pub(crate) fn parse_request(method: &str, raw: &str) -> Result<Request, BadTarget> {
    let bad = |reason: String| BadTarget { target: None, reason };
    if method.eq_ignore_ascii_case("CONNECT") {
        let target = parse_authority(raw, None).map_err(bad)?;
        return Ok(Request::Connect(target));
    }
    let Some((scheme, rest)) = raw.split_once("://") else {
        return Err(bad(format!(
            "{raw} is not an absolute URL; this is a proxy: send http://host/path, or CONNECT host:port for https"
        )));
    };
    let authority_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let (authority, path) = rest.split_at(authority_end);
    if authority.contains('@') {
        return Err(bad(
            "user names or passwords in the URL are not supported".to_owned()
        ));
    }
    let default_port = match scheme.to_ascii_lowercase().as_str() {
        "http" => 80,
        "https" => 443,
        other => {
            return Err(bad(format!(
                "unsupported scheme {other}://; only http:// (and CONNECT for https)"
            )));
        }
    };
    let target = parse_authority(authority, Some(default_port)).map_err(bad)?;
    if default_port == 443 {
        let reason =
            "https:// URLs must go through a CONNECT tunnel (point HTTPS_PROXY at this proxy)".to_owned();
        return Err(BadTarget {
            target: Some((target, Method::Forward(method.to_owned()))),
            reason,
        });
    }
    let path = path.split('#').next().unwrap_or_default();
    let origin = match path.chars().next() {
        None => "/".to_owned(),
        Some('?') => format!("/{path}"),
        Some(_) => path.to_owned(),
    };
    let host = target.host.as_string();
    let host_header = match (&target.host, target.port) {
        (HostName::Ip(IpAddr::V6(ip)), 80) => format!("[{ip}]"),
        (_, 80) => host,
        (_, port) => host_port(&host, port),
    };
    Ok(Request::Forward {
        method: method.to_owned(),
        target,
        origin,
        host_header,
    })
}

/// `host:port` or `[v6]:port`; `default_port` applies when the port is absent or empty.
fn parse_authority(raw: &str, default_port: Option<u16>) -> Result<Target, String> {
    let (host, port) = match raw.rfind(':') {
        Some(colon) if !raw[colon..].contains(']') => (&raw[..colon], Some(&raw[colon + 1..])),
        _ => (raw, None),
    };
    let port = match (port.filter(|p| !p.is_empty()), default_port) {
        (Some(p), _) => match p.parse::<u16>() {
            Ok(n) if n > 0 && p.bytes().all(|b| b.is_ascii_digit()) => n,
            _ => return Err(format!("{raw}: the port must be a number from 1 to 65535")),
        },
        (None, Some(default)) => default,
        (None, None) => return Err(format!("{raw}: CONNECT needs host:port")),
    };
    if host.contains(':') && !host.starts_with('[') {
        return Err(format!("{raw}: an IPv6 address needs brackets, as in [::1]:443"));
    }
    let host = HostName::parse(host).map_err(|reason| format!("{raw}: {reason}"))?;
    Ok(Target { host, port })
}

/// Hop-by-hop headers: about the client's connection to the proxy, not the request.
const DROPPED: &[&str] = &[
    "proxy-connection",
    "proxy-authorization",
    "connection",
    "keep-alive",
    "host",
];

/// The head sent upstream: origin-form request line, the proxy's own headers dropped, Host
/// set from the URL (so the server is asked for the host the policy judged), and
/// `Connection: close` because one client connection carries one request.
pub(crate) fn forward_head(head: &Head, request: &Request) -> Vec<u8> {
    let Request::Forward {
        method,
        origin,
        host_header,
        ..
    } = request
    else {
        return Vec::new();
    };
    let mut out = format!(
        "{method} {origin} HTTP/1.{}\r\nHost: {host_header}\r\n",
        head.minor_version
    )
    .into_bytes();
    for (name, value) in &head.headers {
        if DROPPED.iter().any(|d| name.eq_ignore_ascii_case(d)) {
            continue;
        }
        out.extend_from_slice(name.as_bytes());
        out.extend_from_slice(b": ");
        out.extend_from_slice(value);
        out.extend_from_slice(b"\r\n");
    }
    out.extend_from_slice(b"Connection: close\r\n\r\n");
    out
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    fn name(host: &str, port: u16) -> Target {
        Target {
            host: HostName::Name(host.to_owned()),
            port,
        }
    }

    fn forward(raw: &str) -> (Target, String, String) {
        match parse_request("GET", raw).unwrap() {
            Request::Forward {
                target,
                origin,
                host_header,
                ..
            } => (target, origin, host_header),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn connect_authorities() {
        assert_eq!(
            parse_request("CONNECT", "Ok.Test:443").unwrap(),
            Request::Connect(name("ok.test", 443))
        );
        let v6 = parse_request("CONNECT", "[::1]:8443").unwrap();
        assert_eq!(v6.target().host, HostName::Ip("::1".parse().unwrap()));
        assert_eq!(v6.method(), Method::Connect);
        for bad in [
            "ok.test",
            "ok.test:",
            "ok.test:0",
            "ok.test:99999",
            "[::1]",
            ":443",
            "a b:443",
            "::1:443",
        ] {
            assert!(parse_request("CONNECT", bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn absolute_urls() {
        assert_eq!(
            forward("http://ok.test/a/b?q=1#frag"),
            (name("ok.test", 80), "/a/b?q=1".into(), "ok.test".into())
        );
        assert_eq!(
            forward("HTTP://OK.test:8080"),
            (name("ok.test", 8080), "/".into(), "ok.test:8080".into())
        );
        assert_eq!(
            forward("http://ok.test?x"),
            (name("ok.test", 80), "/?x".into(), "ok.test".into())
        );
        assert_eq!(
            forward("http://ok.test:/"),
            (name("ok.test", 80), "/".into(), "ok.test".into())
        );
        let (target, _, host_header) = forward("http://[::1]:8080/");
        assert_eq!(target.host, HostName::Ip("::1".parse().unwrap()));
        assert_eq!(host_header, "[::1]:8080");
        assert_eq!(forward("http://[::1]/").2, "[::1]");
    }

    #[test]
    fn unusable_targets() {
        let https = parse_request("GET", "https://ok.test/").unwrap_err();
        assert!(https.reason.contains("CONNECT"), "{}", https.reason);
        assert_eq!(
            https.target,
            Some((name("ok.test", 443), Method::Forward("GET".into())))
        );
        for bad in [
            "/path",
            "ftp://ok.test/",
            "http://user:pw@ok.test/",
            "http:///x",
            "http://bad host/",
        ] {
            let err = parse_request("GET", bad).unwrap_err();
            assert_eq!(err.target, None, "{bad}");
        }
    }

    #[test]
    fn forwarded_head_is_rewritten() {
        let head = Head {
            method: "POST".into(),
            target: "http://ok.test:8080/up?x=1".into(),
            minor_version: 1,
            headers: vec![
                ("Host".into(), b"elsewhere.test".to_vec()),
                ("Proxy-Connection".into(), b"keep-alive".to_vec()),
                ("Proxy-Authorization".into(), b"Basic eA==".to_vec()),
                ("Connection".into(), b"keep-alive".to_vec()),
                ("Content-Length".into(), b"3".to_vec()),
                ("X-Other".into(), b"kept".to_vec()),
            ],
            rest: Vec::new(),
        };
        let request = parse_request(&head.method, &head.target).unwrap();
        let out = String::from_utf8(forward_head(&head, &request)).unwrap();
        assert_eq!(
            out,
            "POST /up?x=1 HTTP/1.1\r\nHost: ok.test:8080\r\nContent-Length: 3\r\nX-Other: kept\r\nConnection: close\r\n\r\n"
        );
    }
}
