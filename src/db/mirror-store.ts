// Every write the sync makes, each a single synchronous transaction with statements built once.
import { and, asc, eq, sql } from 'drizzle-orm';
import type { RejectedRecord } from '../api/threat-client.js';
import type { Threat } from '../api/threat-record.js';
import { addDays, daysBetween } from '../days.js';
import type { MirrorDatabase, OpenedDatabase } from './open-database.js';
import {
  mirrorSettings,
  organizationThreats,
  rejectedRecords,
  type RunStatus,
  syncCheckpoints,
  syncCursors,
  syncPlans,
  syncRuns,
  syncWindows,
  threats,
} from './schema.js';

export type SyncMode = 'incremental' | 'backfill';

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

export interface PageCounts {
  readonly inserted: number;
  readonly updated: number;
  readonly rejected: number;
}

export interface CommitPageInput {
  readonly organization: string;
  readonly runId: number;
  readonly window: Pick<PlanWindow, 'planId' | 'windowStart' | 'windowEnd'>;
  readonly threats: readonly Threat[];
  readonly rejected: readonly RejectedRecord[];
  readonly nextPage: string | null;
  readonly retries: number;
  readonly now: string;
}

export class MirrorStore {
  readonly #db: MirrorDatabase;
  readonly #opened: OpenedDatabase;
  readonly #upsertThreat;
  readonly #linkThreat;
  readonly #insertRejected;
  readonly #advanceCursor;
  readonly #completeDay;
  readonly #countRunPage;
  #lastStampMs = 0;

  constructor(opened: OpenedDatabase) {
    this.#opened = opened;
    this.#db = opened.db;
    const db = this.#db;
    // Rewrites a row only when a field really changed, so `changes` and updated counts are true
    // and an unchanged re-scan writes nothing. RETURNING tells an insert (first_seen_at is this
    // write's stamp) from an update; a no-op returns no row.
    this.#upsertThreat = db
      .insert(threats)
      .values({
        id: sql.placeholder('id'),
        content: sql.placeholder('content'),
        type: sql.placeholder('type'),
        blockedAt: sql.placeholder('blockedAt'),
        firstSeenAt: sql.placeholder('now'),
        updatedAt: sql.placeholder('now'),
      })
      .onConflictDoUpdate({
        target: threats.id,
        set: {
          content: sql`excluded.content`,
          type: sql`excluded.type`,
          blockedAt: sql`excluded.blocked_at`,
          updatedAt: sql`excluded.updated_at`,
        },
        setWhere: sql`threats.content IS NOT excluded.content OR threats.type IS NOT excluded.type OR threats.blocked_at IS NOT excluded.blocked_at`,
      })
      .returning({ firstSeenAt: threats.firstSeenAt })
      .prepare();
    this.#linkThreat = db
      .insert(organizationThreats)
      .values({ organization: sql.placeholder('organization'), threatId: sql.placeholder('threatId'), firstSeenAt: sql.placeholder('now') })
      .onConflictDoNothing()
      .prepare();
    this.#insertRejected = db
      .insert(rejectedRecords)
      .values({
        organization: sql.placeholder('organization'),
        runId: sql.placeholder('runId'),
        raw: sql.placeholder('raw'),
        reason: sql.placeholder('reason'),
        seenAt: sql.placeholder('now'),
      })
      .prepare();
    this.#advanceCursor = db
      .update(syncCursors)
      .set({
        nextPage: sql`${sql.placeholder('nextPage')}`,
        pages: sql`${syncCursors.pages} + 1`,
        records: sql`${syncCursors.records} + ${sql.placeholder('records')}`,
        completedAt: sql`${sql.placeholder('completedAt')}`,
      })
      .where(and(eq(syncCursors.planId, sql.placeholder('planId')), eq(syncCursors.windowStart, sql.placeholder('windowStart'))))
      .prepare();
    this.#completeDay = db
      .insert(syncWindows)
      .values({
        organization: sql.placeholder('organization'),
        day: sql.placeholder('day'),
        completedAt: sql.placeholder('now'),
        runId: sql.placeholder('runId'),
      })
      .onConflictDoUpdate({
        target: [syncWindows.organization, syncWindows.day],
        set: { completedAt: sql`excluded.completed_at`, runId: sql`excluded.run_id` },
      })
      .prepare();
    this.#countRunPage = db
      .update(syncRuns)
      .set({
        pages: sql`${syncRuns.pages} + 1`,
        retries: sql`${syncRuns.retries} + ${sql.placeholder('retries')}`,
        threatsInserted: sql`${syncRuns.threatsInserted} + ${sql.placeholder('inserted')}`,
        threatsUpdated: sql`${syncRuns.threatsUpdated} + ${sql.placeholder('updated')}`,
        threatsRejected: sql`${syncRuns.threatsRejected} + ${sql.placeholder('rejected')}`,
      })
      .where(eq(syncRuns.id, sql.placeholder('runId')))
      .prepare();
  }

  get sqlite(): OpenedDatabase['sqlite'] {
    return this.#opened.sqlite;
  }

  get db(): MirrorDatabase {
    return this.#db;
  }

  /** A run still marked running when the writer starts belonged to a process that died. */
  markAbandonedRuns(now: string): number {
    return this.#db
      .update(syncRuns)
      .set({ status: 'interrupted', finishedAt: now, error: 'the process stopped before the run finished' })
      .where(eq(syncRuns.status, 'running'))
      .run().changes;
  }

  startRun(organization: string, mode: SyncMode, rangeStart: string, rangeEnd: string, now: string): number {
    const row = this.#db
      .insert(syncRuns)
      .values({ organization, mode, status: 'running', rangeStart, rangeEnd, startedAt: now })
      .returning({ id: syncRuns.id })
      .get();
    return row.id;
  }

  finishRun(runId: number, status: Exclude<RunStatus, 'running'>, error: string | null, now: string): void {
    this.#db.update(syncRuns).set({ status, error, finishedAt: now }).where(eq(syncRuns.id, runId)).run();
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
    this.#db
      .insert(syncCheckpoints)
      .values({ organization, completeThrough: day, updatedAt: now })
      .onConflictDoUpdate({
        target: syncCheckpoints.organization,
        set: { completeThrough: sql`excluded.complete_through`, updatedAt: sql`excluded.updated_at` },
        setWhere: sql`${syncCheckpoints.completeThrough} IS NULL OR ${syncCheckpoints.completeThrough} < excluded.complete_through`,
      })
      .run();
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

  createPlan(organization: string, mode: SyncMode, rangeStart: string, rangeEnd: string, windows: ReadonlyArray<[string, string]>, now: string): Plan {
    return this.#db.transaction((tx) => {
      const plan = tx
        .insert(syncPlans)
        .values({ organization, mode, rangeStart, rangeEnd, createdAt: now })
        .returning({ id: syncPlans.id, organization: syncPlans.organization, mode: syncPlans.mode, rangeStart: syncPlans.rangeStart, rangeEnd: syncPlans.rangeEnd })
        .get();
      for (const [windowStart, windowEnd] of windows) {
        tx.insert(syncCursors).values({ planId: plan.id, windowStart, windowEnd }).run();
      }
      return plan;
    });
  }

  /** Adds windows to a resumed plan (a new day has begun since it was made). */
  extendPlan(plan: Plan, rangeEnd: string, windows: ReadonlyArray<[string, string]>): Plan {
    return this.#db.transaction((tx) => {
      for (const [windowStart, windowEnd] of windows) {
        tx.insert(syncCursors)
          .values({ planId: plan.id, windowStart, windowEnd })
          .onConflictDoUpdate({
            target: [syncCursors.planId, syncCursors.windowStart],
            set: { windowEnd, nextPage: null, pages: 0, records: 0, completedAt: null },
          })
          .run();
      }
      tx.update(syncPlans).set({ rangeEnd }).where(eq(syncPlans.id, plan.id)).run();
      return { ...plan, rangeEnd };
    });
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

  openWindows(planId: number): PlanWindow[] {
    return this.planWindows(planId).filter((window) => window.completedAt === null);
  }

  deletePlan(planId: number): void {
    this.#db.delete(syncPlans).where(eq(syncPlans.id, planId)).run();
  }

  /**
   * One page and the checkpoint after it, in one transaction: a crash keeps both or neither.
   * The last page of a window also records each day of the window as complete.
   */
  commitPage(input: CommitPageInput): PageCounts {
    const now = this.#strictlyLaterStamp(input.now);
    input = { ...input, now };
    return this.#db.transaction(() => {
      let inserted = 0;
      let updated = 0;
      for (const threat of input.threats) {
        const written = this.#upsertThreat.get({ ...threat, now: input.now });
        if (written) {
          if (written.firstSeenAt === input.now) inserted += 1;
          else updated += 1;
        }
        this.#linkThreat.run({ organization: input.organization, threatId: threat.id, now: input.now });
      }
      for (const record of input.rejected) {
        this.#insertRejected.run({
          organization: input.organization,
          runId: input.runId,
          raw: JSON.stringify(record.raw) ?? 'undefined',
          reason: record.reason,
          now: input.now,
        });
      }
      const windowDone = input.nextPage === null;
      this.#advanceCursor.run({
        nextPage: input.nextPage,
        records: input.threats.length,
        completedAt: windowDone ? input.now : null,
        planId: input.window.planId,
        windowStart: input.window.windowStart,
      });
      if (windowDone) {
        const days = daysBetween(input.window.windowStart, input.window.windowEnd);
        for (let offset = 0; offset < days; offset += 1) {
          this.#completeDay.run({ organization: input.organization, day: addDays(input.window.windowStart, offset), now: input.now, runId: input.runId });
        }
      }
      const counts = { inserted, updated, rejected: input.rejected.length };
      this.#countRunPage.run({ runId: input.runId, retries: input.retries, ...counts });
      return counts;
    });
  }

  /**
   * Each page gets a stamp later than the one before, so `first_seen_at = stamp` marks exactly
   * the rows this page inserted, even when two pages commit within one millisecond.
   */
  #strictlyLaterStamp(now: string): string {
    const ms = Math.max(Date.parse(now), this.#lastStampMs + 1);
    this.#lastStampMs = ms;
    return new Date(ms).toISOString();
  }

  recordSetting(key: string, value: string, now: string): void {
    this.#db
      .insert(mirrorSettings)
      .values({ key, value, updatedAt: now })
      .onConflictDoUpdate({ target: mirrorSettings.key, set: { value, updatedAt: now } })
      .run();
  }

  /**
   * Between runs, fold the WAL back into the file: a reader holding an old snapshot stops this
   * from truncating, so it is tried when idle and failure is harmless.
   */
  checkpointWal(): void {
    try {
      this.#opened.sqlite.pragma('wal_checkpoint(TRUNCATE)');
    } catch {
      // a reader is busy; the next idle moment will do
    }
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
