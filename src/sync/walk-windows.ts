// The threats walk's windows: a pool of workers, each walking one window at a time (WindowWalk)
// while the pages it fetched commit behind it.
import type { Plan, PlanWindow } from '../db/read/plan-reads.js';
import { addDays } from '../lib/days.js';
import type { WindowRef } from '../db/writer/protocol.js';
import type { SyncDeps } from './run-contract.js';
import { WindowPlanner } from './window-planner.js';
import { type WalkContext, WindowWalk } from './window-walk.js';

/**
 * A pool of workers: windows a killed run left open come first, then new windows as the planner
 * cuts them. The first failure stops the others at their next page.
 */
export async function walkWindows(context: WalkContext, plan: Plan, outerSignal: AbortSignal): Promise<void> {
  const { writer, reads } = context.deps;
  const windows = reads.plans.planWindows(plan.id);
  const resumed = windows.filter((window) => window.completedAt === null);
  const covered = windows.reduce((last, window) => (window.windowEnd > last ? window.windowEnd : last), addDays(plan.rangeStart, -1));
  const workers = context.deps.settings.concurrency;
  const planner = new WindowPlanner(plan.rangeStart, plan.rangeEnd, addDays(covered, 1), workers);
  const stop = new AbortController();
  const signal = AbortSignal.any([outerSignal, stop.signal]);
  let failure: { error: unknown } | undefined;
  const nextWindow = (): { window: PlanWindow; recorded?: Promise<void> } | undefined => {
    const open = resumed.shift();
    if (open) return { window: open };
    const range = planner.next();
    return range ? openWindow(writer, { planId: plan.id, windowStart: range[0], windowEnd: range[1] }) : undefined;
  };
  const worker = async (): Promise<void> => {
    while (!signal.aborted) {
      const next = nextWindow();
      if (!next) return;
      const { window, recorded } = next;
      const walk = new WindowWalk(context, window, signal, recorded);
      try {
        const walked = await walk.run();
        // Only a window walked from its first page tells how dense its days are.
        if (walked.fromFirstPage) planner.windowDone(window.windowStart, window.windowEnd, walked.records);
      } catch (error) {
        context.onWindowStopped?.(window, { records: walk.records, walkedWhole: walk.walkedWhole }, error);
        failure ??= { error };
        stop.abort(error);
      }
    }
  };
  await Promise.all(Array.from({ length: workers }, worker));
  outerSignal.throwIfAborted();
  if (failure) throw failure.error;
}

/**
 * A new window, recorded by the writer in order with the pages: before any page of it commits,
 * and after every window opened before it, so a killed run leaves a prefix of the plan's windows
 * and the next one plans on after them. Not waited for here: the walk's first page goes out at
 * once, and the record's failure fails the walk (WindowWalk tracks it with its pages).
 */
function openWindow(writer: SyncDeps['writer'], window: WindowRef): { window: PlanWindow; recorded: Promise<void> } {
  const recorded = writer.call('openWindow', window);
  return { window: { ...window, nextPage: null, completedAt: null, lastId: null, startedAt: null }, recorded };
}
