//! An example plain-export component (`wit/text-stats.wit`): its `stats` functions become
//! tools as they are, described by the WIT's doc comments, which travel in the
//! `agent-tool-wit` custom section because a built component keeps none.

pub mod text;

#[cfg(target_arch = "wasm32")]
mod component;
