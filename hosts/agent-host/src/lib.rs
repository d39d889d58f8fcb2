//! agent-host: runs the agent-core WebAssembly component natively with wasmtime, backed by
//! the local machine (files, real processes) or a host over SSH, and streaming HTTP to LLM
//! endpoints.
//!
//! Embedding: the typed facade in [`embed`] ([`Host`], [`SessionOptions`], [`Session`],
//! [`NativeTool`]) covers building a host, opening sessions, submitting, streaming events,
//! steering, interrupting and native Rust tools. Underneath it, one module per capability:
//! [`runtime`] (the engine, instances, subagents), [`session_host`] (what a session's
//! imports do), [`environments`] (where tools run, and the policy wrappers), [`transport`]
//! (LLM endpoints over HTTP, recording and replay), [`host_tools`] (plugins and command
//! tools), [`approval`], [`persist`] (sessions on disk), [`config`] (layered settings); the
//! generated WIT bindings stay in the private `wit` module. The contract with the core
//! (events, history, configuration) is the [`protocol`] crate's.

pub mod approval;
pub mod checkpoints;
pub mod compile_cache;
pub mod config;
pub mod content_hash;
pub mod embed;
pub mod environments;
pub mod extensions;
pub mod hooks;
pub mod host_tools;
pub mod persist;
pub mod private_files;
pub mod runtime;
pub mod sandbox;
pub mod secrets;
pub mod session_host;
pub mod transport;
mod wit;

pub use agent_protocol as protocol;
pub use embed::{Host, NativeTool, Session, SessionOptions};
pub use environments::{Environment, LocalEnvironment};
pub use runtime::{AgentRuntime, AgentSession};
pub use session_host::{AgentEvent, SessionControl};
pub use transport::{Endpoint, Endpoints, HttpTransport, InProcessReply, InProcessTransport, LlmTransport};
