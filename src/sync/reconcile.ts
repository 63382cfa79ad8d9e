// Rolling reconciliation: after an organization's incremental run, re-walk the mirrored days whose
// last complete walk is the oldest, within the run's request allowance (docs/reconciliation.md).
//
// A reconciled day is a window walked from its first page to its last, exactly as the incremental
// re-scan walks its days: changed threats are updated, missing ones marked removed, returned ones
// restored, and the day's ledger row refreshed. A window cut short (a kill, a failure, the
// allowance spent) is never resumed: only a walk that saw every page may conclude removals, so its
// days stay due and the next run walks them again from the first page.
import type { OrganizationConfig } from '../config.js';
import type { Logger } from 'pino';
import type { CarriedChecks, DueRule, LedgerDay } from '../db/read/ledger-reads.js';
import type { PlanWindow } from '../db/read/plan-reads.js';
import { maxDay, minDay } from '../lib/days.js';
import { errorMessage } from '../lib/errors.js';
import { settleCarriedChecks } from './carried-checks.js';
import { planReconciliation, type ReconcileWindow } from './reconcile-planner.js';
import { RequestAllowance, RequestAllowanceSpent } from './request-allowance.js';
import { emptyTotals, finishRunSummary, type Outcome, outcomeOf, type RunSummary, type SyncDeps } from './run-contract.js';
import { walkWindows } from './walk-windows.js';

const DAY_MS = 86_400_000;

/**
 * Runs after `incremental` (a succeeded incremental run of the organization); returns the
 * reconciliation's own run, or undefined when it sent no request (nothing due, or turned off).
 */
export async function reconcileOrganization(
  deps: SyncDeps,
  organization: OrganizationConfig,
  incremental: RunSummary,
  signal: AbortSignal,
): Promise<RunSummary | undefined> {
  const { writer, reads, settings } = deps;
  const name = organization.name;
  const log = deps.logger.child({ organization: name, phase: 'reconcile' });
  const rule = dueRule(incremental, settings.reconcileDays);
  const due = reads.ledger.dueDays(name, rule);
  if (settings.reconcileMaxRequests === 0) {
    reportOverdue(deps, name, due);
    return undefined;
  }
  // A reconciliation a killed process left half-walked is started over, never resumed.
  await writer.call('deletePlans', { organization: name, mode: 'reconcile' });
  // Checks a run could not afford come first; their windows' days wait for them, unwalked.
  const carried = reads.ledger.carriedChecks(name);
  const checks = carried.reduce((sum, window) => sum + window.candidates.length, 0);
  const waiting = (day: LedgerDay): boolean => carried.some((window) => window.windowStart <= day.day && day.day <= window.windowEnd);
  const { windows, tooLarge } = planReconciliation(
    due.filter((day) => !waiting(day)),
    settings.reconcileMaxRequests,
    Math.max(0, settings.reconcileMaxRequests - checks),
  );
  for (const day of tooLarge) {
    log.warn(
      { day: day.day, records: day.records, maxRequests: settings.reconcileMaxRequests },
      `day ${day.day} held ${day.records ?? 0} threats at its last walk, more than THREAT_MIRROR_RECONCILE_MAX_REQUESTS lets a run re-walk; raise it, or re-walk the day with verify`,
    );
  }
  if (windows.length === 0 && carried.length === 0) return finish(deps, name, due, undefined);
  const summary = await runReconciliation(deps, { organization, log, windows, carried, dueDays: due.length }, signal);
  return finish(deps, name, reads.ledger.dueDays(name, rule), summary);
}

interface ReconcileWork {
  readonly organization: OrganizationConfig;
  readonly log: Logger;
  readonly windows: readonly ReconcileWindow[];
  readonly carried: readonly CarriedChecks[];
  readonly dueDays: number;
}

/**
 * The reconciliation's run: the checks carried over from the last run first, then its plan (every
 * window recorded before the walk) walked within what is left of the allowance; its outcome.
 */
async function runReconciliation(deps: SyncDeps, { organization, log, windows, carried, dueDays }: ReconcileWork, signal: AbortSignal): Promise<RunSummary> {
  const { writer, settings } = deps;
  const name = organization.name;
  const started = deps.clock();
  const planned = windows.map((window): DayRange => [window.start, window.end]);
  const { start: rangeStart, end: rangeEnd } = spanOf([...planned, ...carried.map((window): DayRange => [window.windowStart, window.windowEnd])]);
  const runId = await writer.call('startRun', { organization: name, stream: 'threats', mode: 'reconcile', rangeStart, rangeEnd, startedAt: started.toISOString() });
  log.info(
    { runId, windows: windows.length, dueDays, carriedChecks: carried.reduce((sum, window) => sum + window.candidates.length, 0), estimatedRequests: windows.reduce((sum, window) => sum + window.estimatedRequests, 0) },
    'reconciliation started',
  );
  const allowance = new RequestAllowance(settings.reconcileMaxRequests);
  const walkDeps: SyncDeps = { ...deps, api: { ...deps.api, budgets: allowance.budgets(deps.api.budgets) } };
  const totals = emptyTotals();
  const observed = new ObservedSizes(deps, log, name);
  // A window cut short before its last page holds more than its days' counts promised; one walked
  // whole whose checks ran out of the allowance carries them over instead (carried-checks.ts).
  const onWindowStopped = (window: PlanWindow, stopped: { records: number; walkedWhole: boolean }, error: unknown): void => {
    if (error instanceof RequestAllowanceSpent && !stopped.walkedWhole) observed.record(window, stopped.records);
  };
  const context = { deps: walkDeps, organization, runId, totals, log, onWindowStopped, carriesChecksOver: (error: unknown) => error instanceof RequestAllowanceSpent };
  const walk = async (): Promise<void> => {
    if ((await settleCarriedChecks(context, carried, signal)) || windows.length === 0) return;
    // The plan is its windows and nothing more: walkWindows cuts new windows from the last one's end
    // to the plan's, so a plan reaching over a carried window would walk the days that wait for its checks.
    const span = spanOf(planned);
    const plan = await writer.call('createPlan', { organization: name, mode: 'reconcile', rangeStart: span.start, rangeEnd: span.end, createdAt: started.toISOString() });
    await writer.call('addWindows', { windows: windows.map((window) => ({ planId: plan.id, windowStart: window.start, windowEnd: window.end })) });
    await walkWindows(context, plan, signal);
  };
  const outcome = await outcomeOf(walk, signal, {
    interrupted: 'stopped by a signal; the days not walked to the end stay due',
    classify: (caught): Outcome => {
      if (!(caught instanceof RequestAllowanceSpent)) return { status: 'failed', error: `reconciliation: ${errorMessage(caught)}` };
      // More records than the ledger's counts promised: the window cut short stays due.
      log.info({ requests: allowance.used }, 'reconciliation stopped at THREAT_MIRROR_RECONCILE_MAX_REQUESTS; the days not walked to the end stay due');
      return { status: 'succeeded', error: undefined };
    },
  });
  await observed.recorded();
  if (outcome.status !== 'interrupted') await writer.call('deletePlans', { organization: name, mode: 'reconcile' });
  return finishRunSummary(deps, log, { organization: name, stream: 'threats', mode: 'reconcile', runId, ...outcome, rangeStart, rangeEnd, started, totals, message: `reconciliation of organization "${name}"` });
}

type DayRange = readonly [start: string, end: string];

/** The first and the last day of some ranges of days (at least one). */
function spanOf(ranges: readonly DayRange[]): { start: string; end: string } {
  const [start, end] = ranges[0] as DayRange;
  return ranges.reduce((span, [from, to]) => ({ start: minDay(span.start, from), end: maxDay(span.end, to) }), { start, end });
}

/**
 * A window the budget cut short holds more than its days' ledger counts promised (a late arrival):
 * planned from those counts again, it would take the whole budget every run and never finish. Its
 * days are estimated at what the walk saw (and one more: a next page was due), so the planner cuts
 * them into windows that fit. A size not recorded only leaves the next run to plan the same window
 * again: logged, not fatal.
 */
class ObservedSizes {
  readonly #deps: SyncDeps;
  readonly #log: Logger;
  readonly #organization: string;
  readonly #pending: Array<Promise<void>> = [];

  constructor(deps: SyncDeps, log: Logger, organization: string) {
    this.#deps = deps;
    this.#log = log;
    this.#organization = organization;
  }

  record(window: PlanWindow, records: number): void {
    this.#pending.push(this.#record(window, records).catch((caught: unknown) => this.#log.warn({ error: errorMessage(caught) }, 'could not record what the cut walk saw')));
  }

  /** Resolves once every size is recorded (or logged as not). */
  async recorded(): Promise<void> {
    await Promise.all(this.#pending);
  }

  async #record(window: PlanWindow, records: number): Promise<void> {
    const days = `${window.windowStart}..${window.windowEnd}`;
    const atLeast = records + 1;
    const { before, after } = await this.#deps.writer.call('recordObservedSize', { organization: this.#organization, from: window.windowStart, to: window.windowEnd, atLeast });
    if (after === before) return;
    this.#log.warn(
      { days, atLeast, atLastWalk: before, maxRequests: this.#deps.settings.reconcileMaxRequests },
      `days ${days} hold at least ${atLeast} threats now (${before} at their last walk), more than THREAT_MIRROR_RECONCILE_MAX_REQUESTS let this run re-walk in one window; the next runs walk them in smaller windows`,
    );
  }
}

/** Due: walked before the incremental run, and longer ago than THREAT_MIRROR_RECONCILE_DAYS. */
function dueRule(incremental: RunSummary, reconcileDays: number): DueRule {
  const startedMs = Date.parse(incremental.finishedAt) - incremental.durationMs;
  return {
    runId: incremental.runId,
    walkedBefore: reconcileDays === 0 ? null : new Date(startedMs - reconcileDays * DAY_MS).toISOString(),
  };
}

/** Records a completed cycle when nothing is due any more, and reports what is. */
async function finish(deps: SyncDeps, organization: string, stillDue: readonly LedgerDay[], summary: RunSummary | undefined): Promise<RunSummary | undefined> {
  if (stillDue.length === 0 && (summary === undefined || summary.status === 'succeeded')) {
    await deps.writer.call('recordReconcileCycle', { organization, at: deps.clock().toISOString() });
  }
  reportOverdue(deps, organization, stillDue);
  return summary;
}

function reportOverdue(deps: SyncDeps, organization: string, due: readonly LedgerDay[]): void {
  const oldestDay = due.reduce<string | null>((oldest, day) => (oldest === null || day.day < oldest ? day.day : oldest), null);
  deps.observer?.reconcileChecked?.(organization, { days: due.length, oldestDay });
}
