// Removal checks a reconciliation's request allowance did not cover in the run that walked their
// window, settled first by the next run, without walking the window again (docs/reconciliation.md,
// "Checks carried over"). Each is a look-up of the threat's content over every day, as the checks
// after a walk are: found, it is written as the service lists it now; found nowhere, it is removed.
import type { CarriedChecks } from '../db/read/ledger-reads.js';
import { scopeTypes } from '../db/sql/scopes.js';
import { dayOf } from '../lib/days.js';
import type { Threat } from '../records.js';
import { findListed } from './removal-check.js';
import { RequestAllowanceSpent } from './request-allowance.js';
import { addConclusion, type RunContext } from './run-contract.js';

/**
 * One check at a time, the windows carried first first. The first check of the run has the whole
 * allowance (the run starts here), so each run settles at least one: a check that cannot tell
 * within a whole run's allowance (a content shared by more threats than 100 × the allowance) is
 * left as it is and logged, as a content shared by more than 3,000 threats is after any walk.
 * Returns whether the allowance is spent. A failure of another kind fails the run after what was
 * settled is written.
 */
export async function settleCarriedChecks(context: RunContext, windows: readonly CarriedChecks[], signal: AbortSignal): Promise<boolean> {
  const today = dayOf(context.deps.clock());
  let first = true;
  for (const window of windows) {
    const answers = new WindowAnswers(window);
    let stop: { spent: true } | { error: unknown } | undefined;
    for (const candidate of window.candidates) {
      try {
        answers.add(candidate, await findListed(context, candidate, today, signal));
      } catch (error) {
        if (!(error instanceof RequestAllowanceSpent)) stop = { error };
        else if (first) answers.cannotTell(candidate, context);
        stop ??= { spent: true };
      }
      first = false;
      if (stop) break;
    }
    await answers.conclude(context);
    if (stop && 'error' in stop) throw stop.error;
    if (stop) return true;
  }
  return false;
}

/** What the checks of one carried window found, until they are written. */
class WindowAnswers {
  readonly #window: CarriedChecks;
  readonly #removedIds: number[] = [];
  readonly #found: Threat[] = [];
  readonly #settledIds: number[];

  constructor(window: CarriedChecks) {
    this.#window = window;
    // Those a walk settled since need no request.
    this.#settledIds = [...window.settled];
  }

  add(candidate: Threat, answer: Threat | 'absent' | 'unknown'): void {
    if (answer === 'absent') this.#removedIds.push(candidate.id);
    else if (answer !== 'unknown') this.#found.push(answer);
    this.#settledIds.push(candidate.id);
  }

  cannotTell(candidate: Threat, { log, deps }: RunContext): void {
    log.warn(
      { threatId: candidate.id, window: `${this.#window.windowStart}..${this.#window.windowEnd}`, maxRequests: deps.settings.reconcileMaxRequests },
      'a carried removal check needs more requests than THREAT_MIRROR_RECONCILE_MAX_REQUESTS allows a run: the threat is left as it is; raise the variable, or re-walk its day with verify',
    );
    this.#settledIds.push(candidate.id);
  }

  async conclude({ deps, organization, runId, totals, log }: RunContext): Promise<void> {
    if (this.#settledIds.length === 0) return;
    const { windowStart, windowEnd, windowPages, assetTypes } = this.#window;
    const counts = await deps.writer.concludeCarried({
      organization: organization.name,
      runId,
      window: { windowStart, windowEnd },
      windowPages,
      assetTypes: scopeTypes(assetTypes),
      removedIds: this.#removedIds,
      found: this.#found,
      settledIds: this.#settledIds,
      now: deps.clock().toISOString(),
    });
    addConclusion(totals, counts);
    log.info(
      { window: `${windowStart}..${windowEnd}`, settled: this.#settledIds.length, removed: counts.removed, stillListed: this.#found.length, left: this.#window.candidates.length + this.#window.settled.length - this.#settledIds.length },
      'carried removal checks settled with the service',
    );
  }
}
