// Every write of the table reconcile_state: when an organization's reconciliation cycle last
// completed (no mirrored day was due any more).
import type { Database, Statement } from '../sqlite.js';

export class ReconcileState {
  readonly #recordCycle: Statement;

  constructor(sqlite: Database) {
    this.#recordCycle = sqlite.prepare(
      `INSERT INTO reconcile_state (organization, cycle_completed_at, updated_at) VALUES (?, ?, ?)
       ON CONFLICT (organization) DO UPDATE SET cycle_completed_at = excluded.cycle_completed_at, updated_at = excluded.updated_at`,
    );
  }

  recordCycleCompleted(organization: string, at: string): void {
    this.#recordCycle.run(organization, at, at);
  }
}
