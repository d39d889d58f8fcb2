//! Tools the host implements and offers to the model next to the profile's own: sandboxed
//! plugin components and declarative command tools from the configuration. The core sees
//! only their definitions (in the session config) and calls them through `host-tools`.

pub mod command;
pub mod component;
pub mod mcp;
pub mod plugin;
pub mod registry;

pub use crate::approval::ToolCategory;
pub use crate::session_host::state::{ToolImage, ToolOutput};
pub use registry::{HostTool, HostTools, ToolSource};
