//! The proxy of one sandboxed command with a network allow-list: agent-host serves the
//! listening socket made in the command's network namespace (see [`super::network`]) with
//! [`egress_proxy`], and reports each connection it made or refused.

use egress_proxy::{
    AllowList, ConnectionRecord, Proxy, Resolve, ServeHandle, StaticResolver, SystemResolver,
};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::mpsc;

/// Where a command's connections are reported, as they end.
pub type ConnectionSink = mpsc::UnboundedSender<ConnectionRecord>;

/// How long a command's connections may go on once it has ended (their client side is
/// gone with the namespace, so they end at once; this only bounds a stuck server).
const FINISH_WAIT: Duration = Duration::from_secs(2);

/// The variable through which tests point `*.test` names at loopback addresses
/// (`ok.test=127.0.0.2,idx.test=127.0.0.3`); nothing else is honoured from it.
pub const TEST_RESOLVE_VAR: &str = "AGENT_HOST_TEST_RESOLVE";

/// Where the proxy resolves names: the system's resolver unless a test says otherwise.
#[derive(Clone, Default)]
pub struct NameResolution(Option<Arc<dyn Resolve>>);

impl NameResolution {
    /// A fixed map of names to addresses (tests).
    pub fn fixed(resolver: Arc<dyn Resolve>) -> Self {
        Self(Some(resolver))
    }

    /// [`TEST_RESOLVE_VAR`]'s map when set: only names under `.test` (reserved, never a
    /// real host) and loopback addresses, so it can point a name nowhere but this machine,
    /// where the proxy still refuses loopback addresses the allow-list does not name.
    pub fn from_test_variable() -> Result<Self, String> {
        let Ok(value) = std::env::var(TEST_RESOLVE_VAR) else {
            return Ok(Self::default());
        };
        let mut map = Vec::new();
        for pair in value.split(',').filter(|p| !p.trim().is_empty()) {
            let (name, address) = pair
                .split_once('=')
                .ok_or_else(|| format!("{TEST_RESOLVE_VAR}: {pair:?} is not NAME=ADDRESS"))?;
            let address: std::net::IpAddr = address
                .trim()
                .parse()
                .map_err(|_| format!("{TEST_RESOLVE_VAR}: {address:?} is not an address"))?;
            let name = name.trim().to_ascii_lowercase();
            if !name.ends_with(".test") || !address.is_loopback() {
                return Err(format!(
                    "{TEST_RESOLVE_VAR}: only names under .test and loopback addresses ({pair:?})"
                ));
            }
            map.push((name, vec![address]));
        }
        Ok(Self::fixed(Arc::new(StaticResolver::new(map))))
    }

    pub fn resolver(&self) -> Arc<dyn Resolve> {
        match &self.0 {
            Some(resolver) => resolver.clone(),
            None => Arc::new(SystemResolver),
        }
    }
}

impl std::fmt::Debug for NameResolution {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self.0 {
            Some(_) => "NameResolution(fixed)",
            None => "NameResolution(system)",
        })
    }
}

/// A sandbox's allow-list and resolver, shared by its commands' proxies. The list grows
/// when the user allows a refused host for the session; each command keeps the list it
/// started with.
#[derive(Debug)]
pub(super) struct ProxyRules {
    allow: std::sync::RwLock<Arc<AllowList>>,
    resolution: NameResolution,
}

impl ProxyRules {
    pub(super) fn new(allow: &AllowList, resolution: &NameResolution) -> Self {
        Self {
            allow: std::sync::RwLock::new(Arc::new(allow.clone())),
            resolution: resolution.clone(),
        }
    }

    /// The list in effect now.
    pub(super) fn allow_list(&self) -> Arc<AllowList> {
        self.allow.read().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// Adds `entries` for the commands started from now on.
    pub(super) fn allow_more(&self, entries: &[egress_proxy::Entry]) {
        let mut allow = self.allow.write().unwrap_or_else(|p| p.into_inner());
        let mut grown: Vec<egress_proxy::Entry> = allow.entries().to_vec();
        grown.extend(entries.iter().cloned());
        *allow = Arc::new(AllowList::from(grown));
    }

    /// The entries, for headers and the model's note ("nothing" when empty).
    pub(super) fn summary(&self) -> String {
        summary(&self.allow_list())
    }

    /// Serves one command's listening socket; each connection is sent to `sink` when it
    /// ends, or logged without one.
    pub(super) fn serve(
        &self,
        listener: std::net::TcpListener,
        sink: Option<ConnectionSink>,
    ) -> std::io::Result<CommandProxy> {
        let proxy = Proxy::new(self.allow_list(), self.resolution.resolver());
        let refusals = Arc::new(std::sync::Mutex::new(Vec::new()));
        let refused = refusals.clone();
        let reported = std::sync::atomic::AtomicU64::new(0);
        let handle = proxy.serve(listener, move |record: ConnectionRecord| {
            tracing::info!(
                host = %record.host,
                port = record.port,
                verdict = ?record.verdict,
                up = record.bytes_up,
                down = record.bytes_down,
                "sandboxed command's connection"
            );
            if let egress_proxy::Verdict::Refused { reason } = &record.verdict {
                let mut refused = refused.lock().unwrap_or_else(|p| p.into_inner());
                let refusal = Refusal {
                    host: record.host.clone(),
                    port: record.port,
                    reason: reason.clone(),
                };
                if !refused.contains(&refusal) && refused.len() < MAX_REFUSALS_NOTED {
                    refused.push(refusal);
                }
            }
            let count = reported.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            if let Some(sink) = sink.as_ref().filter(|_| count < MAX_CONNECTION_EVENTS) {
                let _ = sink.send(record);
            } else if count == MAX_CONNECTION_EVENTS {
                tracing::warn!(
                    "a command made more than {MAX_CONNECTION_EVENTS} connections; the rest are only logged"
                );
            }
        })?;
        Ok(CommandProxy { handle, refusals })
    }
}

/// The entries of `list`, comma-separated ("nothing" when empty).
pub fn summary(list: &AllowList) -> String {
    match list.is_empty() {
        true => "nothing".to_string(),
        false => list
            .entries()
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join(", "),
    }
}

/// How many different refusals one command's note names.
const MAX_REFUSALS_NOTED: usize = 8;

/// How many of one command's connections become events (the rest are logged and counted):
/// a loop of refused requests must not fill the session's stream and files.
const MAX_CONNECTION_EVENTS: u64 = 1000;

/// A request the proxy refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    pub host: String,
    pub port: u16,
    pub reason: String,
}

impl Refusal {
    /// The entry that would allow it, to offer the user: only when the one reason was that
    /// no entry did, for a name short enough to be read whole in a question, or a public
    /// address. Not a private address a listed name resolved to, nor a loopback, private or
    /// metadata address asked for directly (this machine's services, the cloud's
    /// credentials): those the user adds deliberately, by flag or configuration.
    pub fn entry_to_allow(&self) -> Option<egress_proxy::Entry> {
        const LONGEST_OFFERED: usize = 64;
        if !self.reason.starts_with("not in network_allow") || self.host.len() > LONGEST_OFFERED {
            return None;
        }
        if let Ok(address) = self.host.parse::<std::net::IpAddr>()
            && egress_proxy::special_kind(address).is_some()
        {
            return None;
        }
        let host = match self.host.contains(':') {
            true => format!("[{}]", self.host),
            false => self.host.clone(),
        };
        format!("{host}:{}", self.port).parse().ok()
    }
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}: {}", self.host, self.port, self.reason)
    }
}

/// A running command's proxy; dropping it ends every connection.
pub struct CommandProxy {
    handle: ServeHandle,
    /// Each refused request, once each.
    refusals: Arc<std::sync::Mutex<Vec<Refusal>>>,
}

impl CommandProxy {
    /// Once the command has ended: lets its connections finish and report (their client
    /// side went with the namespace), for at most [`FINISH_WAIT`]. Returns what was
    /// refused, once each, for the command's result: many programs (pip among them) say
    /// only that they found nothing.
    pub async fn finish(self) -> Vec<Refusal> {
        self.handle.finish(FINISH_WAIT).await;
        std::mem::take(&mut *self.refusals.lock().unwrap_or_else(|p| p.into_inner()))
    }
}

impl crate::sandbox::Sandbox {
    /// The proxy of a command started with `listener` (see [`super::spawn::SandboxedChild`]).
    pub(crate) fn serve_proxy(
        &self,
        listener: std::net::TcpListener,
        sink: Option<ConnectionSink>,
    ) -> std::io::Result<CommandProxy> {
        match &self.proxy {
            Some(rules) => rules.serve(listener, sink),
            None => Err(std::io::Error::other(
                "a command got a proxy socket without a network allow-list",
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn refusal(host: &str, reason: &str) -> Refusal {
        Refusal {
            host: host.to_string(),
            port: 443,
            reason: reason.to_string(),
        }
    }

    #[test]
    fn only_an_unlisted_short_name_or_public_address_is_offered() {
        let unlisted = "not in network_allow (allow it with ...)";
        let offered =
            |host: &str, reason: &str| refusal(host, reason).entry_to_allow().map(|e| e.to_string());
        assert_eq!(offered("pypi.org", unlisted).as_deref(), Some("pypi.org:443"));
        assert_eq!(
            offered("2606:4700::1111", unlisted).as_deref(),
            Some("[2606:4700::1111]:443")
        );
        for host in ["169.254.169.254", "127.0.0.1", "10.1.2.3", "::1", "fd00::1"] {
            assert_eq!(offered(host, unlisted), None, "{host}");
        }
        let long = format!("pypi.org-mirror-{}.evil.example", "a".repeat(60));
        assert_eq!(offered(&long, unlisted), None);
        assert_eq!(
            offered(
                "ok.test",
                "it resolves to 127.0.0.4, a loopback address, which network_allow does not list"
            ),
            None
        );
    }
}
