//! The proxy's rules for a connection agent-host opens on someone's behalf (a component's
//! `wasi:http` request): the host must be listed, each resolved address must pass the same
//! checks, and only a checked address is connected to.

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use tokio::net::TcpStream;

use crate::allow_list::AllowList;
use crate::host_name::HostName;
use crate::progress::Progress;
use crate::resolve::Resolve;
use crate::target::Target;
use crate::upstream::Upstream;

/// Why no connection was made.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum VettedError {
    /// The host and port are not on the list.
    NotListed,
    /// The name is listed but resolves to an address the list does not allow (or the name
    /// is malformed): the detail after `HOST:PORT: `.
    Refused(String),
    /// Allowed, but it could not be resolved or reached.
    Failed(String),
}

/// Connects to `host:port` if `allow` lets it, to an address that passed the checks;
/// returns the stream and the address connected to. Refusals call the list `list_name`.
pub async fn connect_vetted(
    allow: &AllowList,
    resolver: &dyn Resolve,
    host: &str,
    port: u16,
    list_name: &str,
) -> Result<(TcpStream, SocketAddr), VettedError> {
    let host = HostName::parse(host).map_err(VettedError::Refused)?;
    if !allow.allows_host(&host.as_string(), port) {
        return Err(VettedError::NotListed);
    }
    let upstream = Upstream {
        allow,
        resolver,
        resolve_timeout: Duration::from_secs(30),
        connect_timeout: Duration::from_secs(10),
        list_name,
    };
    let target = Target { host, port };
    let progress = Progress::new(Instant::now());
    match upstream.open(&target, &progress).await {
        Ok(stream) => {
            let address = stream
                .peer_addr()
                .map_err(|e| VettedError::Failed(format!("the connection closed at once: {e}")))?;
            Ok((stream, address))
        }
        Err(reply) => match reply.reason {
            Some(reason) if reply.status == 403 || reply.status == 503 => Err(VettedError::Refused(reason)),
            _ => Err(VettedError::Failed(reply.message)),
        },
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;
    use crate::resolve::StaticResolver;

    #[tokio::test]
    async fn only_a_listed_host_at_a_checked_address_is_connected() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let resolver = StaticResolver::new([("ok.test".to_owned(), vec!["127.0.0.1".parse().unwrap()])]);
        let listed = AllowList::parse(&["ok.test:*", "127.0.0.1:*"]).unwrap();
        let (_, address) = connect_vetted(&listed, &resolver, "ok.test", port, "the list")
            .await
            .unwrap();
        assert_eq!(address, listener.local_addr().unwrap());
        let name_only = AllowList::parse(&["ok.test:*"]).unwrap();
        let refused = connect_vetted(&name_only, &resolver, "ok.test", port, "the list")
            .await
            .unwrap_err();
        assert!(
            matches!(&refused, VettedError::Refused(r) if r.contains("a loopback address, which the list does not list")),
            "{refused:?}"
        );
        let other = connect_vetted(&listed, &resolver, "other.test", port, "the list")
            .await
            .unwrap_err();
        assert_eq!(other, VettedError::NotListed);
    }
}
