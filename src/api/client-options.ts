// The service's client as the configuration sets it up: for the sync (session/writer-session.ts) and
// for `lookup --fresh` (commands/lookup.ts) alike.
import type { Logger } from 'pino';
import type { Config } from '../config.js';
import { RequestBudgets } from './request-budget.js';
import type { ApiObserver } from './retry.js';
import type { ApiClientOptions } from './service-call.js';

/** URL, timeout, body cap, retries, a budget per key. */
export function apiOptionsFor(config: Config, logger: Logger, observer?: ApiObserver): ApiClientOptions {
  return {
    apiUrl: config.apiUrl,
    timeoutMs: config.requestTimeoutMs,
    maxResponseBytes: config.maxResponseBytes,
    retry: { maxRetries: config.maxRetries, minDelayMs: config.retryMinMs, maxDelayMs: config.retryMaxMs, maxRetryAfterMs: config.retryAfterMaxMs },
    budgets: new RequestBudgets({ concurrency: config.concurrency, maxRequestsPerSecond: config.maxRequestsPerSecond }),
    logger,
    observer,
  };
}
