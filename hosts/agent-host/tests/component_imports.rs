//! The core holds no authority: its imports are exactly our interfaces plus wall-clock
//! and random (the architecture's first principle: no authority beyond the imports).

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests may panic

mod common;

use wasmtime::component::Component;
use wasmtime::{Config, Engine};

#[test]
fn the_component_imports_exactly_our_interfaces_plus_clock_and_random() -> anyhow::Result<()> {
    let engine = Engine::new(&Config::new())?;
    let component = Component::from_file(&engine, common::component())?;
    let ty = component.component_type();
    let mut imports: Vec<String> = ty.imports(&engine).map(|(name, _)| name.to_string()).collect();
    imports.sort();
    assert_eq!(
        imports,
        [
            "agent:core/execution-environment@0.1.0",
            "agent:core/host-tools@0.1.0",
            "agent:core/llm-transport@0.1.0",
            "agent:core/session-host@0.1.0",
            "agent:core/types@0.1.0",
            "wasi:clocks/wall-clock@0.2.12",
            "wasi:random/random@0.2.12",
        ]
    );
    let exports: Vec<String> = ty.exports(&engine).map(|(name, _)| name.to_string()).collect();
    assert_eq!(exports, ["agent:core/agent@0.1.0"]);
    Ok(())
}
