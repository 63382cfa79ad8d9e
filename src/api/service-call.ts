// What both of the service's endpoints share: who calls, the client's options, one page fetched
// under the key's budget and retry policy, and rejected records kept in the service's own words.
import { redact } from '../lib/redact.js';
import type { Secret } from '../lib/secret.js';
import type { RejectedRecord } from '../records.js';
import { type DeprecationNotice, requestJson } from './http.js';
import { rawArrayElements } from './raw-json.js';
import type { KeyBudgets } from './request-budget.js';
import { type ApiReporting, type Retried, type RetryPolicy, withRetry } from './retry.js';

export interface ApiCaller {
  readonly name: string;
  readonly apiKey: Secret;
  /** The asset types its threats requests ask for (`assetType`); undefined: every type. */
  readonly assetTypes?: readonly string[] | undefined;
}

export interface ApiClientOptions extends ApiReporting {
  readonly apiUrl: string;
  readonly timeoutMs: number;
  readonly maxResponseBytes: number;
  readonly retry: RetryPolicy;
  readonly budgets: KeyBudgets;
  /** Told of every response that carries Deprecation or Sunset headers. */
  readonly notices?: ServiceNoticeSink | undefined;
}

export interface ServiceNoticeSink {
  /** `endpoint` is the method and path, e.g. `POST /threats/list`. */
  deprecation(endpoint: string, notice: DeprecationNotice): void;
  /** A new run begins: each endpoint's notice is logged again once. */
  startRun(): void;
}

export interface ServiceCall<T> {
  readonly method: 'GET' | 'POST';
  /** The path and query, e.g. `/threats/list`. */
  readonly path: string;
  /** Names the endpoint in deprecation notices, e.g. `POST /threats/list`. */
  readonly endpoint: string;
  readonly body?: unknown;
  /** Names the organization in messages. */
  readonly label: string;
  /** Reads the 200 body synchronously: `text` is the body as received. */
  readonly parse: (json: unknown, text: string) => T;
}

/** One page of an endpoint, retried under the caller's key budget; every request carries the key. */
export function callService<T>(options: ApiClientOptions, caller: ApiCaller, call: ServiceCall<T>, signal?: AbortSignal): Promise<Retried<T>> {
  const { logger, observer } = options;
  const headers: Record<string, string> = { accept: 'application/json', 'x-api-key': caller.apiKey.reveal() };
  if (call.body !== undefined) headers['content-type'] = 'application/json';
  const budget = options.budgets.forKey(caller.apiKey.reveal());
  return withRetry({ organization: caller.name, budget, policy: options.retry, logger, observer, signal }, () =>
    requestJson(
      {
        method: call.method,
        url: `${options.apiUrl}${call.path}`,
        headers,
        ...(call.body === undefined ? {} : { body: call.body }),
        timeoutMs: options.timeoutMs,
        maxResponseBytes: options.maxResponseBytes,
        signal,
        label: call.label,
        onDeprecation: (notice) => options.notices?.deprecation(call.endpoint, notice),
      },
      call.parse,
    ),
  );
}

/**
 * The rejected records in the words the service used: their source text is scanned out of the
 * body only when there are some, so a clean page costs nothing more.
 */
export function keepRaw(rejectedAt: ReadonlyArray<{ index: number; reason: string }>, parsed: readonly unknown[], text: string, member: string): RejectedRecord[] {
  if (rejectedAt.length === 0) return [];
  const sources = rawArrayElements(text, member);
  // The scan agrees with JSON.parse on any body it accepted; the fallback only guards a mismatch.
  const aligned = sources !== undefined && sources.length === parsed.length;
  return rejectedAt.map(({ index, reason }) => ({
    raw: redact(aligned ? (sources[index] as string) : (JSON.stringify(parsed[index]) ?? 'undefined')),
    reason: redact(reason),
  }));
}
