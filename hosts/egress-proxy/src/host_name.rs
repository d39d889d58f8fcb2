//! One spelling per host, so that an allow-list entry and a request name the same host the
//! same way: `PyPI.org.`, `pypi.org` and a Unicode name and its punycode all compare equal.

use std::net::{IpAddr, Ipv6Addr};

/// A request's or entry's host: a DNS name in canonical form, or an IP literal.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum HostName {
    Name(String),
    Ip(IpAddr),
}

impl HostName {
    /// Parses a host as it appears in an authority: `[v6]` brackets mark an IPv6 literal, a
    /// dotted quad an IPv4 one, anything else must be a DNS name.
    pub(crate) fn parse(raw: &str) -> Result<Self, String> {
        if let Some(inner) = raw.strip_prefix('[') {
            let inner = inner
                .strip_suffix(']')
                .ok_or_else(|| "an IPv6 address in brackets needs the closing ']'".to_owned())?;
            return inner
                .parse::<Ipv6Addr>()
                .map(|ip| Self::Ip(IpAddr::V6(ip).to_canonical()))
                .map_err(|_| "not a valid IPv6 address".to_owned());
        }
        if let Ok(ip) = raw.parse::<IpAddr>() {
            return Ok(Self::Ip(ip.to_canonical()));
        }
        normalise_name(raw).map(Self::Name)
    }

    /// The host as the record and the messages show it (IPv6 without brackets).
    pub(crate) fn as_string(&self) -> String {
        match self {
            Self::Name(name) => name.clone(),
            Self::Ip(ip) => ip.to_string(),
        }
    }
}

/// `host:port` with IPv6 literals in brackets, as a user would write it in `network_allow`.
pub(crate) fn host_port(host: &str, port: u16) -> String {
    if host.contains(':') {
        format!("[{host}]:{port}")
    } else {
        format!("{host}:{port}")
    }
}

/// Lower-case, one trailing dot dropped, IDNA to ASCII; then only what DNS can carry.
///
/// A name whose last label is numeric is refused: the system resolver would read `2130706433`
/// or `0x7f.1` as an IPv4 address, and such a name must not pass for a host name.
pub(crate) fn normalise_name(raw: &str) -> Result<String, String> {
    let trimmed = raw.strip_suffix('.').unwrap_or(raw);
    if trimmed.is_empty() {
        return Err("the host name is empty".to_owned());
    }
    let ascii = idna::domain_to_ascii(trimmed).map_err(|_| "not a valid host name".to_owned())?;
    if ascii.is_empty() || ascii.len() > 253 {
        return Err("not a valid host name".to_owned());
    }
    for label in ascii.split('.') {
        if label.is_empty() || label.len() > 63 {
            return Err("not a valid host name (empty or over-long label)".to_owned());
        }
        if !label
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-' || b == b'_')
        {
            return Err("not a valid host name (only letters, digits, '-', '_' and '.')".to_owned());
        }
    }
    let last = ascii.rsplit('.').next().unwrap_or_default();
    let hex = last
        .strip_prefix("0x")
        .is_some_and(|h| h.bytes().all(|b| b.is_ascii_hexdigit()));
    if last.bytes().all(|b| b.is_ascii_digit()) || hex {
        return Err("not a valid host name (numeric, but not an IP address)".to_owned());
    }
    Ok(ascii)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    #[test]
    fn names_are_normalised() {
        assert_eq!(normalise_name("PyPI.org.").unwrap(), "pypi.org");
        assert_eq!(normalise_name("bücher.example").unwrap(), "xn--bcher-kva.example");
        assert_eq!(
            normalise_name("xn--bcher-kva.example").unwrap(),
            "xn--bcher-kva.example"
        );
        assert_eq!(normalise_name("_srv.Example.COM").unwrap(), "_srv.example.com");
    }

    #[test]
    fn bad_names_are_refused() {
        for bad in [
            "",
            ".",
            "a..b",
            "a.b..",
            "a b",
            "a/b",
            "a:b",
            "*.a",
            "a%b",
            "1.2.3",
            "2130706433",
            "0x7f.1",
            "a.0X7F",
            "a\r\nb",
        ] {
            assert!(normalise_name(bad).is_err(), "{bad:?} should be refused");
        }
        assert!(normalise_name(&"a".repeat(64)).is_err());
        assert!(normalise_name(&format!("{}.com", "a.".repeat(130))).is_err());
    }

    #[test]
    fn ip_literals() {
        assert_eq!(
            HostName::parse("[::1]").unwrap(),
            HostName::Ip("::1".parse().unwrap())
        );
        assert_eq!(
            HostName::parse("10.0.0.1").unwrap(),
            HostName::Ip("10.0.0.1".parse().unwrap())
        );
        assert_eq!(
            HostName::parse("[::ffff:127.0.0.1]").unwrap(),
            HostName::Ip("127.0.0.1".parse().unwrap())
        );
        assert!(HostName::parse("[::1").is_err());
        assert!(HostName::parse("[nope]").is_err());
        assert!(HostName::parse("[fe80::1%eth0]").is_err());
        assert_eq!(host_port("::1", 443), "[::1]:443");
        assert_eq!(host_port("a.example", 80), "a.example:80");
    }
}
