//! What a session tree (a session and its subagents, at every level) has spent: one total
//! that every session of the tree adds its requests to and reads before sending the next,
//! so a budget bounds the tree's sum, not each agent apart.

use agent_protocol::Spending;
use std::sync::Mutex;

/// One tree's total; shared (`Arc`) by the root session's instance and its descendants'.
#[derive(Debug, Default)]
pub struct SpendingLedger(Mutex<Spending>);

impl SpendingLedger {
    /// Adds `amount`, takes `released` away (a settled reservation, never below zero) and
    /// returns the new total.
    pub fn spend(&self, amount: Spending, released: Spending) -> Spending {
        let mut total = self.0.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        total.spend(amount, released)
    }

    pub fn total(&self) -> Spending {
        *self.0.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn every_session_of_a_tree_adds_to_one_total() {
        let ledger = Arc::new(SpendingLedger::default());
        let child = ledger.clone();
        ledger.spend(
            Spending {
                tokens: 100,
                cost_usd: 0.5,
            },
            Spending::default(),
        );
        let seen_by_child = child.spend(
            Spending {
                tokens: 20,
                cost_usd: 0.25,
            },
            Spending::default(),
        );
        assert_eq!(seen_by_child, ledger.total());
        assert_eq!((seen_by_child.tokens, seen_by_child.cost_usd), (120, 0.75));
        // A negative cost (a host's bug) never lowers the total.
        ledger.spend(
            Spending {
                tokens: 0,
                cost_usd: -1.0,
            },
            Spending::default(),
        );
        assert_eq!(ledger.total().cost_usd, 0.75);
        // A reservation of 50 settled at 30: the total keeps the 30.
        let reserved = Spending {
            tokens: 50,
            cost_usd: 0.0,
        };
        ledger.spend(reserved, Spending::default());
        let settled = ledger.spend(
            Spending {
                tokens: 30,
                cost_usd: 0.0,
            },
            reserved,
        );
        assert_eq!(settled.tokens, 150);
    }
}
