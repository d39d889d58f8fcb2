//! Hooks: the user's commands run on a session's events, given the event as JSON
//! on standard input, as Claude Code's hooks are. A `before_tool` hook can refuse a call
//! (exit status 2, or `{"decision": "block", "reason": ...}` on standard output) with a
//! reason the model sees; `after_tool`, `session_start` and `stop` hooks are told what
//! happened. Configured as `[[hooks.EVENT]]` in config.toml; a project's need trust, and
//! run in the session's command sandbox.

mod run;
mod spec;
mod start;

pub use run::Hooks;
pub use spec::{HookSpec, HooksConfig};
