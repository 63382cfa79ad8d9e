// The threats walk's windows: a pool of workers, each walking one window at a time (WindowWalk)
// while the pages it fetched commit behind it.
import { fetchThreatPage, PAGE_SIZE } from '../api/threat-client.js';
import type { Plan, PlanWindow } from '../db/read/plan-reads.js';
import { addDays } from '../lib/days.js';
import type { WindowRef } from '../db/writer/protocol.js';
import { MAX_UNCOMMITTED_CHARS_PER_WINDOW } from './commit-pipeline.js';
import { RequestAllowanceSpent } from './request-allowance.js';
import type { SyncDeps } from './run-contract.js';
import { type ProbeAnswer, type WalkOrder, WindowPlanner } from './window-planner.js';
import { type LastPageFetched, type WalkContext, WindowWalk } from './window-walk.js';

/**
 * A worker goes on to its next window once the last page of its window is fetched, while that
 * window's pages commit and its candidates settle (the group commit holds ~100 ms of pages: a
 * worker waiting for them idled that long at every window), unless more is uncommitted than a
 * window may hold waiting: a page larger than that (makeRoom lets the latest one wait whole) is
 * committed first, so the capped heap never holds two such pages per worker.
 */
const HANDOFF_MAX_UNCOMMITTED_CHARS = MAX_UNCOMMITTED_CHARS_PER_WINDOW;

/** How the plan's windows are cut in this run (the history walk's budget and known density), and by how many workers. */
export interface WalkPlanning {
  readonly requests?: number | undefined;
  readonly density?: number | undefined;
  /** Fewer than THREAT_MIRROR_CONCURRENCY (history.ts says when). */
  readonly workers?: number | undefined;
}

/**
 * A pool of workers: windows a killed run left open come first, then new windows as the planner
 * cuts them. The first failure stops the others at their next page.
 */
export async function walkWindows(context: WalkContext, plan: Plan, outerSignal: AbortSignal, planning: WalkPlanning = {}): Promise<void> {
  const { writer, reads } = context.deps;
  const windows = reads.plans.planWindows(plan.id);
  const resumed = windows.filter((window) => window.completedAt === null);
  const workers = Math.min(context.deps.settings.concurrency, planning.workers ?? Infinity);
  const order = orderOf(plan);
  const planner = new WindowPlanner(plan.rangeStart, plan.rangeEnd, firstUncovered(plan, windows, order), { workers, order, ...planning });
  const stop = new AbortController();
  const signal = AbortSignal.any([outerSignal, stop.signal]);
  let failure: { error: unknown } | undefined;
  const fail = (error: unknown): void => {
    failure ??= { error };
    // A spent allowance stops each worker at its next request, not the requests already sent: a
    // page paid for is committed, or a window whose next page came last in every run never got past it.
    if (!(error instanceof RequestAllowanceSpent)) stop.abort(error);
  };
  const nextWindow = windowSource(resumed, planner, {
    open: ([windowStart, windowEnd]) => openWindow(writer, { planId: plan.id, windowStart, windowEnd }),
    probe: (range) => probe(context, range, order, signal).then((answer) => planner.probed(answer)),
  });
  const worker = async (): Promise<void> => {
    // The window before this one, still committing and settling while this one is walked.
    let finishing: Promise<void> = Promise.resolve();
    try {
      while (!signal.aborted && failure === undefined) {
        const next = await nextWindow();
        if (!next) break;
        const { window, recorded } = next;
        const walk = new WindowWalk(context, window, signal, recorded);
        let handedOff: (fetched: LastPageFetched | undefined) => void = () => undefined;
        const lastPage = new Promise<LastPageFetched | undefined>((resolve) => (handedOff = resolve));
        const run = walk.run((fetched) => handedOff(fetched)).then(
          () => handedOff(undefined),
          (error: unknown) => {
            handedOff(undefined);
            context.onWindowStopped?.(window, { records: walk.records, walkedWhole: walk.walkedWhole }, error);
            fail(error);
          },
        );
        const fetched = await lastPage;
        // Only a window walked from its first page tells how dense its days are.
        if (fetched?.fromFirstPage) planner.windowDone(window.windowStart, window.windowEnd, fetched.records);
        // At most one window finishes behind the one walked.
        await finishing;
        finishing = run;
        if (fetched === undefined || fetched.uncommittedChars > HANDOFF_MAX_UNCOMMITTED_CHARS) await run;
      }
    } catch (error) {
      fail(error);
    } finally {
      await finishing;
    }
  };
  await Promise.all(Array.from({ length: workers }, worker));
  outerSignal.throwIfAborted();
  if (failure) throw failure.error;
}

/**
 * The first records of the rest of the range by blockedAt, in walk order: where the data begins
 * again and how dense it is there (window-planner.ts). One request through the key's budget, as
 * every other; its records are not written (a walk of their window does that).
 */
async function probe(context: WalkContext, range: { from: string; to: string }, order: WalkOrder, signal: AbortSignal): Promise<ProbeAnswer> {
  const request = { startDate: range.from, endDate: range.to, nextPage: null, perPage: PAGE_SIZE, byBlockedAt: order === 'oldest-first' ? ('asc' as const) : ('desc' as const) };
  const page = await fetchThreatPage(context.deps.api, context.organization, request, signal);
  context.log.debug({ from: range.from, to: range.to, records: page.threats.length, first: page.threats[0]?.blockedAt ?? null }, 'probed where the records of the rest of the range are');
  return { blockedAt: page.threats.map((threat) => threat.blockedAt), more: page.nextPage !== null };
}

/** The history walk goes newest first (history.ts); every other plan oldest first. */
function orderOf(plan: Plan): WalkOrder {
  return plan.mode === 'history' ? 'newest-first' : 'oldest-first';
}

/**
 * The first day, in walk order, that none of the plan's windows covers: windows are cut from one
 * end and recorded in order, so a killed run leaves them all on that end.
 */
export function firstUncovered(plan: Pick<Plan, 'rangeStart' | 'rangeEnd'>, windows: ReadonlyArray<Pick<PlanWindow, 'windowStart' | 'windowEnd'>>, order: WalkOrder): string {
  if (order === 'oldest-first') return addDays(windows.reduce((last, window) => (window.windowEnd > last ? window.windowEnd : last), addDays(plan.rangeStart, -1)), 1);
  return addDays(windows.reduce((first, window) => (window.windowStart < first ? window.windowStart : first), addDays(plan.rangeEnd, 1)), -1);
}

/**
 * A new window, recorded by the writer in order with the pages: before any page of it commits,
 * and after every window opened before it, so a killed run leaves a prefix of the plan's windows
 * and the next one plans on after them. Not waited for here: the walk's first page goes out at
 * once, and the record's failure fails the walk (WindowWalk tracks it with its pages).
 */
/**
 * The windows the workers take, one at a time: those a killed run left open first, then the
 * planner's. One probe at a time; every worker waits for its answer before asking for a window.
 */
function windowSource(
  resumed: PlanWindow[],
  planner: WindowPlanner,
  steps: { open: (window: [string, string]) => OpenedWindow; probe: (range: { from: string; to: string }) => Promise<void> },
): () => Promise<OpenedWindow | undefined> {
  let probing: Promise<void> | undefined;
  return async () => {
    const open = resumed.shift();
    if (open) return { window: open };
    for (;;) {
      if (probing) {
        await probing;
        continue;
      }
      const step = planner.next();
      if (!step) return undefined;
      if ('window' in step) return steps.open(step.window);
      probing = steps.probe(step.probe);
      await probing.finally(() => (probing = undefined));
    }
  };
}

/** A window to walk, and for a new one the promise of its record in the plan. */
interface OpenedWindow {
  readonly window: PlanWindow;
  readonly recorded?: Promise<void>;
}

function openWindow(writer: SyncDeps['writer'], window: WindowRef): { window: PlanWindow; recorded: Promise<void> } {
  const recorded = writer.call('openWindow', window);
  return { window: { ...window, nextPage: null, completedAt: null, lastId: null, startedAt: null }, recorded };
}
