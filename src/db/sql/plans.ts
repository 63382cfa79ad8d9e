// Every write of the tables sync_plans (unfinished work: the range a run set out to cover) and
// sync_checkpoints (complete_through: the last day every earlier day is mirrored through); the
// windows of a plan are sync_cursors (window-cursors.ts).
import type { SyncMode } from '../schema.js';
import type { Plan, PlanWindow } from '../read/plan-reads.js';
import { PLAN_COLUMNS, PLAN_WINDOWS_SQL } from '../read/plan-reads.js';
import { type Database, prepareAll, type Statements } from '../sqlite.js';
import type { DayLedgerRows } from './day-ledger.js';
import type { WindowCursors, WindowRef } from './window-cursors.js';

export interface NewPlan {
  readonly organization: string;
  readonly mode: SyncMode;
  readonly rangeStart: string;
  readonly rangeEnd: string;
  readonly createdAt: string;
  /** A plan that widens the scope (Plan.widening); absent: null. */
  readonly widening?: string | null;
}

/** Which unfinished plans to delete: by id, or every one of an organization's mode. */
export type PlanSelection = { readonly planIds: readonly number[] } | { readonly organization: string; readonly mode: SyncMode };

const CREATE_SQL = `INSERT INTO sync_plans (organization, mode, range_start, range_end, created_at, widening) VALUES (?, ?, ?, ?, ?, ?)
                    RETURNING ${PLAN_COLUMNS}`;

/** Moves complete_through to the day unless it is already there or later: it never goes back. */
const ADVANCE_COMPLETE_THROUGH_SQL = `INSERT INTO sync_checkpoints (organization, complete_through, updated_at) VALUES (?, ?, ?)
       ON CONFLICT (organization) DO UPDATE SET complete_through = excluded.complete_through, updated_at = excluded.updated_at
       WHERE sync_checkpoints.complete_through IS NULL OR sync_checkpoints.complete_through < excluded.complete_through`;

const PLAN_SQL = {
  create: CREATE_SQL,
  setRangeEnd: 'UPDATE sync_plans SET range_end = ? WHERE id = ?',
  delete: 'DELETE FROM sync_plans WHERE id = ?',
  idsOf: 'SELECT id FROM sync_plans WHERE organization = ? AND mode = ? AND widening IS NULL',
  wideningPlans: 'SELECT id, widening FROM sync_plans WHERE organization = ? AND widening IS NOT NULL',
  windowsWithCursor:
    'SELECT c.plan_id AS planId, c.window_start AS windowStart FROM sync_cursors c JOIN sync_plans p ON p.id = c.plan_id WHERE p.organization = ? AND c.completed_at IS NULL AND c.next_page IS NOT NULL',
  ledgerExtent: 'SELECT min(day) AS first, max(day) AS last FROM sync_windows WHERE organization = ?',
  unfinishedWindows: `SELECT p.organization, c.window_start AS windowStart, c.window_end AS windowEnd
                        FROM sync_cursors c JOIN sync_plans p ON p.id = c.plan_id WHERE c.plan_id = ? AND c.completed_at IS NULL`,
  windows: PLAN_WINDOWS_SQL,
  advanceCompleteThrough: ADVANCE_COMPLETE_THROUGH_SQL,
};

export class PlanRows {
  readonly #sql: Statements<keyof typeof PLAN_SQL>;
  /** A plan's windows go with it. */
  readonly #cursors: WindowCursors;
  readonly #ledger: DayLedgerRows;

  constructor(sqlite: Database, cursors: WindowCursors, ledger: DayLedgerRows) {
    this.#sql = prepareAll(sqlite, PLAN_SQL);
    this.#cursors = cursors;
    this.#ledger = ledger;
  }

  create(plan: NewPlan): Plan {
    return this.#sql.create.get(plan.organization, plan.mode, plan.rangeStart, plan.rangeEnd, plan.createdAt, plan.widening ?? null) as Plan;
  }

  /**
   * A day has begun since the plan was made: it now reaches `rangeEnd` too, and its windows whose
   * walk began before their last day ended are walked again (a threat blocked late that day may
   * be missing from them).
   */
  extend(plan: Plan, rangeEnd: string): Plan {
    this.#sql.setRangeEnd.run(rangeEnd, plan.id);
    for (const window of this.#sql.windows.all(plan.id) as PlanWindow[]) {
      if (!walkedAfterDayEnded(window.windowEnd, window.startedAt)) this.#cursors.restart(window);
    }
    return { ...plan, rangeEnd };
  }

  /**
   * The organization's windows a walk left midway start again from their first page: their
   * cursors were made by requests of another scope, and a cursor belongs to the query that made it
   * (a stored cursor followed under a new scope skips whatever the new scope adds before it).
   */
  restartCursors(organization: string): void {
    for (const window of this.#sql.windowsWithCursor.all(organization) as Array<Pick<WindowRef, 'planId' | 'windowStart'>>) this.#cursors.restart(window);
  }

  /** Records windows before their first request, so a restart resumes them rather than re-planning. */
  addWindows(windows: readonly WindowRef[]): void {
    for (const window of windows) this.#cursors.add(window);
  }

  /**
   * Deletes the plans and their windows; returns how many plans there were. What a window left
   * midway wrote stays, and its days holding a threat of the organization join the ledger as never
   * walked: the reconciliation walks them first, and checks what it wrote (a dropped history walk,
   * a backfill, a verify started over).
   */
  delete(selection: PlanSelection): number {
    const ids = 'planIds' in selection ? selection.planIds : (this.#sql.idsOf.all(selection.organization, selection.mode) as Array<{ id: number }>).map((plan) => plan.id);
    for (const id of ids) {
      for (const window of this.#sql.unfinishedWindows.all(id) as Array<{ organization: string; windowStart: string; windowEnd: string }>) {
        this.#ledger.joinDaysHolding(window.organization, window.windowStart, window.windowEnd);
      }
      this.#cursors.deleteOfPlan(id);
      this.#sql.delete.run(id);
    }
    return ids.length;
  }

  /** The organization's open plans that widen its scope, deleted with their windows; returns the types they had left to walk. */
  dropWidening(organization: string): string[] {
    const plans = this.#sql.wideningPlans.all(organization) as Array<{ id: number; widening: string }>;
    this.delete({ planIds: plans.map((plan) => plan.id) });
    return plans.map((plan) => plan.widening);
  }

  /** The first and last days the ledger holds for the organization: the days already mirrored; undefined when none. */
  mirroredDays(organization: string): { first: string; last: string } | undefined {
    const extent = this.#sql.ledgerExtent.get(organization) as { first: string | null; last: string | null };
    return extent.first === null || extent.last === null ? undefined : { first: extent.first, last: extent.last };
  }

  advanceCompleteThrough(organization: string, day: string, now: string): void {
    this.#sql.advanceCompleteThrough.run(organization, day, now);
  }
}

/** True when a walk that began at `startedAt` began after `day` ended (UTC): it can have missed nothing blocked that day. */
export function walkedAfterDayEnded(day: string, startedAt: string | null): boolean {
  return startedAt !== null && startedAt.slice(0, 10) > day;
}
