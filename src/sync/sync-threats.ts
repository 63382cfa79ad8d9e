// One organization's threats run: choose the range, resume or make its plan, walk its windows
// (window-walk.ts), record the outcome.
import type { OrganizationConfig } from '../config.js';
import type { Plan } from '../db/mirror-store.js';
import { addDays, dayOf, minDay } from '../lib/days.js';
import { emptyTotals, finishRunSummary, outcomeOf, type RunSummary, type SyncDeps, type SyncRequest } from './run-contract.js';
import { walkWindows } from './window-walk.js';

export async function syncThreats(deps: SyncDeps, organization: OrganizationConfig, request: SyncRequest, signal: AbortSignal): Promise<RunSummary> {
  const { store, clock, logger } = deps;
  const started = clock();
  const log = logger.child({ organization: organization.name });
  const plan = openPlan(deps, organization.name, request, dayOf(started));
  const runId = store.startRun(organization.name, plan.mode, plan.rangeStart, plan.rangeEnd, started.toISOString());
  const totals = emptyTotals();
  const outcome = await outcomeOf(async () => {
    const onPage = request.mode === 'verify' ? request.onPage : undefined;
    await walkWindows({ deps, organization, runId, totals, log, onPage }, plan, signal);
    finishPlan(deps, plan);
    if (totals.records === 0 && store.hasNoThreats(organization.name)) {
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
