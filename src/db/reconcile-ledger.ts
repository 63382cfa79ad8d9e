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

  constructor(sqlite: Database, ledger: DayLedger) {
    this.#sqlite = sqlite;
    this.#ledger = ledger;
    this.#recordCycle = sqlite.prepare(
      `INSERT INTO reconcile_state (organization, cycle_completed_at, updated_at) VALUES (?, ?, ?)
       ON CONFLICT (organization) DO UPDATE SET cycle_completed_at = excluded.cycle_completed_at, updated_at = excluded.updated_at`,
    );
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
