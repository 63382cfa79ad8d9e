// Unfinished work and how far each organization is complete: plans (sync_plans), the page cursor
// of each of their date windows (sync_cursors), and the checkpoint (sync_checkpoints).
import { and, asc, eq, sql } from 'drizzle-orm';
import type { OpenedDatabase } from './open-database.js';
import type { SyncMode } from './run-state.js';
import { syncCheckpoints, syncCursors, syncPlans } from './schema.js';
import { immediately } from './write-transaction.js';

export interface PlanWindow {
  readonly planId: number;
  readonly windowStart: string;
  readonly windowEnd: string;
  readonly nextPage: string | null;
  readonly completedAt: string | null;
  /** The last id of the last page committed: where a resumed walk checks the list has not shifted. */
  readonly lastId: number | null;
  /** When the walk of the window's committed pages began; null before its first page. */
  readonly startedAt: string | null;
}

export interface Plan {
  readonly id: number;
  readonly organization: string;
  readonly mode: SyncMode;
  readonly rangeStart: string;
  readonly rangeEnd: string;
}

const PLAN_COLUMNS = { id: syncPlans.id, organization: syncPlans.organization, mode: syncPlans.mode, rangeStart: syncPlans.rangeStart, rangeEnd: syncPlans.rangeEnd };

export class PlanStore {
  readonly #opened: OpenedDatabase;

  constructor(opened: OpenedDatabase) {
    this.#opened = opened;
  }

  #immediately<T>(write: () => T): T {
    return immediately(this.#opened.sqlite, write);
  }

  completeThrough(organization: string): string | null {
    const row = this.#opened.db
      .select({ completeThrough: syncCheckpoints.completeThrough })
      .from(syncCheckpoints)
      .where(eq(syncCheckpoints.organization, organization))
      .get();
    return row?.completeThrough ?? null;
  }

  /** Moves the checkpoint to `day` unless it is already there or later: it never goes back. */
  advanceCompleteThrough(organization: string, day: string, now: string): void {
    this.#immediately(() =>
      this.#opened.db
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

  /** The unfinished plan of this organization and mode, the oldest first. */
  findOpenPlan(organization: string, mode: SyncMode): Plan | undefined {
    return this.openPlans(organization, mode)[0];
  }

  /** Every unfinished plan of this organization and mode, the oldest first. */
  openPlans(organization: string, mode: SyncMode): Plan[] {
    return this.#opened.db
      .select(PLAN_COLUMNS)
      .from(syncPlans)
      .where(and(eq(syncPlans.organization, organization), eq(syncPlans.mode, mode)))
      .orderBy(asc(syncPlans.id))
      .all();
  }

  createPlan(organization: string, mode: SyncMode, rangeStart: string, rangeEnd: string, now: string): Plan {
    return this.#immediately(() => this.#opened.db.insert(syncPlans).values({ organization, mode, rangeStart, rangeEnd, createdAt: now }).returning(PLAN_COLUMNS).get());
  }

  /**
   * A day has begun since the plan was made: it now reaches the new day too, and its windows whose
   * walk began before their last day ended are walked again (a threat blocked late that day may
   * be missing from them), in the same transaction.
   */
  extendPlan(plan: Plan, rangeEnd: string): Plan {
    this.#immediately(() => {
      this.#opened.db.update(syncPlans).set({ rangeEnd }).where(eq(syncPlans.id, plan.id)).run();
      for (const window of this.planWindows(plan.id)) {
        if (walkedAfterDayEnded(window.windowEnd, window.startedAt)) continue;
        this.#opened.db
          .update(syncCursors)
          .set({ nextPage: null, completedAt: null, pages: 0, records: 0, lastId: null, startedAt: null })
          .where(and(eq(syncCursors.planId, plan.id), eq(syncCursors.windowStart, window.windowStart)))
          .run();
      }
    });
    return { ...plan, rangeEnd };
  }

  /** Records a window before its first request, so a restart resumes it rather than re-planning. */
  addWindow(planId: number, windowStart: string, windowEnd: string): PlanWindow {
    this.#immediately(() => this.#opened.db.insert(syncCursors).values({ planId, windowStart, windowEnd }).run());
    return { planId, windowStart, windowEnd, nextPage: null, completedAt: null, lastId: null, startedAt: null };
  }

  planWindows(planId: number): PlanWindow[] {
    return this.#opened.db
      .select({
        planId: syncCursors.planId,
        windowStart: syncCursors.windowStart,
        windowEnd: syncCursors.windowEnd,
        nextPage: syncCursors.nextPage,
        completedAt: syncCursors.completedAt,
        lastId: syncCursors.lastId,
        startedAt: syncCursors.startedAt,
      })
      .from(syncCursors)
      .where(eq(syncCursors.planId, planId))
      .orderBy(asc(syncCursors.windowStart))
      .all();
  }

  deleteOpenPlans(organization: string, mode: SyncMode): void {
    for (const plan of this.#opened.db.select({ id: syncPlans.id }).from(syncPlans).where(and(eq(syncPlans.organization, organization), eq(syncPlans.mode, mode))).all()) {
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
      this.#opened.db.delete(syncCursors).where(eq(syncCursors.planId, planId)).run();
      this.#opened.db.delete(syncPlans).where(eq(syncPlans.id, planId)).run();
    });
  }
}

/** True when a walk that began at `startedAt` began after `day` ended (UTC): it can have missed nothing blocked that day. */
export function walkedAfterDayEnded(day: string, startedAt: string | null): boolean {
  return startedAt !== null && startedAt.slice(0, 10) > day;
}
