// One organization's run: choose the range, resume or make its plan, walk the windows, record the outcome.
import type { Logger } from 'pino';
import { type ApiClientOptions, fetchThreatPage, type ThreatPage } from '../api/threat-client.js';
import { PermanentApiError, ProtocolError } from '../api/errors.js';
import { DOCUMENTED_ASSET_TYPES } from '../api/threat-record.js';
import type { Threat } from '../records.js';
import type { OrganizationConfig } from '../config.js';
import type { MirrorStore, PageCounts, Plan, PlanWindow, SyncMode } from '../db/mirror-store.js';
import { errorMessage } from '../lib/errors.js';
import { redact } from '../lib/redact.js';
import { addDays, type Clock, dayOf, minDay } from '../lib/days.js';
import { WindowPlanner } from './window-planner.js';

export type SyncRequest =
  | { readonly mode: 'incremental' }
  | { readonly mode: 'backfill'; readonly from: string; readonly to: string }
  /** A fresh walk of closed days that shows each page's records to `onPage` before writing it. */
  | { readonly mode: 'verify'; readonly from: string; readonly to: string; readonly onPage: (threats: readonly Threat[]) => void };

export interface SyncSettings {
  readonly initialDays: number;
  readonly lookbackDays: number;
  readonly concurrency: number;
  /** Mirror GET /organization/reports too. */
  readonly reports: boolean;
  /** Days of reports an incremental run re-reads, since their statuses change after filing. */
  readonly reportsRecentDays: number;
  /** Every mirrored day is re-walked at least once in this many days (0: at every run). */
  readonly reconcileDays: number;
  /** Requests a run may spend on reconciliation; 0 turns it off. */
  readonly reconcileMaxRequests: number;
}

/** Hooks for metrics and health; the engine knows nothing of how they are exported. */
export interface SyncObserver {
  pageCommitted?(organization: string, counts: PageCounts): void;
  runFinished?(summary: RunSummary): void;
  /** After an incremental run: the organization's mirrored days overdue for their re-walk. */
  reconcileChecked?(organization: string, overdue: { readonly days: number; readonly oldestDay: string | null }): void;
}

export interface SyncDeps {
  readonly store: MirrorStore;
  readonly api: ApiClientOptions;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly settings: SyncSettings;
  readonly observer?: SyncObserver | undefined;
}

/** skipped: the stream is not served by this deployment (reports answered 404); not a failure. */
export type RunOutcome = 'succeeded' | 'failed' | 'interrupted' | 'skipped';

export interface RunSummary {
  readonly organization: string;
  /** threats, or reports (whose counts are of reports). */
  readonly stream: 'threats' | 'reports';
  readonly mode: SyncMode;
  readonly runId: number;
  readonly status: RunOutcome;
  readonly rangeStart: string;
  readonly rangeEnd: string;
  readonly pages: number;
  readonly inserted: number;
  readonly updated: number;
  readonly rejected: number;
  /** Threats marked removed: no longer returned for a day walked from start to end. */
  readonly removed: number;
  readonly retries: number;
  readonly finishedAt: string;
  readonly durationMs: number;
  readonly error?: string;
}

/** After this many empty pages in a row that still carry a cursor, the service is looping. */
const MAX_EMPTY_PAGES_IN_A_ROW = 3;

/**
 * Pages of one window handed to the writer and not yet committed. The walk fetches on while they
 * commit, so a slow commit (a WAL checkpoint's fsync took 100–300 ms here) does not stall every
 * window's requests; a kill loses at most these pages, and the restart fetches them again.
 * Waiting pages also commit together, so the writer keeps up when the network is fast.
 */
const MAX_UNCOMMITTED_PAGES_PER_WINDOW = 8;

/**
 * And at most about this many characters of content waiting, beyond the window's latest page: a
 * page of large records (the service sets no limit on content) must not pile up in the capped
 * heaps of either thread. Pages of 100 records of 40 KB each crashed the process before this.
 */
const MAX_UNCOMMITTED_CHARS_PER_WINDOW = 1_000_000;

/** Characters a page holds, roughly: its contents and a little for each record's other fields. */
function pageChars(page: ThreatPage): number {
  let chars = 256 * page.rejected.length;
  for (const threat of page.threats) chars += 256 + threat.content.length;
  return chars;
}

/** Types outside the documented list are stored as they come; each is logged once per process. */
const reportedUnknownTypes = new Set<string>();

export async function syncOrganization(
  deps: SyncDeps,
  organization: OrganizationConfig,
  request: SyncRequest,
  signal: AbortSignal,
): Promise<RunSummary> {
  const { store, clock, logger } = deps;
  const started = clock();
  const log = logger.child({ organization: organization.name });
  const plan = openPlan(deps, organization.name, request, dayOf(started));
  const runId = store.startRun(organization.name, plan.mode, plan.rangeStart, plan.rangeEnd, started.toISOString());
  const totals = { pages: 0, inserted: 0, updated: 0, rejected: 0, removed: 0, retries: 0, records: 0 };
  let status: RunOutcome = 'succeeded';
  let error: string | undefined;
  try {
    const onPage = request.mode === 'verify' ? request.onPage : undefined;
    await walkWindows(deps, organization, runId, plan, totals, log, signal, onPage);
    finishPlan(deps, plan);
    if (totals.records === 0 && store.hasNoThreats(organization.name)) {
      log.warn(
        { rangeStart: plan.rangeStart, rangeEnd: plan.rangeEnd },
        'the service returned no threats for this organization; if that is unexpected, check that its API key belongs to it',
      );
    }
  } catch (caught) {
    if (signal.aborted) {
      status = 'interrupted';
      error = 'stopped by a signal; the next run resumes from the last committed page';
    } else {
      status = 'failed';
      error = errorMessage(caught);
    }
  }
  return finishRunSummary(deps, log, {
    organization: organization.name,
    stream: 'threats',
    mode: plan.mode,
    runId,
    status,
    rangeStart: plan.rangeStart,
    rangeEnd: plan.rangeEnd,
    started,
    totals,
    error,
    message: `sync of organization "${organization.name}"`,
  });
}

/**
 * The end of a run of either stream: records the outcome, builds the summary, logs it (one line
 * per organization run, at info, or error for a failure) and tells the observer.
 */
export function finishRunSummary(
  deps: SyncDeps,
  log: Logger,
  run: Pick<RunSummary, 'organization' | 'stream' | 'mode' | 'runId' | 'status' | 'rangeStart' | 'rangeEnd'> & {
    started: Date;
    totals: Pick<RunSummary, 'pages' | 'inserted' | 'updated' | 'rejected' | 'removed' | 'retries'>;
    error: string | undefined;
    /** The log line's subject, e.g. `sync of organization "acme"`. */
    message: string;
    /** Skipped runs are logged by the caller, once, as a warning. */
    quiet?: boolean;
  },
): RunSummary {
  const finished = deps.clock();
  // The error is stored, logged and printed: it passes the redaction point once, here.
  const error = run.error === undefined ? undefined : redact(run.error);
  deps.store.finishRun(run.runId, run.status, error ?? null, finished.toISOString());
  const { started, totals, error: _unredacted, message, quiet, ...identity } = run;
  const summary: RunSummary = {
    ...identity,
    pages: totals.pages,
    inserted: totals.inserted,
    updated: totals.updated,
    rejected: totals.rejected,
    removed: totals.removed,
    retries: totals.retries,
    finishedAt: finished.toISOString(),
    durationMs: finished.getTime() - started.getTime(),
    ...(error === undefined ? {} : { error }),
  };
  const { organization: _name, ...fields } = summary;
  if (summary.status === 'failed') log.error(fields, `${message} failed: ${error}`);
  else if (!quiet) log.info(fields, `${message} ${summary.status}`);
  deps.observer?.runFinished?.(summary);
  return summary;
}

/** Resumes the unfinished plan a killed run left, or makes a new one. */
function openPlan(deps: SyncDeps, organization: string, request: SyncRequest, today: string): Plan {
  const { store, settings } = deps;
  const now = deps.clock().toISOString();
  if (request.mode === 'verify') {
    // A verify must see every page itself: a half-done one from a killed process is started over.
    store.deleteOpenPlans(organization, 'verify');
    return store.createPlan(organization, 'verify', request.from, request.to, now);
  }
  if (request.mode === 'backfill') {
    return store.findOpenPlan(organization, 'backfill', { start: request.from, end: request.to }) ?? store.createPlan(organization, 'backfill', request.from, request.to, now);
  }
  const open = store.findOpenPlan(organization, 'incremental');
  if (open) return open.rangeEnd >= today ? open : store.extendPlan(open, today);
  const completeThrough = store.completeThrough(organization);
  const rescanFrom = addDays(today, -settings.lookbackDays);
  const from = completeThrough === null ? addDays(today, -(settings.initialDays - 1)) : minDay(addDays(completeThrough, 1), rescanFrom);
  return store.createPlan(organization, 'incremental', from, today, now);
}

/** Every window walked: the plan is done, and the checkpoint moves over the closed days it covered. */
function finishPlan(deps: SyncDeps, plan: Plan): void {
  const { store } = deps;
  const now = deps.clock();
  if (plan.mode === 'verify') {
    store.finishPlan(plan.id, null, now.toISOString());
    return;
  }
  const yesterday = addDays(dayOf(now), -1);
  // The plan's last day was "today" when planned, so only the days before it were closed.
  const closedEnd = minDay(plan.mode === 'incremental' ? addDays(plan.rangeEnd, -1) : plan.rangeEnd, yesterday);
  const completeThrough = store.completeThrough(plan.organization);
  const reachesCheckpoint =
    plan.mode === 'incremental' ||
    (completeThrough === null ? plan.rangeEnd >= yesterday : plan.rangeStart <= addDays(completeThrough, 1));
  store.finishPlan(plan.id, reachesCheckpoint && closedEnd >= plan.rangeStart ? { organization: plan.organization, day: closedEnd } : null, now.toISOString());
}

export interface Totals {
  removed: number;
  pages: number;
  inserted: number;
  updated: number;
  rejected: number;
  retries: number;
  records: number;
}

/**
 * A pool of workers: windows a killed run left open come first, then new windows as the planner
 * cuts them. The first failure stops the others at their next page.
 */
export async function walkWindows(
  deps: SyncDeps,
  organization: OrganizationConfig,
  runId: number,
  plan: Plan,
  totals: Totals,
  log: Logger,
  outerSignal: AbortSignal,
  onPage: ((threats: readonly Threat[]) => void) | undefined,
): Promise<void> {
  const { store } = deps;
  const windows = store.planWindows(plan.id);
  const resumed = windows.filter((window) => window.completedAt === null);
  const covered = windows.reduce((last, window) => (window.windowEnd > last ? window.windowEnd : last), addDays(plan.rangeStart, -1));
  const workers = deps.settings.concurrency;
  const planner = new WindowPlanner(plan.rangeStart, plan.rangeEnd, addDays(covered, 1), workers);
  const stop = new AbortController();
  const signal = AbortSignal.any([outerSignal, stop.signal]);
  let failure: { error: unknown } | undefined;
  const nextWindow = (): PlanWindow | undefined => {
    const open = resumed.shift();
    if (open) return open;
    const range = planner.next();
    return range ? store.addWindow(plan.id, range[0], range[1]) : undefined;
  };
  const worker = async (): Promise<void> => {
    while (!signal.aborted) {
      const window = nextWindow();
      if (!window) return;
      try {
        const records = await walkWindow(deps, organization, runId, window, totals, log, signal, onPage);
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
 * up to MAX_UNCOMMITTED_PAGES_PER_WINDOW pages are being written meanwhile, committed in order.
 */
async function walkWindow(
  deps: SyncDeps,
  organization: OrganizationConfig,
  runId: number,
  window: PlanWindow,
  totals: Totals,
  log: Logger,
  signal: AbortSignal,
  onPage: ((threats: readonly Threat[]) => void) | undefined,
): Promise<number> {
  const fetchPage = (nextPage: string | null): Promise<ThreatPage> => {
    const pending = fetchThreatPage(deps.api, organization, { startDate: window.windowStart, endDate: window.windowEnd, nextPage }, signal);
    // Awaited below; this only keeps a prefetch abandoned by a failed write from being "unhandled".
    pending.catch(() => undefined);
    return pending;
  };
  const seenCursors = new Set<string>();
  // Removals can only be concluded from a walk that saw every page of the window.
  let seenIds: Set<number> | null = window.nextPage === null ? new Set() : null;
  const uncommitted: Array<{ readonly committed: Promise<void>; readonly chars: number }> = [];
  let uncommittedChars = 0;
  let writeFailure: { error: unknown } | undefined;
  const throwIfWriteFailed = (): void => {
    if (writeFailure) throw writeFailure.error;
  };
  const commit = (page: ThreatPage, cursor: string | null, windowPages: number): Promise<void> => {
    // Only what the totals and the log need is kept until the commit: the writer has its own copy.
    const { nextPage, retries } = page;
    const recordCount = page.threats.length;
    const rejectedReasons = page.rejected.map((record) => record.reason);
    return deps.store
      .commitPage({
        organization: organization.name,
        runId,
        window,
        threats: page.threats,
        rejected: page.rejected,
        nextPage,
        retries,
        now: deps.clock().toISOString(),
        windowSeenIds: nextPage === null ? seenIds : null,
        windowPages,
      })
      .then(
        (counts) => {
          totals.pages += 1;
          totals.inserted += counts.inserted;
          totals.updated += counts.updated;
          totals.rejected += counts.rejected;
          totals.removed += counts.removed;
          totals.retries += retries;
          totals.records += recordCount;
          deps.observer?.pageCommitted?.(organization.name, counts);
          log.debug({ window: `${window.windowStart}..${window.windowEnd}`, cursor, records: recordCount, ...counts, nextPage }, 'page committed');
          for (const reason of rejectedReasons) log.warn({ reason }, 'record rejected and kept in rejected_records');
        },
        (error: unknown) => {
          writeFailure ??= { error };
        },
      );
  };
  const awaitOldest = async (): Promise<void> => {
    const oldest = uncommitted.shift();
    if (!oldest) return;
    await oldest.committed;
    uncommittedChars -= oldest.chars;
    throwIfWriteFailed();
  };
  let pages = 0;
  let cursor = window.nextPage;
  let emptyPagesInARow = 0;
  let records = 0;
  /**
   * A stored cursor the service refuses (400: it expired, or an older version stored a bad one)
   * would fail every later run: the window starts over from its first page instead, once.
   */
  const restartIfRefused = (error: unknown): Promise<ThreatPage> => {
    if (!(error instanceof PermanentApiError && error.status === 400) || signal.aborted) throw error;
    log.warn(
      { window: `${window.windowStart}..${window.windowEnd}`, cursor: window.nextPage, error: errorMessage(error) },
      'the service refused the stored cursor (HTTP 400): restarting this window from its first page',
    );
    cursor = null;
    seenIds = new Set();
    return fetchPage(null);
  };
  let next = cursor === null ? fetchPage(null) : fetchPage(cursor).catch(restartIfRefused);
  /**
   * Takes a page in: prefetches the next one, checks it, and hands it to the writer. Only what the
   * loop needs comes back, so the loop holds no page while it waits for commits: a page of large
   * records (4 MB) held across those waits by each of four windows, beside the prefetched ones, ran
   * the CLI's 48 MB heap out (45 MB live after a full GC, measured).
   */
  const handOver = (page: ThreatPage): { nextPage: string | null; chars: number; empty: boolean } => {
    throwIfWriteFailed();
    if (page.nextPage !== null) {
      if (page.nextPage === cursor || seenCursors.has(page.nextPage)) {
        throw new ProtocolError(
          `organization "${organization.name}": the service returned next_page "${page.nextPage}" again for ${window.windowStart}..${window.windowEnd}; stopped to avoid a loop`,
        );
      }
      seenCursors.add(page.nextPage);
      next = fetchPage(page.nextPage);
    }
    reportUnknownTypes(page, log);
    onPage?.(page.threats);
    if (seenIds) for (const threat of page.threats) seenIds.add(threat.id);
    pages += 1;
    records += page.threats.length + page.rejected.length;
    const chars = pageChars(page);
    uncommitted.push({ committed: commit(page, cursor, pages), chars });
    uncommittedChars += chars;
    return { nextPage: page.nextPage, chars, empty: page.threats.length + page.rejected.length === 0 };
  };
  try {
    for (;;) {
      const { nextPage, chars, empty } = handOver(await next);
      if (nextPage === null) {
        while (uncommitted.length > 0) await awaitOldest();
        return records;
      }
      // The latest page may always wait on its own, however large.
      while (uncommitted.length >= MAX_UNCOMMITTED_PAGES_PER_WINDOW || uncommittedChars - chars > MAX_UNCOMMITTED_CHARS_PER_WINDOW) {
        await awaitOldest();
      }
      emptyPagesInARow = empty ? emptyPagesInARow + 1 : 0;
      if (emptyPagesInARow >= MAX_EMPTY_PAGES_IN_A_ROW) {
        throw new ProtocolError(
          `organization "${organization.name}": the service returned ${emptyPagesInARow} empty pages in a row that still point to a next page for ${window.windowStart}..${window.windowEnd}; stopped to avoid a loop`,
        );
      }
      cursor = nextPage;
    }
  } finally {
    // Stopping (an error, a signal) still lets the pages already fetched commit, and counts them.
    await Promise.all(uncommitted.map((page) => page.committed));
  }
}

function reportUnknownTypes(page: ThreatPage, log: Logger): void {
  for (const threat of page.threats) {
    if (DOCUMENTED_ASSET_TYPES.has(threat.type) || reportedUnknownTypes.has(threat.type)) continue;
    reportedUnknownTypes.add(threat.type);
    log.warn({ type: threat.type, threatId: threat.id }, 'asset type not in the documented list; stored as received');
  }
}
