// One organization's reports: newest first, each page and the walk's cursor in one transaction.
//
// Reports change after they are filed (their proposals get reviewed), so an incremental run
// re-reads the last THREAT_MIRROR_REPORTS_RECENT_DAYS of reports, and goes on past them only
// until it meets a report it already holds unchanged. Older reports deleted upstream are found by
// a walk of the whole list to its end, which a run makes instead once every
// THREAT_MIRROR_RECONCILE_DAYS while reconciliation is on (docs/reconciliation.md): a report
// missed by two such walks is marked removed.
import type { Logger } from 'pino';
import { PermanentApiError } from '../api/errors.js';
import { fetchReportPage, type ReportPageRequest } from '../api/report-client.js';
import type { OrganizationConfig } from '../config.js';
import type { ReportState, ReportWalk } from '../db/read/report-state.js';
import type { ReportCoverage } from '../db/writer/protocol.js';
import { addDays, dayOf } from '../lib/days.js';
import {
  addPage,
  CursorGuard,
  emptyTotals,
  finishRunSummary,
  type Outcome,
  outcomeOf,
  type RunContext,
  type RunSummary,
  type SyncDeps,
  type SyncRequest,
} from './run-contract.js';

/** How long a deployment that answered 404 is left alone before the stream is tried again. */
const DISABLED_FOR_MS = 24 * 3_600_000;

export async function syncReports(deps: SyncDeps, organization: OrganizationConfig, request: SyncRequest, signal: AbortSignal): Promise<RunSummary> {
  const { writer, reads, clock, settings } = deps;
  const log = deps.logger.child({ organization: organization.name, stream: 'reports' });
  const started = clock();
  const today = dayOf(started);
  const state = reads.reports.state(organization.name);
  const mode = request.mode === 'backfill' ? 'backfill' : 'incremental';
  const range = request.mode === 'backfill' ? { start: request.from, end: request.to } : { start: addDays(today, -(settings.reportsRecentDays - 1)), end: today };
  const runId = await writer.call('startRun', {
    organization: organization.name,
    stream: 'reports',
    mode,
    rangeStart: range.start,
    rangeEnd: range.end,
    startedAt: started.toISOString(),
  });
  const totals = emptyTotals();
  const disabled = state?.disabledUntil && state.disabledUntil > started.toISOString();
  let notServed = false;
  const outcome: Outcome = disabled
    ? { status: 'skipped', error: state.disabledReason ?? 'reports are not served by this deployment' }
    : await outcomeOf(
        async () => {
          const full = wholeListDue(settings, request, state, started);
          await walkReports({ deps, organization, runId, totals, log }, { ...walkToResume(deps, organization.name, request, state, today), full, startedAt: started.toISOString() }, signal);
          await writer.call('linkReportThreats', { organization: organization.name });
        },
        signal,
        {
          classify: (caught) => {
            if (!(caught instanceof PermanentApiError && caught.status === 404)) return undefined;
            notServed = true;
            return NOT_SERVED;
          },
        },
      );
  if (notServed) await skipForADay(deps, organization.name, log);
  return finishRunSummary(deps, log, {
    organization: organization.name,
    stream: 'reports',
    mode,
    runId,
    ...outcome,
    rangeStart: range.start,
    rangeEnd: range.end,
    started,
    totals,
    message: `reports of organization "${organization.name}"`,
    quiet: outcome.status === 'skipped',
  });
}

const NOT_SERVED: Outcome = {
  status: 'skipped',
  error: 'GET /organization/reports answered 404: this deployment does not serve reports; threats still sync, reports are tried again in 24 hours',
};

/** A deployment that answers 404 serves no reports: the stream is left alone for a day. */
async function skipForADay(deps: SyncDeps, organization: string, log: Logger): Promise<void> {
  const now = deps.clock();
  const reason = NOT_SERVED.error as string;
  await deps.writer.call('disableReports', { organization, reason, until: new Date(now.getTime() + DISABLED_FOR_MS).toISOString(), now: now.toISOString() });
  log.warn(`reports of organization "${organization}" skipped: ${reason}`);
}

/** A walk of the reports list: its range and resume point, and its number (reports record the last walk that listed them). */
interface NumberedWalk extends ReportWalk {
  readonly number: number;
}

/** A walk as this run makes it: `full`, an undated one reads the whole list, never stopping early. */
interface RunWalk extends NumberedWalk {
  readonly full: boolean;
  readonly startedAt: string;
}

/** Whether this run's incremental walk reads the whole list: reconciliation on, and the last such walk began THREAT_MIRROR_RECONCILE_DAYS ago or more. */
function wholeListDue(settings: SyncDeps['settings'], request: SyncRequest, state: ReportState | undefined, started: Date): boolean {
  if (request.mode === 'backfill' || settings.reconcileMaxRequests === 0) return false;
  const last = state?.fullWalkAt;
  return last === null || last === undefined || Date.parse(last) <= started.getTime() - settings.reconcileDays * 86_400_000;
}

/** The walk a killed run left, when this run asks for the same (same number); otherwise a new one (the next number). */
function walkToResume(
  deps: SyncDeps,
  organization: string,
  request: SyncRequest,
  state: ReportState | undefined,
  today: string,
): NumberedWalk {
  const backfill = request.mode === 'backfill' ? request : undefined;
  const rangeStart = backfill?.from ?? null;
  const rangeEnd = backfill?.to ?? null;
  const mode = backfill ? 'backfill' : 'incremental';
  const last = state?.walk ?? 0;
  if (state?.nextCursor && state.mode === mode && state.rangeStart === rangeStart && state.rangeEnd === rangeEnd) {
    return { mode, rangeStart, rangeEnd, nextCursor: state.nextCursor, number: last };
  }
  // A first run reads THREAT_MIRROR_INITIAL_DAYS of history, not everything the service holds.
  if (!backfill && deps.reads.contents.hasNoReports(organization)) {
    return { mode, rangeStart: addDays(today, -(deps.settings.initialDays - 1)), rangeEnd: today, nextCursor: null, number: last + 1 };
  }
  return { mode, rangeStart, rangeEnd, nextCursor: null, number: last + 1 };
}

async function walkReports(context: RunContext, walk: RunWalk, signal: AbortSignal): Promise<void> {
  const { deps, organization, runId, totals, log } = context;
  const { writer, clock, settings } = deps;
  const recentFrom = new Date(clock().getTime() - settings.reportsRecentDays * 86_400_000).toISOString();
  const dated = walk.rangeStart !== null && walk.rangeEnd !== null;
  const request = (cursor: string | null): ReportPageRequest => ({
    cursor,
    ...(dated ? { startDate: `${walk.rangeStart}T00:00:00.000Z`, endDate: `${walk.rangeEnd}T23:59:59.999Z` } : {}),
  });
  const cursors = new CursorGuard((next) => `organization "${organization.name}": the service returned the reports cursor "${next}" again; stopped to avoid a loop`);
  let cursor = walk.nextCursor;
  const order = new NewestFirst();
  const finish = async (coverage: ReportCoverage | undefined): Promise<void> => {
    const fullWalkAt = walk.full && coverage?.kind === 'all' ? walk.startedAt : undefined;
    const removed = await writer.call('finishReportWalk', { organization: organization.name, runId, walkNumber: walk.number, coverage, fullWalkAt, now: clock().toISOString() });
    totals.removed += removed;
    if (removed > 0) log.info({ removed }, `${removed} reports no longer listed by the service (missed by two walks) marked removed_at`);
  };
  for (;;) {
    const page = await fetchReportPage(deps.api, organization, request(cursor), signal);
    cursors.accept(page.nextCursor, cursor);
    order.see(page.reports);
    // Newest first: once a page holds a report older than the recent window that is already held
    // unchanged, everything after it is too. A dated walk (backfill, first run) reads its range whole.
    const settledAfter = (unchanged: ReadonlySet<string>): boolean =>
      !dated && !walk.full && page.reports.some((report) => report.createdAt !== null && report.createdAt < recentFrom && unchanged.has(report.id));
    const result = await writer.call('reportPage', {
      organization: organization.name,
      runId,
      reports: page.reports,
      rejected: page.rejected,
      walk: page.nextCursor === null ? null : { mode: walk.mode, rangeStart: walk.rangeStart, rangeEnd: walk.rangeEnd, nextCursor: page.nextCursor },
      walkNumber: walk.number,
      retries: page.retries,
      now: clock().toISOString(),
    });
    addPage(totals, result, { retries: page.retries, records: page.reports.length + page.rejected.length });
    log.debug({ cursor, reports: page.reports.length, inserted: result.inserted, updated: result.updated, nextCursor: page.nextCursor }, 'reports page committed');
    for (const record of page.rejected) log.warn({ reason: record.reason }, 'report rejected and kept in rejected_records');
    if (page.nextCursor === null) return finish(dated ? datedCoverage(walk) : { kind: 'all' });
    // Stopped early: it vouches for what is newer than the oldest it listed, if it read the list
    // from its first page and found it newest first, as the stop assumes.
    if (settledAfter(result.unchanged)) return finish(walk.nextCursor === null && order.held ? { kind: 'newer' } : undefined);
    cursor = page.nextCursor;
  }
}

/**
 * The reports of a dated walk's range, a second in from each end: the service filters by instant,
 * the mirror by julianday, whose float may round a report at the very boundary to the other side.
 */
function datedCoverage(walk: ReportWalk): ReportCoverage {
  return { kind: 'range', from: `${walk.rangeStart}T00:00:01.000Z`, to: `${walk.rangeEnd}T23:59:58.999Z` };
}

/** Whether the reports read so far came newest first (created_at never rising); unreadable dates are skipped. */
class NewestFirst {
  #oldest = Number.POSITIVE_INFINITY;
  held = true;

  see(reports: ReadonlyArray<{ readonly createdAt: string | null }>): void {
    for (const report of reports) {
      const at = report.createdAt === null ? Number.NaN : Date.parse(report.createdAt);
      if (Number.isNaN(at)) continue;
      if (at > this.#oldest) this.held = false;
      this.#oldest = Math.min(this.#oldest, at);
    }
  }
}
