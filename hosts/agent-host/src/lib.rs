//! agent-host: runs the agent-core WebAssembly component natively with wasmtime, backed by
//! the local machine (files, real processes) and streaming HTTP to LLM endpoints.
//!
//! Embedding: the typed facade in [`embed`] ([`Host`], [`SessionOptions`], [`Session`],
//! [`NativeTool`]) covers building a host, opening sessions, submitting, streaming events,
//! steering, interrupting and native Rust tools. Underneath it: build an [`HttpTransport`]
//! from [`Endpoints`], load an [`AgentRuntime`], then [`AgentRuntime::start_session`] gives
//! an [`AgentSession`] plus a stream of [`AgentEvent`]s; steer, follow up or interrupt
//! through [`AgentSession::controller`].

pub mod approval;
pub mod bindings;
pub mod compile_cache;
pub mod config;
pub mod control;
pub mod embed;
pub mod endpoints;
pub mod env;
pub mod env_host;
pub mod host_tools;
pub mod in_process_llm;
pub mod layered_config;
pub mod persist;
pub mod process;
pub mod profile_view;
pub mod record_replay;
pub mod runtime;
pub mod settings;
pub mod state;
pub mod subagents;
pub mod tool_options;
pub mod transport;
pub mod wit;

pub use agent_protocol as protocol;
pub use control::{AgentEvent, SessionControl};
pub use embed::{Host, NativeTool, Session, SessionOptions};
pub use endpoints::{Endpoint, Endpoints};
pub use env::{Environment, LocalEnvironment};
pub use in_process_llm::{InProcessReply, InProcessTransport};
pub use record_replay::LlmTransport;
pub use runtime::{AgentRuntime, AgentSession, CacheOutcome};
pub use transport::HttpTransport;
