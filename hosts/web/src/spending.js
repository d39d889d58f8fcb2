// What a session tree (a session and its subagents, at every level) has spent together:
// the core adds each request to it and reads it before the next, so a budget
// (maxSessionTokens, maxCostCents) bounds the tree's sum, not each agent apart.

/** Where a child's options carry its tree's ledger (not an option a page sets). */
export const TREE_LEDGER = Symbol('tree spending');

export class SpendingLedger {
  #tokens = 0n;
  #costUsd = 0;

  /**
   * `session-host.spend`: adds `amount` ({tokens: bigint, costUsd: number}), takes `released`
   * away (a settled reservation, never below zero), returns the total.
   */
  spend(amount, released) {
    this.#tokens += BigInt(amount.tokens);
    this.#costUsd += Math.max(0, Number(amount.costUsd) || 0);
    const tokens = this.#tokens - BigInt(released.tokens);
    this.#tokens = tokens > 0n ? tokens : 0n;
    this.#costUsd = Math.max(0, this.#costUsd - Math.max(0, Number(released.costUsd) || 0));
    return { tokens: this.#tokens, costUsd: this.#costUsd };
  }

  /** The total as plain numbers, for a page. */
  get total() {
    return { tokens: Number(this.#tokens), costUsd: this.#costUsd };
  }
}
