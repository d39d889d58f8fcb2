//! A sandboxed command's connections through its proxy (see [`crate::sandbox::proxy`]) as
//! the session's NETWORK_CONNECTION events, and as the one line `run` and `chat` show.

use agent_protocol::EventData;
use agent_protocol::NetworkConnection;
use egress_proxy::{ConnectionRecord, Method, Verdict};

/// The event of `record`, made by the command of `call_id` when known.
pub fn event_data(record: ConnectionRecord, call_id: Option<&str>) -> EventData {
    let (allowed, reason) = match record.verdict {
        Verdict::Allowed => (true, None),
        Verdict::Refused { reason } => (false, Some(reason)),
    };
    EventData::NetworkConnection(NetworkConnection {
        call_id: call_id.map(str::to_string),
        host: record.host,
        port: record.port,
        address: record.address.map(|a| a.to_string()),
        method: match record.method {
            Method::Connect => "CONNECT".to_string(),
            Method::Forward(method) => method,
        },
        allowed,
        reason,
        bytes_up: record.bytes_up,
        bytes_down: record.bytes_down,
        duration_ms: record.duration_ms,
    })
}

/// One line for a terminal: `net pypi.org:443 allowed ↑1.8 KB ↓47.1 KB 412 ms` or
/// `net evil.example:443 REFUSED: not in network_allow (...)`.
pub fn summary(connection: &NetworkConnection) -> String {
    let place = match connection.host.contains(':') {
        true => format!("[{}]:{}", connection.host, connection.port),
        false => format!("{}:{}", connection.host, connection.port),
    };
    match (&connection.reason, connection.allowed) {
        (None, true) => format!(
            "net {place} allowed, {} up, {} down, {} ms",
            size(connection.bytes_up),
            size(connection.bytes_down),
            connection.duration_ms
        ),
        (Some(reason), true) => format!("net {place} failed: {reason}"),
        (reason, false) => format!(
            "net {place} REFUSED: {}",
            reason.as_deref().unwrap_or("not allowed")
        ),
    }
}

fn size(bytes: u64) -> String {
    match bytes {
        b if b < 1024 => format!("{b} B"),
        b if b < 1024 * 1024 => format!("{:.1} KB", b as f64 / 1024.0),
        b => format!("{:.1} MB", b as f64 / (1024.0 * 1024.0)),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn a_record_becomes_the_event_and_one_line() {
        let record = ConnectionRecord {
            host: "pypi.org".into(),
            port: 443,
            address: Some("151.101.0.223:443".parse().unwrap()),
            method: Method::Connect,
            verdict: Verdict::Allowed,
            bytes_up: 1874,
            bytes_down: 48213,
            duration_ms: 412,
        };
        let EventData::NetworkConnection(event) = event_data(record, Some("call_7")) else {
            panic!("not a network event");
        };
        assert_eq!(event.call_id.as_deref(), Some("call_7"));
        assert_eq!(event.method, "CONNECT");
        assert_eq!(
            summary(&event),
            "net pypi.org:443 allowed, 1.8 KB up, 47.1 KB down, 412 ms"
        );
        let refused = NetworkConnection {
            allowed: false,
            reason: Some("not in network_allow".into()),
            host: "::1".into(),
            ..event
        };
        assert_eq!(summary(&refused), "net [::1]:443 REFUSED: not in network_allow");
    }
}
