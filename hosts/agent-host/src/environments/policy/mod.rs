//! Policy wrappers over any environment: a path boundary, read-only, the dangerous-command
//! guard, scoping to a subdirectory (for subagents), and logging.

pub mod command_guard;
pub mod logging;
pub mod path_policy;
pub mod read_only;
pub mod scoped;

pub use command_guard::CommandGuard;
pub use logging::Logged;
pub use path_policy::PathPolicy;
pub use read_only::ReadOnly;
pub use scoped::Scoped;
