// Where the reports stream stands for an organization (report_sync_state, written by
// sql/reports.ts): the walk in progress, and whether the stream is disabled for now.
import type { Database, Statement } from '../sqlite.js';

/** Where a walk of the reports list resumes, as report_sync_state records it. */
export interface ReportWalk {
  readonly mode: 'incremental' | 'backfill';
  readonly rangeStart: string | null;
  readonly rangeEnd: string | null;
  readonly nextCursor: string | null;
}

export interface ReportState extends Partial<ReportWalk> {
  readonly disabledReason: string | null;
  readonly disabledUntil: string | null;
  /** The number of the walk in progress, or of the last one started (null before the first). */
  readonly walk: number | null;
  /** When the last walk of the whole list to its end began; null before the first. */
  readonly fullWalkAt: string | null;
}

export class ReportStateReads {
  readonly #state: Statement;

  constructor(sqlite: Database) {
    this.#state = sqlite.prepare(
      `SELECT mode, range_start AS rangeStart, range_end AS rangeEnd, next_cursor AS nextCursor, disabled_reason AS disabledReason,
              disabled_until AS disabledUntil, walk, full_walk_at AS fullWalkAt FROM report_sync_state WHERE organization = ?`,
    );
  }

  state(organization: string): ReportState | undefined {
    return this.#state.get(organization) as ReportState | undefined;
  }
}
