//! Session configuration (section 2.2 of the spec): the typed contract of `agent-protocol`.

pub use agent_protocol::{Limits, SessionConfig, ToolOutputLimit};
