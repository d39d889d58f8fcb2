//! From an allowed-looking target to a connected socket: the policy check, resolution, and
//! connecting only to addresses that passed the check, so that a name re-resolving to
//! something else between check and connect (DNS rebinding) changes nothing.

use std::net::SocketAddr;
use std::time::Duration;

use tokio::net::TcpStream;
use tokio::time::timeout;

use crate::address::special_kind;
use crate::allow_list::AllowList;
use crate::host_name::HostName;
use crate::progress::Progress;
use crate::reply::Reply;
use crate::resolve::Resolve;
use crate::target::Target;

pub(crate) struct Upstream<'a> {
    pub allow: &'a AllowList,
    pub resolver: &'a dyn Resolve,
    pub resolve_timeout: Duration,
    pub connect_timeout: Duration,
    /// What the list is called in refusals (`network_allow`).
    pub list_name: &'a str,
}

impl Upstream<'_> {
    /// Connects to the target or says why not. The verdict is noted in `progress` as soon as
    /// it is known: `Allowed` before connecting, so an unreachable server is not a refusal.
    pub(crate) async fn open(&self, target: &Target, progress: &Progress) -> Result<TcpStream, Reply> {
        let host = target.host.as_string();
        let port = target.port;
        if !self.allow.allows_host(&host, port) {
            return Err(Reply::not_listed(&host, port));
        }
        let resolved = match &target.host {
            HostName::Ip(ip) => vec![SocketAddr::new(*ip, port)],
            HostName::Name(name) => self.resolve(name, port).await?,
        };
        let vetted: Vec<SocketAddr> = resolved
            .iter()
            .copied()
            .filter(|a| self.allow.allows_address(*a))
            .collect();
        let Some(&first) = vetted.first() else {
            return Err(match resolved.first() {
                Some(addr) => refused_address(&host, port, *addr, self.list_name),
                None => Reply::unresolved(&host, "it has no addresses"),
            });
        };
        progress.allowed();
        let mut failure = (first, "no address to try".to_owned());
        for addr in vetted {
            progress.address(addr);
            match timeout(self.connect_timeout, TcpStream::connect(addr)).await {
                Ok(Ok(stream)) => {
                    stream.set_nodelay(true).ok();
                    return Ok(stream);
                }
                Ok(Err(error)) => failure = (addr, error.to_string()),
                Err(_) => {
                    failure = (
                        addr,
                        format!("timed out after {} s", self.connect_timeout.as_secs()),
                    )
                }
            }
            tracing::debug!(%host, %addr, error = %failure.1, "egress proxy: connect failed");
        }
        Err(Reply::unreachable(&host, port, failure.0, &failure.1))
    }

    async fn resolve(&self, name: &str, port: u16) -> Result<Vec<SocketAddr>, Reply> {
        match timeout(self.resolve_timeout, self.resolver.resolve(name, port)).await {
            Ok(Ok(addrs)) => Ok(addrs),
            Ok(Err(error)) => Err(Reply::unresolved(name, &error.to_string())),
            Err(_) => Err(Reply::unresolved(
                name,
                &format!("timed out after {} s", self.resolve_timeout.as_secs()),
            )),
        }
    }
}

fn refused_address(host: &str, port: u16, addr: SocketAddr, list_name: &str) -> Reply {
    let ip = addr.ip();
    let kind =
        special_kind(ip.to_canonical()).map_or_else(|| "a non-public".to_owned(), |k| k.with_article());
    let detail = format!("it resolves to {ip}, {kind} address, which {list_name} does not list");
    Reply::refused(403, host, port, &detail)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;
    use crate::resolve::StaticResolver;
    use std::time::Instant;

    async fn open(allow: &[&str], host: &str, ips: &[&str], port: u16) -> Result<TcpStream, Reply> {
        let allow = AllowList::parse(allow).unwrap();
        let resolver = StaticResolver::new([(
            host.to_owned(),
            ips.iter().map(|ip| ip.parse().unwrap()).collect(),
        )]);
        let upstream = Upstream {
            allow: &allow,
            resolver: &resolver,
            resolve_timeout: Duration::from_secs(5),
            connect_timeout: Duration::from_secs(5),
            list_name: "network_allow",
        };
        let target = Target {
            host: HostName::parse(host).unwrap(),
            port,
        };
        upstream.open(&target, &Progress::new(Instant::now())).await
    }

    #[tokio::test]
    async fn private_addresses_are_named_in_the_refusal() {
        let err = open(&["ok.test"], "ok.test", &["127.0.0.5"], 443)
            .await
            .unwrap_err();
        assert_eq!(err.status, 403);
        assert_eq!(
            err.message,
            "agent-host refused ok.test:443: it resolves to 127.0.0.5, a loopback address, which network_allow does not list"
        );
        let err = open(&["ok.test"], "ok.test", &["169.254.169.254", "10.0.0.1"], 80)
            .await
            .unwrap_err();
        assert!(
            err.message.contains("169.254.169.254, a link-local address"),
            "{}",
            err.message
        );
        let err = open(&["ok.test"], "ok.test", &["::ffff:192.168.1.1"], 80)
            .await
            .unwrap_err();
        assert!(
            err.message.contains("::ffff:192.168.1.1, a private address"),
            "{}",
            err.message
        );
        let err = open(&["ok.test"], "ok.test", &[], 80).await.unwrap_err();
        assert_eq!(err.status, 502);
    }

    #[tokio::test]
    async fn only_vetted_addresses_are_tried() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        // 10.0.0.1 comes first but is not listed: the connection goes to 127.0.0.1.
        let stream = open(
            &["ok.test:*", "127.0.0.1"],
            "ok.test",
            &["10.0.0.1", "127.0.0.1"],
            port,
        )
        .await;
        assert!(stream.is_err(), "127.0.0.1 is listed for 80/443 only");
        let stream = open(
            &["ok.test:*", "127.0.0.1:*"],
            "ok.test",
            &["10.0.0.1", "127.0.0.1"],
            port,
        )
        .await
        .unwrap();
        assert_eq!(stream.peer_addr().unwrap(), listener.local_addr().unwrap());
    }
}
