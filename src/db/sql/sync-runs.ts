// Every write of the table sync_runs: a run's start and end, runs a dead process left running,
// and what each page (of threats or reports) and each window's conclusion add to their run.
import type { RejectedRecord } from '../../records.js';
import type { RunStatus, SyncMode } from '../schema.js';
import type { Database, Statement } from '../sqlite.js';

export type RunStream = 'threats' | 'reports';

/** Whose run a write counts in. */
export interface OfRun {
  readonly organization: string;
  readonly runId: number;
}

/** A page of either stream: what the service sent that failed validation, and the retries it took. */
export interface PageOfRun extends OfRun {
  readonly rejected: readonly RejectedRecord[];
  readonly retries: number;
}

export interface RunStart {
  readonly organization: string;
  readonly stream: RunStream;
  readonly mode: SyncMode;
  readonly rangeStart: string;
  readonly rangeEnd: string;
  readonly startedAt: string;
}

export interface RunEnd {
  readonly runId: number;
  readonly status: Exclude<RunStatus, 'running'>;
  readonly error: string | null;
  readonly finishedAt: string;
}

/** What a page adds to its run: the threats_* columns for a page of threats, reports_* for one of reports. */
export interface PageTally {
  readonly runId: number;
  readonly retries: number;
  readonly inserted: number;
  readonly updated: number;
  readonly rejected: number;
}

const START_SQL = `INSERT INTO sync_runs (organization, stream, mode, status, range_start, range_end, started_at)
                   VALUES (?, ?, ?, 'running', ?, ?, ?) RETURNING id`;

const COUNT_THREAT_PAGE_SQL = `UPDATE sync_runs SET pages = pages + 1, retries = retries + ?, threats_inserted = threats_inserted + ?,
              threats_updated = threats_updated + ?, threats_rejected = threats_rejected + ? WHERE id = ?`;

/** A conclusion is no page: the threats still listed it wrote, and the removals it marked. */
const COUNT_CONCLUSION_SQL = `UPDATE sync_runs SET threats_inserted = threats_inserted + ?, threats_updated = threats_updated + ?,
              threats_removed = threats_removed + ? WHERE id = ?`;

/** Counts of their own, so the threats_* columns only ever count threats. */
const COUNT_REPORT_PAGE_SQL = `UPDATE sync_runs SET pages = pages + 1, retries = retries + ?, reports_inserted = reports_inserted + ?,
              reports_updated = reports_updated + ?, reports_rejected = reports_rejected + ? WHERE id = ?`;

/** The statements run in the caller's transaction: a page's counts commit with the page. */
export class SyncRuns {
  readonly #start: Statement;
  readonly #finish: Statement;
  readonly #markAbandoned: Statement;
  readonly #countThreatPage: Statement;
  readonly #countConclusion: Statement;
  readonly #countReportPage: Statement;
  readonly #countReportsRemoved: Statement;

  constructor(sqlite: Database) {
    this.#start = sqlite.prepare(START_SQL).pluck();
    this.#finish = sqlite.prepare('UPDATE sync_runs SET status = ?, error = ?, finished_at = ? WHERE id = ?');
    this.#markAbandoned = sqlite.prepare("UPDATE sync_runs SET status = 'interrupted', finished_at = ?, error = ? WHERE status = 'running'");
    this.#countThreatPage = sqlite.prepare(COUNT_THREAT_PAGE_SQL);
    this.#countConclusion = sqlite.prepare(COUNT_CONCLUSION_SQL);
    this.#countReportPage = sqlite.prepare(COUNT_REPORT_PAGE_SQL);
    this.#countReportsRemoved = sqlite.prepare('UPDATE sync_runs SET reports_removed = reports_removed + ? WHERE id = ?');
  }

  start(run: RunStart): number {
    return this.#start.get(run.organization, run.stream, run.mode, run.rangeStart, run.rangeEnd, run.startedAt) as number;
  }

  finish(end: RunEnd): void {
    this.#finish.run(end.status, end.error, end.finishedAt, end.runId);
  }

  /** A run still marked running when the writer starts belonged to a process that died. */
  markAbandoned(now: string): number {
    return this.#markAbandoned.run(now, 'the process stopped before the run finished').changes;
  }

  countThreatPage(page: PageTally): void {
    this.#countThreatPage.run(page.retries, page.inserted, page.updated, page.rejected, page.runId);
  }

  countConclusion(runId: number, counts: { readonly inserted: number; readonly updated: number; readonly removed: number }): void {
    this.#countConclusion.run(counts.inserted, counts.updated, counts.removed, runId);
  }

  countReportPage(page: PageTally): void {
    this.#countReportPage.run(page.retries, page.inserted, page.updated, page.rejected, page.runId);
  }

  countReportsRemoved(runId: number, removed: number): void {
    this.#countReportsRemoved.run(removed, runId);
  }
}
