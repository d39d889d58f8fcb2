//! Context-window awareness (section 5.5 of the spec): a WARNING when the conversation
//! crosses 80 % of the profile's context window. Informational only: no compaction.

use super::Session;
use crate::events::{EventData, TokenSource, Warning};
use crate::llm::{Usage, WireProtocol};

/// Share of the window at which the warning is given.
const WARN_AT_PERCENT: u64 = 80;

impl Session {
    /// Called after each response. Warns once when usage crosses the threshold; falling
    /// back below it (a host trimming the history) re-arms the warning.
    pub(super) fn check_context_usage(&mut self, usage: &Usage) {
        let window = self.profile.context_window_size.max(1);
        let (tokens, source) = match provider_reported_tokens(usage, self.config.protocol) {
            Some(tokens) => (tokens, TokenSource::Provider),
            None => (self.history.chars() / 4, TokenSource::Estimate),
        };
        let over = tokens.saturating_mul(100) > window.saturating_mul(WARN_AT_PERCENT);
        if !over {
            self.context_warned = false;
            return;
        }
        if self.context_warned {
            return;
        }
        self.context_warned = true;
        let percent = (tokens.saturating_mul(100) + window / 2) / window;
        self.emit(EventData::Warning(Warning::ContextUsage {
            message: format!("Context usage at ~{percent}% of context window"),
            tokens,
            context_window: window,
            percent,
            source,
        }));
    }
}

/// What the provider says the conversation now holds: the prompt (cached or not) plus the
/// answer, which becomes part of the next prompt. `None` when it reported nothing.
/// Anthropic counts cached prompt tokens apart from `input_tokens`; OpenAI and Gemini
/// count them inside it.
fn provider_reported_tokens(usage: &Usage, protocol: WireProtocol) -> Option<u64> {
    let prompt = match protocol {
        WireProtocol::AnthropicMessages => {
            usage.input_tokens + usage.cache_read_tokens + usage.cache_write_tokens
        }
        _ => usage.input_tokens,
    };
    (prompt > 0).then_some(prompt + usage.output_tokens)
}
