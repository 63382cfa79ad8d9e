// One organization's reports: newest first, each page and the walk's cursor in one transaction.
//
// Reports change after they are filed (their proposals get reviewed), so an incremental run
// re-reads the last THREAT_MIRROR_REPORTS_RECENT_DAYS of reports, and goes on past them only
// until it meets a report it already holds unchanged.
import type { Logger } from 'pino';
import { PermanentApiError } from '../api/errors.js';
import { fetchReportPage, type ReportPageRequest } from '../api/report-client.js';
import type { OrganizationConfig } from '../config.js';
import type { ReportWalk } from '../db/report-writer.js';
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
  const { store, clock, settings } = deps;
  const log = deps.logger.child({ organization: organization.name, stream: 'reports' });
  const started = clock();
  const today = dayOf(started);
  const writer = store.reportWriter;
  const state = writer.state(organization.name);
  const mode = request.mode === 'backfill' ? 'backfill' : 'incremental';
  const range = request.mode === 'backfill' ? { start: request.from, end: request.to } : { start: addDays(today, -(settings.reportsRecentDays - 1)), end: today };
  const runId = store.startRun(organization.name, mode, range.start, range.end, started.toISOString(), 'reports');
  const totals = emptyTotals();
  const disabled = state?.disabledUntil && state.disabledUntil > started.toISOString();
  const outcome: Outcome = disabled
    ? { status: 'skipped', error: state.disabledReason ?? 'reports are not served by this deployment' }
    : await outcomeOf(
        async () => {
          await walkReports({ deps, organization, runId, totals, log }, walkToResume(deps, organization.name, request, state, today), signal);
          writer.linkThreats(organization.name);
        },
        signal,
        { classify: (caught) => (caught instanceof PermanentApiError && caught.status === 404 ? skipForADay(deps, organization.name, log) : undefined) },
      );
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

/** A deployment that answers 404 serves no reports: the stream is left alone for a day. */
function skipForADay(deps: SyncDeps, organization: string, log: Logger): Outcome {
  const error = 'GET /organization/reports answered 404: this deployment does not serve reports; threats still sync, reports are tried again in 24 hours';
  const now = deps.clock();
  deps.store.reportWriter.saveState(organization, null, { reason: error, until: new Date(now.getTime() + DISABLED_FOR_MS).toISOString() }, now.toISOString());
  log.warn(`reports of organization "${organization}" skipped: ${error}`);
  return { status: 'skipped', error };
}

/** The walk a killed run left, when this run asks for the same; otherwise a new one. */
function walkToResume(
  deps: SyncDeps,
  organization: string,
  request: SyncRequest,
  state: ReturnType<SyncDeps['store']['reportWriter']['state']>,
  today: string,
): ReportWalk & { firstRun: boolean } {
  const backfill = request.mode === 'backfill' ? request : undefined;
  const rangeStart = backfill?.from ?? null;
  const rangeEnd = backfill?.to ?? null;
  const mode = backfill ? 'backfill' : 'incremental';
  const firstRun = !backfill && deps.store.hasNoReports(organization);
  if (state?.nextCursor && state.mode === mode && state.rangeStart === rangeStart && state.rangeEnd === rangeEnd) {
    return { mode, rangeStart, rangeEnd, nextCursor: state.nextCursor, firstRun };
  }
  // A first run reads THREAT_MIRROR_INITIAL_DAYS of history, not everything the service holds.
  if (firstRun) return { mode, rangeStart: addDays(today, -(deps.settings.initialDays - 1)), rangeEnd: today, nextCursor: null, firstRun };
  return { mode, rangeStart, rangeEnd, nextCursor: null, firstRun };
}

async function walkReports(context: RunContext, walk: ReportWalk & { firstRun: boolean }, signal: AbortSignal): Promise<void> {
  const { deps, organization, runId, totals, log } = context;
  const { store, clock, settings } = deps;
  const recentFrom = new Date(clock().getTime() - settings.reportsRecentDays * 86_400_000).toISOString();
  const dated = walk.rangeStart !== null && walk.rangeEnd !== null;
  const request = (cursor: string | null): ReportPageRequest => ({
    cursor,
    ...(dated ? { startDate: `${walk.rangeStart}T00:00:00.000Z`, endDate: `${walk.rangeEnd}T23:59:59.999Z` } : {}),
  });
  const cursors = new CursorGuard((next) => `organization "${organization.name}": the service returned the reports cursor "${next}" again; stopped to avoid a loop`);
  let cursor = walk.nextCursor;
  for (;;) {
    const page = await fetchReportPage(deps.api, organization, request(cursor), signal);
    cursors.accept(page.nextCursor, cursor);
    // Newest first: once a page holds a report older than the recent window that is already held
    // unchanged, everything after it is too. A dated walk (backfill, first run) reads its range whole.
    const settledAfter = (unchanged: ReadonlySet<string>): boolean =>
      !dated && page.reports.some((report) => report.createdAt !== null && report.createdAt < recentFrom && unchanged.has(report.id));
    const result = store.reportWriter.write({
      organization: organization.name,
      runId,
      reports: page.reports,
      rejected: page.rejected,
      walk: page.nextCursor === null ? null : { mode: walk.mode, rangeStart: walk.rangeStart, rangeEnd: walk.rangeEnd, nextCursor: page.nextCursor },
      retries: page.retries,
      stamp: store.strictlyLaterStamp(clock().toISOString()),
    });
    addPage(totals, result, { retries: page.retries, records: page.reports.length + page.rejected.length });
    log.debug({ cursor, reports: page.reports.length, inserted: result.inserted, updated: result.updated, nextCursor: page.nextCursor }, 'reports page committed');
    for (const record of page.rejected) log.warn({ reason: record.reason }, 'report rejected and kept in rejected_records');
    if (page.nextCursor === null) return;
    if (settledAfter(result.unchanged)) {
      store.reportWriter.saveState(organization.name, null, null, clock().toISOString());
      return;
    }
    cursor = page.nextCursor;
  }
}
