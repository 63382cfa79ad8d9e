// Reports and their proposals: one page and the walk's next cursor in one transaction.
import type Database from 'better-sqlite3';
import type { RejectedRecord, ReportRecord } from '../records.js';
import { RejectedRecordWriter } from './rejected-records.js';
import type { RunStateWriter } from './run-state.js';

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
}

/**
 * Which reports a finished walk has vouched for: all of the organization's (an undated walk read
 * to its end), those created within a date-time range (a dated walk read to its end), or those
 * newer than the oldest it listed (a newest-first walk stopped early, its order checked).
 */
export type ReportCoverage = { readonly kind: 'all' } | { readonly kind: 'range'; readonly from: string; readonly to: string } | { readonly kind: 'newer' };

export interface ReportPageInput {
  readonly organization: string;
  readonly runId: number;
  readonly reports: readonly ReportRecord[];
  readonly rejected: readonly RejectedRecord[];
  /** Where the walk resumes; null when this page ends it. */
  readonly walk: ReportWalk | null;
  /** The walk's number: the reports of this page are marked as listed by it. */
  readonly walkNumber: number;
  readonly retries: number;
  readonly stamp: string;
}

export interface ReportPageResult {
  readonly inserted: number;
  readonly updated: number;
  readonly rejected: number;
  /** Ids of reports already held exactly as received. */
  readonly unchanged: ReadonlySet<string>;
}

type Statement = Database.Statement<unknown[], unknown>;

export class ReportWriter {
  readonly #upsertReport: Statement;
  readonly #deleteProposals: Statement;
  readonly #insertProposal: Statement;
  readonly #rejected: RejectedRecordWriter;
  readonly #saveState: Statement;
  readonly #readState: Statement;
  readonly #runs: RunStateWriter;
  readonly #linkThreats: Statement;
  readonly #markListed: Statement;
  readonly #markMissing: Statement;
  readonly #countRemoved: Statement;
  readonly #write: Database.Transaction<(input: ReportPageInput) => ReportPageResult>;
  readonly #finishWalk: Database.Transaction<(walk: FinishedReportWalk) => number>;

  /** `runs`: the run-state statements of this connection (shared with MirrorStore). */
  constructor(sqlite: Database.Database, runs: RunStateWriter) {
    this.#runs = runs;
    // A report is rewritten only when what the service sent changed (its raw JSON).
    this.#upsertReport = sqlite.prepare(
      `INSERT INTO reports (organization, id, created_at, status, raw, first_seen_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (organization, id) DO UPDATE SET created_at = excluded.created_at, status = excluded.status, raw = excluded.raw,
         updated_at = excluded.updated_at
       WHERE reports.raw IS NOT excluded.raw
       RETURNING first_seen_at`,
    );
    this.#deleteProposals = sqlite.prepare('DELETE FROM report_proposals WHERE organization = ? AND report_id = ?');
    this.#insertProposal = sqlite.prepare(
      `INSERT INTO report_proposals (organization, report_id, id, review_status, asset_id, asset_type, asset_content, asset_status, threat_id)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, (SELECT id FROM threats WHERE content = ? LIMIT 1))
       ON CONFLICT DO NOTHING`,
    );
    this.#rejected = new RejectedRecordWriter(sqlite);
    // The walk number is kept when a walk ends or the stream is disabled: the next walk counts on from it.
    this.#saveState = sqlite.prepare(
      `INSERT INTO report_sync_state (organization, mode, range_start, range_end, next_cursor, disabled_reason, disabled_until, updated_at, walk)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (organization) DO UPDATE SET mode = excluded.mode, range_start = excluded.range_start, range_end = excluded.range_end,
         next_cursor = excluded.next_cursor, disabled_reason = excluded.disabled_reason, disabled_until = excluded.disabled_until,
         updated_at = excluded.updated_at, walk = coalesce(excluded.walk, report_sync_state.walk)`,
    );
    this.#readState = sqlite.prepare(
      `SELECT mode, range_start AS rangeStart, range_end AS rangeEnd, next_cursor AS nextCursor, disabled_reason AS disabledReason,
              disabled_until AS disabledUntil, walk FROM report_sync_state WHERE organization = ?`,
    );
    this.#markListed = sqlite.prepare('UPDATE reports SET last_seen_walk = ?, missed_walk = NULL, removed_at = NULL WHERE organization = ? AND id = ?');
    this.#markMissing = sqlite.prepare(MARK_MISSING_SQL);
    this.#countRemoved = sqlite.prepare('UPDATE sync_runs SET reports_removed = reports_removed + ? WHERE id = ?');
    this.#linkThreats = sqlite.prepare(
      `UPDATE report_proposals SET threat_id = (SELECT id FROM threats WHERE content = report_proposals.asset_content LIMIT 1)
        WHERE organization = ? AND threat_id IS NULL AND asset_content IS NOT NULL`,
    );
    this.#write = sqlite.transaction((input: ReportPageInput) => this.#writePage(input));
    this.#finishWalk = sqlite.transaction((walk: FinishedReportWalk) => this.#concludeWalk(walk));
  }

  state(organization: string): ReportState | undefined {
    return this.#readState.get(organization) as ReportState | undefined;
  }

  saveState(organization: string, walk: ReportWalk | null, disabled: { reason: string; until: string } | null, stamp: string, walkNumber: number | null = null): void {
    // Autocommit statements wait on the busy timeout; this one is also called inside write().
    this.#saveState.run(
      organization, walk?.mode ?? null, walk?.rangeStart ?? null, walk?.rangeEnd ?? null, walk?.nextCursor ?? null, disabled?.reason ?? null, disabled?.until ?? null, stamp,
      walkNumber,
    );
  }

  /**
   * Ends a walk: clears its resume state, and for the reports it covered but did not list, notes
   * the first miss or, at a second miss by a later walk, marks them removed. Absence from one walk
   * proves nothing (a report deleted during a walk over pages shifts the rest of the list, and one
   * is never seen); absence from two is what the mirror can know. Returns how many were marked.
   */
  finishWalk(walk: FinishedReportWalk): number {
    return this.#finishWalk.immediate(walk);
  }

  /** BEGIN IMMEDIATE, like every write beside the page-writer thread's (see MirrorStore). */
  write(input: ReportPageInput): ReportPageResult {
    return this.#write.immediate(input);
  }

  /** Proposals whose asset was not a mirrored threat when written may be one now. */
  linkThreats(organization: string): number {
    return this.#linkThreats.run(organization).changes;
  }

  #writePage(input: ReportPageInput): ReportPageResult {
    let inserted = 0;
    let updated = 0;
    const unchanged = new Set<string>();
    for (const report of input.reports) {
      const written = this.#upsertReport.get(input.organization, report.id, report.createdAt, report.status, report.raw, input.stamp, input.stamp) as
        | { first_seen_at: string }
        | undefined;
      this.#markListed.run(input.walkNumber, input.organization, report.id);
      if (!written) {
        unchanged.add(report.id);
        continue;
      }
      if (written.first_seen_at === input.stamp) inserted += 1;
      else updated += 1;
      this.#deleteProposals.run(input.organization, report.id);
      for (const proposal of report.proposals) {
        this.#insertProposal.run(
          input.organization, report.id, proposal.id, proposal.reviewStatus, proposal.assetId, proposal.assetType, proposal.assetContent, proposal.assetStatus,
          proposal.assetContent,
        );
      }
    }
    this.#rejected.insertAll(input.organization, input.runId, input.rejected, input.stamp);
    this.saveState(input.organization, input.walk, null, input.stamp, input.walkNumber);
    const counts = { inserted, updated, rejected: input.rejected.length };
    this.#runs.countReportPage(input.runId, input.retries, counts);
    return { ...counts, unchanged };
  }

  #concludeWalk(walk: FinishedReportWalk): number {
    let removed = 0;
    if (walk.coverage !== undefined) {
      const range = walk.coverage.kind === 'range' ? walk.coverage : { from: null, to: null };
      const marked = this.#markMissing.all({ organization: walk.organization, walk: walk.walkNumber, stamp: walk.stamp, kind: walk.coverage.kind, ...range }) as Array<{
        removed_at: string | null;
      }>;
      removed = marked.filter((row) => row.removed_at !== null).length;
      if (removed > 0) this.#countRemoved.run(removed, walk.runId);
    }
    this.saveState(walk.organization, null, null, walk.stamp);
    return removed;
  }
}

export interface FinishedReportWalk {
  readonly organization: string;
  readonly runId: number;
  readonly walkNumber: number;
  /** What the walk vouched for; undefined: nothing (stopped early in an order it could not check). */
  readonly coverage: ReportCoverage | undefined;
  readonly stamp: string;
}

/**
 * The reports a walk covered and did not list: a first miss is noted (missed_walk), a second one,
 * by a later walk, marks the report removed. Dates compare as instants (julianday), whatever
 * offset they are written with; a report without a readable created_at is covered only by a walk
 * of everything.
 */
const MARK_MISSING_SQL = `UPDATE reports
    SET removed_at = CASE WHEN missed_walk IS NOT NULL AND missed_walk < :walk THEN :stamp END,
        missed_walk = coalesce(missed_walk, :walk)
  WHERE organization = :organization AND removed_at IS NULL AND (last_seen_walk IS NULL OR last_seen_walk < :walk)
    AND CASE :kind
      WHEN 'all' THEN 1
      WHEN 'range' THEN julianday(created_at) BETWEEN julianday(:from) AND julianday(:to)
      WHEN 'newer' THEN julianday(created_at) > (SELECT min(julianday(listed.created_at)) FROM reports listed
                                                  WHERE listed.organization = :organization AND listed.last_seen_walk = :walk)
    END
  RETURNING removed_at`;
