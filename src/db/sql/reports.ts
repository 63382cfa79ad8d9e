// Every write of the tables reports, report_proposals and report_sync_state: the reports stream's
// rows, and where its walk resumes.
import type { ReportRecord } from '../../records.js';
import type { ReportWalk } from '../read/report-state.js';
import { type Database, prepareAll, type Statements } from '../sqlite.js';

export type { ReportWalk } from '../read/report-state.js';

/**
 * Which reports a finished walk has vouched for: all of the organization's (an undated walk read
 * to its end), those created within a date-time range (a dated walk read to its end), or those
 * newer than the oldest it listed (a newest-first walk stopped early, its order checked).
 */
export type ReportCoverage = { readonly kind: 'all' } | { readonly kind: 'range'; readonly from: string; readonly to: string } | { readonly kind: 'newer' };

/** A report is rewritten only when what the service sent changed (its raw JSON). */
const UPSERT_REPORT_SQL = `INSERT INTO reports (organization, id, created_at, status, raw, first_seen_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (organization, id) DO UPDATE SET created_at = excluded.created_at, status = excluded.status, raw = excluded.raw,
         updated_at = excluded.updated_at
       WHERE reports.raw IS NOT excluded.raw
       RETURNING first_seen_at`;

const INSERT_PROPOSAL_SQL = `INSERT INTO report_proposals (organization, report_id, id, review_status, asset_id, asset_type, asset_content, asset_status, threat_id)
       VALUES (:organization, :reportId, :id, :reviewStatus, :assetId, :assetType, :assetContent, :assetStatus,
               (SELECT id FROM threats WHERE content = :assetContent LIMIT 1))
       ON CONFLICT DO NOTHING`;

/** The walk number is kept when a walk ends or the stream is disabled: the next walk counts on from it. */
const SAVE_STATE_SQL = `INSERT INTO report_sync_state (organization, mode, range_start, range_end, next_cursor, disabled_reason, disabled_until, updated_at, walk, full_walk_at)
       VALUES (:organization, :mode, :rangeStart, :rangeEnd, :nextCursor, :disabledReason, :disabledUntil, :updatedAt, :walk, :fullWalkAt)
       ON CONFLICT (organization) DO UPDATE SET mode = excluded.mode, range_start = excluded.range_start, range_end = excluded.range_end,
         next_cursor = excluded.next_cursor, disabled_reason = excluded.disabled_reason, disabled_until = excluded.disabled_until,
         updated_at = excluded.updated_at, walk = coalesce(excluded.walk, report_sync_state.walk),
         full_walk_at = coalesce(excluded.full_walk_at, report_sync_state.full_walk_at)`;

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

/** Proposals whose asset was not a mirrored threat when written may be one now. */
const LINK_THREATS_SQL = `UPDATE report_proposals SET threat_id = (SELECT id FROM threats WHERE content = report_proposals.asset_content LIMIT 1)
        WHERE organization = ? AND threat_id IS NULL AND asset_content IS NOT NULL`;

export interface SavedReportState {
  readonly organization: string;
  /** Where the walk resumes; null: no walk in progress. */
  readonly walk: ReportWalk | null;
  readonly disabled: { readonly reason: string; readonly until: string } | null;
  readonly updatedAt: string;
  /** The number of the walk in progress; null keeps the one recorded. */
  readonly walkNumber: number | null;
  /** A walk of the whole list that began then has ended; absent keeps the time recorded. */
  readonly fullWalkAt?: string | undefined;
}

const REPORT_SQL = {
  isStored: 'SELECT 1 FROM reports WHERE organization = ? AND id = ?',
  upsertReport: UPSERT_REPORT_SQL,
  markListed: 'UPDATE reports SET last_seen_walk = ?, missed_walk = NULL, removed_at = NULL WHERE organization = ? AND id = ?',
  deleteProposals: 'DELETE FROM report_proposals WHERE organization = ? AND report_id = ?',
  insertProposal: INSERT_PROPOSAL_SQL,
  saveState: SAVE_STATE_SQL,
  markMissing: MARK_MISSING_SQL,
  linkThreats: LINK_THREATS_SQL,
};

export class ReportRows {
  readonly #sql: Statements<keyof typeof REPORT_SQL>;

  constructor(sqlite: Database) {
    this.#sql = prepareAll(sqlite, REPORT_SQL);
  }

  /** Writes the report if it is new or changed, and marks it listed by the walk; 'unchanged', or whether it was inserted. */
  write(organization: string, report: ReportRecord, walkNumber: number, stamp: string): 'inserted' | 'updated' | 'unchanged' {
    // Told by what was stored before, not by `first_seen_at = stamp`: a row another process wrote may carry this stamp (threat-rows.ts).
    const storedBefore = this.#sql.isStored.get(organization, report.id) !== undefined;
    const written = this.#sql.upsertReport.get(organization, report.id, report.createdAt, report.status, report.raw, stamp, stamp) !== undefined;
    this.#sql.markListed.run(walkNumber, organization, report.id);
    if (!written) return 'unchanged';
    this.#sql.deleteProposals.run(organization, report.id);
    for (const proposal of report.proposals) this.#sql.insertProposal.run({ organization, reportId: report.id, ...proposal });
    return storedBefore ? 'updated' : 'inserted';
  }

  saveState(state: SavedReportState): void {
    const { walk, disabled } = state;
    this.#sql.saveState.run({
      organization: state.organization,
      mode: walk?.mode ?? null,
      rangeStart: walk?.rangeStart ?? null,
      rangeEnd: walk?.rangeEnd ?? null,
      nextCursor: walk?.nextCursor ?? null,
      disabledReason: disabled?.reason ?? null,
      disabledUntil: disabled?.until ?? null,
      updatedAt: state.updatedAt,
      walk: state.walkNumber,
      fullWalkAt: state.fullWalkAt ?? null,
    });
  }

  /** Notes the miss of every report the walk covered and did not list; returns how many it marked removed. */
  markMissing(organization: string, walkNumber: number, coverage: ReportCoverage, stamp: string): number {
    const range = coverage.kind === 'range' ? coverage : { from: null, to: null };
    const marked = this.#sql.markMissing.all({ organization, walk: walkNumber, stamp, kind: coverage.kind, ...range }) as Array<{ removed_at: string | null }>;
    return marked.filter((row) => row.removed_at !== null).length;
  }

  linkThreats(organization: string): number {
    return this.#sql.linkThreats.run(organization).changes;
  }
}
