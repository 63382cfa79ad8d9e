// The tables of the reports stream (GET /organization/reports): part of the schema of schema.ts,
// which re-exports them.
import { index, integer, primaryKey, sqliteTable, text } from 'drizzle-orm/sqlite-core';

/**
 * Reports the organization filed (GET /organization/reports). `raw` is the report exactly as
 * received, so nothing the service sends is lost before the project knows what it means.
 */
export const reports = sqliteTable(
  'reports',
  {
    organization: text('organization').notNull(),
    /** The service's id as text: the documentation shows it both as a number and as a string. */
    id: text('id').notNull(),
    createdAt: text('created_at'),
    status: text('status'),
    raw: text('raw').notNull(),
    firstSeenAt: text('first_seen_at').notNull(), updatedAt: text('updated_at').notNull(),
    /** The number of the last walk (report_sync_state.walk) that listed it. */
    lastSeenWalk: integer('last_seen_walk'),
    /** The first walk that covered it without listing it; cleared when one lists it again. */
    missedWalk: integer('missed_walk'),
    /** Set when a second, later walk covering it did not list it either: no longer listed by the service. */
    removedAt: text('removed_at'),
  },
  (table) => [primaryKey({ columns: [table.organization, table.id] }), index('reports_created_at').on(table.organization, table.createdAt)],
);

/** The proposals of each report, replaced whenever the report changes. */
export const reportProposals = sqliteTable(
  'report_proposals',
  {
    organization: text('organization').notNull(),
    reportId: text('report_id').notNull(),
    /** Text, like the report's id: the service's documentation shows it both ways. */
    id: text('id').notNull(),
    /** The review's outcome as the service words it (rejected, approved, …). */
    reviewStatus: text('review_status'),
    // The asset the proposal is about, its fields as received.
    assetId: text('asset_id'), assetType: text('asset_type'), assetContent: text('asset_content'), assetStatus: text('asset_status'),
    /** The mirrored threat whose content equals the asset's, when there is one. */
    threatId: integer('threat_id'),
  },
  (table) => [
    primaryKey({ columns: [table.organization, table.reportId, table.id] }),
    index('report_proposals_threat').on(table.threatId),
    index('report_proposals_asset_content').on(table.assetContent),
  ],
);

/** Per organization: where an unfinished reports walk resumes, and whether the endpoint exists. */
export const reportSyncState = sqliteTable('report_sync_state', {
  organization: text('organization').primaryKey(),
  /** The walk in progress: its mode, date range (backfill) and the cursor of its next page. */
  mode: text('mode'),
  rangeStart: text('range_start'),
  rangeEnd: text('range_end'),
  nextCursor: text('next_cursor'),
  /** The number of the walk in progress, or of the last one: 1, 2, … (never reset). */
  walk: integer('walk'),
  /** Set when the deployment answered 404: the stream is skipped until `disabledUntil`. */
  disabledReason: text('disabled_reason'),
  disabledUntil: text('disabled_until'),
  updatedAt: text('updated_at').notNull(),
  /** When the last walk of the whole list to its end began: one every THREAT_MIRROR_RECONCILE_DAYS (docs/reconciliation.md). */
  fullWalkAt: text('full_walk_at'),
});
