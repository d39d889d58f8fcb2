//! Name resolution, behind a trait so tests can point names at local servers without DNS.

use std::collections::HashMap;
use std::future::Future;
use std::io;
use std::net::{IpAddr, SocketAddr};
use std::pin::Pin;

/// Where names are resolved: the system resolver in production, a fixed map in tests.
pub trait Resolve: Send + Sync + 'static {
    fn resolve<'a>(
        &'a self,
        host: &'a str,
        port: u16,
    ) -> Pin<Box<dyn Future<Output = io::Result<Vec<SocketAddr>>> + Send + 'a>>;
}

/// The system resolver (getaddrinfo on a blocking thread), as any other program would use.
#[derive(Clone, Copy, Debug, Default)]
pub struct SystemResolver;

/// Lookups at once in this process: each holds a blocking thread until `getaddrinfo`
/// returns (a timeout or a cut connection does not end it), and its place is given back only
/// then, so a command asking for many slow names cannot take the pool other work uses.
const LOOKUPS_AT_ONCE: usize = 16;

fn lookups() -> std::sync::Arc<tokio::sync::Semaphore> {
    static LOOKUPS: std::sync::OnceLock<std::sync::Arc<tokio::sync::Semaphore>> = std::sync::OnceLock::new();
    LOOKUPS
        .get_or_init(|| std::sync::Arc::new(tokio::sync::Semaphore::new(LOOKUPS_AT_ONCE)))
        .clone()
}

impl Resolve for SystemResolver {
    fn resolve<'a>(
        &'a self,
        host: &'a str,
        port: u16,
    ) -> Pin<Box<dyn Future<Output = io::Result<Vec<SocketAddr>>> + Send + 'a>> {
        Box::pin(async move {
            let turn = lookups().acquire_owned().await.map_err(io::Error::other)?;
            // A name, made absolute: the resolver's search domains (`corp.internal`) would
            // otherwise turn an allowed `build` into `build.corp.internal`.
            let absolute = match host.parse::<IpAddr>() {
                Ok(_) => host.to_string(),
                Err(_) => format!("{host}."),
            };
            let found = tokio::task::spawn_blocking(move || {
                let _turn = turn;
                std::net::ToSocketAddrs::to_socket_addrs(&(absolute.as_str(), port)).map(Iterator::collect)
            });
            found.await.map_err(io::Error::other)?
        })
    }
}

/// A fixed map from names to addresses; an unknown name is `ErrorKind::NotFound`.
#[derive(Clone, Debug, Default)]
pub struct StaticResolver {
    names: HashMap<String, Vec<IpAddr>>,
}

impl StaticResolver {
    pub fn new(names: impl IntoIterator<Item = (String, Vec<IpAddr>)>) -> Self {
        Self {
            names: names.into_iter().collect(),
        }
    }
}

impl Resolve for StaticResolver {
    fn resolve<'a>(
        &'a self,
        host: &'a str,
        port: u16,
    ) -> Pin<Box<dyn Future<Output = io::Result<Vec<SocketAddr>>> + Send + 'a>> {
        let found = match self.names.get(host) {
            Some(ips) => Ok(ips.iter().map(|ip| SocketAddr::new(*ip, port)).collect()),
            None => Err(io::Error::new(io::ErrorKind::NotFound, "no such host")),
        };
        Box::pin(std::future::ready(found))
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    #[tokio::test]
    async fn static_resolver_maps_names_and_refuses_unknown_ones() {
        let resolver = StaticResolver::new([("ok.test".to_owned(), vec!["127.0.0.1".parse().unwrap()])]);
        assert_eq!(
            resolver.resolve("ok.test", 8080).await.unwrap(),
            vec!["127.0.0.1:8080".parse().unwrap()]
        );
        let err = resolver.resolve("nope.test", 80).await.unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::NotFound);
        assert_eq!(err.to_string(), "no such host");
    }

    #[tokio::test]
    async fn system_resolver_passes_ip_literals_through() {
        let found = SystemResolver.resolve("127.0.0.1", 80).await.unwrap();
        assert_eq!(found, vec!["127.0.0.1:80".parse().unwrap()]);
    }
}
