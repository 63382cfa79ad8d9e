// How many requests one API key may have in flight, and when it may send the next one.
//
// Every organization that shares a key shares one budget, so a 429 for one of them holds back
// all of them: the service limits the key, not the organization.

export interface RequestBudgetOptions {
  /** The most requests in flight; also the ceiling the limit grows back to after a 429. */
  readonly concurrency: number;
  /** Optional cap on requests started per second. */
  readonly maxRequestsPerSecond?: number | undefined;
  readonly now?: () => number;
}

type Release = () => void;

/** What one key's requests wait on and report to: all that the retry policy needs. */
export interface KeyBudget {
  /** Resolves with a release function once a request may start. */
  acquire(signal?: AbortSignal): Promise<Release>;
  /** A Retry-After: no request of this key starts before it has passed. */
  pause(ms: number): void;
  onRateLimited(): void;
  onSuccess(): void;
}

/** The budget of each API key. */
export interface KeyBudgets {
  forKey(apiKey: string): KeyBudget;
}

interface Waiter {
  readonly resolve: (release: Release) => void;
  readonly reject: (reason: unknown) => void;
  readonly signal: AbortSignal | undefined;
  readonly onAbort: () => void;
}

/** A key's budget: concurrency that halves after a 429 and grows back, spacing, Retry-After pauses. */
export class RequestBudget implements KeyBudget {
  readonly #maxConcurrency: number;
  readonly #spacingMs: number;
  readonly #now: () => number;
  readonly #waiters: Waiter[] = [];
  #limit: number;
  /** Additive increase: successes counted towards raising the limit by one. */
  #successesSinceIncrease = 0;
  #inFlight = 0;
  #pausedUntil = 0;
  #nextStartAt = 0;
  #timer: NodeJS.Timeout | undefined;

  constructor(options: RequestBudgetOptions) {
    this.#maxConcurrency = Math.max(1, Math.floor(options.concurrency));
    this.#limit = this.#maxConcurrency;
    this.#spacingMs = options.maxRequestsPerSecond ? 1000 / options.maxRequestsPerSecond : 0;
    this.#now = options.now ?? Date.now;
  }

  get limit(): number {
    return this.#limit;
  }

  get inFlight(): number {
    return this.#inFlight;
  }

  /** Milliseconds until the key may send again after a Retry-After; 0 when not paused. */
  pausedForMs(): number {
    return Math.max(0, this.#pausedUntil - this.#now());
  }

  /** Resolves with a release function once a request may start. */
  acquire(signal?: AbortSignal): Promise<Release> {
    signal?.throwIfAborted();
    return new Promise<Release>((resolve, reject) => {
      const waiter: Waiter = {
        resolve,
        reject,
        signal,
        onAbort: () => {
          const index = this.#waiters.indexOf(waiter);
          if (index >= 0) this.#waiters.splice(index, 1);
          reject(signal?.reason);
        },
      };
      signal?.addEventListener('abort', waiter.onAbort, { once: true });
      this.#waiters.push(waiter);
      this.#pump();
    });
  }

  /** A Retry-After: no request of this key starts before it has passed. */
  pause(ms: number): void {
    this.#pausedUntil = Math.max(this.#pausedUntil, this.#now() + ms);
    this.#pump();
  }

  /** Multiplicative decrease after a 429. */
  onRateLimited(): void {
    this.#limit = Math.max(1, Math.floor(this.#limit / 2));
    this.#successesSinceIncrease = 0;
  }

  /** Additive increase: one more slot after `limit` successful requests in a row. */
  onSuccess(): void {
    if (this.#limit >= this.#maxConcurrency) return;
    this.#successesSinceIncrease += 1;
    if (this.#successesSinceIncrease >= this.#limit) {
      this.#limit += 1;
      this.#successesSinceIncrease = 0;
      this.#pump();
    }
  }

  #pump(): void {
    if (this.#timer) {
      clearTimeout(this.#timer);
      this.#timer = undefined;
    }
    while (this.#waiters.length > 0 && this.#inFlight < this.#limit) {
      const now = this.#now();
      const startAt = Math.max(this.#pausedUntil, this.#nextStartAt);
      if (startAt > now) {
        this.#timer = setTimeout(() => this.#pump(), startAt - now);
        return;
      }
      const waiter = this.#waiters.shift() as Waiter;
      waiter.signal?.removeEventListener('abort', waiter.onAbort);
      this.#inFlight += 1;
      this.#nextStartAt = now + this.#spacingMs;
      let released = false;
      waiter.resolve(() => {
        if (released) return;
        released = true;
        this.#inFlight -= 1;
        this.#pump();
      });
    }
  }
}

/** One budget per distinct key, so organizations that share a key share its budget. */
export class RequestBudgets implements KeyBudgets {
  readonly #budgets = new Map<string, RequestBudget>();
  readonly #options: RequestBudgetOptions;

  constructor(options: RequestBudgetOptions) {
    this.#options = options;
  }

  forKey(apiKey: string): RequestBudget {
    let budget = this.#budgets.get(apiKey);
    if (!budget) {
      budget = new RequestBudget(this.#options);
      this.#budgets.set(apiKey, budget);
    }
    return budget;
  }
}
