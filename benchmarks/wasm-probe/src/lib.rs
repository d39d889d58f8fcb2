//! bench-probe: the core's tools (apply_patch, edit_file's fuzzy passes, output truncation)
//! as a plain wasm module, so `make bench` can time them inside wasmtime with the component's
//! toolchain, profile and engine, and compare with the same code run natively.
//!
//! The component itself cannot be used for this: its exports run a whole tool call with the
//! host's file I/O around it, and truncation only inside a session. Here the cases
//! (`cases`) build their inputs inside the guest and run over in-memory ports (`memory`);
//! on wasm32 `exports` gives the host C-ABI entry points, with only numbers crossing.
//! Natively the same `cases` are an ordinary library (agent-bench times them directly).

pub mod cases;
pub mod fixtures;

#[cfg(target_arch = "wasm32")]
mod exports;
