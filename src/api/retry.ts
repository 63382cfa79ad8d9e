// The retry policy shared by every endpoint: which failures are retried, how long to wait, and
// how a Retry-After holds back every request of the key.
import pRetry from 'p-retry';
import type { Logger } from 'pino';
import { PermanentApiError, RetryableApiError, type RetryReason } from './errors.js';
import type { KeyBudget } from './request-budget.js';

export interface RetryPolicy {
  readonly maxRetries: number;
  readonly minDelayMs: number;
  readonly maxDelayMs: number;
  /**
   * The longest Retry-After honoured (THREAT_MIRROR_RETRY_AFTER_MAX_MS). A longer one fails the
   * organization's run at once: waiting would hold the run (and, in the daemon, every later run of
   * the key) for as long as the service says, up to weeks, and timers cannot wait past ~24.8 days.
   */
  readonly maxRetryAfterMs: number;
}

/** Hooks for metrics; the API layer knows nothing of how they are exported. */
export interface ApiObserver {
  requestFinished?(organization: string, outcome: string): void;
  retried?(organization: string, reason: RetryReason): void;
  rateLimitWaited?(organization: string, ms: number): void;
  /** A response carried Deprecation or Sunset headers; `endpoint` is e.g. `POST /threats/list`. */
  deprecationAnnounced?(endpoint: string): void;
}

/**
 * A server that keeps answering 429 with Retry-After would otherwise hold the run forever, since
 * those waits use up no retry: after this many, they count like any other retry.
 */
const FREE_RATE_LIMIT_WAITS = 20;

/** Where the client tells what it did: the log, and the observer behind /metrics. */
export interface ApiReporting {
  readonly logger: Logger;
  readonly observer?: ApiObserver | undefined;
}

export interface AttemptContext extends ApiReporting {
  readonly organization: string;
  readonly budget: KeyBudget;
  readonly policy: RetryPolicy;
  readonly signal?: AbortSignal | undefined;
}

export interface Retried<T> {
  readonly value: T;
  readonly retries: number;
}

/** Runs `attempt` under the key's budget, retrying what RetryableApiError says may pass. */
export async function withRetry<T>(context: AttemptContext, attempt: () => Promise<T>): Promise<Retried<T>> {
  const { organization, budget, policy, logger, observer, signal } = context;
  let retries = 0;
  let freeWaits = 0;
  const value = await pRetry(
    async () => {
      const release = await budget.acquire(signal);
      try {
        const result = await attempt();
        budget.onSuccess();
        observer?.requestFinished?.(organization, 'ok');
        return result;
      } catch (error) {
        observer?.requestFinished?.(organization, failureLabel(error));
        if (error instanceof RetryableApiError && error.retryAfterMs !== undefined && error.retryAfterMs > policy.maxRetryAfterMs) {
          throw retryAfterTooLong(error, error.retryAfterMs, policy.maxRetryAfterMs);
        }
        if (error instanceof RetryableApiError && error.reason === 'status_429') {
          budget.onRateLimited();
          if (error.retryAfterMs !== undefined) {
            budget.pause(error.retryAfterMs);
            observer?.rateLimitWaited?.(organization, error.retryAfterMs);
          }
        }
        throw error;
      } finally {
        release();
      }
    },
    {
      retries: policy.maxRetries,
      factor: 2,
      minTimeout: policy.minDelayMs,
      maxTimeout: policy.maxDelayMs,
      randomize: true,
      signal,
      shouldRetry: ({ error }) => error instanceof RetryableApiError,
      // The wait a Retry-After asks for happens in the budget (for every request of the key),
      // so that retry is free and adds no backoff of its own on top.
      shouldConsumeRetry: ({ error }) => {
        if (error instanceof RetryableApiError && error.retryAfterMs !== undefined && freeWaits < FREE_RATE_LIMIT_WAITS) {
          freeWaits += 1;
          return false;
        }
        return true;
      },
      onFailedAttempt: ({ error, attemptNumber, retriesLeft }) => {
        if (!(error instanceof RetryableApiError)) return;
        retries += 1;
        observer?.retried?.(organization, error.reason);
        logger.warn(
          { organization, reason: error.reason, attempt: attemptNumber, retriesLeft, retryAfterMs: error.retryAfterMs },
          `request failed, will retry: ${error.message}`,
        );
      },
    },
  );
  return { value, retries };
}

/** Not retried: the organization's run fails with this, and the key's budget is not paused. */
function retryAfterTooLong(error: RetryableApiError, askedMs: number, maxMs: number): PermanentApiError {
  return new PermanentApiError(
    `${error.message}: the service asked to wait ${formatSeconds(askedMs)} (Retry-After), longer than the ${formatSeconds(maxMs)} THREAT_MIRROR_RETRY_AFTER_MAX_MS allows; this run stops here and the next one tries again`,
    error.reason === 'status_429' ? 429 : 503,
  );
}

function formatSeconds(ms: number): string {
  return `${Math.ceil(ms / 1000)} s`;
}

/** A failed request's label in the requests metric: its retry reason, status_NNN, or error. */
function failureLabel(error: unknown): string {
  if (error instanceof RetryableApiError) return error.reason;
  if (error && typeof error === 'object' && 'status' in error) return `status_${String((error as { status: unknown }).status)}`;
  return 'error';
}
