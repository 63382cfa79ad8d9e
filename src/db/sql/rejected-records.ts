// Every write of the table rejected_records: records the service sent that failed validation, kept
// raw with the reason, for both streams.
import type { RejectedRecord } from '../../records.js';
import type { Database, Statement } from '../sqlite.js';

/** Keeps a page's rejected records, in the caller's transaction. */
export class RejectedRecords {
  readonly #insert: Statement;

  constructor(sqlite: Database) {
    this.#insert = sqlite.prepare('INSERT INTO rejected_records (organization, run_id, raw, reason, seen_at) VALUES (?, ?, ?, ?, ?)');
  }

  insertAll(organization: string, runId: number, records: readonly RejectedRecord[], seenAt: string): void {
    for (const record of records) this.#insert.run(organization, runId, record.raw, record.reason, seenAt);
  }
}
