// Every write of the table removal_checks: the removal checks of a reconciliation's window that its
// request budget did not cover, carried over to the next run, and settled there (docs/reconciliation.md).
import { type Database, prepareAll, type Statements } from '../sqlite.js';

/** A window walked whole whose checks go on in a later run. */
export interface CarriedWindow {
  readonly organization: string;
  readonly windowStart: string;
  readonly windowEnd: string;
  readonly windowPages: number;
  /** The types the walk asked for, comma separated; null: every type. */
  readonly assetTypes: string | null;
  /** The run that began the window's walk, and when: its pages were read from then on. */
  readonly walkedRunId: number;
  readonly walkedAt: string;
}

const CHECK_SQL = {
  carry: `INSERT INTO removal_checks (organization, threat_id, window_start, window_end, window_pages, asset_types, carried_at, walked_run_id, walked_at)
          VALUES (:organization, :id, :windowStart, :windowEnd, :windowPages, :assetTypes, :stamp, :walkedRunId, :walkedAt)
          ON CONFLICT (organization, threat_id) DO UPDATE SET window_start = excluded.window_start, window_end = excluded.window_end,
            window_pages = excluded.window_pages, asset_types = excluded.asset_types, carried_at = excluded.carried_at,
            walked_run_id = excluded.walked_run_id, walked_at = excluded.walked_at`,
  settle: 'DELETE FROM removal_checks WHERE organization = ? AND threat_id = ?',
  pendingIn: 'SELECT count(*) FROM removal_checks WHERE organization = ? AND window_start = ? AND window_end = ?',
};

export class RemovalCheckRows {
  readonly #sql: Statements<keyof typeof CHECK_SQL>;

  constructor(sqlite: Database) {
    this.#sql = prepareAll(sqlite, CHECK_SQL);
    this.#sql.pendingIn.pluck();
  }

  /** The checks of these threats go on in a later run. */
  carry(window: CarriedWindow, threatIds: readonly number[], stamp: string): void {
    const { organization, windowStart, windowEnd, windowPages, assetTypes, walkedRunId, walkedAt } = window;
    for (const id of threatIds) this.#sql.carry.run({ organization, id, windowStart, windowEnd, windowPages, assetTypes, stamp, walkedRunId, walkedAt });
  }

  settle(organization: string, threatIds: readonly number[]): void {
    for (const id of threatIds) this.#sql.settle.run(organization, id);
  }

  /** Checks of the window still to make. */
  pendingIn(window: Pick<CarriedWindow, 'organization' | 'windowStart' | 'windowEnd'>): number {
    return this.#sql.pendingIn.get(window.organization, window.windowStart, window.windowEnd) as number;
  }
}
