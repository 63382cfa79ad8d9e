// Which due days a reconciliation walks this run, packed into windows, within its request allowance.
//
// The days come longest-unwalked first. A window starts at the most overdue day left and takes in
// its due neighbours while that costs no request more (quiet days share a page), or while the
// neighbour is itself the most overdue day left, so a request is never spent on a day while one
// walked longer ago waits. Costs are estimated from the records the ledger saw at the last walk.
import { PAGE_SIZE } from '../api/threat-client.js';
import type { LedgerDay } from '../db/read/ledger-reads.js';
import { addDays } from '../lib/days.js';
import { TARGET_RECORDS_PER_WINDOW } from './window-planner.js';

export interface ReconcileWindow {
  readonly start: string;
  readonly end: string;
  /** Requests the window should take: its pages at the records of the last walk. */
  readonly estimatedRequests: number;
}

export interface ReconcilePlan {
  /** By start day. */
  readonly windows: readonly ReconcileWindow[];
  /** Days whose walk alone would take more requests than a run may spend: never planned. */
  readonly tooLarge: readonly LedgerDay[];
}

/** Requests a window of this many records takes: full pages and the last, partial one. */
export function requestsFor(records: number): number {
  return Math.max(1, Math.ceil(records / PAGE_SIZE));
}

/**
 * `due`: longest-unwalked first (as LedgerReads.dueDays returns them). `maxRequests`: a run's whole
 * allowance (a day that needs more is never planned); `available`: what this run has left for
 * walks (the checks carried over from the last run come first).
 * Some 60 lines on purpose: one greedy pass whose helper shares the pass's `taken` set and cursor;
 * split apart, the pieces would hand that state back and forth.
 */
export function planReconciliation(due: readonly LedgerDay[], maxRequests: number, available = maxRequests): ReconcilePlan {
  const byDay = new Map(due.map((day) => [day.day, day]));
  const order = new Map(due.map((day, index) => [day.day, index]));
  const taken = new Set<string>();
  const tooLarge: LedgerDay[] = [];
  const windows: ReconcileWindow[] = [];
  let remaining = available;
  let cursor = 0;
  /** The most overdue day not yet taken, skipping `except`. */
  const mostOverdue = (except: ReadonlySet<string>): LedgerDay | undefined => {
    while (cursor < due.length && taken.has((due[cursor] as LedgerDay).day)) cursor += 1;
    for (let index = cursor; index < due.length; index += 1) {
      const day = due[index] as LedgerDay;
      if (!taken.has(day.day) && !except.has(day.day)) return day;
    }
    return undefined;
  };
  for (;;) {
    const first = mostOverdue(new Set());
    if (!first) break;
    const firstRecords = first.records ?? 0;
    if (requestsFor(firstRecords) > maxRequests) {
      taken.add(first.day);
      tooLarge.push(first);
      continue;
    }
    // Oldest first, strictly: a day that does not fit now waits at the head of the next run.
    if (requestsFor(firstRecords) > remaining) break;
    const inWindow = new Set([first.day]);
    let start = first.day;
    let end = first.day;
    let records = firstRecords;
    const tryAdd = (candidate: LedgerDay | undefined): boolean => {
      if (!candidate || taken.has(candidate.day)) return false;
      const more = records + (candidate.records ?? 0);
      if (more > TARGET_RECORDS_PER_WINDOW && records > 0) return false;
      const extra = requestsFor(more) - requestsFor(records);
      if (requestsFor(more) > remaining) return false;
      if (extra > 0 && mostOverdue(inWindow)?.day !== candidate.day) return false;
      inWindow.add(candidate.day);
      records = more;
      return true;
    };
    // Grow one day at a time on whichever side is more overdue, until neither side may grow.
    for (;;) {
      const after = byDay.get(addDays(end, 1));
      const before = byDay.get(addDays(start, -1));
      const sides = [after, before].filter((day): day is LedgerDay => day !== undefined && !taken.has(day.day));
      sides.sort((a, b) => (order.get(a.day) ?? 0) - (order.get(b.day) ?? 0));
      const grown = sides.find((day) => tryAdd(day));
      if (!grown) break;
      if (grown.day > end) end = grown.day;
      else start = grown.day;
    }
    for (const day of inWindow) taken.add(day);
    const estimatedRequests = requestsFor(records);
    remaining -= estimatedRequests;
    windows.push({ start, end, estimatedRequests });
  }
  windows.sort((a, b) => (a.start < b.start ? -1 : a.start > b.start ? 1 : 0));
  return { windows, tooLarge };
}
