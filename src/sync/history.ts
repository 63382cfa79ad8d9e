// The walk toward THREAT_MIRROR_HISTORY_FROM (docs/operations.md, "The history a mirror holds"):
// after an organization's incremental run, and before its reconciliation, the days between the
// configured start and the mirrored range that the ledger does not hold as walked whole are walked,
// newest first, within THREAT_MIRROR_HISTORY_MAX_REQUESTS per organization and run.
//
// Its own budget, not the reconciliation's: the two answer different questions (what the mirror
// lacks; what it may hold wrongly), and a budget shared would let a long history starve the
// re-walks, or the re-walks the history. It comes first because a day it walks enters the ledger
// as just walked: the reconciliation then has nothing to do there. Unlike a reconciliation, a window
// the budget cut short is resumed by the next run from its stored cursor (one request to check the
// list did not shift, paid for with the page after it): the history plan stays in sync_plans until every window of it is walked.
import type { OrganizationConfig } from '../config.js';
import type { Plan, PlanWindow } from '../db/read/plan-reads.js';
import { historyDaysMissing, type HistoryWalkState, historyWalkKey } from '../db/read/history-reads.js';
import { addDays, dayOf, maxDay, minDay } from '../lib/days.js';
import { RequestAllowance, RequestAllowanceSpent } from './request-allowance.js';
import { emptyTotals, finishRunSummary, type Outcome, outcomeOf, type RunSummary, type SyncDeps, type SyncSettings } from './run-contract.js';
import { firstUncovered, walkWindows } from './walk-windows.js';

/** The first day the mirror must hold today: THREAT_MIRROR_HISTORY_FROM, or the last initialDays days. */
export function historyStart(settings: Pick<SyncSettings, 'historyFrom' | 'initialDays'>, today: string): string {
  return minDay(settings.historyFrom ?? addDays(today, -(settings.initialDays - 1)), today);
}

/** Where an organization's first run starts: the last initialDays days, or later when the history asks for less. */
export function firstRunStart(settings: Pick<SyncSettings, 'historyFrom' | 'initialDays'>, today: string): string {
  return maxDay(historyStart(settings, today), addDays(today, -(settings.initialDays - 1)));
}

/**
 * Runs after a succeeded incremental run of the organization; returns the walk's own run, or
 * undefined when it sent no request (the history is whole, or the walk is off).
 */
export async function walkHistory(deps: SyncDeps, organization: OrganizationConfig, signal: AbortSignal): Promise<RunSummary | undefined> {
  const { reads, settings } = deps;
  const name = organization.name;
  const completeThrough = reads.plans.completeThrough(name);
  if (completeThrough === null) return undefined;
  const target = historyStart(settings, dayOf(deps.clock()));
  // Recorded with the walk off too: history_target is this configuration's start, never one an
  // earlier run (or a restored file's primary) read.
  const off = settings.historyMaxRequests === 0;
  await recordWalkState(deps, name, target, off);
  if (off) {
    // No walk goes toward the start now: a walk left midway is dropped, and the days it wrote to
    // join the ledger as never walked, for the reconciliation to check (PlanRows.delete).
    if (reads.plans.openPlans(name, 'history').length > 0) await deps.writer.call('deletePlans', { organization: name, mode: 'history' });
    return undefined;
  }
  const summary = await walkTowards(deps, organization, target, completeThrough, signal);
  // What is still missing, for the metrics: a walk that stops making progress alerts (deploy/prometheus).
  const missingDays = historyDaysMissing(target, reads.history.heldFrom(name), completeThrough);
  deps.observer?.historyChecked?.(name, { target, missingDays });
  return summary;
}

/** One run's walk of the days missing between `target` and complete_through; undefined when none is. */
async function walkTowards(deps: SyncDeps, organization: OrganizationConfig, target: string, completeThrough: string, signal: AbortSignal): Promise<RunSummary | undefined> {
  const { reads, settings, writer } = deps;
  const name = organization.name;
  const plan = await openHistoryPlan(deps, name, target, completeThrough);
  if (plan === undefined) return undefined;
  const log = deps.logger.child({ organization: name, phase: 'history' });
  const started = deps.clock();
  const runId = await writer.call('startRun', { organization: name, stream: 'threats', mode: 'history', rangeStart: plan.rangeStart, rangeEnd: plan.rangeEnd, startedAt: started.toISOString() });
  log.info({ runId, rangeStart: plan.rangeStart, rangeEnd: plan.rangeEnd, target, maxRequests: settings.historyMaxRequests }, 'walking the days before the mirrored range, newest first');
  const allowance = new RequestAllowance(settings.historyMaxRequests);
  const totals = emptyTotals();
  const context = {
    deps: { ...deps, api: { ...deps.api, budgets: allowance.budgets(deps.api.budgets) } },
    prepay: (requests: number) => allowance.prepaid(deps.api.budgets, requests),
    organization,
    runId,
    totals,
    log,
  };
  const outcome = await outcomeOf(
    async () => {
      // Windows cut to fit the budget, sized at first by the density of the days held; at most one
      // worker for two requests, so that the checks of the windows this run leaves open take at
      // most half of the next run's: more windows open than that, and checks alone could spend it.
      const workers = Math.max(1, Math.floor(settings.historyMaxRequests / 2));
      await walkWindows(context, plan, signal, { requests: settings.historyMaxRequests, density: reads.history.heldDensity(name), workers });
      await writer.call('finishPlan', { planId: plan.id, completeThrough: null, now: deps.clock().toISOString() });
    },
    signal,
    {
      classify: (caught): Outcome | undefined => {
        if (!(caught instanceof RequestAllowanceSpent)) return undefined;
        log.info({ requests: allowance.used }, 'history walk stopped at THREAT_MIRROR_HISTORY_MAX_REQUESTS; the next run resumes it');
        return { status: 'succeeded', error: undefined };
      },
    },
  );
  return finishRunSummary(deps, log, { organization: name, stream: 'threats', mode: 'history', runId, ...outcome, rangeStart: plan.rangeStart, rangeEnd: plan.rangeEnd, started, totals, message: `history walk of organization "${name}"` });
}

/**
 * The plan a run walks: the one an earlier run left, or a new one over the newest run of days
 * missing between the start and complete_through; undefined when none is missing. The plan left is
 * dropped (what it walked stays) when the start moved later than all of it, or when the next day it
 * would walk was walked whole since (a `--backfill` over the same days: before, the next run walked
 * them all again).
 */
async function openHistoryPlan(deps: SyncDeps, organization: string, target: string, completeThrough: string): Promise<Plan | undefined> {
  const { reads, writer } = deps;
  const [open, ...others] = reads.plans.openPlans(organization, 'history');
  if (others.length > 0) await writer.call('deletePlans', { planIds: others.map((plan) => plan.id) });
  if (open && open.rangeStart >= target) {
    const next = nextDayToWalk(open, reads.plans.planWindows(open.id));
    if (next === undefined || !reads.history.walkedDays(organization, next, next).has(next)) return open;
  }
  if (open) await writer.call('deletePlans', { planIds: [open.id] });
  const missing = newestMissingDays(reads.history.walkedDays(organization, target, completeThrough), target, completeThrough);
  if (missing === undefined) return undefined;
  return writer.call('createPlan', { organization, mode: 'history', rangeStart: missing.from, rangeEnd: missing.to, createdAt: deps.clock().toISOString() });
}

/**
 * The newest day a history plan (walked newest first) has left: its newest window not walked whole,
 * or the day before the oldest window cut; undefined when every day of it is in a window walked whole.
 */
export function nextDayToWalk(plan: Pick<Plan, 'rangeStart' | 'rangeEnd'>, windows: ReadonlyArray<Pick<PlanWindow, 'windowStart' | 'windowEnd' | 'completedAt'>>): string | undefined {
  const open = windows.filter((window) => window.completedAt === null).map((window) => window.windowEnd);
  const uncovered = firstUncovered(plan, windows, 'newest-first');
  const candidates = uncovered >= plan.rangeStart ? [...open, uncovered] : open;
  return candidates.length === 0 ? undefined : candidates.reduce(maxDay);
}

/** The newest days in [from, to] not walked, as one span of consecutive days; undefined when every day was. */
export function newestMissingDays(walked: ReadonlySet<string>, from: string, to: string): { from: string; to: string } | undefined {
  let day = to;
  while (day >= from && walked.has(day)) day = addDays(day, -1);
  if (day < from) return undefined;
  const newest = day;
  while (day >= from && !walked.has(day)) day = addDays(day, -1);
  return { from: addDays(day, 1), to: newest };
}

/**
 * Where the walk toward `target` began, for `status` to show how far it has come and when it ends:
 * kept while the target stays, begun anew when it moves (the setting changed, or the default's
 * window moved with the day).
 */
async function recordWalkState(deps: SyncDeps, organization: string, target: string, off: boolean): Promise<void> {
  const { reads, writer } = deps;
  const state = reads.history.walkState(organization);
  if (state?.target === target && (state.off === true) === off) return;
  const now = deps.clock().toISOString();
  const value = JSON.stringify({ target, startedAt: now, heldFromAtStart: reads.history.heldFrom(organization), ...(off ? { off: true } : {}) } satisfies HistoryWalkState);
  await writer.call('recordSetting', { key: historyWalkKey(organization), value, now });
}
