//! Host-side bindings of the `agent-core` world.

wasmtime::component::bindgen!({
    path: "../../wit",
    world: "agent-core",
    imports: { default: async | trappable },
    exports: { default: async },
    with: {
        "wasi:clocks": wasmtime_wasi::p2::bindings::clocks,
        "wasi:random": wasmtime_wasi::p2::bindings::random,
        "agent:core/execution-environment.process": crate::environments::process::ProcessHandle,
        "agent:core/llm-transport.http-response": crate::transport::response::ResponseHandle,
    },
});

pub use agent::core::{execution_environment, host_tools, llm_transport, session_host, types};
pub use exports::agent::core::agent as api;
