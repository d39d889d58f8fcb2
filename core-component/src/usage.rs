//! One response's [`Usage`] as [`UsageTotals`]: read the way its API counts, priced from the
//! model catalog. The APIs differ: Anthropic counts cached prompt tokens apart from
//! `input_tokens`, OpenAI and Gemini inside it; Gemini counts its thoughts apart from the
//! output, Anthropic and OpenAI inside it.

use crate::llm::{Usage, WireProtocol};
use crate::model_catalog::Price;
use agent_protocol::UsageTotals;

const PER_MILLION: f64 = 1_000_000.0;

/// The totals of one request to `protocol`, priced at `price` when the catalog has one.
pub fn request_totals(usage: &Usage, protocol: WireProtocol, price: Option<&Price>) -> UsageTotals {
    let anthropic = protocol == WireProtocol::AnthropicMessages;
    let (uncached, prompt) = match anthropic {
        true => (
            usage.input_tokens,
            usage
                .input_tokens
                .saturating_add(usage.cache_read_tokens)
                .saturating_add(usage.cache_write_tokens),
        ),
        false => (
            usage.input_tokens.saturating_sub(usage.cache_read_tokens),
            usage.input_tokens,
        ),
    };
    let output = match protocol {
        WireProtocol::Gemini => usage.output_tokens.saturating_add(usage.reasoning_tokens),
        _ => usage.output_tokens,
    };
    let cost_usd = price.map(|p| {
        (uncached as f64 * p.input
            + usage.cache_read_tokens as f64 * p.cache_read.unwrap_or(p.input)
            + usage.cache_write_tokens as f64 * p.cache_write.unwrap_or(p.input)
            + output as f64 * p.output)
            / PER_MILLION
    });
    UsageTotals {
        requests: 1,
        prompt_tokens: prompt,
        cached_tokens: usage.cache_read_tokens,
        cache_write_tokens: usage.cache_write_tokens,
        output_tokens: output,
        reasoning_tokens: usage.reasoning_tokens,
        cost_usd,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const PRICE: Price = Price {
        input: 3.0,
        output: 15.0,
        cache_read: Some(0.3),
        cache_write: Some(3.75),
    };

    fn usage(input: u64, cached: u64, written: u64, output: u64, reasoning: u64) -> Usage {
        Usage {
            input_tokens: input,
            output_tokens: output,
            cache_read_tokens: cached,
            cache_write_tokens: written,
            reasoning_tokens: reasoning,
        }
    }

    #[test]
    fn anthropic_counts_cached_tokens_apart_from_input() {
        let t = request_totals(
            &usage(1_000, 9_000, 500, 200, 0),
            WireProtocol::AnthropicMessages,
            Some(&PRICE),
        );
        assert_eq!(
            (t.prompt_tokens, t.cached_tokens, t.output_tokens),
            (10_500, 9_000, 200)
        );
        // 1,000 x 3 + 9,000 x 0.3 + 500 x 3.75 + 200 x 15, per million.
        let expected = (3_000.0 + 2_700.0 + 1_875.0 + 3_000.0) / 1e6;
        assert!((t.cost_usd.unwrap() - expected).abs() < 1e-12);
    }

    #[test]
    fn openai_counts_cached_tokens_inside_input_and_gemini_thoughts_apart_from_output() {
        let price = Price {
            cache_write: None,
            ..PRICE
        };
        let openai = request_totals(
            &usage(10_000, 9_000, 0, 300, 100),
            WireProtocol::OpenaiResponses,
            Some(&price),
        );
        assert_eq!(
            (
                openai.prompt_tokens,
                openai.output_tokens,
                openai.reasoning_tokens
            ),
            (10_000, 300, 100)
        );
        let expected = (1_000.0 * 3.0 + 9_000.0 * 0.3 + 300.0 * 15.0) / 1e6;
        assert!((openai.cost_usd.unwrap() - expected).abs() < 1e-12);
        let gemini = request_totals(&usage(10_000, 0, 0, 300, 100), WireProtocol::Gemini, None);
        assert_eq!(
            (gemini.output_tokens, gemini.reasoning_tokens, gemini.cost_usd),
            (400, 100, None)
        );
    }
}
