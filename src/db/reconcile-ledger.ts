// The reconciliation's reads and writes: which mirrored days are due for a re-walk, and when a
// cycle last completed. A day is due by the ledger (sync_windows): when and by which run it was
// last walked to its end.
import type Database from 'better-sqlite3';

/** A mirrored day as the ledger last recorded it. */
export interface LedgerDay {
  readonly day: string;
  /** When its window was last walked to the end. */
  readonly completedAt: string;
  /** The organization's threats of that day after that walk (null in rows of older versions). */
  readonly records: number | null;
}

/** Which ledger rows count as due: the same rule as sync_status's overdue_days column. */
export interface DueRule {
  /** Days last walked by this run or a later one are never due (the run being reconciled after). */
  readonly runId: number;
  /** Due when last walked before this ISO time; null: every day not walked by `runId` or later. */
  readonly walkedBefore: string | null;
}

export class ReconcileLedger {
  readonly #sqlite: Database.Database;
  readonly #dueDays: Database.Statement<unknown[], LedgerDay>;
  readonly #recordCycle: Database.Statement<unknown[], unknown>;

  constructor(sqlite: Database.Database) {
    this.#sqlite = sqlite;
    // The primary key (organization, day) serves this: a few thousand rows per organization.
    this.#dueDays = sqlite.prepare(
      `SELECT day, completed_at AS completedAt, records FROM sync_windows
        WHERE organization = ? AND run_id < ? AND (? IS NULL OR completed_at < ?)
        ORDER BY completed_at, day`,
    );
    this.#recordCycle = sqlite.prepare(
      `INSERT INTO reconcile_state (organization, cycle_completed_at, updated_at) VALUES (?, ?, ?)
       ON CONFLICT (organization) DO UPDATE SET cycle_completed_at = excluded.cycle_completed_at, updated_at = excluded.updated_at`,
    );
  }

  /** The organization's due days, the longest-unwalked first. */
  dueDays(organization: string, rule: DueRule): LedgerDay[] {
    return this.#dueDays.all(organization, rule.runId, rule.walkedBefore, rule.walkedBefore);
  }

  /** No day is due any more: a reconciliation cycle completed now. */
  recordCycleCompleted(organization: string, now: string): void {
    this.#sqlite.transaction(() => this.#recordCycle.run(organization, now, now)).immediate();
  }
}
