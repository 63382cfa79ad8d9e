// Unfinished work as the sync reads it: open plans (sync_plans), their windows' cursors
// (sync_cursors), and how far each organization is complete (sync_checkpoints.complete_through).
import type { SyncMode } from '../schema.js';
import type { Database, Statement } from '../sqlite.js';

export interface Plan {
  readonly id: number;
  readonly organization: string;
  readonly mode: SyncMode;
  readonly rangeStart: string;
  readonly rangeEnd: string;
  /** A plan that widens the scope: the types it walks (comma separated), '*' for every type; null for every other plan. */
  readonly widening: string | null;
}

export interface PlanWindow {
  readonly planId: number;
  readonly windowStart: string;
  readonly windowEnd: string;
  readonly nextPage: string | null;
  readonly completedAt: string | null;
  /** The last id of the last page committed: where a resumed walk checks the list has not shifted. */
  readonly lastId: number | null;
  /** When the walk of the window's committed pages began; null before its first page. */
  readonly startedAt: string | null;
}

/** A plan's windows, by start day: (plan id). */
export const PLAN_WINDOWS_SQL = `SELECT plan_id AS planId, window_start AS windowStart, window_end AS windowEnd, next_page AS nextPage,
              completed_at AS completedAt, last_id AS lastId, started_at AS startedAt
         FROM sync_cursors WHERE plan_id = ? ORDER BY window_start`;

export const PLAN_COLUMNS = 'id, organization, mode, range_start AS rangeStart, range_end AS rangeEnd, widening';

export class PlanReads {
  readonly #openPlans: Statement;
  readonly #wideningPlans: Statement;
  readonly #windows: Statement;
  readonly #completeThrough: Statement;

  constructor(sqlite: Database) {
    this.#openPlans = sqlite.prepare(`SELECT ${PLAN_COLUMNS} FROM sync_plans WHERE organization = ? AND mode = ? AND widening IS NULL ORDER BY id`);
    this.#wideningPlans = sqlite.prepare(`SELECT ${PLAN_COLUMNS} FROM sync_plans WHERE organization = ? AND widening IS NOT NULL ORDER BY id`);
    this.#windows = sqlite.prepare(PLAN_WINDOWS_SQL);
    this.#completeThrough = sqlite.prepare('SELECT complete_through FROM sync_checkpoints WHERE organization = ?').pluck();
  }

  /** Every unfinished plan of this organization and mode, the oldest first; not those widening its scope. */
  openPlans(organization: string, mode: SyncMode): Plan[] {
    return this.#openPlans.all(organization, mode) as Plan[];
  }

  /** The unfinished plans that walk the types a widened scope added, over days already mirrored. */
  wideningPlans(organization: string): Plan[] {
    return this.#wideningPlans.all(organization) as Plan[];
  }

  planWindows(planId: number): PlanWindow[] {
    return this.#windows.all(planId) as PlanWindow[];
  }

  /** The last closed day every earlier day is mirrored through; null before the first complete run. */
  completeThrough(organization: string): string | null {
    return (this.#completeThrough.get(organization) as string | null | undefined) ?? null;
  }
}
