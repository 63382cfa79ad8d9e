// Every write of the table sync_windows, the per-day ledger (named so for history: the date windows
// of a plan are sync_cursors): one row per organization and day walked to its end, when and by
// which run, and the organization's threats of that day after the walk (docs/schema.md).
import type { DayDigest } from '../content-hash.js';
import { digestHex, emptyDigest } from '../content-hash.js';
import { addDays, daysBetween } from '../../lib/days.js';
import type { Database, Statement } from '../sqlite.js';

/** A window walked to its end: each of its days enters the ledger. */
export interface CompletedWindow {
  readonly organization: string;
  readonly runId: number;
  readonly windowStart: string;
  readonly windowEnd: string;
  readonly windowPages: number;
  readonly completedAt: string;
  /** The types the walk asked for, comma separated; null: every type. */
  readonly assetTypes: string | null;
}

/** The walk's count replaces an estimate. */
const RECORD_DAY_SQL = `INSERT INTO sync_windows (organization, day, completed_at, run_id, window_start, window_end, pages, records, content_hash, asset_types)
       VALUES (:organization, :day, :completedAt, :runId, :windowStart, :windowEnd, :pages, :records, :contentHash, :assetTypes)
       ON CONFLICT (organization, day) DO UPDATE SET completed_at = excluded.completed_at, run_id = excluded.run_id,
         window_start = excluded.window_start, window_end = excluded.window_end, pages = excluded.pages,
         records = excluded.records, content_hash = excluded.content_hash, estimated_records = NULL, asset_types = excluded.asset_types`;

/** A day walked again for some types only (a widening's): it stays as it was unless a whole walk recorded it. */
const RECORD_WALKED_DAY_SQL = `UPDATE sync_windows SET completed_at = :completedAt, run_id = :runId, window_start = :windowStart, window_end = :windowEnd,
         pages = :pages, records = :records, content_hash = :contentHash, estimated_records = NULL, asset_types = :assetTypes
       WHERE organization = :organization AND day = :day AND run_id > 0`;

/**
 * A day that holds a threat of the organization and was never walked for it (a threat moved there,
 * found by a removal check or written by another organization's walk): it joins the ledger as
 * never walked, so the reconciliation walks it first and `sync_status` counts it overdue until then.
 */
export const NEVER_WALKED = '1970-01-01T00:00:00.000Z';

const JOIN_DAY_SQL = `INSERT INTO sync_windows (organization, day, completed_at, run_id) VALUES (?, ?, '${NEVER_WALKED}', 0)
       ON CONFLICT (organization, day) DO NOTHING`;

/** The threat's day, for every organization it is current for. */
const JOIN_DAY_OF_LINKS_SQL = `INSERT INTO sync_windows (organization, day, completed_at, run_id)
       SELECT o.organization, substr(t.blocked_at, 1, 10), '${NEVER_WALKED}', 0
         FROM threats t JOIN organization_threats o ON o.threat_id = t.id
        WHERE t.id = ? AND o.removed_at IS NULL
       ON CONFLICT (organization, day) DO NOTHING`;

/**
 * (organization, first day, the day after the last): the days of a span holding a current threat
 * of the organization, joined as never walked. CROSS JOIN: driven from the blocked_at index, as
 * WINDOW_THREATS_SQL is.
 */
const JOIN_DAYS_HOLDING_SQL = `INSERT INTO sync_windows (organization, day, completed_at, run_id)
       SELECT DISTINCT o.organization, substr(t.blocked_at, 1, 10), '${NEVER_WALKED}', 0
         FROM threats t CROSS JOIN organization_threats o ON o.threat_id = t.id AND o.organization = ?
        WHERE t.blocked_at >= ? AND t.blocked_at < ? AND o.removed_at IS NULL AND o.out_of_scope = 0
       ON CONFLICT (organization, day) DO NOTHING`;

export class DayLedgerRows {
  readonly #recordDay: Statement;
  readonly #recordWalkedDay: Statement;
  readonly #joinDay: Statement;
  readonly #joinDayOfLinks: Statement;
  readonly #joinDaysHolding: Statement;
  readonly #estimates: Statement;
  readonly #setEstimate: Statement;

  constructor(sqlite: Database) {
    this.#recordDay = sqlite.prepare(RECORD_DAY_SQL);
    this.#recordWalkedDay = sqlite.prepare(RECORD_WALKED_DAY_SQL);
    this.#joinDay = sqlite.prepare(JOIN_DAY_SQL);
    this.#joinDayOfLinks = sqlite.prepare(JOIN_DAY_OF_LINKS_SQL);
    this.#joinDaysHolding = sqlite.prepare(JOIN_DAYS_HOLDING_SQL);
    this.#estimates = sqlite.prepare(
      'SELECT day, coalesce(estimated_records, records, 0) AS estimate FROM sync_windows WHERE organization = ? AND day BETWEEN ? AND ? ORDER BY day',
    );
    this.#setEstimate = sqlite.prepare('UPDATE sync_windows SET estimated_records = ? WHERE organization = ? AND day = ?');
  }

  /**
   * Records every day of the window, each with its digest (a day without threats: the empty one).
   * `walkedOnly`: only the days a whole walk recorded before (a walk of some types only).
   */
  recordWindow(window: CompletedWindow, digests: ReadonlyMap<string, DayDigest>, { walkedOnly = false } = {}): void {
    const record = walkedOnly ? this.#recordWalkedDay : this.#recordDay;
    const days = daysBetween(window.windowStart, window.windowEnd);
    for (let offset = 0; offset < days; offset += 1) {
      const day = addDays(window.windowStart, offset);
      const digest = digests.get(day) ?? emptyDigest();
      const { organization, completedAt, runId, windowStart, windowEnd, windowPages: pages, assetTypes } = window;
      record.run({ organization, day, completedAt, runId, windowStart, windowEnd, pages, records: digest.records, contentHash: digestHex(digest), assetTypes });
    }
  }

  /** The day joins the organization's ledger as never walked, unless the ledger holds it. */
  joinDay(organization: string, day: string): void {
    this.#joinDay.run(organization, day);
  }

  /**
   * The days from `from` through `to` that hold a current threat of the organization join its
   * ledger as never walked, unless it holds them: what a walk left midway wrote there is then
   * walked again by the reconciliation, not left where no walk looks.
   */
  joinDaysHolding(organization: string, from: string, to: string): void {
    this.#joinDaysHolding.run(organization, from, addDays(to, 1));
  }

  /** A threat written again (its day may have changed): its day joins the ledger of every organization it is current for. */
  joinDayOfThreat(threatId: number): void {
    this.#joinDayOfLinks.run(threatId);
  }

  /**
   * A walk of these days was cut short by the run's request budget after seeing `atLeast` records:
   * when the ledger's counts promise fewer, the difference is shared out over the days, so the
   * planner sizes their next windows by what is there now and does not plan the same window
   * again. Returns the records the days were estimated at before, and after.
   */
  recordObservedSize(size: ObservedSize): { before: number; after: number } {
    const days = this.#estimates.all(size.organization, size.from, size.to) as Array<{ day: string; estimate: number }>;
    const before = days.reduce((sum, day) => sum + day.estimate, 0);
    if (days.length === 0 || size.atLeast <= before) return { before, after: before };
    const share = Math.ceil((size.atLeast - before) / days.length);
    for (const day of days) this.#setEstimate.run(day.estimate + share, size.organization, day.day);
    return { before, after: before + share * days.length };
  }
}

export interface ObservedSize {
  readonly organization: string;
  readonly from: string;
  readonly to: string;
  readonly atLeast: number;
}
