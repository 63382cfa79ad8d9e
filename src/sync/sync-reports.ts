// One organization's reports: newest first, each page and the walk's cursor in one transaction.
//
// Reports change after they are filed (their proposals get reviewed), so an incremental run
// re-reads the last THREAT_MIRROR_REPORTS_RECENT_DAYS of reports, and goes on past them only
// until it meets a report it already holds unchanged.
import type { Logger } from 'pino';
import { PermanentApiError, ProtocolError } from '../api/errors.js';
import { fetchReportPage, type ReportPageRequest } from '../api/report-client.js';
import type { OrganizationConfig } from '../config.js';
import type { ReportWalk } from '../db/report-writer.js';
import { addDays, dayOf } from '../lib/days.js';
import { errorMessage } from '../lib/errors.js';
import { finishRunSummary, type RunOutcome, type RunSummary, type SyncDeps, type SyncRequest } from './sync-threats.js';

/** How long a deployment that answered 404 is left alone before the stream is tried again. */
const DISABLED_FOR_MS = 24 * 3_600_000;

export async function syncReports(deps: SyncDeps, organization: OrganizationConfig, request: SyncRequest, signal: AbortSignal): Promise<RunSummary> {
  const { store, clock, settings } = deps;
  const log = deps.logger.child({ organization: organization.name, stream: 'reports' });
  const started = clock();
  const today = dayOf(started);
  const writer = store.reports;
  const state = writer.state(organization.name);
  const mode = request.mode === 'backfill' ? 'backfill' : 'incremental';
  const range = request.mode === 'backfill' ? { start: request.from, end: request.to } : { start: addDays(today, -(settings.reportsRecentDays - 1)), end: today };
  const runId = store.startRun(organization.name, mode, range.start, range.end, started.toISOString(), 'reports');
  const totals = { pages: 0, inserted: 0, updated: 0, rejected: 0, retries: 0 };
  let status: RunOutcome = 'succeeded';
  let error: string | undefined;

  if (state?.disabledUntil && state.disabledUntil > started.toISOString()) {
    status = 'skipped';
    error = state.disabledReason ?? 'reports are not served by this deployment';
  } else {
    try {
      await walkReports(deps, organization, runId, walkToResume(deps, organization.name, request, state, today), totals, log, signal);
      writer.linkThreats(organization.name);
    } catch (caught) {
      if (signal.aborted) {
        status = 'interrupted';
        error = 'stopped by a signal; the next run resumes from the last committed page';
      } else if (caught instanceof PermanentApiError && caught.status === 404) {
        status = 'skipped';
        error = 'GET /organization/reports answered 404: this deployment does not serve reports; threats still sync, reports are tried again in 24 hours';
        writer.saveState(organization.name, null, { reason: error, until: new Date(clock().getTime() + DISABLED_FOR_MS).toISOString() }, clock().toISOString());
        log.warn(`reports of organization "${organization.name}" skipped: ${error}`);
      } else {
        status = 'failed';
        error = errorMessage(caught);
      }
    }
  }
  return finishRunSummary(deps, log, {
    organization: organization.name,
    stream: 'reports',
    mode,
    runId,
    status,
    rangeStart: range.start,
    rangeEnd: range.end,
    started,
    totals: { ...totals, removed: 0 },
    error,
    message: `reports of organization "${organization.name}"`,
    quiet: status === 'skipped',
  });
}

/** The walk a killed run left, when this run asks for the same; otherwise a new one. */
function walkToResume(
  deps: SyncDeps,
  organization: string,
  request: SyncRequest,
  state: ReturnType<SyncDeps['store']['reports']['state']>,
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

async function walkReports(
  deps: SyncDeps,
  organization: OrganizationConfig,
  runId: number,
  walk: ReportWalk & { firstRun: boolean },
  totals: { pages: number; inserted: number; updated: number; rejected: number; retries: number },
  log: Logger,
  signal: AbortSignal,
): Promise<void> {
  const { store, clock, settings } = deps;
  const recentFrom = new Date(clock().getTime() - settings.reportsRecentDays * 86_400_000).toISOString();
  const dated = walk.rangeStart !== null && walk.rangeEnd !== null;
  const request = (cursor: string | null): ReportPageRequest => ({
    cursor,
    ...(dated ? { startDate: `${walk.rangeStart}T00:00:00.000Z`, endDate: `${walk.rangeEnd}T23:59:59.999Z` } : {}),
  });
  const seenCursors = new Set<string>();
  let cursor = walk.nextCursor;
  for (;;) {
    const page = await fetchReportPage(deps.api, organization, request(cursor), signal);
    if (page.nextCursor !== null && (page.nextCursor === cursor || seenCursors.has(page.nextCursor))) {
      throw new ProtocolError(`organization "${organization.name}": the service returned the reports cursor "${page.nextCursor}" again; stopped to avoid a loop`);
    }
    if (page.nextCursor !== null) seenCursors.add(page.nextCursor);
    // Newest first: once a page holds a report older than the recent window that is already held
    // unchanged, everything after it is too. A dated walk (backfill, first run) reads its range whole.
    const settledAfter = (unchanged: ReadonlySet<string>): boolean =>
      !dated && page.reports.some((report) => report.createdAt !== null && report.createdAt < recentFrom && unchanged.has(report.id));
    const result = store.reports.write({
      organization: organization.name,
      runId,
      reports: page.reports,
      rejected: page.rejected,
      walk: page.nextCursor === null ? null : { mode: walk.mode, rangeStart: walk.rangeStart, rangeEnd: walk.rangeEnd, nextCursor: page.nextCursor },
      retries: page.retries,
      stamp: store.strictlyLaterStamp(clock().toISOString()),
    });
    totals.pages += 1;
    totals.inserted += result.inserted;
    totals.updated += result.updated;
    totals.rejected += result.rejected;
    totals.retries += page.retries;
    log.debug({ cursor, reports: page.reports.length, inserted: result.inserted, updated: result.updated, nextCursor: page.nextCursor }, 'reports page committed');
    for (const record of page.rejected) log.warn({ reason: record.reason }, 'report rejected and kept in rejected_records');
    if (page.nextCursor === null) return;
    if (settledAfter(result.unchanged)) {
      store.reports.saveState(organization.name, null, null, clock().toISOString());
      return;
    }
    cursor = page.nextCursor;
  }
}
