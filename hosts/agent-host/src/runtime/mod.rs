//! Running the core component: the engine and its compiled component ([`AgentRuntime`]),
//! one session per instance ([`AgentSession`]), and subagents as concurrent instances.

pub mod engine;
pub mod instance;
pub mod subagents;

pub use engine::{AgentRuntime, InstanceOptions};
pub use instance::{AgentSession, describe_agent_error};
