//! Replies in the providers' wire formats: one [`Reply`] (status, headers, body pieces) per
//! scripted answer, built from [`Block`]s.

pub mod anthropic;
pub mod chat_completions;
pub mod gemini;
pub mod openai_responses;

pub use anthropic::{Block, text, thinking, tool_use};
use serde::{Deserialize, Serialize};

/// One scripted answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Reply {
    #[serde(default = "ok")]
    pub status: u16,
    #[serde(default)]
    pub headers: Vec<(String, String)>,
    /// Body pieces, sent as separate writes so clients see real streaming.
    pub chunks: Vec<String>,
    /// Pause before each piece, in milliseconds.
    #[serde(default)]
    pub delay_ms: u64,
}

fn ok() -> u16 {
    200
}

impl Reply {
    /// The whole body, as the pieces concatenated.
    pub fn body(&self) -> String {
        self.chunks.concat()
    }
}

/// Splits text into `n` roughly equal pieces on character boundaries.
pub fn split(text: &str, n: usize) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    let size = chars.len().div_ceil(n.max(1)).max(1);
    chars.chunks(size).map(|c| c.iter().collect()).collect()
}
