//! One `network_allow` entry: which hosts (a name, a domain's subdomains or an address range)
//! on which ports.

use std::fmt;
use std::net::IpAddr;
use std::str::FromStr;

use ipnet::IpNet;

use crate::host_name::normalise_name;

/// What an entry accepts, quoted in every parse error so a user can fix the entry unaided.
const ACCEPTED: &str = "accepted are HOST, HOST:PORT, HOST:* (any port), *.DOMAIN (every subdomain), \
an IP address or CIDR range such as 10.0.0.0/8 (IPv6 in brackets before a port, as in [::1]:8080), \
and @PRESET; without a port only 80 and 443 are allowed";

#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum AllowListError {
    #[error("invalid network_allow entry {entry:?}: {reason}; {accepted}", accepted = ACCEPTED)]
    InvalidEntry { entry: String, reason: String },
    #[error("unknown network_allow preset {name:?}; the presets are {known}")]
    UnknownPreset { name: String, known: String },
}

/// The hosts an entry names.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Host {
    /// Lower-case, IDNA ASCII, no trailing dot.
    Name(String),
    /// `*.example.com`, stored as `example.com`: matches `a.example.com` and
    /// `a.b.example.com` but not `example.com` itself, which is a different site.
    Suffix(String),
    /// An address or range; also the only way to allow a private address (see `address`).
    Net(IpNet),
}

/// The ports an entry allows.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Ports {
    /// No port given: the web's 80 and 443, which is what a package manager needs.
    Web,
    One(u16),
    Any,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Entry {
    pub host: Host,
    pub ports: Ports,
}

impl Ports {
    pub fn contains(self, port: u16) -> bool {
        match self {
            Self::Web => port == 80 || port == 443,
            Self::One(p) => p == port,
            Self::Any => true,
        }
    }
}

impl Host {
    /// Whether every host `other` names, this one names too.
    pub fn covers(&self, other: &Host) -> bool {
        match (self, other) {
            (Self::Name(a), Self::Name(b)) => a == b,
            (Self::Suffix(s), Self::Name(n)) => is_under(n, s),
            (Self::Suffix(s), Self::Suffix(t)) => t == s || is_under(t, s),
            (Self::Net(a), Self::Net(b)) => a.contains(b),
            _ => false,
        }
    }
}

/// `name` is a strict subdomain of `domain`.
pub(crate) fn is_under(name: &str, domain: &str) -> bool {
    name.strip_suffix(domain)
        .is_some_and(|head| head.len() > 1 && head.ends_with('.'))
}

impl FromStr for Entry {
    type Err = AllowListError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let bad = |reason: &str| AllowListError::InvalidEntry {
            entry: s.to_owned(),
            reason: reason.to_owned(),
        };
        let raw = s.trim();
        if raw.is_empty() {
            return Err(bad("the entry is empty"));
        }
        if raw.contains("://") {
            return Err(bad("write a host, not a URL"));
        }
        if raw.starts_with('@') {
            return Err(bad(
                "a preset stands for several entries and is accepted only in a list",
            ));
        }
        let (host, port, bracketed) = split_port(raw).map_err(bad)?;
        let ports = match port {
            None => Ports::Web,
            Some("*") => Ports::Any,
            Some(p) => match p.parse::<u16>() {
                Ok(n) if n > 0 && p.bytes().all(|b| b.is_ascii_digit()) => Ports::One(n),
                _ => return Err(bad("the port must be a number from 1 to 65535, or *")),
            },
        };
        let host = parse_host(host, bracketed).map_err(|r| bad(&r))?;
        Ok(Self { host, ports })
    }
}

/// Splits `host[:port]`, with IPv6 in brackets when a port follows; a bare IPv6 address (two
/// or more colons) has no port.
fn split_port(raw: &str) -> Result<(&str, Option<&str>, bool), &'static str> {
    if let Some(rest) = raw.strip_prefix('[') {
        let (inner, after) = rest.split_once(']').ok_or("a '[' needs its closing ']'")?;
        return match after {
            "" => Ok((inner, None, true)),
            _ => after
                .strip_prefix(':')
                .map(|p| (inner, Some(p), true))
                .ok_or("expected ':PORT' after ']'"),
        };
    }
    if raw.matches(':').count() > 1 {
        return Ok((raw, None, false));
    }
    Ok(match raw.rsplit_once(':') {
        Some((host, port)) => (host, Some(port), false),
        None => (raw, None, false),
    })
}

fn parse_host(raw: &str, bracketed: bool) -> Result<Host, String> {
    if raw.contains('/') {
        let net = raw
            .parse::<IpNet>()
            .map_err(|_| "not a valid CIDR range".to_owned())?;
        if bracketed && !matches!(net, IpNet::V6(_)) {
            return Err("brackets hold an IPv6 address or range".to_owned());
        }
        return Ok(Host::Net(net.trunc()));
    }
    if let Ok(ip) = raw.parse::<IpAddr>() {
        if bracketed && !ip.is_ipv6() {
            return Err("brackets hold an IPv6 address or range".to_owned());
        }
        return Ok(Host::Net(IpNet::from(ip.to_canonical())));
    }
    if bracketed {
        return Err("brackets hold an IPv6 address or range".to_owned());
    }
    if raw == "*" {
        return Err("'*' alone would allow every host; name the hosts instead".to_owned());
    }
    if let Some(domain) = raw.strip_prefix("*.") {
        return normalise_name(domain).map(Host::Suffix);
    }
    if raw.contains('*') {
        return Err("'*' is accepted only as a leading '*.'".to_owned());
    }
    normalise_name(raw).map(Host::Name)
}

impl fmt::Display for Entry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let host = match &self.host {
            Host::Name(name) => name.clone(),
            Host::Suffix(domain) => format!("*.{domain}"),
            Host::Net(net) if net.prefix_len() == net.max_prefix_len() => net.addr().to_string(),
            Host::Net(net) => net.to_string(),
        };
        let bracket = matches!(self.host, Host::Net(IpNet::V6(_))) && self.ports != Ports::Web;
        let host = if bracket { format!("[{host}]") } else { host };
        match self.ports {
            Ports::Web => write!(f, "{host}"),
            Ports::One(port) => write!(f, "{host}:{port}"),
            Ports::Any => write!(f, "{host}:*"),
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    fn entry(s: &str) -> Entry {
        s.parse().unwrap_or_else(|e| panic!("{s}: {e}"))
    }

    fn net(s: &str) -> Host {
        Host::Net(s.parse().unwrap())
    }

    #[test]
    fn parses_each_form() {
        let cases = [
            ("example.com", Host::Name("example.com".into()), Ports::Web),
            (
                "Example.COM.:8080",
                Host::Name("example.com".into()),
                Ports::One(8080),
            ),
            ("example.com:*", Host::Name("example.com".into()), Ports::Any),
            ("*.Example.com", Host::Suffix("example.com".into()), Ports::Web),
            (
                "*.example.com:443",
                Host::Suffix("example.com".into()),
                Ports::One(443),
            ),
            ("10.1.2.3", net("10.1.2.3/32"), Ports::Web),
            ("10.1.2.3:22", net("10.1.2.3/32"), Ports::One(22)),
            ("10.0.0.0/8", net("10.0.0.0/8"), Ports::Web),
            ("10.9.9.9/8:*", net("10.0.0.0/8"), Ports::Any),
            ("::1", net("::1/128"), Ports::Web),
            ("[::1]", net("::1/128"), Ports::Web),
            ("[::1]:8080", net("::1/128"), Ports::One(8080)),
            ("fd00::/8", net("fd00::/8"), Ports::Web),
            ("[fd00::/8]:*", net("fd00::/8"), Ports::Any),
            ("::ffff:127.0.0.1", net("127.0.0.1/32"), Ports::Web),
            (
                "  bücher.example  ",
                Host::Name("xn--bcher-kva.example".into()),
                Ports::Web,
            ),
        ];
        for (text, host, ports) in cases {
            assert_eq!(entry(text), Entry { host, ports }, "{text}");
        }
    }

    #[test]
    fn errors_name_the_entry_and_what_is_accepted() {
        for bad in [
            "",
            "https://example.com",
            "example.com:0",
            "example.com:65536",
            "example.com:+80",
            "example.com:http",
            "*",
            "*:443",
            "a.*.example.com",
            "ex ample.com",
            "[example.com]:443",
            "[10.0.0.1]",
            "[::1",
            "[::1]443",
            "10.0.0.0/33",
            "1.2.3",
            "@python",
        ] {
            let err = bad.parse::<Entry>().expect_err(bad).to_string();
            assert!(err.contains(&format!("{bad:?}")), "{err}");
            assert!(err.contains("accepted are HOST, HOST:PORT"), "{err}");
        }
    }

    #[test]
    fn display_round_trips() {
        for text in [
            "example.com",
            "example.com:8080",
            "example.com:*",
            "*.example.com",
            "*.example.com:443",
            "10.1.2.3",
            "10.1.2.3:22",
            "10.0.0.0/8",
            "10.0.0.0/8:*",
            "::1",
            "[::1]:8080",
            "fd00::/8",
            "[fd00::/8]:*",
        ] {
            let parsed = entry(text);
            assert_eq!(parsed.to_string(), text);
            assert_eq!(entry(&parsed.to_string()), parsed);
        }
        assert_eq!(entry("[::1]").to_string(), "::1");
        assert_eq!(entry("10.9.9.9/8").to_string(), "10.0.0.0/8");
    }

    #[test]
    fn suffixes_match_strict_subdomains_only() {
        assert!(is_under("a.example.com", "example.com"));
        assert!(is_under("a.b.example.com", "example.com"));
        assert!(!is_under("example.com", "example.com"));
        assert!(!is_under("badexample.com", "example.com"));
        assert!(!is_under(".example.com", "example.com"));
    }

    #[test]
    fn host_coverage() {
        let name = |s: &str| Host::Name(s.into());
        let suffix = |s: &str| Host::Suffix(s.into());
        assert!(name("a.com").covers(&name("a.com")));
        assert!(!name("a.com").covers(&name("b.a.com")));
        assert!(suffix("a.com").covers(&name("b.a.com")));
        assert!(!suffix("a.com").covers(&name("a.com")));
        assert!(suffix("a.com").covers(&suffix("a.com")));
        assert!(suffix("a.com").covers(&suffix("b.a.com")));
        assert!(!suffix("b.a.com").covers(&suffix("a.com")));
        assert!(!name("a.com").covers(&suffix("a.com")));
        assert!(net("10.0.0.0/8").covers(&net("10.1.0.0/16")));
        assert!(!net("10.1.0.0/16").covers(&net("10.0.0.0/8")));
        assert!(!net("0.0.0.0/0").covers(&name("a.com")));
    }
}
