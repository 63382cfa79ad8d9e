// One organization's threats run: choose the range, resume or make its plan, walk its windows
// (walk-windows.ts), record the outcome.
import type { OrganizationConfig } from '../config.js';
import type { Plan, PlanWindow } from '../db/read/plan-reads.js';
import { addDays, dayOf, minDay } from '../lib/days.js';
import { emptyTotals, finishRunSummary, outcomeOf, type RunSummary, type SyncDeps, type SyncRequest } from './run-contract.js';
import { firstRunStart } from './history.js';
import { walkWindows } from './walk-windows.js';

/** `opened`: a plan already made (a widening of the scope) instead of the one the request makes. */
export async function syncThreats(deps: SyncDeps, organization: OrganizationConfig, request: SyncRequest, signal: AbortSignal, opened?: Plan): Promise<RunSummary> {
  const { writer, reads, clock, logger } = deps;
  const started = clock();
  const log = logger.child({ organization: organization.name });
  const plan = opened ?? (await openPlan(deps, organization.name, request, dayOf(started)));
  const runId = await writer.call('startRun', {
    organization: organization.name,
    stream: 'threats',
    mode: plan.mode,
    rangeStart: plan.rangeStart,
    rangeEnd: plan.rangeEnd,
    startedAt: started.toISOString(),
  });
  const totals = emptyTotals();
  const outcome = await outcomeOf(async () => {
    const verify = request.mode === 'verify' ? request : undefined;
    const onPage = verify?.onPage;
    const onWalkStart = verify ? (window: PlanWindow): void => verify.onWalkStart(window.windowStart, window.windowEnd) : undefined;
    await walkWindows({ deps, organization, runId, totals, log, onPage, onWalkStart }, plan, signal);
    await finishPlan(deps, plan);
    if (totals.records === 0 && reads.contents.hasNoThreats(organization.name)) {
      log.warn(
        { rangeStart: plan.rangeStart, rangeEnd: plan.rangeEnd },
        'the service returned no threats for this organization; if that is unexpected, check that its API key belongs to it',
      );
    }
  }, signal);
  return finishRunSummary(deps, log, {
    organization: organization.name,
    stream: 'threats',
    mode: plan.mode,
    runId,
    ...outcome,
    rangeStart: plan.rangeStart,
    rangeEnd: plan.rangeEnd,
    started,
    totals,
    message: `sync of organization "${organization.name}"`,
  });
}

/** Resumes the unfinished plan a killed run left, or makes a new one. */
async function openPlan(deps: SyncDeps, organization: string, request: SyncRequest, today: string): Promise<Plan> {
  const { writer, reads, settings } = deps;
  const createdAt = deps.clock().toISOString();
  if (request.mode === 'verify') {
    // A verify must see every page itself: a half-done one from a killed process is started over.
    await writer.call('deletePlans', { organization, mode: 'verify' });
    return writer.call('createPlan', { organization, mode: 'verify', rangeStart: request.from, rangeEnd: request.to, createdAt });
  }
  if (request.mode === 'backfill') return openBackfillPlan(deps, { organization, from: request.from, to: request.to, createdAt });
  const [open] = reads.plans.openPlans(organization, 'incremental');
  if (open) return open.rangeEnd >= today ? open : writer.call('extendPlan', { plan: open, rangeEnd: today });
  const completeThrough = reads.plans.completeThrough(organization);
  const rescanFrom = addDays(today, -settings.lookbackDays);
  const from = completeThrough === null ? firstRunStart(settings, today) : minDay(addDays(completeThrough, 1), rescanFrom);
  return writer.call('createPlan', { organization, mode: 'incremental', rangeStart: from, rangeEnd: today, createdAt });
}

/**
 * A backfill resumes the unfinished one from the same day, extended when the request reaches
 * further (a rerun of `--from X` after midnight asks for one day more); every other unfinished
 * backfill inside the requested range is dropped, so none is left behind that no rerun resumes.
 * What they committed stays.
 */
async function openBackfillPlan(deps: SyncDeps, request: { organization: string; from: string; to: string; createdAt: string }): Promise<Plan> {
  const { writer, reads } = deps;
  const { organization, from, to, createdAt } = request;
  const open = reads.plans.openPlans(organization, 'backfill');
  const resumable = open.find((plan) => plan.rangeStart === from && plan.rangeEnd <= to);
  const dropped = open.filter((plan) => plan !== resumable && plan.rangeStart >= from && plan.rangeEnd <= to);
  if (dropped.length > 0) await writer.call('deletePlans', { planIds: dropped.map((plan) => plan.id) });
  if (!resumable) return writer.call('createPlan', { organization, mode: 'backfill', rangeStart: from, rangeEnd: to, createdAt });
  return resumable.rangeEnd === to ? resumable : writer.call('extendPlan', { plan: resumable, rangeEnd: to });
}

/**
 * Every window walked: the plan is done, and complete_through moves over the days it covered whose
 * windows were walked after the day ended (by when the walk began, not the clock now: a window
 * walked at 23:59 may miss what was blocked at 23:59:30, however late the run ends).
 */
async function finishPlan(deps: SyncDeps, plan: Plan): Promise<void> {
  const { writer, reads } = deps;
  const now = deps.clock().toISOString();
  // A widening walked only the added types over days already counted complete.
  if (plan.mode === 'verify' || plan.widening !== null) {
    await writer.call('finishPlan', { planId: plan.id, completeThrough: null, now });
    return;
  }
  const closedEnd = closedThrough(plan, reads.plans.planWindows(plan.id));
  const completeThrough = reads.plans.completeThrough(plan.organization);
  const reachesCompleteThrough =
    plan.mode === 'incremental' || (completeThrough === null ? plan.rangeEnd >= addDays(dayOf(new Date(now)), -1) : plan.rangeStart <= addDays(completeThrough, 1));
  const advance = reachesCompleteThrough && closedEnd !== null ? { organization: plan.organization, day: closedEnd } : null;
  await writer.call('finishPlan', { planId: plan.id, completeThrough: advance, now });
}

/** The last day of the plan's range up to which every day's window was walked after that day ended; null when not even the first. */
export function closedThrough(plan: Pick<Plan, 'rangeStart'>, windows: readonly PlanWindow[]): string | null {
  let through: string | null = null;
  let expected = plan.rangeStart;
  for (const window of [...windows].sort((a, b) => (a.windowStart < b.windowStart ? -1 : 1))) {
    if (window.windowStart !== expected || window.startedAt === null) break;
    const closedEnd = minDay(window.windowEnd, addDays(window.startedAt.slice(0, 10), -1));
    if (closedEnd < window.windowStart) break;
    through = closedEnd;
    if (closedEnd < window.windowEnd) break;
    expected = addDays(window.windowEnd, 1);
  }
  return through;
}

/**
 * The plans that walk the types a widened scope added, over the days already mirrored: each walk
 * asks for those types alone (the organization's requests carry them as its scope), so the types
 * mirrored before are not fetched again.
 */
export async function widenScope(deps: SyncDeps, organization: OrganizationConfig, signal: AbortSignal): Promise<RunSummary[]> {
  const summaries: RunSummary[] = [];
  for (const plan of deps.reads.plans.wideningPlans(organization.name)) {
    if (signal.aborted) break;
    const assetTypes = plan.widening === '*' ? undefined : (plan.widening ?? '').split(',');
    const request: SyncRequest = { mode: 'backfill', from: plan.rangeStart, to: plan.rangeEnd };
    summaries.push(await syncThreats(deps, { ...organization, assetTypes }, request, signal, plan));
  }
  return summaries;
}
