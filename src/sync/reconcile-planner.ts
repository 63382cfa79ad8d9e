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
 */
export function planReconciliation(due: readonly LedgerDay[], maxRequests: number, available = maxRequests): ReconcilePlan {
  const pass = new DuePass(due);
  const tooLarge: LedgerDay[] = [];
  const windows: ReconcileWindow[] = [];
  let remaining = available;
  for (let first = pass.mostOverdue(); first !== undefined; first = pass.mostOverdue()) {
    const firstRequests = requestsFor(first.records ?? 0);
    if (firstRequests > maxRequests) {
      pass.take(first.day);
      tooLarge.push(first);
      continue;
    }
    // Oldest first, strictly: a day that does not fit now waits at the head of the next run.
    if (firstRequests > remaining) break;
    const window = pass.windowFrom(first, remaining);
    remaining -= window.estimatedRequests;
    windows.push(window);
  }
  windows.sort((a, b) => (a.start < b.start ? -1 : a.start > b.start ? 1 : 0));
  return { windows, tooLarge };
}

/** One greedy pass over the due days: the days already taken (planned or too large) and the most overdue one left. */
class DuePass {
  readonly #due: readonly LedgerDay[];
  readonly #byDay: ReadonlyMap<string, LedgerDay>;
  /** Each day's place in `due`: the lower, the longer unwalked. */
  readonly #order: ReadonlyMap<string, number>;
  readonly #taken = new Set<string>();
  /** Every day before it is taken. */
  #cursor = 0;

  constructor(due: readonly LedgerDay[]) {
    this.#due = due;
    this.#byDay = new Map(due.map((day) => [day.day, day]));
    this.#order = new Map(due.map((day, index) => [day.day, index]));
  }

  /** The most overdue day not yet taken, skipping `except`. */
  mostOverdue(except: ReadonlySet<string> = new Set()): LedgerDay | undefined {
    while (this.#cursor < this.#due.length && this.#taken.has((this.#due[this.#cursor] as LedgerDay).day)) this.#cursor += 1;
    for (let index = this.#cursor; index < this.#due.length; index += 1) {
      const day = this.#due[index] as LedgerDay;
      if (!this.#taken.has(day.day) && !except.has(day.day)) return day;
    }
    return undefined;
  }

  take(day: string): void {
    this.#taken.add(day);
  }

  /** The window around `first` that the run's `remaining` requests allow; its days are taken. */
  windowFrom(first: LedgerDay, remaining: number): ReconcileWindow {
    const inWindow = new Set([first.day]);
    let start = first.day;
    let end = first.day;
    let records = first.records ?? 0;
    // Grow one day at a time on whichever side is more overdue, until neither side may grow.
    for (;;) {
      const grown = this.#neighbours(start, end).find((day) => this.#mayJoin(day, records, remaining, inWindow));
      if (!grown) break;
      inWindow.add(grown.day);
      records += grown.records ?? 0;
      if (grown.day > end) end = grown.day;
      else start = grown.day;
    }
    for (const day of inWindow) this.take(day);
    return { start, end, estimatedRequests: requestsFor(records) };
  }

  /** The days either side of the window not yet taken, the more overdue first. */
  #neighbours(start: string, end: string): LedgerDay[] {
    const sides = [this.#byDay.get(addDays(end, 1)), this.#byDay.get(addDays(start, -1))];
    const open = sides.filter((day): day is LedgerDay => day !== undefined && !this.#taken.has(day.day));
    return open.sort((a, b) => (this.#order.get(a.day) ?? 0) - (this.#order.get(b.day) ?? 0));
  }

  /** Whether `candidate` joins a window of `records`: it fits, and costs no request more or is itself the most overdue day left. */
  #mayJoin(candidate: LedgerDay, records: number, remaining: number, inWindow: ReadonlySet<string>): boolean {
    const more = records + (candidate.records ?? 0);
    if (more > TARGET_RECORDS_PER_WINDOW && records > 0) return false;
    if (requestsFor(more) > remaining) return false;
    const extra = requestsFor(more) - requestsFor(records);
    return extra === 0 || this.mostOverdue(inWindow)?.day === candidate.day;
  }
}
