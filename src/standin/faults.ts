// Faults the stand-in can be told to inject, one request at a time or at random.
import { seededRandom } from './data.js';

export type Fault =
  /** `message` replaces the body's message: a test can plant what an echoing service would send. */
  | { readonly kind: 'status'; readonly status: number; readonly message?: string }
  | { readonly kind: 'rateLimit'; readonly retryAfter?: string }
  | { readonly kind: 'drop' }
  | { readonly kind: 'truncate' }
  | { readonly kind: 'delay'; readonly ms: number }
  | { readonly kind: 'hang' }
  | { readonly kind: 'invalidRecords'; readonly count?: number }
  | { readonly kind: 'oversize'; readonly bytes: number }
  /** The page points back at itself: a cursor that repeats. */
  | { readonly kind: 'repeatCursor' }
  /** A 3xx with this Location, absolute (another port or origin) or relative (the same origin). */
  | { readonly kind: 'redirect'; readonly status: number; readonly location: string }
  /** The page's records as usual, with this `next_page` instead: "abc", "0", "-5", "", an object. */
  | { readonly kind: 'badCursor'; readonly value: unknown }
  /**
   * These JSON texts appended to the page's records as written, e.g. an id beyond 2^53 in digits.
   * Like invalidRecords, it waits for the first page with room for them: a page never holds more
   * records than the per_page asked for, which the client treats as a broken response.
   */
  | { readonly kind: 'rawRecords'; readonly records: readonly string[] }
  /** The usual answer with RFC 8594 headers; absent fields send no header. */
  | { readonly kind: 'deprecation'; readonly deprecation?: string; readonly sunset?: string };

export interface FaultTarget {
  readonly key?: string;
  readonly path?: string;
}

interface Queued extends FaultTarget {
  readonly fault: Fault;
  remaining: number;
}

interface Random extends FaultTarget {
  readonly fault: Fault;
  readonly probability: number;
}

export class FaultController {
  readonly #queue: Queued[] = [];
  #random: Random[] = [];
  readonly #roll: () => number;

  constructor(seed: number) {
    this.#roll = seededRandom(seed);
  }

  /** The next `times` matching requests get this fault, in order. */
  enqueue(fault: Fault, options: FaultTarget & { times?: number } = {}): void {
    this.#queue.push({ fault, remaining: options.times ?? 1, key: options.key, path: options.path });
  }

  /** Every matching request gets this fault with this probability (seeded, so runs repeat). */
  setRandom(fault: Fault, probability: number, options: FaultTarget = {}): void {
    this.#random.push({ fault, probability, key: options.key, path: options.path });
  }

  /** Gives a fault taken but not applied back, to the front: the next matching request gets it. */
  putBack(fault: Fault, target: FaultTarget = {}): void {
    this.#queue.unshift({ fault, remaining: 1, key: target.key, path: target.path });
  }

  clear(): void {
    this.#queue.length = 0;
    this.#random = [];
  }

  /** The fault for this request, if any; consumes one queued use. */
  take(key: string, path: string): Fault | undefined {
    const matches = (target: FaultTarget): boolean => (target.key === undefined || target.key === key) && (target.path === undefined || target.path === path);
    const queued = this.#queue.find((entry) => entry.remaining > 0 && matches(entry));
    if (queued) {
      queued.remaining -= 1;
      if (queued.remaining === 0) this.#queue.splice(this.#queue.indexOf(queued), 1);
      return queued.fault;
    }
    for (const entry of this.#random) {
      if (matches(entry) && this.#roll() < entry.probability) return entry.fault;
    }
    return undefined;
  }
}
