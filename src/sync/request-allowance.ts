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
    this.#takeAtOnce(1);
  }

  /**
   * `units` requests counted now, all of them or none (throws when fewer are left): the budgets
   * returned send those requests without counting them again, and any after them as budgets(shared)
   * does. A resumed window's check and the page after it are paid so (window-walk.ts): a check whose
   * page another window's request took the last unit for was thrown away, and the next run paid
   * for it again.
   */
  prepaid(shared: KeyBudgets, units: number): KeyBudgets {
    this.#takeAtOnce(units);
    let left = units;
    const paid = (): boolean => {
      if (left === 0) return false;
      left -= 1;
      return true;
    };
    return { forKey: (apiKey) => this.#limited(shared.forKey(apiKey), paid) };
  }

  #takeAtOnce(units: number): void {
    if (this.#used + units > this.#total) throw new RequestAllowanceSpent(this.#total);
    this.#used += units;
  }

  /** `paid`: whether a request was paid for already (it then takes nothing from the allowance). */
  #limited(budget: KeyBudget, paid: () => boolean = () => false): KeyBudget {
    return {
      acquire: async (signal) => {
        const release = await budget.acquire(signal);
        try {
          if (!paid()) this.take();
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
