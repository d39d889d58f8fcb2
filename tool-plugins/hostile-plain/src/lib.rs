//! A test fixture: a plain-export component (`wit/hostile-plain.wit`) whose every function
//! tries something a host must contain. Nothing here is meant to be useful to a model.

#[cfg(target_arch = "wasm32")]
mod component;
