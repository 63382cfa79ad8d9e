// The stand-in's GET /organization/reports, in either of the two shapes the service's
// documentation shows (the disagreements are the point: the mirror must read both).
import { addDays, daysBetween } from '../lib/days.js';
import { contentFor, seededRandom, type StandinThreat } from './data.js';

/** Ids are numbers; a bigint is sent as the JSON number it is, beyond 2^53 included (jsonWithBigInts). */
export interface StandinProposal {
  readonly id: number | bigint;
  reviewStatus: string;
  readonly asset: { readonly id: number | bigint; readonly type: string; readonly content: string; status: string };
}

export interface StandinReport {
  readonly id: number | bigint;
  readonly organization: string;
  readonly createdAt: string;
  status: string;
  readonly title: string;
  readonly proposals: StandinProposal[];
}

/**
 * 'cursor': next cursor in `cursor` (an opaque string), numeric ids, PENDING/APPROVED/REJECTED.
 * 'nextCursor': next cursor in `nextCursor` (a number), string ids, report status TODO/IN_PROGRESS/
 * CLOSED, and extra fields (title, description, updatedAt, reporter).
 */
export type ReportsVariant = 'cursor' | 'nextCursor';

const REVIEW = ['PENDING', 'APPROVED', 'REJECTED'] as const;
const REPORT_STATUS_B: Record<string, string> = { PENDING: 'TODO', APPROVED: 'CLOSED', REJECTED: 'CLOSED', IN_REVIEW: 'IN_PROGRESS' };

export function generateReports(options: {
  seed: number;
  organizations: readonly string[];
  count: number;
  fromDay: string;
  toDay: string;
  /** Some proposals name the content of these threats, as real reports do. */
  threats?: readonly StandinThreat[];
}): StandinReport[] {
  const random = seededRandom(options.seed);
  const days = Math.max(1, daysBetween(options.fromDay, options.toDay));
  const reports: StandinReport[] = [];
  let proposalId = 50_000;
  for (let index = 0; index < options.count; index += 1) {
    const organization = options.organizations[Math.floor(random() * options.organizations.length)] as string;
    const day = addDays(options.fromDay, Math.floor(random() * days));
    const createdAt = new Date(Date.parse(`${day}T00:00:00.000Z`) + Math.floor(random() * 86_400_000)).toISOString();
    const proposals: StandinProposal[] = Array.from({ length: 1 + Math.floor(random() * 3) }, () => {
      const known = options.threats?.filter((threat) => threat.organization === organization);
      const threat = known && known.length > 0 && random() < 0.5 ? known[Math.floor(random() * known.length)] : undefined;
      const type = threat?.type ?? 'URL';
      return {
        id: ++proposalId,
        reviewStatus: REVIEW[Math.floor(random() * REVIEW.length)] as string,
        asset: { id: proposalId * 7, type, content: threat?.content ?? contentFor(type, random), status: random() < 0.5 ? 'BLOCKED' : 'ACTIVE' },
      };
    });
    const status = proposals.every((proposal) => proposal.reviewStatus === 'PENDING') ? 'PENDING' : proposals.some((proposal) => proposal.reviewStatus === 'REJECTED') ? 'REJECTED' : 'APPROVED';
    reports.push({ id: 9000 + index, organization, createdAt, status, title: `Report ${index}`, proposals });
  }
  return reports;
}

export class ReportsBadRequest extends Error {}

export interface ReportsQuery {
  readonly limit: number;
  readonly offset: number;
  readonly start: number | undefined;
  readonly end: number | undefined;
  readonly onlyRejected: boolean;
}

/** `cursorBase`: numeric cursors are the offset plus this (a base beyond 2^53 tests that a client keeps every digit). */
export function parseReportsQuery(params: URLSearchParams, cursorBase = 0n): ReportsQuery {
  const limitText = params.get('limit');
  const limit = limitText === null ? 50 : Number(limitText);
  if (!Number.isInteger(limit) || limit < 1 || limit > 100) throw new ReportsBadRequest('limit must be an integer from 1 to 100');
  const cursor = params.get('cursor');
  let offset = 0;
  if (cursor !== null && cursor !== '') {
    // Either shape of cursor this stand-in hands out: "o:<offset>" in base64url, or a number.
    const decoded = /^\d+$/.test(cursor) ? String(BigInt(cursor) - cursorBase) : Buffer.from(cursor, 'base64url').toString('utf8').replace(/^o:/, '');
    offset = Number(decoded);
    if (!Number.isInteger(offset) || offset < 0) throw new ReportsBadRequest('cursor is not valid');
  }
  const startText = params.get('startDate');
  const endText = params.get('endDate');
  if ((startText === null) !== (endText === null)) throw new ReportsBadRequest('Invalid date format: startDate and endDate are used together');
  const start = startText === null ? undefined : Date.parse(startText);
  const end = endText === null ? undefined : Date.parse(endText);
  if ((start !== undefined && Number.isNaN(start)) || (end !== undefined && Number.isNaN(end))) {
    throw new ReportsBadRequest('Invalid date format: use ISO 8601 date-times');
  }
  return { limit, offset, start, end, onlyRejected: params.get('onlyRejected') === 'true' };
}

/** Newest first, filtered, one page of it in the variant's shape. */
export function reportsPage(all: readonly StandinReport[], organization: string, query: ReportsQuery, variant: ReportsVariant, cursorBase = 0n): Record<string, unknown> {
  const list = all
    .filter((report) => report.organization === organization)
    .filter((report) => query.start === undefined || (Date.parse(report.createdAt) >= query.start && Date.parse(report.createdAt) <= (query.end ?? Infinity)))
    .filter((report) => !query.onlyRejected || report.proposals.some((proposal) => proposal.reviewStatus === 'REJECTED'))
    .sort((a, b) => (a.createdAt === b.createdAt ? Number(BigInt(b.id) - BigInt(a.id)) : a.createdAt < b.createdAt ? 1 : -1));
  const page = list.slice(query.offset, query.offset + query.limit);
  const next = query.offset + query.limit < list.length ? query.offset + query.limit : undefined;
  if (variant === 'cursor') {
    return {
      reports: page.map((report) => ({ id: report.id, createdAt: report.createdAt, status: report.status, proposals: report.proposals })),
      ...(next === undefined ? {} : { cursor: Buffer.from(`o:${next}`).toString('base64url') }),
    };
  }
  return {
    reports: page.map((report) => ({
      id: String(report.id),
      createdAt: report.createdAt,
      updatedAt: report.createdAt,
      status: REPORT_STATUS_B[report.status] ?? report.status,
      title: report.title,
      description: `Filed by ${organization}`,
      reporter: { id: 1, name: 'analyst' },
      proposals: report.proposals.map((proposal) => ({ ...proposal, id: String(proposal.id) })),
    })),
    ...(next === undefined ? {} : { nextCursor: cursorBase + BigInt(next) }),
  };
}

const BIGINT_MARK = '\u0000bigint:';

/** JSON.stringify, but a bigint is written as a JSON number with all its digits (JSON.stringify refuses them). */
export function jsonWithBigInts(payload: unknown): string {
  const text = JSON.stringify(payload, (_key, value: unknown) => (typeof value === 'bigint' ? `${BIGINT_MARK}${value}` : value));
  return text.replace(/"\\u0000bigint:(-?\d+)"/g, '$1');
}
