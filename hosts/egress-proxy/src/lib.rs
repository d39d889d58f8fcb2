//! The HTTP proxy through which sandboxed commands reach the network when the user allows
//! only named hosts (`network_allow`).
//!
//! Commands run in a network namespace whose only reachable address is the proxy's listening
//! socket, so the proxy is the single way out. It speaks HTTP/1.1 forward proxying
//! (`GET http://host/path`) and `CONNECT host:port` tunnels without looking inside TLS. It
//! resolves names itself, checks the name and then each resolved address against the
//! allow-list, and connects only to an address it checked: a name that resolves to loopback,
//! the LAN or the cloud metadata service is refused unless that address is listed too. Every
//! connection is reported once, when it ends, as a [`ConnectionRecord`].

mod address;
mod allow_list;
mod connection;
mod entry;
mod head;
mod host_name;
mod presets;
mod progress;
mod proxy;
mod record;
mod reply;
mod resolve;
mod target;
mod upstream;
mod vetted;

pub use address::{AddressKind, special_kind};
pub use allow_list::AllowList;
pub use entry::{AllowListError, Entry, Host, Ports};
pub use presets::PRESETS;
pub use proxy::{Proxy, ServeHandle};
pub use record::{ConnectionRecord, Method, Verdict};
pub use reply::REFUSAL_PREFIX;
pub use resolve::{Resolve, StaticResolver, SystemResolver};
pub use vetted::{VettedError, connect_vetted};
