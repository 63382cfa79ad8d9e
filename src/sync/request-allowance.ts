// A count of requests a part of a run may send, enforced where every attempt starts: at the key's
// request budget. Retries count too, so the service sees no more than the allowance.
import type { KeyBudget, KeyBudgets } from '../api/request-budget.js';

/** The allowance is spent: the walk stops before sending another request. */
export class RequestAllowanceSpent extends Error {
  constructor(readonly allowance: number) {
    super(`the run's ${allowance} requests for this work are spent`);
    this.name = 'RequestAllowanceSpent';
  }
}

export class RequestAllowance {
  readonly #total: number;
  #used = 0;

  constructor(total: number) {
    this.#total = total;
  }

  get used(): number {
    return this.#used;
  }

  /**
   * The key budgets, each wrapped so that a request starts only while the allowance lasts. The
   * key's own budget is still the one acquired: its concurrency, spacing and 429 pauses are shared
   * with everything else this key does.
   */
  budgets(shared: KeyBudgets): KeyBudgets {
    return { forKey: (apiKey) => this.#limited(shared.forKey(apiKey)) };
  }

  /** Counts one request, or throws when none is left. */
  take(): void {
    if (this.#used >= this.#total) throw new RequestAllowanceSpent(this.#total);
    this.#used += 1;
  }

  #limited(budget: KeyBudget): KeyBudget {
    return {
      acquire: async (signal) => {
        const release = await budget.acquire(signal);
        try {
          this.take();
        } catch (error) {
          release();
          throw error;
        }
        return release;
      },
      pause: (ms) => budget.pause(ms),
      onRateLimited: () => budget.onRateLimited(),
      onSuccess: () => budget.onSuccess(),
    };
  }
}
