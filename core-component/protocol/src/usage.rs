//! Token usage and cost added up over an input or a session, the same for every
//! provider: each response's [`Usage`](crate::Usage) is read the way its API counts (the
//! core does that, knowing the protocol), so hosts can show and compare totals.

use serde::{Deserialize, Serialize};

/// What the requests of an input, or of a session, used and cost.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct UsageTotals {
    /// Requests sent to the model (summaries of compaction included).
    pub requests: u32,
    /// Every prompt token, cached or not.
    pub prompt_tokens: u64,
    /// The prompt tokens read from the provider's cache.
    pub cached_tokens: u64,
    /// The prompt tokens written to the cache (Anthropic bills them apart).
    pub cache_write_tokens: u64,
    /// Every token billed as output, reasoning included.
    pub output_tokens: u64,
    /// The part of `output_tokens` spent reasoning (estimated for Anthropic).
    pub reasoning_tokens: u64,
    /// In US dollars at the model catalog's prices; `None` when a request's model has no
    /// price there.
    pub cost_usd: Option<f64>,
}

impl UsageTotals {
    pub fn is_empty(&self) -> bool {
        self.requests == 0
    }

    /// Adds one request's totals; the cost stays known only while every request's is.
    pub fn add(&mut self, other: &UsageTotals) {
        let cost = match (self.requests, self.cost_usd, other.cost_usd) {
            (0, _, cost) => cost,
            (_, Some(a), Some(b)) => Some(a + b),
            _ => None,
        };
        // Saturating: a hostile server's counts near u64::MAX must not wrap (or trap).
        self.requests = self.requests.saturating_add(other.requests);
        self.prompt_tokens = self.prompt_tokens.saturating_add(other.prompt_tokens);
        self.cached_tokens = self.cached_tokens.saturating_add(other.cached_tokens);
        self.cache_write_tokens = self.cache_write_tokens.saturating_add(other.cache_write_tokens);
        self.output_tokens = self.output_tokens.saturating_add(other.output_tokens);
        self.reasoning_tokens = self.reasoning_tokens.saturating_add(other.reasoning_tokens);
        self.cost_usd = cost;
    }
}

/// What a session tree (a session and its subagents, at every level) has spent together:
/// what the budgets (`limits.max_session_tokens`, `max_cost_cents`) bound. The host keeps
/// the tree's total; each session adds its requests to it and reads it before the next.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Spending {
    /// Prompt plus output tokens.
    pub tokens: u64,
    /// In US dollars at the model catalog's prices; an unpriced request adds nothing (a
    /// cost budget needs a priced model, so a session that keeps one has a price).
    pub cost_usd: f64,
}

impl Spending {
    /// What `totals` spent.
    pub fn of(totals: &UsageTotals) -> Self {
        Self {
            tokens: totals.prompt_tokens.saturating_add(totals.output_tokens),
            cost_usd: totals.cost_usd.unwrap_or(0.0),
        }
    }

    pub fn add(&mut self, other: Spending) {
        self.tokens = self.tokens.saturating_add(other.tokens);
        self.cost_usd += other.cost_usd.max(0.0);
    }

    /// `session-host.spend` on a total: adds `amount`, takes `released` away, returns the
    /// new total.
    pub fn spend(&mut self, amount: Spending, released: Spending) -> Spending {
        self.add(amount);
        self.release(released);
        *self
    }

    /// Takes `released` away again (a reservation settled), never below zero.
    pub fn release(&mut self, released: Spending) {
        self.tokens = self.tokens.saturating_sub(released.tokens);
        self.cost_usd = (self.cost_usd - released.cost_usd.max(0.0)).max(0.0);
    }

    /// What `self` has that `other` lacks (nothing below zero).
    pub fn beyond(&self, other: &Spending) -> Spending {
        Spending {
            tokens: self.tokens.saturating_sub(other.tokens),
            cost_usd: (self.cost_usd - other.cost_usd).max(0.0),
        }
    }

    /// The larger of each figure.
    pub fn max(&self, other: &Spending) -> Spending {
        Spending {
            tokens: self.tokens.max(other.tokens),
            cost_usd: self.cost_usd.max(other.cost_usd),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one(cost: Option<f64>) -> UsageTotals {
        UsageTotals {
            requests: 1,
            prompt_tokens: 100,
            output_tokens: 10,
            cost_usd: cost,
            ..UsageTotals::default()
        }
    }

    #[test]
    fn costs_add_while_every_request_has_one() {
        let mut total = UsageTotals::default();
        total.add(&one(Some(0.5)));
        total.add(&one(Some(0.25)));
        assert_eq!(
            (total.requests, total.prompt_tokens, total.cost_usd),
            (2, 200, Some(0.75))
        );
        total.add(&one(None));
        assert_eq!(
            total.cost_usd, None,
            "an unpriced request makes the total unknown"
        );
        total.add(&one(Some(1.0)));
        assert_eq!(total.cost_usd, None);
    }
}
