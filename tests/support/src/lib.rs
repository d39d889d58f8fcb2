//! What the project's tests and benchmarks share, in one place:
//!
//! - [`fakes`]: in-memory implementations of every port of the core (files, processes,
//!   scripted LLM replies, a host that records everything), for the core's tests;
//! - [`quiet`]: ports that do as little as possible (no LLM, a host that only counts
//!   events; files from [`fakes`]), for benchmarks natively and in wasm;
//! - [`wire`]: replies in each provider's real wire format (Anthropic Messages, OpenAI
//!   Responses and Chat Completions, Gemini), served over HTTP by `scripted-llm` and fed
//!   straight to the core's fakes alike;
//! - `paths`: where the build puts the component and the plugins the hosts' tests run, and
//!   where the MCP test servers are installed;
//! - `mcp`: a real MCP server over streamable HTTP on 127.0.0.1 (a Node process);
//! - `http`: a plain HTTP server on 127.0.0.1 that counts its requests.
//!
//! Nothing else here needs a runtime or a network, so the rest builds for wasm32 too.

pub mod fakes;
#[cfg(not(target_arch = "wasm32"))]
pub mod http;
#[cfg(not(target_arch = "wasm32"))]
pub mod mcp;
#[cfg(not(target_arch = "wasm32"))]
pub mod paths;
pub mod quiet;
pub mod wire;
