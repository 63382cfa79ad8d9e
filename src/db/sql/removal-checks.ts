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
}

const CHECK_SQL = {
  carry: `INSERT INTO removal_checks (organization, threat_id, window_start, window_end, window_pages, asset_types, carried_at)
          VALUES (?, ?, ?, ?, ?, ?, ?)
          ON CONFLICT (organization, threat_id) DO UPDATE SET window_start = excluded.window_start, window_end = excluded.window_end,
            window_pages = excluded.window_pages, asset_types = excluded.asset_types, carried_at = excluded.carried_at`,
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
    for (const id of threatIds) this.#sql.carry.run(window.organization, id, window.windowStart, window.windowEnd, window.windowPages, window.assetTypes, stamp);
  }

  settle(organization: string, threatIds: readonly number[]): void {
    for (const id of threatIds) this.#sql.settle.run(organization, id);
  }

  /** Checks of the window still to make. */
  pendingIn(window: Pick<CarriedWindow, 'organization' | 'windowStart' | 'windowEnd'>): number {
    return this.#sql.pendingIn.get(window.organization, window.windowStart, window.windowEnd) as number;
  }
}
