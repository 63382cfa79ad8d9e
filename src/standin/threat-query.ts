// The stand-in's reading of a POST /threats/list body: validation, defaults, filter and sort.
import { addDays, dayOf, isDay } from '../lib/days.js';
import type { StandinThreat } from './data.js';

/**
 * An AssetType value as the interface spells them (URL, PLATFORM_07). A name of that form outside
 * the documented list is accepted, as a service that has added platforms (and whose data holds
 * such types: GenerateOptions.unknownTypeShare) would; anything else is a 400.
 */
export const ASSET_TYPE_NAME = /^[A-Z][A-Z0-9_]{0,63}$/;
const SORT_KEYS = ['id', 'blockedAt', 'content', 'type'] as const;
type SortKey = (typeof SORT_KEYS)[number];

export interface ThreatQuery {
  readonly query: string | undefined;
  readonly startDate: string;
  readonly endDate: string;
  readonly assetType: readonly string[] | undefined;
  readonly sorting: ReadonlyArray<{ key: SortKey; direction: 'asc' | 'desc' }>;
  readonly perPage: number;
  readonly page: number;
}

export class BadRequest extends Error {}

/** Applies the documented defaults: last 1 day, id ascending, 10 per page, first page. */
export function parseThreatQuery(body: unknown, now: Date): ThreatQuery {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw new BadRequest('body must be a JSON object');
  const input = body as Record<string, unknown>;
  const today = dayOf(now);
  const startDate = optionalDay(input.startDate, 'startDate') ?? addDays(today, -1);
  const endDate = optionalDay(input.endDate, 'endDate') ?? today;
  if (input.query !== undefined && typeof input.query !== 'string') throw new BadRequest('query must be a string');
  let assetType: string[] | undefined;
  if (input.assetType !== undefined) {
    if (!Array.isArray(input.assetType) || !input.assetType.every((value) => typeof value === 'string' && ASSET_TYPE_NAME.test(value))) {
      throw new BadRequest('assetType must be an array of AssetType values');
    }
    assetType = input.assetType as string[];
  }
  let sorting: ThreatQuery['sorting'] = [{ key: 'id', direction: 'asc' }];
  if (input.sorting !== undefined) {
    if (!Array.isArray(input.sorting)) throw new BadRequest('sorting must be an array');
    sorting = input.sorting.map((entry: unknown) => {
      const { key, direction } = (entry ?? {}) as { key?: unknown; direction?: unknown };
      if (!SORT_KEYS.includes(key as SortKey)) throw new BadRequest(`sorting key must be one of ${SORT_KEYS.join(', ')}`);
      if (direction !== 'asc' && direction !== 'desc') throw new BadRequest('sorting direction must be asc or desc');
      return { key: key as SortKey, direction };
    });
  }
  const perPage = input.per_page ?? 10;
  if (typeof perPage !== 'number' || !Number.isInteger(perPage) || perPage < 1 || perPage > 100) {
    throw new BadRequest('per_page must be an integer from 1 to 100');
  }
  let page = 1;
  if (input.next_page !== undefined) {
    if (typeof input.next_page !== 'string' || !/^[1-9]\d*$/.test(input.next_page)) throw new BadRequest('next_page must be a positive integer in string form');
    page = Number(input.next_page);
  }
  return { query: input.query as string | undefined, startDate, endDate, assetType, sorting, perPage, page };
}

function optionalDay(value: unknown, name: string): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || !isDay(value)) throw new BadRequest(`${name} must be a date in YYYY-MM-DD form`);
  return value;
}

export function matches(threat: StandinThreat, query: ThreatQuery): boolean {
  if (query.assetType && !query.assetType.includes(threat.type)) return false;
  if (query.query !== undefined && !threat.content.toLowerCase().includes(query.query.toLowerCase())) return false;
  return true;
}

/**
 * The UTC day of a timestamp's instant: a backend filters dates by instant, so a threat stored as
 * 2026-11-21T01:00:00+05:00 belongs to 2026-11-20 (UTC), whatever its text says.
 */
export function utcDayOf(timestamp: string): string {
  if (timestamp.endsWith('Z')) return timestamp.slice(0, 10);
  const instant = Date.parse(timestamp);
  return Number.isNaN(instant) ? timestamp.slice(0, 10) : new Date(instant).toISOString().slice(0, 10);
}

export function compareBy(sorting: ThreatQuery['sorting']): (a: StandinThreat, b: StandinThreat) => number {
  return (a, b) => {
    for (const { key, direction } of sorting) {
      // Timestamps by instant, as a backend sorts them, not by their text.
      const left = key === 'blockedAt' ? Date.parse(a.blockedAt) : a[key];
      const right = key === 'blockedAt' ? Date.parse(b.blockedAt) : b[key];
      const order = left < right ? -1 : left > right ? 1 : 0;
      if (order !== 0) return direction === 'asc' ? order : -order;
    }
    return a.id - b.id;
  };
}
