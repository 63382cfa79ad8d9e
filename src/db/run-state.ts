// The one home of run state (sync_runs): every statement that writes a run's row, for both
// connections that write it (the main thread's and the page-writer thread's, which has no drizzle).
import type { Database, Statement } from './sqlite.js';
import type { RunStatus, SYNC_MODES } from './schema.js';

export type SyncMode = (typeof SYNC_MODES)[number];
export type RunStream = 'threats' | 'reports';

/** A page of threats: its counts, retries and the removals its window's end found. */
export const COUNT_THREAT_PAGE_SQL = `UPDATE sync_runs SET pages = pages + 1, retries = retries + ?, threats_inserted = threats_inserted + ?,
              threats_updated = threats_updated + ?, threats_rejected = threats_rejected + ?, threats_removed = threats_removed + ? WHERE id = ?`;

/** A window's conclusion: the threats still listed it wrote, and the removals it marked (no page). */
export const COUNT_WINDOW_CONCLUSION_SQL = `UPDATE sync_runs SET threats_inserted = threats_inserted + ?, threats_updated = threats_updated + ?,
              threats_removed = threats_removed + ? WHERE id = ?`;

/** A page of reports: counts of their own, so the threats_* columns only ever count threats. */
export const COUNT_REPORT_PAGE_SQL = `UPDATE sync_runs SET pages = pages + 1, retries = retries + ?, reports_inserted = reports_inserted + ?,
              reports_updated = reports_updated + ?, reports_rejected = reports_rejected + ? WHERE id = ?`;

const START_RUN_SQL = `INSERT INTO sync_runs (organization, stream, mode, status, range_start, range_end, started_at)
                       VALUES (?, ?, ?, 'running', ?, ?, ?) RETURNING id`;

const FINISH_RUN_SQL = 'UPDATE sync_runs SET status = ?, error = ?, finished_at = ? WHERE id = ?';

const MARK_ABANDONED_SQL = "UPDATE sync_runs SET status = 'interrupted', finished_at = ?, error = ? WHERE status = 'running'";

/** What a page of reports adds to its run. */
export interface ReportPageCounts {
  readonly inserted: number;
  readonly updated: number;
  readonly rejected: number;
}

/**
 * The run-state statements of one connection. They run in the caller's transaction: a page's
 * counts commit with the page; a run's start and end are single statements.
 */
export class RunStateWriter {
  readonly #start: Statement;
  readonly #finish: Statement;
  readonly #markAbandoned: Statement;
  readonly #countReportPage: Statement;

  constructor(sqlite: Database) {
    this.#start = sqlite.prepare(START_RUN_SQL);
    this.#finish = sqlite.prepare(FINISH_RUN_SQL);
    this.#markAbandoned = sqlite.prepare(MARK_ABANDONED_SQL);
    this.#countReportPage = sqlite.prepare(COUNT_REPORT_PAGE_SQL);
  }

  /** A run still marked running when the writer starts belonged to a process that died. */
  markAbandoned(now: string): number {
    return this.#markAbandoned.run(now, 'the process stopped before the run finished').changes;
  }

  start(organization: string, stream: RunStream, mode: SyncMode, rangeStart: string, rangeEnd: string, now: string): number {
    return (this.#start.get(organization, stream, mode, rangeStart, rangeEnd, now) as { id: number }).id;
  }

  finish(runId: number, status: Exclude<RunStatus, 'running'>, error: string | null, now: string): void {
    this.#finish.run(status, error, now, runId);
  }

  countReportPage(runId: number, retries: number, counts: ReportPageCounts): void {
    this.#countReportPage.run(retries, counts.inserted, counts.updated, counts.rejected, runId);
  }
}
