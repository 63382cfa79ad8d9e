// POST /threats/list: one page per call, validated record by record.
import type { RejectedRecord, Threat } from '../records.js';
import { redact } from '../lib/redact.js';
import { RetryableApiError } from './errors.js';
import { type ApiCaller, type ApiClientOptions, callService, keepRaw } from './service-call.js';
import { checkThreat } from './threat-record.js';

/** The service's maximum: fewest requests per threat. */
export const PAGE_SIZE = 100;

export interface ThreatPageRequest {
  readonly startDate: string;
  readonly endDate: string;
  /** The cursor of the previous page; null for the first page. */
  readonly nextPage: string | null;
  /** The interface's text filter on content (a removal's confirmation asks for one threat's content). */
  readonly query?: string | undefined;
  /** Threats per page; PAGE_SIZE unless a check needs a page cut elsewhere in the list. */
  readonly perPage?: number | undefined;
  /** Sorted by blockedAt this way instead of by id: a planner's probe of where the records are (never a walk's page). */
  readonly byBlockedAt?: 'asc' | 'desc' | undefined;
}

export interface ThreatPage {
  readonly threats: Threat[];
  /** At most MAX_REJECTED_KEPT_PER_PAGE, each kept in rejected_records and logged. */
  readonly rejected: RejectedRecord[];
  /** Rejected records of the page beyond those kept: counted, neither stored nor logged one by one. */
  readonly rejectedNotKept: number;
  readonly nextPage: string | null;
  /** Failed attempts retried before this page arrived. */
  readonly retries: number;
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
    per_page: request.perPage ?? PAGE_SIZE,
    sorting: [request.byBlockedAt === undefined ? { key: 'id', direction: 'asc' } : { key: 'blockedAt', direction: request.byBlockedAt }],
    ...(request.query === undefined ? {} : { query: request.query }),
    // The organization's scope: every request of a scoped organization carries it, checks included.
    ...(caller.assetTypes === undefined ? {} : { assetType: [...caller.assetTypes] }),
    ...(request.nextPage === null ? {} : { next_page: request.nextPage }),
  };
  const { value, retries } = await callService(
    options,
    caller,
    { method: 'POST', path: '/threats/list', endpoint: 'POST /threats/list', body, label, parse: (json, text) => parseThreatPage(json, label, text) },
    signal,
  );
  return { ...value, retries };
}

/**
 * Checks the envelope (a broken one, a bad cursor included, is retried like a truncated body) and
 * each record. `text` is the body as received: rejected records are kept in its words.
 */
export function parseThreatPage(json: unknown, label: string, text: string): Omit<ThreatPage, 'retries'> {
  if (typeof json !== 'object' || json === null || !Array.isArray((json as { threats?: unknown }).threats)) {
    throw new RetryableApiError(`${label}: response has no "threats" array`, 'bad_body');
  }
  const envelope = json as { threats: unknown[]; next_page?: unknown };
  // More records than asked for is no page of the service's: its work would follow the sender's count.
  if (envelope.threats.length > PAGE_SIZE) {
    throw new RetryableApiError(`${label}: response holds ${envelope.threats.length} records, more than the ${PAGE_SIZE} per_page asked for`, 'bad_body');
  }
  const nextPage = parseCursor(envelope.next_page, label);
  const threats: Threat[] = [];
  const rejectedAt: Array<{ index: number; reason: string }> = [];
  let rejectedNotKept = 0;
  // A page that lists an id twice says two things of one threat: the first is taken, the others
  // are kept aside and counted, never merged into it unseen.
  const ids = new Set<number>();
  for (let index = 0; index < envelope.threats.length; index += 1) {
    const check = checkThreat(envelope.threats[index]);
    const reason = !check.ok ? check.reason : ids.has(check.threat.id) ? `id ${check.threat.id} is listed more than once in this page: the first record with it is taken, this one is kept aside` : undefined;
    if (reason === undefined && check.ok) {
      threats.push(check.threat);
      ids.add(check.threat.id);
    } else if (rejectedAt.length < MAX_REJECTED_KEPT_PER_PAGE) rejectedAt.push({ index, reason: reason as string });
    else rejectedNotKept += 1;
  }
  return { threats, rejected: keepRaw(rejectedAt, envelope.threats, text, 'threats'), rejectedNotKept, nextPage };
}

/**
 * Rejected records of one page kept (each with its raw text, up to the whole body) and logged:
 * enough to see what is wrong; a page of nothing but bad records is counted, not copied 100 times.
 */
export const MAX_REJECTED_KEPT_PER_PAGE = 10;

/**
 * The interface's cursor: a positive integer in string form, the digits only. Twenty digits hold
 * any 64-bit page number; a longer one is stored, sent back and remembered by the loop guard, so
 * a service sending a million digits a page would grow all three.
 */
const CURSOR = /^[1-9][0-9]{0,19}$/;

/**
 * Validated before anything of the page is committed: a cursor stored with the page is where the
 * next run resumes, so a bad one would fail every later run. A number is the same cursor as its
 * decimal string; anything else makes the response invalid, quoted in the message.
 */
export function parseCursor(value: unknown, label: string): string | null {
  if (value === null || value === undefined) return null;
  if (typeof value === 'number' && Number.isSafeInteger(value) && value > 0) return String(value);
  if (typeof value === 'string' && CURSOR.test(value)) return value;
  throw new RetryableApiError(`${label}: response "next_page" must be a positive integer in string form (at most 20 digits) or null, got ${quote(value)}`, 'bad_body');
}

/** Redacted before it is cut, so no part of a secret survives the cut. */
function quote(value: unknown): string {
  const text = redact(JSON.stringify(value) ?? String(value));
  return text.length > 80 ? `${text.slice(0, 77)}...` : text;
}
