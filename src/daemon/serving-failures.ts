// What the main thread does with a handler failure the serving thread's guard reports
// (serve/guard.ts): every one is counted, and logged with its listener, route and answer; a route
// that keeps failing is logged at most once every LOG_EVERY_MS, with how many came since, so that
// a client sending bad requests in a loop cannot fill the disk with log lines.
import type { Logger } from 'pino';
import type { ServingFailure } from '../serve/guard.js';

/** What /metrics shows of failed requests; implemented by MirrorMetrics. */
export interface ServingObserver {
  servingFailed(failure: ServingFailure): void;
}

const LOG_EVERY_MS = 10_000;
/** Answers that say the request was at fault (a malformed request): a warning, not an error of ours. */
const CLIENT_FAULTS = new Set(['400', 'FORMERR']);

export class ServingFailureLog {
  readonly #logger: Logger;
  readonly #observer: ServingObserver;
  readonly #now: () => number;
  /** By listener, route and answer: when one was last logged, and how many came since. */
  readonly #routes = new Map<string, { loggedAt: number; unlogged: number }>();

  constructor(logger: Logger, observer: ServingObserver, now: () => number = Date.now) {
    this.#logger = logger;
    this.#observer = observer;
    this.#now = now;
  }

  report(failure: ServingFailure): void {
    this.#observer.servingFailed(failure);
    const key = `${failure.listener} ${failure.route} ${failure.answer}`;
    const now = this.#now();
    const route = this.#routes.get(key);
    if (route !== undefined && now - route.loggedAt < LOG_EVERY_MS) {
      route.unlogged += 1;
      return;
    }
    const { listener, answer, message, stack } = failure;
    const fields = { listener, route: failure.route, answer, err: { message, stack }, ...(route === undefined ? {} : { sinceLastLogged: route.unlogged }) };
    if (CLIENT_FAULTS.has(answer)) this.#logger.warn(fields, 'a request to the serving thread failed');
    else this.#logger.error(fields, 'a request to the serving thread failed');
    this.#routes.set(key, { loggedAt: now, unlogged: 0 });
  }
}
