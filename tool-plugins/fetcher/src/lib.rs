//! An example plain-export component (`wit/fetcher.wit`): HTTP GET through the host's
//! `wasi:http/outgoing-handler`, so the host decides which hosts it reaches.

pub mod url;

#[cfg(target_arch = "wasm32")]
mod component;
