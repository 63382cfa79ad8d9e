// The stand-in's accounting: every request it answered, how many were in flight at once, and
// requests that came back before a Retry-After it gave had passed.
import type { ServerResponse } from 'node:http';
import type { Fault } from './faults.js';
import type { RequestRecord, StandinStats } from './types.js';

/**
 * A request that arrives this soon after a 429 was delivered may have been sent before the client
 * read it; only later arrivals before the Retry-After deadline count as early.
 */
export const EARLY_REQUEST_GRACE_MS = 100;

export class RequestLog implements StandinStats {
  #requests: RequestRecord[] = [];
  readonly #inFlight = new Map<string, number>();
  readonly #maxInFlight = new Map<string, number>();
  #totalInFlight = 0;
  #maxTotalInFlight = 0;
  /** When a 429 was delivered to each key, and the time it asked the key to wait until. */
  readonly #retryAfterUntil = new Map<string, { deliveredAt: number; until: number }>();
  readonly #early = new Map<string, number>();
  #arrived = 0;
  readonly #arrivalWaiters: Array<{ count: number; resolve: () => void }> = [];
  #idleWaiters: Array<() => void> = [];

  get requests(): readonly RequestRecord[] {
    return this.#requests;
  }

  inFlight(key?: string): number {
    return key === undefined ? this.#totalInFlight : (this.#inFlight.get(key) ?? 0);
  }

  maxInFlight(key?: string): number {
    return key === undefined ? this.#maxTotalInFlight : (this.#maxInFlight.get(key) ?? 0);
  }

  earlyRequests(key?: string): number {
    return key === undefined ? [...this.#early.values()].reduce((sum, n) => sum + n, 0) : (this.#early.get(key) ?? 0);
  }

  reset(): void {
    this.#requests = [];
    this.#maxInFlight.clear();
    this.#maxTotalInFlight = this.#totalInFlight;
    this.#early.clear();
  }

  /** Resolves once `count` requests have arrived in all. */
  waitForRequests(count: number): Promise<void> {
    return this.#arrived >= count ? Promise.resolve() : new Promise<void>((resolve) => this.#arrivalWaiters.push({ count, resolve }));
  }

  /** Resolves once no request is in flight: those of a client killed meanwhile are answered and recorded by then. */
  waitUntilIdle(): Promise<void> {
    return this.#totalInFlight === 0 ? Promise.resolve() : new Promise<void>((resolve) => this.#idleWaiters.push(resolve));
  }

  arrive(key: string): void {
    this.#arrived += 1;
    const pause = this.#retryAfterUntil.get(key);
    const now = Date.now();
    if (pause && now > pause.deliveredAt + EARLY_REQUEST_GRACE_MS && now < pause.until) this.#early.set(key, (this.#early.get(key) ?? 0) + 1);
    const current = (this.#inFlight.get(key) ?? 0) + 1;
    this.#inFlight.set(key, current);
    this.#maxInFlight.set(key, Math.max(this.#maxInFlight.get(key) ?? 0, current));
    this.#totalInFlight += 1;
    this.#maxTotalInFlight = Math.max(this.#maxTotalInFlight, this.#totalInFlight);
    for (const waiter of this.#arrivalWaiters.filter((entry) => this.#arrived >= entry.count)) {
      this.#arrivalWaiters.splice(this.#arrivalWaiters.indexOf(waiter), 1);
      waiter.resolve();
    }
  }

  depart(key: string): void {
    this.#inFlight.set(key, (this.#inFlight.get(key) ?? 1) - 1);
    this.#totalInFlight -= 1;
    if (this.#totalInFlight > 0) return;
    const waiting = this.#idleWaiters;
    this.#idleWaiters = [];
    for (const resolve of waiting) resolve();
  }

  record(entry: RequestRecord): void {
    this.#requests.push(entry);
  }

  /** Once this 429 has reached the client, requests from its key count as early until the pause ends. */
  pauseAfterDelivery(key: string, response: ServerResponse, retryAfterMs: number): void {
    response.once('finish', () => {
      const deliveredAt = Date.now();
      const until = Math.max(this.#retryAfterUntil.get(key)?.until ?? 0, deliveredAt + retryAfterMs);
      this.#retryAfterUntil.set(key, { deliveredAt, until });
    });
  }
}

/** One counted request: arrived when made; recorded, departed and answered by `finish`. */
export class Exchange {
  body: unknown;

  constructor(
    readonly log: RequestLog,
    readonly key: string,
    readonly path: string,
  ) {
    log.arrive(key);
  }

  /** Records the answer in the log without departing: for a request left hanging. */
  record(status: number, threats: number, fault?: Fault['kind'], ids?: readonly number[]): void {
    this.log.record({ at: Date.now(), key: this.key, path: this.path, body: this.body, status, threats, ...(fault ? { fault } : {}), ...(ids ? { ids } : {}) });
  }

  /** Records the answer and ends the request's time in flight; the caller then answers. */
  done(status: number, threats: number, fault?: Fault['kind'], ids?: readonly number[]): void {
    this.record(status, threats, fault, ids);
    this.log.depart(this.key);
  }
}
