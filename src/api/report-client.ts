// GET /organization/reports: one page per call, read tolerantly where the service's documentation
// disagrees with itself, strictly where a report would make no sense without it.
import { redact } from '../lib/redact.js';
import { RetryableApiError } from './errors.js';
import { rawArrayElements, rawMember } from './raw-json.js';
import { isWellFormed, NOT_WELL_FORMED } from './threat-record.js';
import type { ProposalRecord, RejectedRecord, ReportRecord } from '../records.js';
import { type ApiCaller, type ApiClientOptions, callService, keepRaw } from './service-call.js';

export const REPORTS_PAGE_SIZE = 100;

export interface ReportPageRequest {
  readonly cursor: string | null;
  /** ISO 8601 date-times, sent together or not at all. */
  readonly startDate?: string;
  readonly endDate?: string;
}

export interface ReportPage {
  readonly reports: ReportRecord[];
  readonly rejected: RejectedRecord[];
  readonly nextCursor: string | null;
  readonly retries: number;
}

export async function fetchReportPage(options: ApiClientOptions, caller: ApiCaller, request: ReportPageRequest, signal?: AbortSignal): Promise<ReportPage> {
  const label = `organization "${caller.name}" reports`;
  const query = new URLSearchParams({ limit: String(REPORTS_PAGE_SIZE) });
  if (request.cursor !== null) query.set('cursor', request.cursor);
  if (request.startDate !== undefined && request.endDate !== undefined) {
    query.set('startDate', request.startDate);
    query.set('endDate', request.endDate);
  }
  const { value, retries } = await callService(
    options,
    caller,
    { method: 'GET', path: `/organization/reports?${query.toString()}`, endpoint: 'GET /organization/reports', label, parse: (json, text) => parseReportPage(json, label, text) },
    signal,
  );
  return { ...value, retries };
}

const MAX_REPORTS_CURSOR_LENGTH = 1024;

/** `text` is the body as received: every report is stored in its words (reports are few). */
export function parseReportPage(json: unknown, label: string, text: string): Omit<ReportPage, 'retries'> {
  if (typeof json !== 'object' || json === null || !Array.isArray((json as { reports?: unknown }).reports)) {
    throw new RetryableApiError(`${label}: response has no "reports" array`, 'bad_body');
  }
  const envelope = json as { reports: unknown[]; cursor?: unknown; nextCursor?: unknown };
  // More reports than the limit asked for is no page of the service's: its work would follow the sender's count.
  if (envelope.reports.length > REPORTS_PAGE_SIZE) {
    throw new RetryableApiError(`${label}: response holds ${envelope.reports.length} reports, more than the limit of ${REPORTS_PAGE_SIZE} asked for`, 'bad_body');
  }
  const reports: ReportRecord[] = [];
  const rejectedAt: Array<{ index: number; reason: string }> = [];
  const sources = envelope.reports.length === 0 ? [] : rawArrayElements(text, 'reports');
  const aligned = sources !== undefined && sources.length === envelope.reports.length;
  for (const [index, raw] of envelope.reports.entries()) {
    // Without the source text (the scan disagreed with JSON.parse), an id beyond 2^53 has no digits to take.
    const source = aligned ? (sources[index] as string) : undefined;
    const parsed = parseReport(raw, source);
    if (typeof parsed === 'string') rejectedAt.push({ index, reason: `report: ${parsed}` });
    else reports.push(parsed);
  }
  const rejected: RejectedRecord[] = keepRaw(rejectedAt, envelope.reports, text, 'reports');
  // The documentation names the next cursor `cursor` in one place and `nextCursor` (a number) in another.
  const next = idOf(envelope.nextCursor, () => rawMember(text, 'nextCursor'));
  const nextCursor = next === null ? idOf(envelope.cursor, () => rawMember(text, 'cursor')) : next;
  if (nextCursor === undefined) throw new RetryableApiError(`${label}: response's next cursor is a number beyond 2^53 not written as digits`, 'bad_body');
  // Its form is not documented (an opaque token, perhaps), but it is stored, sent back and remembered by the loop guard.
  if (nextCursor !== null && nextCursor.length > MAX_REPORTS_CURSOR_LENGTH) {
    throw new RetryableApiError(`${label}: response cursor is ${nextCursor.length} characters long, more than the ${MAX_REPORTS_CURSOR_LENGTH} a cursor may have`, 'bad_body');
  }
  return { reports, rejected, nextCursor };
}

/** A report, or the reason it cannot be one: it needs an id and a proposals array. */
function parseReport(raw: unknown, source: string | undefined): ReportRecord | string {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return 'not a JSON object';
  const record = raw as Record<string, unknown>;
  const id = idOf(record.id, () => (source === undefined ? undefined : rawMember(source, 'id')));
  if (id === undefined) return UNSAFE_ID;
  if (id === null) return `id must be a non-empty string or a number, got ${JSON.stringify(record.id) ?? 'nothing'}`;
  if (!Array.isArray(record.proposals)) return `proposals must be an array, got ${JSON.stringify(record.proposals) ?? 'nothing'}`;
  const proposals: ProposalRecord[] = [];
  // The proposals' source texts, read only if an id needs its digits.
  let sources: string[] | undefined;
  const sourceOf = (index: number): string => (sources ??= (source === undefined ? undefined : rawArrayElements(source, 'proposals')) ?? [])[index] ?? '';
  for (const [index, item] of record.proposals.entries()) {
    if (typeof item !== 'object' || item === null) return `proposal ${index} is not a JSON object`;
    const proposal = item as Record<string, unknown>;
    const proposalId = idOf(proposal.id, () => rawMember(sourceOf(index), 'id'));
    if (proposalId === undefined) return `proposal ${index}: ${UNSAFE_ID}`;
    if (proposalId === null) return `proposal ${index} has no id`;
    const asset = typeof proposal.asset === 'object' && proposal.asset !== null ? (proposal.asset as Record<string, unknown>) : {};
    const assetId = idOf(asset.id, () => rawMember(rawMember(sourceOf(index), 'asset') ?? '', 'id'));
    if (assetId === undefined) return `proposal ${index} asset: ${UNSAFE_ID}`;
    proposals.push({
      id: proposalId,
      reviewStatus: textOf(proposal.reviewStatus),
      assetId,
      assetType: textOf(asset.type),
      assetContent: textOf(asset.content),
      assetStatus: textOf(asset.status),
    });
  }
  const report = { id, createdAt: textOf(record.createdAt), status: textOf(record.status), proposals, raw: redact(source ?? JSON.stringify(raw)) };
  return notWellFormed(report) ?? report;
}

/** The reason a report cannot be stored as sent: a text of it that is not well-formed Unicode (threat-record.ts). */
function notWellFormed(report: ReportRecord): string | undefined {
  const fields: Array<[string, string | null]> = [['id', report.id], ['createdAt', report.createdAt], ['status', report.status]];
  report.proposals.forEach((proposal, index) => {
    for (const [name, value] of Object.entries(proposal)) fields.push([`proposal ${index} ${name}`, value as string | null]);
  });
  const bad = fields.find(([, value]) => value !== null && !isWellFormed(value));
  return bad === undefined ? undefined : NOT_WELL_FORMED(bad[0]);
}

const UNSAFE_ID = 'id is a number beyond 2^53 not written as plain digits, so it cannot be kept exactly';

/**
 * An id or a cursor as text: a non-empty string as sent, a number by its digits; null when it is
 * neither. Beyond 2^53 JSON.parse has rounded a number (9007199254740993 reads as ...992, so two
 * report ids became one): its digits are taken from `source`, its text in the body, and undefined
 * is returned when that does not write it as plain digits.
 */
function idOf(value: unknown, source: () => string | undefined): string | null | undefined {
  if (typeof value === 'string') return value === '' ? null : value;
  if (typeof value !== 'number' || !Number.isFinite(value)) return null;
  if (!Number.isInteger(value) || Number.isSafeInteger(value)) return String(value);
  const digits = source()?.trim();
  return digits !== undefined && /^-?[0-9]+$/.test(digits) ? digits : undefined;
}

function textOf(value: unknown): string | null {
  return typeof value === 'string' ? value : null;
}
