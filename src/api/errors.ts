// What can go wrong talking to the service, split by whether trying again can help.

/** Why a request is retried; also the `reason` label of the retries metric. */
export type RetryReason = 'network' | 'timeout' | 'status_408' | 'status_429' | 'status_5xx' | 'bad_body' | 'too_large';

/** A failure that a later attempt may not meet: network, timeout, 408, 429, 5xx, a broken body. */
export class RetryableApiError extends Error {
  override readonly name = 'RetryableApiError';
  constructor(
    message: string,
    readonly reason: RetryReason,
    /** From a Retry-After header; undefined when absent, zero or in the past. */
    readonly retryAfterMs?: number,
    options?: ErrorOptions,
  ) {
    super(message, options);
  }
}

/** A failure that repeats on every attempt: bad key (401/403), bad request (400), missing endpoint (404). */
export class PermanentApiError extends Error {
  override readonly name = 'PermanentApiError';
  constructor(
    message: string,
    readonly status: number,
  ) {
    super(message);
  }
}

/** The response was well-formed HTTP but broke the interface in a way retrying will not mend (a cursor loop). */
export class ProtocolError extends Error {
  override readonly name = 'ProtocolError';
}
