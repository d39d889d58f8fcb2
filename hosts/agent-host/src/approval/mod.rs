//! The host's answer when the core asks whether a tool call may run.
//!
//! Three modes ([`ApprovalMode`]): `auto` runs everything; `read-only` runs only what reads
//! (the environment's read-only wrapper refuses the built-in writes and commands, and host
//! tools must be of the `read` category); `ask` asks the user before every write and command
//! — the built-in tools the core marks `write` or `command` (`write_file`, `edit_file`,
//! `apply_patch`, `shell`), and host tools of the `write` and `admin` categories — through
//! an [`ApprovalPrompt`]. An answer of "always" is remembered for the session: per tool, and
//! for commands per command prefix (see [`command_prefix`] for the rule), which covers later
//! commands only of the same shape: no redirection that writes a file, no option that runs
//! other programs or writes files ([`command_shape`] holds the list).
//!
//! Dangerous commands (what the environment's command guard refuses: `rm -rf /`, `mkfs`,
//! fork bombs, ...) are asked about in every mode, every time — "always" never covers them.
//! Where nobody can be asked (no prompt), they are denied unless the policy allows them
//! ([`ApprovalPolicy::allow_dangerous_commands`], the CLI's `--allow-dangerous-commands`).
//!
//! A policy with a prompt answers for dangerous commands itself, so the environment should
//! then be built without its command guard, or an approved dangerous command would still be
//! refused by it.

pub mod category;
pub mod command_prefix;
pub mod command_shape;
pub mod command_split;
mod inline_scripts;
pub mod policy;

pub use category::ToolCategory;
pub use policy::{
    AlwaysScope, ApprovalAnswer, ApprovalMode, ApprovalPolicy, ApprovalPrompt, ApprovalQuestion, CallObserver,
};
