//! Which resolved addresses are not the public internet.
//!
//! An allowed name may resolve to anything its owner (or an attacker controlling its DNS)
//! chooses, including the host's loopback, the LAN or the cloud metadata service. Such an
//! address is used only when `network_allow` lists it explicitly.

use std::fmt;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// Why an address is not public; its name appears in refusal messages.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AddressKind {
    Unspecified,
    Loopback,
    Private,
    LinkLocal,
    SharedCgnat,
    ProtocolAssignment,
    Benchmarking,
    Multicast,
    Reserved,
    Broadcast,
    UniqueLocal,
    SiteLocal,
    /// Set aside for examples (never a public host's).
    Documentation,
    /// Addresses of tunnels and translators whose far end is not named by the address
    /// (Teredo, local-use NAT64) or that discard everything.
    Tunnel,
}

impl AddressKind {
    /// The kind with its article, for "it resolves to ADDR, a loopback address".
    pub fn with_article(self) -> String {
        let name = self.to_string();
        let vowel = name.to_ascii_lowercase().starts_with(['a', 'e', 'i', 'o', 'u']);
        let article = if vowel { "an" } else { "a" };
        format!("{article} {name}")
    }
}

impl fmt::Display for AddressKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Unspecified => "unspecified",
            Self::Loopback => "loopback",
            Self::Private => "private",
            Self::LinkLocal => "link-local",
            Self::SharedCgnat => "shared (carrier-grade NAT)",
            Self::ProtocolAssignment => "IETF protocol-assignment",
            Self::Benchmarking => "benchmarking",
            Self::Multicast => "multicast",
            Self::Reserved => "reserved",
            Self::Broadcast => "broadcast",
            Self::UniqueLocal => "unique-local",
            Self::SiteLocal => "site-local",
            Self::Documentation => "documentation",
            Self::Tunnel => "tunnel or translation",
        })
    }
}

/// The kind of a non-public address, `None` for a public one.
///
/// IPv6 forms that carry an IPv4 address (mapped, compatible, NAT64, 6to4) are judged by that
/// address: `::ffff:127.0.0.1` reaches loopback just as `127.0.0.1` does.
pub fn special_kind(ip: IpAddr) -> Option<AddressKind> {
    match ip {
        IpAddr::V4(v4) => v4_kind(v4),
        IpAddr::V6(v6) => v6_kind(v6),
    }
}

fn v4_kind(ip: Ipv4Addr) -> Option<AddressKind> {
    let [a, b, c, _] = ip.octets();
    Some(match (a, b, c) {
        _ if ip.is_broadcast() => AddressKind::Broadcast,
        (0, ..) => AddressKind::Unspecified,
        (127, ..) => AddressKind::Loopback,
        (10, ..) => AddressKind::Private,
        (172, 16..=31, _) => AddressKind::Private,
        (192, 168, _) => AddressKind::Private,
        (169, 254, _) => AddressKind::LinkLocal,
        (100, 64..=127, _) => AddressKind::SharedCgnat,
        (192, 0, 0) => AddressKind::ProtocolAssignment,
        (192, 0, 2) | (198, 51, 100) | (203, 0, 113) => AddressKind::Documentation,
        // The retired 6to4 relay anycast.
        (192, 88, 99) => AddressKind::Reserved,
        (198, 18..=19, _) => AddressKind::Benchmarking,
        (224..=239, ..) => AddressKind::Multicast,
        (240..=255, ..) => AddressKind::Reserved,
        _ => return None,
    })
}

fn v6_kind(ip: Ipv6Addr) -> Option<AddressKind> {
    let segments = ip.segments();
    let octets = ip.octets();
    let last_v4 = Ipv4Addr::new(octets[12], octets[13], octets[14], octets[15]);
    if ip.is_unspecified() {
        return Some(AddressKind::Unspecified);
    }
    if ip.is_loopback() {
        return Some(AddressKind::Loopback);
    }
    match segments {
        // IPv4-mapped ::ffff:a.b.c.d, SIIT's ::ffff:0:a.b.c.d and the deprecated
        // IPv4-compatible ::a.b.c.d.
        [0, 0, 0, 0, 0, 0xffff, _, _] | [0, 0, 0, 0, 0xffff, 0, _, _] | [0, 0, 0, 0, 0, 0, _, _] => {
            return v4_kind(last_v4);
        }
        // Local-use NAT64 64:ff9b:1::/48 (the translator is someone's own), Teredo
        // 2001::/32 and the discard prefix 100::/64.
        [0x64, 0xff9b, 1, ..] | [0x2001, 0, ..] | [0x100, 0, 0, 0, ..] => return Some(AddressKind::Tunnel),
        [0x2001, 0xdb8, ..] => return Some(AddressKind::Documentation),
        // NAT64 well-known prefix 64:ff9b::/96.
        [0x64, 0xff9b, 0, 0, 0, 0, _, _] => return v4_kind(last_v4),
        // 6to4 2002:AABB:CCDD::/48 carries AA.BB.CC.DD.
        [0x2002, hi, lo, ..] => {
            let [a, b] = hi.to_be_bytes();
            let [c, d] = lo.to_be_bytes();
            return v4_kind(Ipv4Addr::new(a, b, c, d));
        }
        _ => {}
    }
    let first = segments[0];
    if first & 0xfe00 == 0xfc00 {
        Some(AddressKind::UniqueLocal)
    } else if first & 0xffc0 == 0xfe80 {
        Some(AddressKind::LinkLocal)
    } else if first & 0xffc0 == 0xfec0 {
        Some(AddressKind::SiteLocal)
    } else if first & 0xff00 == 0xff00 {
        Some(AddressKind::Multicast)
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    fn kind(s: &str) -> Option<AddressKind> {
        special_kind(s.parse().unwrap())
    }

    #[test]
    fn documentation_tunnel_and_translated_forms_are_not_public() {
        for address in [
            "192.0.2.7",
            "198.51.100.1",
            "203.0.113.9",
            "2001:db8::1",
            "192.88.99.1",
            "64:ff9b:1::a00:1",
            "2001:0:4136:e378::1",
            "100::1",
            "::ffff:0:127.0.0.1",
        ] {
            assert!(kind(address).is_some(), "{address}");
        }
        assert_eq!(kind("::ffff:0:127.0.0.1"), Some(AddressKind::Loopback));
        assert_eq!(kind("2606:4700::1111"), None);
    }

    #[test]
    fn ipv4_ranges() {
        use AddressKind::*;
        let cases = [
            ("0.0.0.0", Some(Unspecified)),
            ("0.1.2.3", Some(Unspecified)),
            ("127.0.0.1", Some(Loopback)),
            ("127.255.255.254", Some(Loopback)),
            ("10.0.0.1", Some(Private)),
            ("172.16.0.1", Some(Private)),
            ("172.31.255.255", Some(Private)),
            ("172.15.0.1", None),
            ("172.32.0.1", None),
            ("192.168.1.1", Some(Private)),
            ("169.254.169.254", Some(LinkLocal)),
            ("100.64.0.1", Some(SharedCgnat)),
            ("100.127.255.255", Some(SharedCgnat)),
            ("100.128.0.1", None),
            ("192.0.0.8", Some(ProtocolAssignment)),
            ("198.18.0.1", Some(Benchmarking)),
            ("198.19.255.255", Some(Benchmarking)),
            ("198.20.0.1", None),
            ("224.0.0.1", Some(Multicast)),
            ("239.255.255.250", Some(Multicast)),
            ("240.0.0.1", Some(Reserved)),
            ("255.255.255.255", Some(Broadcast)),
            ("8.8.8.8", None),
            ("151.101.0.223", None),
            ("192.0.2.1", Some(Documentation)),
        ];
        for (addr, want) in cases {
            assert_eq!(kind(addr), want, "{addr}");
        }
    }

    #[test]
    fn ipv6_ranges() {
        use AddressKind::*;
        let cases = [
            ("::", Some(Unspecified)),
            ("::1", Some(Loopback)),
            ("fc00::1", Some(UniqueLocal)),
            ("fd12:3456::1", Some(UniqueLocal)),
            ("fe80::1", Some(LinkLocal)),
            ("febf::1", Some(LinkLocal)),
            ("fec0::1", Some(SiteLocal)),
            ("ff02::1", Some(Multicast)),
            ("2606:4700::6810:85e5", None),
            ("2a04:4e42::223", None),
        ];
        for (addr, want) in cases {
            assert_eq!(kind(addr), want, "{addr}");
        }
    }

    #[test]
    fn embedded_ipv4_is_judged_by_the_ipv4_address() {
        use AddressKind::*;
        let cases = [
            ("::ffff:127.0.0.1", Some(Loopback)),
            ("::ffff:169.254.169.254", Some(LinkLocal)),
            ("::ffff:10.1.2.3", Some(Private)),
            ("::ffff:8.8.8.8", None),
            ("::127.0.0.1", Some(Loopback)),
            ("::10.0.0.1", Some(Private)),
            ("::8.8.8.8", None),
            ("64:ff9b::127.0.0.1", Some(Loopback)),
            ("64:ff9b::192.168.0.1", Some(Private)),
            ("64:ff9b::8.8.8.8", None),
            ("2002:7f00:1::", Some(Loopback)),
            ("2002:a9fe:a9fe::1", Some(LinkLocal)),
            ("2002:0808:0808::1", None),
        ];
        for (addr, want) in cases {
            assert_eq!(kind(addr), want, "{addr}");
        }
    }

    #[test]
    fn messages_use_the_right_article() {
        assert_eq!(AddressKind::Loopback.with_article(), "a loopback");
        assert_eq!(AddressKind::Unspecified.with_article(), "an unspecified");
        assert_eq!(
            AddressKind::ProtocolAssignment.with_article(),
            "an IETF protocol-assignment"
        );
    }
}
