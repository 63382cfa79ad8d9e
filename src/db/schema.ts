// The tables readers query (threats, organization_threats, sync_*) and the mirror's own bookkeeping.
// Timestamps of the mirror's own are ISO 8601 UTC strings; days are 'YYYY-MM-DD' (UTC).
import { sql } from 'drizzle-orm';
import { index, integer, primaryKey, sqliteTable, text } from 'drizzle-orm/sqlite-core';

/** One row per threat id: the id is unique across the service. */
export const threats = sqliteTable(
  'threats',
  {
    id: integer('id').primaryKey(),
    content: text('content').notNull(),
    type: text('type').notNull(),
    /** The service's blockedAt string exactly as received. */
    blockedAt: text('blocked_at').notNull(),
    firstSeenAt: text('first_seen_at').notNull(),
    /** When a field last changed (equals first_seen_at until then). */
    updatedAt: text('updated_at').notNull(),
    /**
     * The change feed: takes the next value on every insert, every real change, and whenever an
     * organization's link to it is marked removed or restored. Readers keep the last one they saw.
     */
    changeSeq: integer('change_seq').notNull().default(0),
    // Lookup columns derived from content when the row is written (src/url/lookup-fields.ts).
    host: text('host'),
    registrableDomain: text('registrable_domain'),
    addressNamespace: text('address_namespace'),
    addressChain: text('address_chain'),
    address: text('address'),
    email: text('email'),
    emailDomain: text('email_domain'),
    /** URL and PAGE: the Safe Browsing canonical expression host/path?query (src/url/); what `lookup` matches. */
    urlExpression: text('url_expression'),
    /**
     * URL and PAGE that block a whole host (the browser's path `/`, no query): the DNS name every
     * host format and the zone carry; NULL otherwise (src/url/lookup-fields.ts).
     */
    exportHost: text('export_host'),
    /** URL and PAGE without an export_host: why (pathLevel, notAHost, ipAddress, rpzTrigger, notDelegated, publicSuffix). */
    exportLeftOut: text('export_left_out'),
  },
  // Partial indexes: a lookup column is NULL for other types, and NULLs need no index entries.
  (table) => [
    index('threats_blocked_at').on(table.blockedAt),
    index('threats_content').on(table.content),
    // Not partial: SQLite cannot tell that `change_seq > ?` implies a partial index's condition.
    index('threats_change_seq').on(table.changeSeq),
    index('threats_host').on(table.host).where(sql`host IS NOT NULL`),
    index('threats_registrable_domain').on(table.registrableDomain).where(sql`registrable_domain IS NOT NULL`),
    index('threats_address').on(table.address).where(sql`address IS NOT NULL`),
    index('threats_email').on(table.email).where(sql`email IS NOT NULL`),
    index('threats_email_domain').on(table.emailDomain).where(sql`email_domain IS NOT NULL`),
    index('threats_url_expression').on(table.urlExpression).where(sql`url_expression IS NOT NULL`),
  ],
);

/** Which configured organization(s) a threat was seen through: one threat can be visible to several keys. */
export const organizationThreats = sqliteTable(
  'organization_threats',
  {
    organization: text('organization').notNull(),
    threatId: integer('threat_id')
      .notNull()
      .references(() => threats.id),
    firstSeenAt: text('first_seen_at').notNull(),
    /**
     * Set when a fully re-scanned day no longer returned the threat for this organization (the
     * service has no state field: an unblocked threat simply stops appearing); cleared if it returns.
     */
    removedAt: text('removed_at'),
    /**
     * 1 while the threat's type is outside the organization's asset type scope (narrowed after it
     * was mirrored): left out of every answer, yet not removed (docs/configuration.md).
     */
    outOfScope: integer('out_of_scope').notNull().default(0),
    /** The type its own walks last returned: its scope and removal candidates go by it, not by the shared `threats.type`. */
    type: text('type'),
  },
  (table) => [primaryKey({ columns: [table.organization, table.threatId] }), index('organization_threats_threat').on(table.threatId)],
);

/** Per organization: the last closed day every earlier day has been mirrored through. */
export const syncCheckpoints = sqliteTable('sync_checkpoints', {
  organization: text('organization').primaryKey(),
  /** Null until the first complete run. */
  completeThrough: text('complete_through'),
  updatedAt: text('updated_at').notNull(),
});

/** reconcile: re-walks days walked longest ago; history: walks the days THREAT_MIRROR_HISTORY_FROM asks for, newest first. */
export const SYNC_MODES = ['incremental', 'backfill', 'verify', 'reconcile', 'history'] as const;
export type SyncMode = (typeof SYNC_MODES)[number];

/** Unfinished work: the range a run set out to cover. Deleted when every window of it is done. */
export const syncPlans = sqliteTable(
  'sync_plans',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
    organization: text('organization').notNull(),
    mode: text('mode', { enum: SYNC_MODES }).notNull(),
    rangeStart: text('range_start').notNull(),
    rangeEnd: text('range_end').notNull(),
    createdAt: text('created_at').notNull(),
    /**
     * A plan that widens the scope: the asset types it walks over days already mirrored (comma
     * separated), or '*' for every type; null for every other plan (they walk the scope).
     */
    widening: text('widening'),
  },
  (table) => [index('sync_plans_organization').on(table.organization, table.mode)],
);

/** The page cursor of each date window of a plan: where a killed run resumes. */
export const syncCursors = sqliteTable(
  'sync_cursors',
  {
    planId: integer('plan_id')
      .notNull()
      .references(() => syncPlans.id, { onDelete: 'cascade' }),
    windowStart: text('window_start').notNull(),
    windowEnd: text('window_end').notNull(),
    /** The cursor of the next page to fetch; null before the first page. */
    nextPage: text('next_page'),
    pages: integer('pages').notNull().default(0),
    records: integer('records').notNull().default(0),
    completedAt: text('completed_at'),
    /**
     * The id of the last record of the last page committed: a resumed walk re-reads the page
     * before its cursor and goes on only if that page still ends here (docs/reconciliation.md).
     */
    lastId: integer('last_id'),
    /** When the walk these pages belong to began, before its first request: a day counts as complete only if this is after it ended. */
    startedAt: text('started_at'),
    /**
     * The run that began that walk: a walk resumed by a later run enters the ledger as this run's,
     * at startedAt, since its first pages are as old as that (docs/reconciliation.md).
     */
    startedRunId: integer('started_run_id'),
  },
  (table) => [primaryKey({ columns: [table.planId, table.windowStart] })],
);

/**
 * The per-day ledger (table sync_windows, a name readers query; the windows themselves are in
 * sync_cursors): a row means every page of a window covering that day was walked to its end.
 * records and content_hash describe the organization's threats of that day after the walk; the
 * hash is order-independent over (id, content, type, blocked_at), so `verify` can compare days.
 */
export const dayLedger = sqliteTable(
  'sync_windows',
  {
    // The primary key: one row per organization and day.
    organization: text('organization').notNull(), day: text('day').notNull(),
    completedAt: text('completed_at').notNull(),
    runId: integer('run_id').notNull(),
    /** The window that covered the day (a window may span several days), and its pages. */
    windowStart: text('window_start'), windowEnd: text('window_end'),
    pages: integer('pages'),
    records: integer('records'),
    contentHash: text('content_hash'),
    /**
     * Set when a reconciliation could not finish the day's window within its request budget: the
     * threats the day holds now at least, by the records the cut walk saw. The planner sizes the
     * next windows by it; a complete walk clears it.
     */
    estimatedRecords: integer('estimated_records'),
    /** The asset types the walk asked for (comma separated); null: every type. A digest is compared only with a walk of the same. */
    assetTypes: text('asset_types'),
  },
  (table) => [primaryKey({ columns: [table.organization, table.day] })],
);

/** Per organization: the asset types it mirrors now (comma separated), null for every type; no row: every type. */
export const organizationScopes = sqliteTable('organization_scopes', {
  organization: text('organization').primaryKey(),
  assetTypes: text('asset_types'),
  changedAt: text('changed_at').notNull(),
  /**
   * Set while the organization is no longer configured (the last writer's THREAT_MIRROR_ORG /
   * THREAT_MIRROR_ORGS left it out): every threat of it hidden (out_of_scope), none removed, and it
   * is left out of sync_status; cleared when a writer configures it again.
   */
  retiredAt: text('retired_at'),
});

/**
 * Removal checks of a window walked whole that a reconciliation's budget did not cover: the next run
 * makes them first, and the window's days enter the ledger once the last is settled (docs/reconciliation.md).
 */
export const removalChecks = sqliteTable(
  'removal_checks',
  {
    organization: text('organization').notNull(),
    threatId: integer('threat_id').notNull(),
    // The window whose walk did not return the threat, its pages, the types it asked for (null: every type).
    windowStart: text('window_start').notNull(), windowEnd: text('window_end').notNull(),
    windowPages: integer('window_pages').notNull(),
    assetTypes: text('asset_types'),
    carriedAt: text('carried_at').notNull(),
    // The run that began the window's walk and when: what its days enter the ledger as once settled.
    walkedRunId: integer('walked_run_id'), walkedAt: text('walked_at'),
  },
  (table) => [primaryKey({ columns: [table.organization, table.threatId] })],
);

/** Per organization: when a run last left no mirrored day overdue for its re-walk (docs/reconciliation.md). */
export const reconcileState = sqliteTable('reconcile_state', {
  organization: text('organization').primaryKey(),
  /** The end of the last complete reconciliation cycle; null until one completes. */
  cycleCompletedAt: text('cycle_completed_at'),
  updatedAt: text('updated_at').notNull(),
});

/** skipped: the stream is not served by this deployment (reports answered 404). */
export const RUN_STATUSES = ['running', 'succeeded', 'failed', 'interrupted', 'skipped'] as const;
export type RunStatus = (typeof RUN_STATUSES)[number];

/** One row per run of one organization; a run killed mid-way is marked interrupted at the next start. */
export const syncRuns = sqliteTable(
  'sync_runs',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
    organization: text('organization').notNull(),
    /** What the run mirrored: threats, or reports and their proposals. */
    stream: text('stream', { enum: ['threats', 'reports'] }).notNull().default('threats'),
    mode: text('mode', { enum: SYNC_MODES }).notNull(),
    status: text('status', { enum: RUN_STATUSES }).notNull(),
    rangeStart: text('range_start').notNull(),
    rangeEnd: text('range_end').notNull(),
    startedAt: text('started_at').notNull(),
    finishedAt: text('finished_at'),
    pages: integer('pages').notNull().default(0),
    retries: integer('retries').notNull().default(0),
    threatsInserted: integer('threats_inserted').notNull().default(0),
    threatsUpdated: integer('threats_updated').notNull().default(0),
    threatsRejected: integer('threats_rejected').notNull().default(0),
    threatsRemoved: integer('threats_removed').notNull().default(0),
    /** The reports stream's counts (its runs leave the threats_* columns at 0). */
    reportsInserted: integer('reports_inserted').notNull().default(0),
    reportsUpdated: integer('reports_updated').notNull().default(0),
    reportsRejected: integer('reports_rejected').notNull().default(0),
    /** Reports marked removed by the run: no longer listed by two walks that covered them. */
    reportsRemoved: integer('reports_removed').notNull().default(0),
    error: text('error'),
  },
  (table) => [index('sync_runs_organization').on(table.organization, table.id)],
);

/** Records the service sent that failed validation, kept raw with the reason. */
export const rejectedRecords = sqliteTable(
  'rejected_records',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
    organization: text('organization').notNull(),
    runId: integer('run_id').notNull(),
    raw: text('raw').notNull(),
    reason: text('reason').notNull(),
    seenAt: text('seen_at').notNull(),
  },
  (table) => [index('rejected_records_organization').on(table.organization, table.id)],
);

/** Settings the daemon records for readers, e.g. how old a success may be before it is stale. */
export const mirrorSettings = sqliteTable('mirror_settings', {
  key: text('key').primaryKey(),
  value: text('value').notNull(),
  updatedAt: text('updated_at').notNull(),
});

/** How an allowlist entry matches (src/allowlist/allowlist-entries.ts). */
export const ALLOW_KINDS = ['host', 'url', 'address', 'email', 'exact'] as const;

/**
 * THREAT_MIRROR_ALLOWLIST as the writer last mirrored it: one row per entry, with what it matches
 * on. The file is the source: this table follows it (at start, after each run, and within seconds
 * of a change in the daemon), and is empty when the writer has none. The view `enforced_threats`
 * (docs/schema.md) is `current_threats` without what it allows. Never part of the service's data.
 */
export const allowlistEntries = sqliteTable(
  'allowlist',
  {
    /** The file's line: one entry a line. */
    line: integer('line').primaryKey(),
    /** The entry as written, without its comment. */
    value: text('value').notNull(),
    kind: text('kind', { enum: ALLOW_KINDS }).notNull(),
    /** The comment on its line; NULL when none. */
    reason: text('reason'),
    /** host and url: the canonical host, path ('/' for a host) and query (NULL when none). */
    host: text('host'),
    path: text('path'),
    query: text('query'),
    /** address: folded as lookup folds it; namespace and chain NULL for a bare address (any chain). */
    address: text('address'),
    addressNamespace: text('address_namespace'),
    addressChain: text('address_chain'),
    /** email: lower-cased. */
    email: text('email'),
  },
  // Each kind's column searched by enforced_threats; partial, as each row sets one of them.
  (table) => [
    index('allowlist_value').on(table.value),
    ...(['host', 'address', 'email'] as const).map((column) => index(`allowlist_${column}`).on(table[column]).where(sql.raw(`${column} IS NOT NULL`))),
  ],
);

// The reports' tables, in a file of their own (drizzle-kit reads them through this re-export).
export { reportProposals, reports, reportSyncState } from './schema-reports.js';
