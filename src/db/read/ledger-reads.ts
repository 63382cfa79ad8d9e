// The per-day ledger as the sync and `verify` read it (table sync_windows, written by
// sql/day-ledger.ts): which days were walked to their end, when and by which run, and the
// organization's threats of each day after that walk; and the digests of the rows now.
import { addDays } from '../../lib/days.js';
import { ofAssetTypes, type Threat } from '../../records.js';
import { addToDayDigests, type DayDigest, type DigestedThreat } from '../content-hash.js';
import { type Database, prepareAll, type Statements } from '../sqlite.js';

/**
 * The organization's current threats (neither removed nor out of its scope) of a span of days:
 * (organization, first day, the day after the last), each with its link's own type (`ownType`:
 * what the organization's scope is judged by). CROSS JOIN keeps SQLite from driving this from the
 * organization's links: that reads every link of the organization at each window's end (quadratic
 * over a backfill; measured).
 */
export const WINDOW_THREATS_SQL = `SELECT t.id, t.content, t.type, t.blocked_at AS blockedAt, coalesce(o.type, t.type) AS ownType
         FROM threats t CROSS JOIN organization_threats o ON o.threat_id = t.id AND o.organization = ?
        WHERE t.blocked_at >= ? AND t.blocked_at < ? AND o.removed_at IS NULL AND o.out_of_scope = 0`;

/** Every threat of a span of days, whoever it belongs to: the blocked_at index alone answers (it holds the id). */
export const THREAT_IDS_BETWEEN_SQL = 'SELECT id FROM threats WHERE blocked_at >= ? AND blocked_at < ?';

/**
 * (organization, threat id): the type of the organization's link to the threat when it is current
 * (neither removed nor out of scope); no row otherwise. The link's own type, not the threat's: a
 * walk of another organization sharing the threat may have changed `threats.type`.
 */
export const CURRENT_LINK_SQL = 'SELECT coalesce(type, \'\') FROM organization_threats WHERE organization = ? AND threat_id = ? AND removed_at IS NULL AND out_of_scope = 0';

/** A row of WINDOW_THREATS_SQL: a digested threat and the type its organization's scope judges it by. */
export type OwnedThreat = DigestedThreat & { readonly ownType: string };

/** Whether a link's own type is one of a walk's types (undefined: every type). */
export function ownTypeIn(assetTypes: readonly string[] | undefined): (threat: { readonly ownType: string }) => boolean {
  const inScope = ofAssetTypes(assetTypes);
  return (threat) => inScope({ type: threat.ownType });
}

/** A mirrored day as the ledger last recorded it. */
export interface LedgerDay {
  readonly day: string;
  /** When its window was last walked to the end. */
  readonly completedAt: string;
  /**
   * The organization's threats of that day after that walk (null in rows of older versions), or
   * more: what a reconciliation cut short by its budget saw since (sync_windows.estimated_records).
   */
  readonly records: number | null;
}

/** What the ledger recorded of a day for `verify`: null fields in rows of older versions. */
export interface RecordedDay {
  readonly records: number | null;
  readonly contentHash: string | null;
  /** The types of the walk that recorded it, comma separated; null: every type. */
  readonly assetTypes: string | null;
}

/** Which ledger rows count as due: the same rule as sync_status's overdue_days column. */
export interface DueRule {
  /** Days last walked by this run or a later one are never due (the run being reconciled after). */
  readonly runId: number;
  /** Due when last walked before this ISO time; null: every day not walked by `runId` or later. */
  readonly walkedBefore: string | null;
}

const LEDGER_SQL = {
  windowThreats: WINDOW_THREATS_SQL,
  recordedDays: 'SELECT day, records, content_hash AS contentHash, asset_types AS assetTypes FROM sync_windows WHERE organization = ? AND day BETWEEN ? AND ?',
  // The primary key (organization, day) serves this: a few thousand rows per organization.
  dueDays: `SELECT day, completed_at AS completedAt, coalesce(estimated_records, records) AS records FROM sync_windows
        WHERE organization = ? AND run_id < ? AND (? IS NULL OR completed_at < ?)
        ORDER BY completed_at, day`,
  carriedChecks: `SELECT c.threat_id AS threatId, c.window_start AS windowStart, c.window_end AS windowEnd, c.window_pages AS windowPages,
              c.asset_types AS assetTypes, t.content, t.type, t.blocked_at AS blockedAt,
              coalesce(o.removed_at IS NULL AND o.out_of_scope = 0, 0) AS current
         FROM removal_checks c
         LEFT JOIN threats t ON t.id = c.threat_id
         LEFT JOIN organization_threats o ON o.organization = c.organization AND o.threat_id = c.threat_id
        WHERE c.organization = ? ORDER BY c.carried_at, c.window_start, c.threat_id`,
};

/** A window walked whole by a reconciliation whose removal checks its budget did not cover: they go on in a later run. */
export interface CarriedChecks {
  readonly windowStart: string;
  readonly windowEnd: string;
  readonly windowPages: number;
  /** The types its walk asked for, comma separated; null: every type. */
  readonly assetTypes: string | null;
  /** The threats still current for the organization: each is asked about. */
  readonly candidates: readonly Threat[];
  /** Those no longer current (a later walk settled them): settled without a request. */
  readonly settled: readonly number[];
}

export class LedgerReads {
  readonly #sql: Statements<keyof typeof LEDGER_SQL>;

  constructor(sqlite: Database) {
    this.#sql = prepareAll(sqlite, LEDGER_SQL);
  }

  /** The ledger's days between two days: records and content hash recorded when each was walked. */
  recordedDays(organization: string, from: string, to: string): Map<string, RecordedDay> {
    const rows = this.#sql.recordedDays.all(organization, from, to) as Array<RecordedDay & { day: string }>;
    return new Map(rows.map((row) => [row.day, { records: row.records, contentHash: row.contentHash, assetTypes: row.assetTypes }]));
  }

  /** Per day, the digest of the organization's current threats (not removed) between two days, of a scope's types. */
  currentDigests(organization: string, from: string, to: string, assetTypes?: readonly string[]): Map<string, DayDigest> {
    const digests = new Map<string, DayDigest>();
    const inScope = ownTypeIn(assetTypes);
    for (const threat of this.#sql.windowThreats.iterate(organization, from, addDays(to, 1)) as Iterable<OwnedThreat>) if (inScope(threat)) addToDayDigests(digests, threat);
    return digests;
  }

  /** The organization's carried removal checks by window, those carried first first. */
  carriedChecks(organization: string): CarriedChecks[] {
    const rows = this.#sql.carriedChecks.all(organization) as Array<Threat & Omit<CarriedChecks, 'candidates' | 'settled'> & { threatId: number; current: number }>;
    const windows = new Map<string, { window: Omit<CarriedChecks, 'candidates' | 'settled'>; candidates: Threat[]; settled: number[] }>();
    for (const row of rows) {
      const key = `${row.windowStart}..${row.windowEnd}`;
      let entry = windows.get(key);
      if (!entry) windows.set(key, (entry = { window: { windowStart: row.windowStart, windowEnd: row.windowEnd, windowPages: row.windowPages, assetTypes: row.assetTypes }, candidates: [], settled: [] }));
      if (row.current === 1) entry.candidates.push({ id: row.threatId, content: row.content, type: row.type, blockedAt: row.blockedAt });
      else entry.settled.push(row.threatId);
    }
    return [...windows.values()].map(({ window, candidates, settled }) => ({ ...window, candidates, settled }));
  }

  /** The organization's days due for a re-walk, the longest-unwalked first. */
  dueDays(organization: string, rule: DueRule): LedgerDay[] {
    return this.#sql.dueDays.all(organization, rule.runId, rule.walkedBefore, rule.walkedBefore) as LedgerDay[];
  }
}
