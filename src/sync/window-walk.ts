// The threats walk's windows: a pool of workers, each following one window's cursors to the end
// while the pages it fetched commit behind it.
import type { Logger } from 'pino';
import { PermanentApiError, ProtocolError } from '../api/errors.js';
import { fetchThreatPage, type ThreatPage } from '../api/threat-client.js';
import { DOCUMENTED_ASSET_TYPES } from '../api/threat-record.js';
import type { Plan, PlanWindow } from '../db/mirror-store.js';
import { addDays } from '../lib/days.js';
import { errorMessage } from '../lib/errors.js';
import type { Threat } from '../records.js';
import { CommitPipeline } from './commit-pipeline.js';
import { addPage, CursorGuard, type RunContext } from './run-contract.js';
import { WindowPlanner } from './window-planner.js';
import { WindowSeen } from './window-seen.js';

/** What every window of one run shares. */
export interface WalkContext extends RunContext {
  /** verify: shown each page's records before they are written. */
  readonly onPage?: ((threats: readonly Threat[]) => void) | undefined;
}

/** After this many empty pages in a row that still carry a cursor, the service is looping. */
const MAX_EMPTY_PAGES_IN_A_ROW = 3;

/**
 * Types outside the documented list are stored as they come; each is logged once per process, up
 * to this many (a type is at most 64 characters): the set lives as long as a daemon and must not
 * grow with whatever the service invents.
 */
const MAX_REPORTED_UNKNOWN_TYPES = 100;
const reportedUnknownTypes = new Set<string>();

/**
 * A pool of workers: windows a killed run left open come first, then new windows as the planner
 * cuts them. The first failure stops the others at their next page.
 */
export async function walkWindows(context: WalkContext, plan: Plan, outerSignal: AbortSignal): Promise<void> {
  const { store } = context.deps;
  const windows = store.planWindows(plan.id);
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
    return range ? store.openWindow(plan.id, range[0], range[1]) : undefined;
  };
  const worker = async (): Promise<void> => {
    while (!signal.aborted) {
      const next = nextWindow();
      if (!next) return;
      const { window, recorded } = next;
      try {
        const records = await new WindowWalk(context, window, signal, recorded).run();
        // Only a window walked from its first page tells how dense its days are.
        if (window.nextPage === null) planner.windowDone(window.windowStart, window.windowEnd, records);
      } catch (error) {
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
 * Follows one window's cursors to the end: page n+1 is requested as soon as page n arrives, and
 * the pages already fetched commit meanwhile, in order (see CommitPipeline). Used once.
 */
class WindowWalk {
  readonly #context: WalkContext;
  readonly #window: PlanWindow;
  readonly #signal: AbortSignal;
  readonly #commits = new CommitPipeline();
  readonly #cursors: CursorGuard;
  /** The cursor of the page being taken in; null for the window's first page. */
  #cursor: string | null;
  /** Removals can only be concluded from a walk that saw every page of the window. */
  #seen: WindowSeen | null;
  /** The page requested next, fetched while the current one is taken in. */
  #next: Promise<ThreatPage> | undefined;
  #pages = 0;
  #records = 0;
  #emptyPagesInARow = 0;

  /** `recorded`: a new window's record, which commits before its pages; it fails the walk if it fails. */
  constructor(context: WalkContext, window: PlanWindow, signal: AbortSignal, recorded?: Promise<void>) {
    this.#context = context;
    this.#window = window;
    this.#signal = signal;
    if (recorded) this.#commits.add(recorded, 0);
    this.#cursor = window.nextPage;
    this.#seen = window.nextPage === null ? new WindowSeen(window.windowStart, window.windowEnd) : null;
    this.#cursors = new CursorGuard(
      (cursor) =>
        `organization "${context.organization.name}": the service returned next_page "${cursor}" again for ${this.#range}; stopped to avoid a loop`,
    );
  }

  /** Walks to the window's last page; returns the records the service sent. */
  async run(): Promise<number> {
    const stored = this.#cursor;
    this.#next = stored === null ? this.#fetch(null) : this.#fetch(stored).catch((error: unknown) => this.#restartIfRefused(error));
    try {
      for (;;) {
        const { nextPage, chars, empty } = this.#handOver(await this.#next);
        if (nextPage === null) {
          await this.#commits.drain();
          return this.#records;
        }
        await this.#commits.makeRoom(chars);
        this.#assertNotLooping(empty);
        this.#cursor = nextPage;
      }
    } finally {
      // Stopping (an error, a signal) still lets the pages already fetched commit, and counts them.
      await this.#commits.settle();
    }
  }

  get #range(): string {
    return `${this.#window.windowStart}..${this.#window.windowEnd}`;
  }

  #fetch(nextPage: string | null): Promise<ThreatPage> {
    const { deps, organization } = this.#context;
    const request = { startDate: this.#window.windowStart, endDate: this.#window.windowEnd, nextPage };
    const pending = fetchThreatPage(deps.api, organization, request, this.#signal);
    // Awaited in run(); this only keeps a prefetch abandoned by a failed write from being "unhandled".
    pending.catch(() => undefined);
    return pending;
  }

  /**
   * A stored cursor the service refuses (400: it expired, or an older version stored a bad one)
   * would fail every later run: the window starts over from its first page instead, once.
   */
  #restartIfRefused(error: unknown): Promise<ThreatPage> {
    if (!(error instanceof PermanentApiError && error.status === 400) || this.#signal.aborted) throw error;
    this.#context.log.warn(
      { window: this.#range, cursor: this.#window.nextPage, error: errorMessage(error) },
      'the service refused the stored cursor (HTTP 400): restarting this window from its first page',
    );
    this.#cursor = null;
    this.#seen = new WindowSeen(this.#window.windowStart, this.#window.windowEnd);
    return this.#fetch(null);
  }

  /**
   * Takes a page in: prefetches the next one, checks it, and hands it to the writer. Only what the
   * loop needs comes back, so the loop holds no page while it waits for commits: a page of large
   * records (4 MB) held across those waits by each of four windows, beside the prefetched ones, ran
   * the CLI's 48 MB heap out (45 MB live after a full GC, measured).
   */
  #handOver(page: ThreatPage): { nextPage: string | null; chars: number; empty: boolean } {
    this.#commits.throwIfFailed();
    this.#cursors.accept(page.nextPage, this.#cursor);
    if (page.nextPage !== null) this.#next = this.#fetch(page.nextPage);
    reportUnknownTypes(page, this.#context.log);
    this.#context.onPage?.(page.threats);
    this.#seen?.add(page.threats);
    this.#pages += 1;
    const sent = page.threats.length + page.rejected.length + page.rejectedNotKept;
    this.#records += sent;
    const chars = pageChars(page);
    this.#commits.add(this.#commit(page), chars);
    return { nextPage: page.nextPage, chars, empty: sent === 0 };
  }

  /** Hands the page to the writer; counts it once committed. */
  #commit(page: ThreatPage): Promise<void> {
    const { deps, organization, runId, totals, log } = this.#context;
    // Only what the totals and the log need is kept until the commit: the writer has its own copy.
    const { nextPage, retries } = page;
    const cursor = this.#cursor;
    const records = page.threats.length;
    const rejectedReasons = page.rejected.map((record) => record.reason);
    const { rejectedNotKept } = page;
    const committed = deps.store.commitPage({
      organization: organization.name,
      runId,
      window: this.#window,
      threats: page.threats,
      rejected: page.rejected,
      nextPage,
      retries,
      now: deps.clock().toISOString(),
      windowSeenIds: nextPage === null ? (this.#seen?.ids ?? null) : null,
      windowDigests: nextPage === null ? (this.#seen?.digests ?? null) : null,
      windowPages: this.#pages,
    });
    return committed.then((counts) => {
      addPage(totals, { ...counts, rejected: counts.rejected + rejectedNotKept }, { retries, records });
      deps.observer?.pageCommitted?.(organization.name, counts);
      log.debug({ window: this.#range, cursor, records, ...counts, nextPage }, 'page committed');
      for (const reason of rejectedReasons) log.warn({ reason }, 'record rejected and kept in rejected_records');
      if (rejectedNotKept > 0) log.warn({ window: this.#range, cursor, rejectedNotKept }, `${rejectedNotKept} more records of this page rejected: counted, not kept`);
    });
  }

  #assertNotLooping(empty: boolean): void {
    this.#emptyPagesInARow = empty ? this.#emptyPagesInARow + 1 : 0;
    if (this.#emptyPagesInARow >= MAX_EMPTY_PAGES_IN_A_ROW) {
      throw new ProtocolError(
        `organization "${this.#context.organization.name}": the service returned ${this.#emptyPagesInARow} empty pages in a row that still point to a next page for ${this.#range}; stopped to avoid a loop`,
      );
    }
  }
}

/** Characters a page holds, roughly: its contents and a little for each record's other fields. */
function pageChars(page: ThreatPage): number {
  let chars = 256 * page.rejected.length;
  for (const threat of page.threats) chars += 256 + threat.content.length;
  return chars;
}

function reportUnknownTypes(page: ThreatPage, log: Logger): void {
  for (const threat of page.threats) {
    if (DOCUMENTED_ASSET_TYPES.has(threat.type) || reportedUnknownTypes.has(threat.type)) continue;
    if (reportedUnknownTypes.size >= MAX_REPORTED_UNKNOWN_TYPES) return;
    reportedUnknownTypes.add(threat.type);
    log.warn({ type: threat.type, threatId: threat.id }, 'asset type not in the documented list; stored as received');
  }
}
