//! Each wire protocol's request, written as JSON bytes straight from the borrowed request.

pub mod anthropic;
pub mod chat_completions;
pub mod gemini;
pub mod openai_responses;
