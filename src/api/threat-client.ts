// POST /threats/list: one page per call, validated record by record.
import type { Logger } from 'pino';
import type { Secret } from '../secret.js';
import { RetryableApiError } from './errors.js';
import { requestJson } from './http.js';
import type { RequestBudgets } from './request-budget.js';
import { type ApiObserver, type RetryPolicy, withRetry } from './retry.js';
import { checkThreat, type Threat } from './threat-record.js';

/** The service's maximum: fewest requests per threat. */
export const PAGE_SIZE = 100;

export interface ApiCaller {
  readonly name: string;
  readonly apiKey: Secret;
}

export interface ThreatPageRequest {
  readonly startDate: string;
  readonly endDate: string;
  /** The cursor of the previous page; null for the first page. */
  readonly nextPage: string | null;
}

export interface RejectedRecord {
  readonly raw: unknown;
  readonly reason: string;
}

export interface ThreatPage {
  readonly threats: Threat[];
  readonly rejected: RejectedRecord[];
  readonly nextPage: string | null;
  /** Failed attempts retried before this page arrived. */
  readonly retries: number;
}

export interface ApiClientOptions {
  readonly apiUrl: string;
  readonly timeoutMs: number;
  readonly maxResponseBytes: number;
  readonly retry: RetryPolicy;
  readonly budgets: RequestBudgets;
  readonly logger: Logger;
  readonly observer?: ApiObserver | undefined;
}

export async function fetchThreatPage(
  options: ApiClientOptions,
  caller: ApiCaller,
  request: ThreatPageRequest,
  signal?: AbortSignal,
): Promise<ThreatPage> {
  const label = `organization "${caller.name}"`;
  const body = {
    startDate: request.startDate,
    endDate: request.endDate,
    per_page: PAGE_SIZE,
    sorting: [{ key: 'id', direction: 'asc' }],
    ...(request.nextPage === null ? {} : { next_page: request.nextPage }),
  };
  const { value, retries } = await withRetry(
    {
      organization: caller.name,
      budget: options.budgets.forKey(caller.apiKey.reveal()),
      policy: options.retry,
      logger: options.logger,
      observer: options.observer,
      signal,
    },
    async () => {
      const response = await requestJson({
        method: 'POST',
        url: `${options.apiUrl}/threats/list`,
        headers: { 'content-type': 'application/json', accept: 'application/json', 'x-api-key': caller.apiKey.reveal() },
        body,
        timeoutMs: options.timeoutMs,
        maxResponseBytes: options.maxResponseBytes,
        signal,
        label,
      });
      return parseThreatPage(response.json, label);
    },
  );
  return { ...value, retries };
}

/** Checks the envelope (a broken one is retried like a truncated body) and each record. */
export function parseThreatPage(json: unknown, label: string): Omit<ThreatPage, 'retries'> {
  if (typeof json !== 'object' || json === null || !Array.isArray((json as { threats?: unknown }).threats)) {
    throw new RetryableApiError(`${label}: response has no "threats" array`, 'bad_body');
  }
  const envelope = json as { threats: unknown[]; next_page?: unknown };
  const nextPage = parseCursor(envelope.next_page, label);
  const threats: Threat[] = [];
  const rejected: RejectedRecord[] = [];
  for (const raw of envelope.threats) {
    const check = checkThreat(raw);
    if (check.ok) threats.push(check.threat);
    else rejected.push({ raw, reason: check.reason });
  }
  return { threats, rejected, nextPage };
}

function parseCursor(value: unknown, label: string): string | null {
  if (value === null || value === undefined) return null;
  // The document types the cursor as a string; a number is the same cursor, so take it.
  if (typeof value === 'number' && Number.isSafeInteger(value) && value > 0) return String(value);
  if (typeof value === 'string' && value !== '') return value;
  throw new RetryableApiError(`${label}: response "next_page" is neither a cursor string nor null`, 'bad_body');
}
