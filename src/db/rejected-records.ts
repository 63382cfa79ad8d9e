// Records the service sent that failed validation, kept raw with the reason: one statement for
// both streams (threat pages on the page-writer thread, report pages on the main thread).
import type { Database, Statement } from './sqlite.js';

/** A record as received, and why it could not be used. */
export interface RejectedRecordRow {
  readonly raw: string;
  readonly reason: string;
}

export const INSERT_REJECTED_RECORD_SQL = 'INSERT INTO rejected_records (organization, run_id, raw, reason, seen_at) VALUES (?, ?, ?, ?, ?)';

/** Keeps a page's rejected records, in the caller's transaction. */
export class RejectedRecordWriter {
  readonly #insert: Statement;

  constructor(sqlite: Database) {
    this.#insert = sqlite.prepare(INSERT_REJECTED_RECORD_SQL);
  }

  insertAll(organization: string, runId: number, records: readonly RejectedRecordRow[], seenAt: string): void {
    for (const record of records) this.#insert.run(organization, runId, record.raw, record.reason, seenAt);
  }
}
