//! The LLM client: provider-neutral request and response types, the SSE decoder, and one
//! adapter per wire protocol. Hosts only move bytes; all protocol logic lives here.

pub mod anthropic;
pub mod chat_completions;
pub mod client;
pub mod error;
pub mod retry;
pub mod sse;
pub mod types;

pub use client::LlmClient;
pub use error::{ErrorKind, LlmError};
pub use retry::RetryPolicy;
pub use types::*;
