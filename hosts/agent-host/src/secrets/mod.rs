//! Credentials: which variables and values are secrets, the host's own environment emptied
//! of them at start-up, and redaction of what is left anywhere it could be written.
//!
//! A command the agent runs is a child of agent-host, so anything in agent-host's own
//! environment is one `cat /proc/$PPID/environ` away. The host therefore takes every
//! credential-looking variable out of its environment before any thread starts
//! ([`process_env::withhold_credentials`]), keeps the values for itself ([`host_var`]), and
//! builds each command's environment without them unless the user allows one by name.

pub mod names;
pub mod process_env;
pub mod redact;

pub use names::{is_secret_name, is_secret_value};
pub use process_env::{allow, allowed, host_var, is_withheld, withhold, withhold_credentials};
pub use redact::{REDACTED, known_matcher, redact, redact_known};
