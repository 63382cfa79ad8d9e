// Every write the sync makes, each a single synchronous transaction with statements built once.
import { and, asc, eq, sql } from 'drizzle-orm';
import { addDays } from '../lib/days.js';
import { addToDigest, type DayDigest, emptyDigest } from './content-hash.js';
import type { MirrorDatabase, OpenedDatabase } from './open-database.js';
import type { PageInput, PageResult } from './page-writer.js';
import type { PageSink } from './page-writer-worker.js';
import { ReconcileLedger } from './reconcile-ledger.js';
import type { WalCheckpoint } from './wal-checkpoint.js';
import { ReportWriter } from './report-writer.js';
import {
  mirrorSettings,
  organizationThreats,
  type RunStatus,
  syncCheckpoints,
  syncCursors,
  syncPlans,
  syncRuns,
  syncWindows,
  type SYNC_MODES,
} from './schema.js';

export type { PageCounts, PageResult } from './page-writer.js';

export type SyncMode = (typeof SYNC_MODES)[number];

export interface PlanWindow {
  readonly planId: number;
  readonly windowStart: string;
  readonly windowEnd: string;
  readonly nextPage: string | null;
  readonly completedAt: string | null;
}

export interface Plan {
  readonly id: number;
  readonly organization: string;
  readonly mode: SyncMode;
  readonly rangeStart: string;
  readonly rangeEnd: string;
}

/** A page as the sync hands it over: the store gives it its write stamp. */
export type CommitPageInput = Omit<PageInput, 'stamp'> & { readonly now: string };

export class MirrorStore {
  readonly #db: MirrorDatabase;
  readonly #opened: OpenedDatabase;
  readonly #pages: PageSink;
  #lastStampMs = 0;

  /** `pages` writes the pages of threats (a thread of its own in production). */
  constructor(opened: OpenedDatabase, pages: PageSink) {
    this.#opened = opened;
    this.#db = opened.db;
    this.#pages = pages;
    this.reports = new ReportWriter(opened.sqlite);
    this.reconcile = new ReconcileLedger(opened.sqlite);
  }

  /** Which days are due for reconciliation, and when a cycle completed. */
  readonly reconcile: ReconcileLedger;

  /** The reports stream's writes (GET /organization/reports). */
  readonly reports: ReportWriter;

  /**
   * Writes on this connection take the write lock up front (BEGIN IMMEDIATE): the page-writer
   * thread writes on a connection of its own, and a deferred transaction that meets its commit
   * fails with SQLITE_BUSY at once instead of waiting its turn.
   */
  #immediately<T>(write: () => T): T {
    return this.#opened.sqlite.transaction(write).immediate();
  }

  get sqlite(): OpenedDatabase['sqlite'] {
    return this.#opened.sqlite;
  }

  /** A run still marked running when the writer starts belonged to a process that died. */
  markAbandonedRuns(now: string): number {
    return this.#immediately(
      () =>
        this.#db
          .update(syncRuns)
          .set({ status: 'interrupted', finishedAt: now, error: 'the process stopped before the run finished' })
          .where(eq(syncRuns.status, 'running'))
          .run().changes,
    );
  }

  startRun(organization: string, mode: SyncMode, rangeStart: string, rangeEnd: string, now: string, stream: 'threats' | 'reports' = 'threats'): number {
    return this.#immediately(
      () =>
        this.#db
          .insert(syncRuns)
          .values({ organization, stream, mode, status: 'running', rangeStart, rangeEnd, startedAt: now })
          .returning({ id: syncRuns.id })
          .get().id,
    );
  }

  finishRun(runId: number, status: Exclude<RunStatus, 'running'>, error: string | null, now: string): void {
    this.#immediately(() => this.#db.update(syncRuns).set({ status, error, finishedAt: now }).where(eq(syncRuns.id, runId)).run());
  }

  completeThrough(organization: string): string | null {
    const row = this.#db
      .select({ completeThrough: syncCheckpoints.completeThrough })
      .from(syncCheckpoints)
      .where(eq(syncCheckpoints.organization, organization))
      .get();
    return row?.completeThrough ?? null;
  }

  /** Moves the checkpoint to `day` unless it is already there or later: it never goes back. */
  advanceCompleteThrough(organization: string, day: string, now: string): void {
    this.#immediately(() =>
      this.#db
        .insert(syncCheckpoints)
        .values({ organization, completeThrough: day, updatedAt: now })
        .onConflictDoUpdate({
          target: syncCheckpoints.organization,
          set: { completeThrough: sql`excluded.complete_through`, updatedAt: sql`excluded.updated_at` },
          setWhere: sql`${syncCheckpoints.completeThrough} IS NULL OR ${syncCheckpoints.completeThrough} < excluded.complete_through`,
        })
        .run(),
    );
  }

  /** The unfinished plan of this organization and mode (for a backfill: of exactly this range). */
  findOpenPlan(organization: string, mode: SyncMode, range?: { start: string; end: string }): Plan | undefined {
    const conditions = [eq(syncPlans.organization, organization), eq(syncPlans.mode, mode)];
    if (range) conditions.push(eq(syncPlans.rangeStart, range.start), eq(syncPlans.rangeEnd, range.end));
    return this.#db
      .select({ id: syncPlans.id, organization: syncPlans.organization, mode: syncPlans.mode, rangeStart: syncPlans.rangeStart, rangeEnd: syncPlans.rangeEnd })
      .from(syncPlans)
      .where(and(...conditions))
      .orderBy(asc(syncPlans.id))
      .get();
  }

  createPlan(organization: string, mode: SyncMode, rangeStart: string, rangeEnd: string, now: string): Plan {
    return this.#immediately(() =>
      this.#db
        .insert(syncPlans)
        .values({ organization, mode, rangeStart, rangeEnd, createdAt: now })
        .returning({ id: syncPlans.id, organization: syncPlans.organization, mode: syncPlans.mode, rangeStart: syncPlans.rangeStart, rangeEnd: syncPlans.rangeEnd })
        .get(),
    );
  }

  /** A day has begun since the plan was made: it now reaches the new day too. */
  extendPlan(plan: Plan, rangeEnd: string): Plan {
    this.#immediately(() => this.#db.update(syncPlans).set({ rangeEnd }).where(eq(syncPlans.id, plan.id)).run());
    return { ...plan, rangeEnd };
  }

  /** Records a window before its first request, so a restart resumes it rather than re-planning. */
  addWindow(planId: number, windowStart: string, windowEnd: string): PlanWindow {
    this.#immediately(() => this.#db.insert(syncCursors).values({ planId, windowStart, windowEnd }).run());
    return { planId, windowStart, windowEnd, nextPage: null, completedAt: null };
  }

  planWindows(planId: number): PlanWindow[] {
    return this.#db
      .select({
        planId: syncCursors.planId,
        windowStart: syncCursors.windowStart,
        windowEnd: syncCursors.windowEnd,
        nextPage: syncCursors.nextPage,
        completedAt: syncCursors.completedAt,
      })
      .from(syncCursors)
      .where(eq(syncCursors.planId, planId))
      .orderBy(asc(syncCursors.windowStart))
      .all();
  }

  deleteOpenPlans(organization: string, mode: SyncMode): void {
    for (const plan of this.#db.select({ id: syncPlans.id }).from(syncPlans).where(and(eq(syncPlans.organization, organization), eq(syncPlans.mode, mode))).all()) {
      this.deletePlan(plan.id);
    }
  }

  /** Deletes a finished plan and moves the checkpoint in one transaction: a crash keeps both or neither. */
  finishPlan(planId: number, advance: { organization: string; day: string } | null, now: string): void {
    this.#immediately(() => {
      this.deletePlan(planId);
      if (advance) this.advanceCompleteThrough(advance.organization, advance.day, now);
    });
  }

  deletePlan(planId: number): void {
    this.#immediately(() => {
      this.#db.delete(syncCursors).where(eq(syncCursors.planId, planId)).run();
      this.#db.delete(syncPlans).where(eq(syncPlans.id, planId)).run();
    });
  }

  /**
   * One page and the checkpoint after it, in one transaction: a crash keeps both or neither.
   * The last page of a window also records each day of the window as complete.
   */
  commitPage(input: CommitPageInput): Promise<PageResult> {
    const { now, ...page } = input;
    return this.#pages.write({ ...page, stamp: this.strictlyLaterStamp(now) });
  }

  /**
   * Each page gets a stamp later than the one before, so `first_seen_at = stamp` marks exactly
   * the rows this page inserted, even when two pages commit within one millisecond.
   */
  strictlyLaterStamp(now: string): string {
    const ms = Math.max(Date.parse(now), this.#lastStampMs + 1);
    this.#lastStampMs = ms;
    return new Date(ms).toISOString();
  }

  recordSetting(key: string, value: string, now: string): void {
    this.#immediately(() =>
      this.#db
        .insert(mirrorSettings)
        .values({ key, value, updatedAt: now })
        .onConflictDoUpdate({ target: mirrorSettings.key, set: { value, updatedAt: now } })
        .run(),
    );
  }

  /**
   * Between runs, fold the WAL back into the file, on the writer thread: the main thread only
   * awaits the answer. A reader holding an old snapshot keeps it from completing (see
   * checkpointWithoutWaiting); the outcome says so, and the next run tries again.
   */
  checkpointWal(): Promise<WalCheckpoint> {
    return this.#pages.checkpoint();
  }

  /** Per day, the digest of the organization's current threats (not removed) between two days. */
  dayDigests(organization: string, from: string, to: string): Map<string, DayDigest> {
    const digests = new Map<string, DayDigest>();
    const rows = this.#opened.sqlite
      .prepare(
        // threats first, by blocked_at: see the same query in PageWriter.
        `SELECT t.id, t.content, t.type, t.blocked_at AS blockedAt FROM threats t CROSS JOIN organization_threats o ON o.threat_id = t.id
          WHERE o.organization = ? AND o.removed_at IS NULL AND t.blocked_at >= ? AND t.blocked_at < ?`,
      )
      .iterate(organization, from, addDays(to, 1)) as Iterable<{ id: number; content: string; type: string; blockedAt: string }>;
    for (const row of rows) {
      const day = row.blockedAt.slice(0, 10);
      let digest = digests.get(day);
      if (!digest) digests.set(day, (digest = emptyDigest()));
      addToDigest(digest, row.id, row.content, row.type, row.blockedAt);
    }
    return digests;
  }

  /** The ledger's days between two days: records and content hash recorded when each was walked. */
  ledgerDays(organization: string, from: string, to: string): Map<string, { records: number | null; contentHash: string | null }> {
    const rows = this.#db
      .select({ day: syncWindows.day, records: syncWindows.records, contentHash: syncWindows.contentHash })
      .from(syncWindows)
      .where(and(eq(syncWindows.organization, organization), sql`${syncWindows.day} BETWEEN ${from} AND ${to}`))
      .all();
    return new Map(rows.map((row) => [row.day, { records: row.records, contentHash: row.contentHash }]));
  }

  hasNoReports(organization: string): boolean {
    return this.#opened.sqlite.prepare('SELECT 1 FROM reports WHERE organization = ? LIMIT 1').get(organization) === undefined;
  }

  /** True when the organization has no threats at all in the file. */
  hasNoThreats(organization: string): boolean {
    const row = this.#db
      .select({ one: sql<number>`1` })
      .from(organizationThreats)
      .where(eq(organizationThreats.organization, organization))
      .limit(1)
      .get();
    return row === undefined;
  }
}
