//! Session events (section 2.9 of the spec): the typed contract of `agent-protocol`.

pub use agent_protocol::event::*;
