//! The edge between the component model and the rest of the host: the generated bindings of
//! both worlds (`agent-core` for the agent, `tool-plugin` for plugins), the conversions
//! between generated types and the host's own (`agent-protocol`'s), and the implementations
//! of the generated import traits, each converting once and delegating. Nothing outside this
//! module names a generated type.

pub mod agent;
mod convert;
pub mod core;
pub mod environment;
pub mod plugin;
mod session;

pub use convert::session_config;
