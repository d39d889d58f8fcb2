//! The embedding API: a small typed facade for applications that run the agent in-process,
//! with everything `agent-host`'s own command line uses (it is built on this API): sessions
//! saved as they go and resumed, trap recovery, approvals, host tools, any environment.
//!
//! Build a [`Host`] once (it loads and compiles the core component, cached on disk), then
//! open any number of [`Session`]s, each in its own component instance:
//!
//! ```no_run
//! use agent_host::embed::{Host, SessionOptions, StopReason};
//! use agent_host::Endpoints;
//!
//! # async fn demo() -> Result<(), agent_host::embed::Error> {
//! let host = Host::builder()
//!     .component("target/agent-core.wasm")
//!     .endpoints(Endpoints::from_env()) // ANTHROPIC_API_KEY, OPENAI_API_KEY, ...
//!     .build()
//!     .await?;
//! let session = host.open_session(SessionOptions::in_workspace("/tmp/project")).await?;
//! let mut events = session.events();
//! let printer = tokio::spawn(async move {
//!     while let Some(event) = events.next().await {
//!         if let Some(text) = event.text_delta() {
//!             print!("{text}");
//!         } else if let Some(call) = event.tool_call() {
//!             println!("\n-> {} {}", call.name, call.arguments);
//!         }
//!     }
//! });
//! let outcome = session.submit("Create hello.py that prints Hello").await?;
//! assert_eq!(outcome.stop_reason, StopReason::Completed);
//! session.close().await?; // ends the event stream
//! let _ = printer.await;
//! # Ok(())
//! # }
//! ```
//!
//! Steer or interrupt from elsewhere with [`Session::handle`]; give the model your own
//! tools with [`HostBuilder::tool`] and [`NativeTool`]; record a session's LLM exchanges or
//! replay them offline with [`SessionOptions::record`] and [`SessionOptions::replay`]; save
//! sessions with [`SessionOptions::store`] and continue one with [`Host::resume_session`];
//! put files back as they were before an input with [`Session::checkpoints`],
//! [`Session::restore`] and [`Session::undo`];
//! ask the user before writes and commands with [`HostBuilder::approvals`].

mod error;
mod events;
mod host;
mod journaled;
pub mod mcp_server;
mod native_tool;
mod session;
pub mod tools_server;

pub use crate::approval::ToolCategory;
pub use crate::checkpoints::{Changes, Checkpoint, FileDiff, Restored};
pub use crate::host_tools::registry::{HostTool, ToolSource};
pub use crate::host_tools::{ToolImage, ToolOutput};
pub use error::Error;
pub use events::{
    EndReason, Event, EventData, EventKind, Events, ImageInfo, LimitName, OutputStream, TokenSource,
    ToolCall, ToolOutcome, ToolResult, Warning,
};
pub use host::{Host, HostBuilder, ResumeOptions};
pub use native_tool::{NativeTool, ToolError};
pub use session::{
    CompactionReport, CompactionStage, Outcome, ReasoningEffort, Session, SessionHandle, SessionOptions,
    StopReason,
};
