// The reports stream's writes: a page of reports and where the walk resumes, in one transaction,
// and the end of a walk (what it covered and did not list).
import type { ReportRecord } from '../../records.js';
import type { RejectedRecords } from '../sql/rejected-records.js';
import type { ReportCoverage, ReportRows, ReportWalk } from '../sql/reports.js';
import type { OfRun, PageOfRun, SyncRuns } from '../sql/sync-runs.js';

export interface ReportPageInput extends PageOfRun {
  readonly reports: readonly ReportRecord[];
  /** Where the walk resumes; null when this page ends it. */
  readonly walk: ReportWalk | null;
  /** The walk's number: the reports of this page are marked as listed by it. */
  readonly walkNumber: number;
}

export interface ReportPageResult {
  readonly inserted: number;
  readonly updated: number;
  readonly rejected: number;
  /** Ids of reports already held exactly as received. */
  readonly unchanged: ReadonlySet<string>;
}

export interface FinishedReportWalk extends OfRun {
  readonly walkNumber: number;
  /** What the walk vouched for; undefined: nothing (stopped early in an order it could not check). */
  readonly coverage: ReportCoverage | undefined;
  /** When the walk began, if it read the whole list (no date range) to its end. */
  readonly fullWalkAt?: string | undefined;
}

/** A deployment that does not serve reports: the stream is left alone until `until`. */
export interface ReportsDisabled {
  readonly organization: string;
  readonly reason: string;
  readonly until: string;
}

export class ReportPages {
  readonly #rows: ReportRows;
  readonly #rejected: RejectedRecords;
  readonly #runs: SyncRuns;

  constructor(rows: ReportRows, rejected: RejectedRecords, runs: SyncRuns) {
    this.#rows = rows;
    this.#rejected = rejected;
    this.#runs = runs;
  }

  write(input: ReportPageInput, stamp: string): ReportPageResult {
    let inserted = 0;
    let updated = 0;
    const unchanged = new Set<string>();
    for (const report of input.reports) {
      const written = this.#rows.write(input.organization, report, input.walkNumber, stamp);
      if (written === 'unchanged') unchanged.add(report.id);
      else if (written === 'inserted') inserted += 1;
      else updated += 1;
    }
    this.#rejected.insertAll(input.organization, input.runId, input.rejected, stamp);
    this.#rows.saveState({ organization: input.organization, walk: input.walk, disabled: null, updatedAt: stamp, walkNumber: input.walkNumber });
    const counts = { inserted, updated, rejected: input.rejected.length };
    this.#runs.countReportPage({ runId: input.runId, retries: input.retries, ...counts });
    return { ...counts, unchanged };
  }

  /**
   * Ends a walk: clears its resume state, and for the reports it covered but did not list, notes
   * the first miss or, at a second miss by a later walk, marks them removed. Absence from one walk
   * proves nothing (a report deleted during a walk over pages shifts the rest of the list, and one
   * is never seen); absence from two is what the mirror can know. Returns how many were marked.
   */
  finishWalk(walk: FinishedReportWalk, stamp: string): number {
    let removed = 0;
    if (walk.coverage !== undefined) {
      removed = this.#rows.markMissing(walk.organization, walk.walkNumber, walk.coverage, stamp);
      if (removed > 0) this.#runs.countReportsRemoved(walk.runId, removed);
    }
    this.#rows.saveState({ organization: walk.organization, walk: null, disabled: null, updatedAt: stamp, walkNumber: null, fullWalkAt: walk.fullWalkAt });
    return removed;
  }

  disable(disabled: ReportsDisabled, now: string): void {
    this.#rows.saveState({ organization: disabled.organization, walk: null, disabled: { reason: disabled.reason, until: disabled.until }, updatedAt: now, walkNumber: null });
  }
}
