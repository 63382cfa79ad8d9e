// A count of requests a part of a run may send, enforced where every attempt starts: at the key's
// request budget. Retries count too, so the service sees no more than the allowance.
import { type RequestBudget, RequestBudgets } from '../api/request-budget.js';

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
  budgets(shared: RequestBudgets): RequestBudgets {
    return new AllowanceBudgets(shared, this);
  }

  /** Counts one request, or throws when none is left. */
  take(): void {
    if (this.#used >= this.#total) throw new RequestAllowanceSpent(this.#total);
    this.#used += 1;
  }
}

class AllowanceBudgets extends RequestBudgets {
  readonly #shared: RequestBudgets;
  readonly #allowance: RequestAllowance;

  constructor(shared: RequestBudgets, allowance: RequestAllowance) {
    super({ concurrency: 1 }); // unused: every key's budget comes from `shared`
    this.#shared = shared;
    this.#allowance = allowance;
  }

  override forKey(apiKey: string): RequestBudget {
    const budget = this.#shared.forKey(apiKey);
    const allowance = this.#allowance;
    // A Proxy rather than a subclass: the budget must be the key's shared instance. Its methods
    // run on the instance itself, as its private fields require.
    return new Proxy(budget, {
      get(target, property) {
        if (property === 'acquire') {
          return async (signal?: AbortSignal) => {
            const release = await target.acquire(signal);
            try {
              allowance.take();
            } catch (error) {
              release();
              throw error;
            }
            return release;
          };
        }
        const value: unknown = Reflect.get(target, property, target);
        return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
      },
    });
  }
}
