//! What the proxy reports about each connection, for the session log and the user.

use std::net::SocketAddr;

use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Verdict {
    Allowed,
    Refused { reason: String },
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Method {
    Connect,
    /// An absolute-form request forwarded as is: GET, POST...
    Forward(String),
}

/// One client connection, reported once when it ends.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ConnectionRecord {
    pub host: String,
    pub port: u16,
    /// The vetted address connected to (or last tried, when no connection could be made).
    pub address: Option<SocketAddr>,
    pub method: Method,
    pub verdict: Verdict,
    /// From the command to the server: the forwarded head and body for Forward, the tunnel
    /// payload for Connect.
    pub bytes_up: u64,
    /// From the server to the command.
    pub bytes_down: u64,
    /// From accept to close.
    pub duration_ms: u64,
}
