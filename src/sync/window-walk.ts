// One window of the threats walk (WindowWalk): its cursors followed to the end while the pages it
// fetched commit behind it, a resume checked, a walk the list shifted under started over, and what
// it did not see settled before removals (the pool of workers: walk-windows.ts).
import type { Logger } from 'pino';
import { PermanentApiError, ProtocolError } from '../api/errors.js';
import type { KeyBudgets } from '../api/request-budget.js';
import { fetchThreatPage, type ThreatPage } from '../api/threat-client.js';
import { DOCUMENTED_ASSET_TYPES } from '../api/threat-record.js';
import type { PlanWindow } from '../db/read/plan-reads.js';
import { pageChars } from '../db/writer/commit-queue.js';
import type { RemovalCandidate } from '../db/writer/window-end.js';
import { dayOf } from '../lib/days.js';
import { errorMessage } from '../lib/errors.js';
import type { Threat } from '../records.js';
import { CommitPipeline } from './commit-pipeline.js';
import { settleCandidates } from './removal-check.js';
import { addConclusion, addPage, CursorGuard, type RunContext } from './run-contract.js';
import { WindowSeen } from './window-seen.js';

/** What every window of one run shares. */
export interface WalkContext extends RunContext {
  /** verify: shown each page's records before they are written. */
  readonly onPage?: ((threats: readonly Threat[]) => void) | undefined;
  /** verify: a walk of this window begins at its first page; what earlier walks showed of it is void. */
  readonly onWalkStart?: ((window: PlanWindow) => void) | undefined;
  /**
   * reconciliation: a window's walk stopped, after `records` records; `walkedWhole`: its last page
   * was read, and what stopped it were the removal checks after it.
   */
  readonly onWindowStopped?: ((window: PlanWindow, stopped: { readonly records: number; readonly walkedWhole: boolean }, error: unknown) => void) | undefined;
  /**
   * reconciliation: whether removal checks a failure left unsettled go on in the next run (the run's
   * request allowance is spent) instead of walking the window again for them.
   */
  readonly carriesChecksOver?: ((error: unknown) => boolean) | undefined;
  /** history: budgets for this many requests, paid from the run's allowance at once or not at all (a resumed window's check and the page after it). */
  readonly prepay?: ((requests: number) => KeyBudgets) | undefined;
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

/** Walks of one window in a run at most: a walk the list shifted under starts over, up to this many times. */
export const MAX_WALKS_PER_WINDOW = 3;

/** How a window's walk ended. */
export interface WindowWalked {
  /** Records the service sent in the walk that ended it. */
  readonly records: number;
  /** That walk began at the window's first page (not resumed from a stored cursor). */
  readonly fromFirstPage: boolean;
}

/** A walk that has fetched the window's last page: its pages still commit, and what it did not see is still to settle. */
export interface LastPageFetched extends WindowWalked {
  /** Characters of content of its pages not yet committed. */
  readonly uncommittedChars: number;
}

/**
 * Follows one window's cursors to the end: page n+1 is requested as soon as page n arrives, and
 * the pages already fetched commit meanwhile, in order (see CommitPipeline). At the end, the
 * stored threats the walk did not return are settled with the service before any is marked
 * removed (removal-check.ts). A walk the list shifted under starts over. Used once.
 */
export class WindowWalk {
  readonly #context: WalkContext;
  readonly #window: PlanWindow;
  readonly #signal: AbortSignal;
  readonly #commits = new CommitPipeline();
  #cursors: CursorGuard;
  /** The cursor of the page being taken in; null for the window's first page. */
  #cursor: string | null;
  /** What this walk saw: its ids (removals), its pages' bounds, each day's digest. */
  #seen: WindowSeen;
  /** When this walk began, before its first request; null for a walk resumed from a stored cursor. */
  #startedAt: string | null = null;
  /** The page requested next, fetched while the current one is taken in. */
  #next: Promise<ThreatPage> | undefined;
  /** The stored threats of the window's days the walk did not return, as its last page's commit reported them. */
  #candidates: readonly RemovalCandidate[] = [];
  #pages = 0;
  #records = 0;
  #emptyPagesInARow = 0;
  /** The current walk read the window's last page. */
  #walkedWhole = false;
  /** How its requests reach the service: the run's, or after a prepaid resume those paid for first. */
  #api: WalkContext['deps']['api'];

  /** `recorded`: a new window's record, which commits before its pages; it fails the walk if it fails. */
  constructor(context: WalkContext, window: PlanWindow, signal: AbortSignal, recorded?: Promise<void>) {
    this.#context = context;
    this.#window = window;
    this.#signal = signal;
    if (recorded) this.#commits.add(recorded, 0);
    this.#cursor = window.nextPage;
    this.#seen = new WindowSeen(window.windowStart, window.windowEnd);
    this.#cursors = this.#newCursorGuard();
    this.#api = context.deps.api;
  }

  /** Records the service sent in the current walk (a stopped walk's progress). */
  get records(): number {
    return this.#records;
  }

  /** The current walk read the window's last page (what stopped it, if anything, came after). */
  get walkedWhole(): boolean {
    return this.#walkedWhole;
  }

  /**
   * Walks to the window's last page and settles what it did not see. `onLastPage` hears as soon as
   * a walk has fetched the last page, before its pages are committed and its candidates settled:
   * the worker may begin its next window meanwhile (walk-windows.ts).
   */
  async run(onLastPage?: (fetched: LastPageFetched) => void): Promise<WindowWalked> {
    try {
      let resumed = this.#window.nextPage !== null && (await this.#resumable());
      for (let walk = 1; ; walk += 1) {
        if (!resumed) this.#startOver();
        const fromFirstPage = !resumed;
        resumed = false;
        this.#walkedWhole = await this.#walk(() => onLastPage?.({ records: this.#records, fromFirstPage, uncommittedChars: this.#commits.chars }));
        if (this.#walkedWhole && (await this.#settle())) return { records: this.#records, fromFirstPage };
        if (walk >= MAX_WALKS_PER_WINDOW) {
          throw new Error(
            `organization "${this.#context.organization.name}": the service's list of ${this.#range} changed under each of ${walk} walks of it ` +
              '(threats among the pages already read were unblocked, or moved in or out); its days are not recorded complete, and the next run walks them again',
          );
        }
        this.#context.log.info({ window: this.#range, walk }, 'the list shifted under the walk: walking this window again from its first page');
      }
    } finally {
      // Stopping (an error, a signal) still lets the pages already fetched commit, and counts them.
      await this.#commits.settle();
    }
  }

  get #range(): string {
    return `${this.#window.windowStart}..${this.#window.windowEnd}`;
  }

  #newCursorGuard(): CursorGuard {
    return new CursorGuard(
      (cursor) => `organization "${this.#context.organization.name}": the service returned next_page "${cursor}" again for ${this.#range}; stopped to avoid a loop`,
    );
  }

  /** A walk from the window's first page: what an earlier walk saw is forgotten. */
  #startOver(): void {
    this.#cursor = null;
    this.#cursors = this.#newCursorGuard();
    this.#seen = new WindowSeen(this.#window.windowStart, this.#window.windowEnd);
    this.#startedAt = this.#context.deps.clock().toISOString();
    this.#pages = 0;
    this.#records = 0;
    this.#emptyPagesInARow = 0;
    this.#walkedWhole = false;
    this.#context.onWalkStart?.(this.#window);
  }

  /**
   * A stored cursor is followed only if the list did not shift since it was stored: the page
   * before it, read again, must still end with the last id committed from it. Otherwise (or if
   * the service refuses the cursor: it expired, or an older version stored a bad one) the window
   * starts over from its first page.
   */
  async #resumable(): Promise<boolean> {
    const { nextPage, lastId } = this.#window;
    const page = Number(nextPage);
    if (lastId === null || !Number.isSafeInteger(page) || page < 2) {
      this.#context.log.warn(
        { window: this.#range, cursor: nextPage },
        'the stored cursor cannot be checked (not a page number, or stored before cursors recorded their last id): restarting this window from its first page',
      );
      return false;
    }
    // Paid with the page after it, or the walk stops here: a check alone is thrown away, and the next run checks again.
    if (this.#context.prepay) this.#api = { ...this.#api, budgets: this.#context.prepay(2) };
    let before: ThreatPage;
    try {
      before = await this.#fetch(page === 2 ? null : String(page - 1));
    } catch (error) {
      if (!(error instanceof PermanentApiError && error.status === 400) || this.#signal.aborted) throw error;
      this.#context.log.warn({ window: this.#range, cursor: nextPage, error: errorMessage(error) }, 'the service refused the stored cursor (HTTP 400): restarting this window from its first page');
      return false;
    }
    const ids = before.threats.map((threat) => threat.id);
    if (ids.at(-1) !== lastId || before.nextPage !== nextPage) {
      this.#context.log.info({ window: this.#range, cursor: nextPage }, 'the list shifted since the stored cursor: restarting this window from its first page');
      return false;
    }
    this.#seen = new WindowSeen(this.#window.windowStart, this.#window.windowEnd, { page: page - 1, first: Math.min(...ids), last: lastId });
    return true;
  }

  /** Follows the cursors to the last page; false when the list shifted under the walk. */
  async #walk(lastPageFetched: () => void): Promise<boolean> {
    this.#next = this.#fetch(this.#cursor);
    for (;;) {
      let page: ThreatPage;
      try {
        page = await this.#next;
      } catch (error) {
        if (this.#refusedCursor(error)) return false;
        throw error;
      }
      const taken = this.#handOver(page);
      if (taken === undefined) return false;
      if (taken.nextPage === null) {
        lastPageFetched();
        await this.#commits.drain();
        return true;
      }
      await this.#commits.makeRoom(taken.chars);
      this.#assertNotLooping(taken.empty);
      this.#cursor = taken.nextPage;
    }
  }

  /**
   * Settles the candidates the last page's commit reported (none: the window completed with it).
   * True when the window is complete; false when the walk missed a threat the list held.
   */
  async #settle(): Promise<boolean> {
    const candidates = this.#candidates;
    this.#candidates = [];
    if (candidates.length === 0) return true;
    const { deps, organization, runId, totals, log } = this.#context;
    const settled = await settleCandidates(this.#context, this.#window, candidates, this.#seen.pages, dayOf(deps.clock()), this.#signal);
    const complete = settled.complete && settled.failure === undefined;
    // Checks the run cannot afford go on in the next run: the window is not walked again for them.
    const carried = settled.failure !== undefined && this.#context.carriesChecksOver?.(settled.failure.error) === true ? settled.pending.map((candidate) => candidate.id) : [];
    const window = { planId: this.#window.planId, windowStart: this.#window.windowStart, windowEnd: this.#window.windowEnd };
    const conclusion = { organization: organization.name, runId, window, removedIds: settled.removedIds, found: settled.found, complete, carried, assetTypes: organization.assetTypes };
    const counts = await deps.writer.concludeWindow({ ...conclusion, windowPages: this.#pages, now: deps.clock().toISOString() });
    addConclusion(totals, counts);
    log.info(
      { window: this.#range, candidates: candidates.length, removed: counts.removed, stillListed: settled.found.length, unsettled: settled.unsettled, carried: carried.length, complete },
      carried.length > 0 ? 'removal candidates checked with the service as far as the budget went; the rest are checked first in the next run' : 'removal candidates checked with the service',
    );
    if (settled.failure) throw settled.failure.error;
    return complete;
  }

  /**
   * A stored cursor the service refuses (400: it expired, or an older version stored a bad one)
   * would fail every later run: the window starts over from its first page instead.
   */
  #refusedCursor(error: unknown): boolean {
    if (!(error instanceof PermanentApiError && error.status === 400) || this.#signal.aborted || this.#pages > 0 || this.#cursor === null) return false;
    this.#context.log.warn({ window: this.#range, cursor: this.#cursor, error: errorMessage(error) }, 'the service refused the stored cursor (HTTP 400): restarting this window from its first page');
    return true;
  }

  #fetch(nextPage: string | null): Promise<ThreatPage> {
    const request = { startDate: this.#window.windowStart, endDate: this.#window.windowEnd, nextPage };
    const pending = fetchThreatPage(this.#api, this.#context.organization, request, this.#signal);
    // Awaited in run(); this only keeps a prefetch abandoned by a failed write from being "unhandled".
    pending.catch(() => undefined);
    return pending;
  }

  /**
   * Takes a page in: checks it, prefetches the next one, and hands it to the writer; undefined
   * when the page overlaps the ones before it (the list gained a record behind the walk). Only
   * what the loop needs comes back, so the loop holds no page while it waits for commits: a page
   * of large records (4 MB) held across those waits by each of four windows, beside the
   * prefetched ones, ran the CLI's 48 MB heap out (45 MB live after a full GC, measured).
   */
  #handOver(page: ThreatPage): { nextPage: string | null; chars: number; empty: boolean } | undefined {
    this.#commits.throwIfFailed();
    this.#cursors.accept(page.nextPage, this.#cursor);
    if (!this.#seen.add(page.threats, this.#cursor === null ? 1 : Number(this.#cursor), page.nextPage === null)) return undefined;
    if (page.nextPage !== null) this.#next = this.#fetch(page.nextPage);
    reportUnknownTypes(page, this.#context.log);
    this.#context.onPage?.(page.threats);
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
    const last = nextPage === null;
    const { rejectedNotKept } = page;
    const committed = deps.writer.writePage({
      organization: organization.name,
      runId,
      window: this.#window,
      threats: page.threats,
      rejected: page.rejected,
      nextPage,
      retries,
      now: deps.clock().toISOString(),
      requestedPage: cursor,
      walkStartedAt: cursor === null ? this.#startedAt : null,
      windowSeenIds: last ? this.#seen.ids : null,
      windowSeenAbove: this.#seen.above,
      windowDigests: last ? this.#seen.digests : null,
      windowPages: this.#pages,
      assetTypes: organization.assetTypes,
      rejectedNotKept,
    });
    return committed.then((counts) => {
      if (last) this.#candidates = counts.candidates ?? [];
      addPage(totals, counts, { retries, records });
      deps.observer?.pageCommitted?.(organization.name, counts);
      log.debug({ window: this.#range, cursor, records, ...counts, candidates: counts.candidates?.length, nextPage }, 'page committed');
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

function reportUnknownTypes(page: ThreatPage, log: Logger): void {
  for (const threat of page.threats) {
    if (DOCUMENTED_ASSET_TYPES.has(threat.type) || reportedUnknownTypes.has(threat.type)) continue;
    if (reportedUnknownTypes.size >= MAX_REPORTED_UNKNOWN_TYPES) return;
    reportedUnknownTypes.add(threat.type);
    log.warn({ type: threat.type, threatId: threat.id }, 'asset type not in the documented list; stored as received');
  }
}
