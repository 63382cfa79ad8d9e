// The reconciliation's reads and writes: which mirrored days are due for a re-walk (by the ledger,
// sync_windows: when and by which run each day was last walked to its end), and when a cycle last
// completed.
import type { DayLedger, DueRule, LedgerDay } from './day-ledger.js';
import type { Database, Statement } from './sqlite.js';
import { immediately } from './write-transaction.js';

export type { DueRule, LedgerDay } from './day-ledger.js';

export class ReconcileLedger {
  readonly #sqlite: Database;
  readonly #ledger: DayLedger;
  readonly #recordCycle: Statement;
  readonly #estimates: Statement;
  readonly #setEstimate: Statement;

  constructor(sqlite: Database, ledger: DayLedger) {
    this.#sqlite = sqlite;
    this.#ledger = ledger;
    this.#recordCycle = sqlite.prepare(
      `INSERT INTO reconcile_state (organization, cycle_completed_at, updated_at) VALUES (?, ?, ?)
       ON CONFLICT (organization) DO UPDATE SET cycle_completed_at = excluded.cycle_completed_at, updated_at = excluded.updated_at`,
    );
    this.#estimates = sqlite.prepare(
      'SELECT day, coalesce(estimated_records, records, 0) AS estimate FROM sync_windows WHERE organization = ? AND day BETWEEN ? AND ? ORDER BY day',
    );
    this.#setEstimate = sqlite.prepare('UPDATE sync_windows SET estimated_records = ? WHERE organization = ? AND day = ?');
  }

  /**
   * A walk of these days was cut short by the run's request budget after seeing `atLeast` records:
   * when the ledger's counts promise fewer, the difference is shared out over the days, so the
   * planner sizes their next windows by what is there now and does not plan the same window
   * again. Returns the records the days were estimated at before, and after.
   */
  recordObservedSize(organization: string, from: string, to: string, atLeast: number): { before: number; after: number } {
    return immediately(this.#sqlite, () => {
      const days = this.#estimates.all(organization, from, to) as Array<{ day: string; estimate: number }>;
      const before = days.reduce((sum, day) => sum + day.estimate, 0);
      if (days.length === 0 || atLeast <= before) return { before, after: before };
      const share = Math.ceil((atLeast - before) / days.length);
      for (const day of days) this.#setEstimate.run(day.estimate + share, organization, day.day);
      return { before, after: before + share * days.length };
    });
  }

  /** The organization's due days, the longest-unwalked first. */
  dueDays(organization: string, rule: DueRule): LedgerDay[] {
    return this.#ledger.dueDays(organization, rule);
  }

  /** No day is due any more: a reconciliation cycle completed now. */
  recordCycleCompleted(organization: string, now: string): void {
    immediately(this.#sqlite, () => this.#recordCycle.run(organization, now, now));
  }
}
