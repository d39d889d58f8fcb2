//! The user's `network_allow`: what a sandboxed command may reach through the proxy.

use std::net::{IpAddr, SocketAddr};

use crate::address::special_kind;
use crate::entry::{AllowListError, Entry, Host, Ports, is_under};
use crate::presets::{preset, preset_names};

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct AllowList {
    entries: Vec<Entry>,
}

impl From<Vec<Entry>> for AllowList {
    fn from(entries: Vec<Entry>) -> Self {
        let mut list = Self::default();
        for entry in entries {
            list.push(entry);
        }
        list
    }
}

impl AllowList {
    /// Parses entries; an entry starting with '@' names a preset (see `PRESETS`) and expands
    /// to its entries. Repeated entries are kept once.
    pub fn parse<S: AsRef<str>>(entries: &[S]) -> Result<Self, AllowListError> {
        let mut list = Self::default();
        for raw in entries {
            let raw = raw.as_ref().trim();
            if let Some(name) = raw.strip_prefix('@') {
                let expanded = preset(name).ok_or_else(|| AllowListError::UnknownPreset {
                    name: raw.to_owned(),
                    known: preset_names(),
                })?;
                for entry in expanded {
                    list.push(entry.parse()?);
                }
            } else {
                list.push(raw.parse()?);
            }
        }
        Ok(list)
    }

    fn push(&mut self, entry: Entry) {
        if !self.entries.contains(&entry) {
            self.entries.push(entry);
        }
    }

    pub fn entries(&self) -> &[Entry] {
        &self.entries
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Whether the name (already normalised by the proxy) and port are allowed. IP-literal
    /// hosts (with or without brackets) are matched only against Net entries: an address is
    /// not the name that happens to resolve to it.
    pub fn allows_host(&self, host: &str, port: u16) -> bool {
        let bare = host
            .strip_prefix('[')
            .and_then(|h| h.strip_suffix(']'))
            .unwrap_or(host);
        if let Ok(ip) = bare.parse::<IpAddr>() {
            return self.net_allows(ip, port);
        }
        self.entries.iter().any(|entry| {
            entry.ports.contains(port)
                && match &entry.host {
                    Host::Name(name) => name == host,
                    Host::Suffix(domain) => is_under(host, domain),
                    Host::Net(_) => false,
                }
        })
    }

    /// Whether an address may be connected to for an allowed name: a public address always,
    /// a private/loopback/link-local/... one only when a Net entry with a matching port
    /// contains it, so that an allowed name cannot be pointed at the host or the LAN.
    pub fn allows_address(&self, addr: SocketAddr) -> bool {
        let ip = addr.ip().to_canonical();
        special_kind(ip).is_none() || self.net_allows(ip, addr.port())
    }

    fn net_allows(&self, ip: IpAddr, port: u16) -> bool {
        let ip = ip.to_canonical();
        self.entries.iter().any(|entry| {
            matches!(&entry.host, Host::Net(net) if net.contains(&ip)) && entry.ports.contains(port)
        })
    }

    /// Whether every host:port `entry` allows, this list allows too; a project's config can
    /// thereby only narrow the user's list. A Web entry is also covered by one entry for 80
    /// and another for 443.
    pub fn covers(&self, entry: &Entry) -> bool {
        let hosts = || self.entries.iter().filter(|mine| mine.host.covers(&entry.host));
        match entry.ports {
            Ports::Any => hosts().any(|mine| mine.ports == Ports::Any),
            Ports::Web => [80, 443]
                .into_iter()
                .all(|port| hosts().any(|mine| mine.ports.contains(port))),
            Ports::One(port) => hosts().any(|mine| mine.ports.contains(port)),
        }
    }

    /// The entries of `self` that `base` covers, and the ones dropped (for a warning).
    pub fn narrowed_to(&self, base: &AllowList) -> (AllowList, Vec<Entry>) {
        let (kept, dropped): (Vec<Entry>, Vec<Entry>) =
            self.entries.iter().cloned().partition(|entry| base.covers(entry));
        (AllowList { entries: kept }, dropped)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;
    use crate::presets::PRESETS;

    fn list(entries: &[&str]) -> AllowList {
        AllowList::parse(entries).unwrap()
    }

    fn addr(s: &str) -> SocketAddr {
        s.parse().unwrap()
    }

    #[test]
    fn names_and_ports() {
        let allow = list(&[
            "pypi.org",
            "example.com:8080",
            "any.example:*",
            "*.corp.example:443",
        ]);
        assert!(allow.allows_host("pypi.org", 443));
        assert!(allow.allows_host("pypi.org", 80));
        assert!(!allow.allows_host("pypi.org", 8080));
        assert!(!allow.allows_host("www.pypi.org", 443));
        assert!(allow.allows_host("example.com", 8080));
        assert!(!allow.allows_host("example.com", 443));
        assert!(allow.allows_host("any.example", 1));
        assert!(allow.allows_host("any.example", 65535));
        assert!(allow.allows_host("a.corp.example", 443));
        assert!(allow.allows_host("a.b.corp.example", 443));
        assert!(!allow.allows_host("corp.example", 443));
        assert!(!allow.allows_host("a.corp.example", 80));
        assert!(!allow.allows_host("evilcorp.example", 443));
    }

    #[test]
    fn ip_literals_match_only_net_entries() {
        let allow = list(&["10.0.0.0/8:22", "[::1]:8080", "example.com", "93.184.216.34"]);
        assert!(allow.allows_host("10.1.2.3", 22));
        assert!(!allow.allows_host("10.1.2.3", 443));
        assert!(allow.allows_host("[::1]", 8080));
        assert!(allow.allows_host("::1", 8080));
        assert!(allow.allows_host("::ffff:10.0.0.1", 22));
        assert!(allow.allows_host("93.184.216.34", 443));
        assert!(!allow.allows_host("93.184.216.35", 443));
        assert!(!list(&["example.com"]).allows_host("93.184.216.34", 443));
        // A Net entry does not allow a name, even one that resolves into it.
        assert!(!list(&["10.0.0.0/8:*"]).allows_host("intranet.example", 80));
    }

    #[test]
    fn addresses() {
        let allow = list(&["example.com", "127.0.0.1:8080", "fd00::/8"]);
        assert!(allow.allows_address(addr("93.184.216.34:443")));
        assert!(allow.allows_address(addr("[2606:2800::1]:443")));
        assert!(!allow.allows_address(addr("127.0.0.1:443")));
        assert!(allow.allows_address(addr("127.0.0.1:8080")));
        assert!(allow.allows_address(addr("[::ffff:127.0.0.1]:8080")));
        assert!(!allow.allows_address(addr("[::ffff:127.0.0.1]:443")));
        assert!(!allow.allows_address(addr("127.0.0.2:8080")));
        assert!(!allow.allows_address(addr("169.254.169.254:80")));
        assert!(!allow.allows_address(addr("[::1]:8080")));
        assert!(allow.allows_address(addr("[fd00::1]:443")));
        assert!(!allow.allows_address(addr("[fd00::1]:22")));
        assert!(!allow.allows_address(addr("[64:ff9b::a00:1]:443")));
    }

    #[test]
    fn presets_expand() {
        let allow = list(&["@python", "@github", "pypi.org"]);
        assert!(allow.allows_host("files.pythonhosted.org", 443));
        assert!(allow.allows_host("release-assets.githubusercontent.com", 443));
        assert_eq!(
            allow
                .entries()
                .iter()
                .filter(|e| e.to_string() == "pypi.org")
                .count(),
            1
        );
        for (name, description, entries) in PRESETS {
            assert!(!description.is_empty());
            let expanded = list(&[format!("@{name}").as_str()]);
            assert_eq!(expanded.entries().len(), entries.len(), "{name}");
            assert!(expanded.entries().iter().all(|e| e.ports == Ports::Web), "{name}");
        }
        let names: Vec<_> = PRESETS.iter().map(|(n, _, _)| *n).collect();
        for wanted in ["python", "npm", "rust", "go", "debian", "github"] {
            assert!(names.contains(&wanted), "{wanted}");
        }
    }

    #[test]
    fn unknown_preset_lists_the_known_ones() {
        let err = AllowList::parse(&["@pyhton"]).unwrap_err().to_string();
        assert!(err.contains("\"@pyhton\""), "{err}");
        assert!(err.contains("@python, @npm"), "{err}");
        assert!(AllowList::parse(&["pypi.org", "bad host"]).is_err());
        assert!(AllowList::parse::<&str>(&[]).unwrap().is_empty());
    }

    #[test]
    fn covers_ports() {
        let web = list(&["a.com"]);
        let any = list(&["a.com:*"]);
        let one = list(&["a.com:8080"]);
        let e = |s: &str| s.parse::<Entry>().unwrap();
        assert!(web.covers(&e("a.com")));
        assert!(web.covers(&e("a.com:443")));
        assert!(web.covers(&e("a.com:80")));
        assert!(!web.covers(&e("a.com:8080")));
        assert!(!web.covers(&e("a.com:*")));
        assert!(any.covers(&e("a.com")));
        assert!(any.covers(&e("a.com:8080")));
        assert!(any.covers(&e("a.com:*")));
        assert!(one.covers(&e("a.com:8080")));
        assert!(!one.covers(&e("a.com")));
        assert!(!one.covers(&e("a.com:*")));
        assert!(list(&["a.com:80", "a.com:443"]).covers(&e("a.com")));
        assert!(!list(&["a.com:80", "b.com:443"]).covers(&e("a.com")));
    }

    #[test]
    fn covers_hosts() {
        let base = list(&["*.example.com", "pypi.org", "10.0.0.0/8:*"]);
        let e = |s: &str| s.parse::<Entry>().unwrap();
        assert!(base.covers(&e("a.example.com")));
        assert!(base.covers(&e("*.b.example.com")));
        assert!(base.covers(&e("*.example.com:443")));
        assert!(!base.covers(&e("example.com")));
        assert!(base.covers(&e("pypi.org:443")));
        assert!(!base.covers(&e("*.pypi.org")));
        assert!(base.covers(&e("10.1.0.0/16:22")));
        assert!(base.covers(&e("10.1.2.3")));
        assert!(!base.covers(&e("11.0.0.1")));
        assert!(!list(&["10.0.0.0/8:*"]).covers(&e("intranet.example")));
    }

    #[test]
    fn narrowing_keeps_only_covered_entries() {
        let user = list(&["@python", "*.corp.example", "10.0.0.0/8"]);
        let project = list(&[
            "pypi.org",
            "evil.example",
            "git.corp.example:443",
            "10.1.2.3:22",
            "files.pythonhosted.org",
        ]);
        let (kept, dropped) = project.narrowed_to(&user);
        let kept: Vec<String> = kept.entries().iter().map(ToString::to_string).collect();
        let dropped: Vec<String> = dropped.iter().map(ToString::to_string).collect();
        assert_eq!(
            kept,
            ["pypi.org", "git.corp.example:443", "files.pythonhosted.org"]
        );
        assert_eq!(dropped, ["evil.example", "10.1.2.3:22"]);
        assert_eq!(AllowList::default().narrowed_to(&user).0, AllowList::default());
    }
}
