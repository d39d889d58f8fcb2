//! Execution environments (section 4 of the spec): where the agent's tools run. Every
//! backend (the local machine, a host over SSH) and every policy wrapper implements
//! [`Environment`], so they compose: a path boundary over a read-only view over SSH is as
//! valid as the local machine alone. [`options::EnvOptions`] picks and wraps one.

mod call_tag;
pub(crate) mod child;
pub mod command_output;
pub mod delegating;
mod dir_flags;
pub mod env_vars;
pub mod environment;
pub(crate) mod file_kind;
pub(crate) mod ignore_rules;
mod link_targets;
pub use link_targets::nearest_real_path;
pub mod local;
pub mod options;
pub mod policy;
pub mod process;
mod project_view;
mod scratch;
mod search;
pub mod ssh;

pub use command_output::{OUTPUT_CAP, OUTPUT_CAP_VAR, parse_size};
pub use delegating::Delegating;
pub use env_vars::EnvPolicy;
pub use environment::{Environment, MAX_READ, read_window};
pub use ignore_rules::git_walker;
pub use local::LocalEnvironment;
pub use options::EnvOptions;
pub use policy::{CommandGuard, Logged, PathPolicy, ReadOnly, Scoped};
pub use process::{ProcessHandle, kill_every_command};
