// What every run of the engine shares, whichever stream it walks: the request, the dependencies,
// the totals, the outcome and the summary, and the guard that stops a cursor loop. The threats
// walk, the reports walk and the reconciliation import this, never each other.
import type { Logger } from 'pino';
import { ProtocolError } from '../api/errors.js';
import type { ApiClientOptions } from '../api/service-call.js';
import type { OrganizationConfig } from '../config.js';
import type { MirrorReads } from '../db/read/mirror-reads.js';
import type { RunStatus, SyncMode } from '../db/schema.js';
import type { PageCounts } from '../db/writer/page-writer.js';
import type { WriterClient } from '../db/writer/writer-client.js';
import type { Clock } from '../lib/days.js';
import { errorMessage } from '../lib/errors.js';
import { redact } from '../lib/redact.js';
import type { Threat } from '../records.js';

/** One definition each: the modes and statuses are the sync_runs columns' own enums. */
export type { SyncMode };
/** How a run ended. skipped: the stream is not served by this deployment (reports answered 404); not a failure. */
export type RunOutcome = Exclude<RunStatus, 'running'>;

export type SyncRequest =
  | { readonly mode: 'incremental' }
  | { readonly mode: 'backfill'; readonly from: string; readonly to: string }
  /**
   * A fresh walk of closed days that shows each page's records to `onPage` before writing it;
   * `onWalkStart` says a window is walked (again) from its first page: what it showed before is void.
   */
  | {
      readonly mode: 'verify';
      readonly from: string;
      readonly to: string;
      readonly onPage: (threats: readonly Threat[]) => void;
      readonly onWalkStart: (windowStart: string, windowEnd: string) => void;
    };

export interface SyncSettings {
  readonly initialDays: number;
  /** THREAT_MIRROR_HISTORY_FROM: the first day the mirror must hold; undefined: the last initialDays days. */
  readonly historyFrom: string | undefined;
  /** Requests a run may spend per organization walking toward it; 0 turns the walk off. */
  readonly historyMaxRequests: number;
  readonly lookbackDays: number;
  readonly concurrency: number;
  /** Mirror GET /organization/reports too. */
  readonly mirrorReports: boolean;
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
  /** After the walk toward the configured start of the history (walked or not): the days it still lacks. */
  historyChecked?(organization: string, history: { readonly target: string; readonly missingDays: number }): void;
}

export interface SyncDeps {
  /** Every write goes to the writer thread through this. */
  readonly writer: WriterClient;
  /** What the sync reads of the mirror, on the main thread's read-only connection. */
  readonly reads: MirrorReads;
  readonly api: ApiClientOptions;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly settings: SyncSettings;
  readonly observer?: SyncObserver | undefined;
}

export interface RunSummary extends Readonly<RunTotals> {
  readonly organization: string;
  /** threats, or reports (whose counts are of reports). */
  readonly stream: 'threats' | 'reports';
  readonly mode: SyncMode;
  readonly runId: number;
  readonly status: RunOutcome;
  readonly rangeStart: string;
  readonly rangeEnd: string;
  readonly finishedAt: string;
  readonly durationMs: number;
  readonly error?: string;
}

/** What the walk of one organization's run needs, whichever stream. */
export interface RunContext {
  readonly deps: SyncDeps;
  readonly organization: OrganizationConfig;
  readonly runId: number;
  /** Added to as each page commits. */
  readonly totals: RunTotals;
  readonly log: Logger;
}

/** A run's running counts, added to as each page commits. */
export interface RunTotals {
  pages: number;
  inserted: number;
  updated: number;
  rejected: number;
  /** Threats marked removed: no longer returned for a day walked from start to end. */
  removed: number;
  retries: number;
  /** Records the service sent, valid or not. */
  records: number;
}

export function emptyTotals(): RunTotals {
  return { pages: 0, inserted: 0, updated: 0, rejected: 0, removed: 0, retries: 0, records: 0 };
}

/** Counts one committed page of either stream. */
export function addPage(totals: RunTotals, counts: PageCounts & { readonly removed?: number }, page: { readonly retries: number; readonly records: number }): void {
  totals.pages += 1;
  totals.inserted += counts.inserted;
  totals.updated += counts.updated;
  totals.rejected += counts.rejected;
  totals.removed += counts.removed ?? 0;
  totals.retries += page.retries;
  totals.records += page.records;
}

/** Counts a window's conclusion: the threats it found still listed, and those it marked removed (no page). */
export function addConclusion(totals: RunTotals, counts: PageCounts & { readonly removed: number }): void {
  totals.inserted += counts.inserted;
  totals.updated += counts.updated;
  totals.removed += counts.removed;
}

export interface Outcome {
  readonly status: RunOutcome;
  readonly error: string | undefined;
}

export const RESUMES_NEXT_RUN = 'stopped by a signal; the next run resumes from the last committed page';

/**
 * Runs a walk and says how it ended: succeeded, interrupted when the signal stopped it, failed
 * otherwise. `classify` lets a stream decide first what some errors mean (reports: a 404 is a skip).
 */
export async function outcomeOf(
  walk: () => Promise<void>,
  signal: AbortSignal,
  options: { readonly interrupted?: string; readonly classify?: (caught: unknown) => Outcome | undefined } = {},
): Promise<Outcome> {
  try {
    await walk();
    return { status: 'succeeded', error: undefined };
  } catch (caught) {
    if (signal.aborted) return { status: 'interrupted', error: options.interrupted ?? RESUMES_NEXT_RUN };
    return options.classify?.(caught) ?? { status: 'failed', error: errorMessage(caught) };
  }
}

/**
 * Remembers the cursors a walk was sent: one sent again (or the one just followed) means the
 * service is looping, and following it would never end. The latest MAX_REMEMBERED_CURSORS only
 * (a cursor is at most 20 digits): a window of a million pages would otherwise keep them all.
 */
export const MAX_REMEMBERED_CURSORS = 10_000;

export class CursorGuard {
  readonly #seen = new Set<string>();
  readonly #loopMessage: (cursor: string) => string;

  constructor(loopMessage: (cursor: string) => string) {
    this.#loopMessage = loopMessage;
  }

  /** Throws a ProtocolError when `next` was sent before; a null `next` ends the walk and passes. */
  accept(next: string | null, current: string | null): void {
    if (next === null) return;
    if (next === current || this.#seen.has(next)) throw new ProtocolError(this.#loopMessage(next));
    // A Set iterates in insertion order: the first is the oldest.
    if (this.#seen.size >= MAX_REMEMBERED_CURSORS) this.#seen.delete(this.#seen.values().next().value as string);
    this.#seen.add(next);
  }
}

/** A finished run as finishRunSummary takes it. */
export interface FinishedRun extends Pick<RunSummary, 'organization' | 'stream' | 'mode' | 'runId' | 'rangeStart' | 'rangeEnd'>, Outcome {
  readonly started: Date;
  readonly totals: RunTotals;
  /** The log line's subject, e.g. `sync of organization "acme"`. */
  readonly message: string;
  /** Skipped runs are logged by the caller, once, as a warning. */
  readonly quiet?: boolean;
}

/**
 * The end of a run of either stream: records the outcome, builds the summary, logs it (one line
 * per organization run, at info, or error for a failure) and tells the observer. A run whose end
 * cannot be recorded (the writer thread is gone) ends failed, with why: its row stays `running`,
 * and the next writer to start marks it interrupted.
 */
export async function finishRunSummary(deps: SyncDeps, log: Logger, run: FinishedRun): Promise<RunSummary> {
  const finished = deps.clock();
  // The error is stored, logged and printed: it passes the redaction point once, here.
  let error = run.error === undefined ? undefined : redact(run.error);
  let status = run.status;
  try {
    await deps.writer.call('finishRun', { runId: run.runId, status, error: error ?? null, finishedAt: finished.toISOString() });
  } catch (caught) {
    status = 'failed';
    error = redact(`${error === undefined ? '' : `${error}; `}the run's end could not be recorded: ${errorMessage(caught)}`);
  }
  const { started, totals, message, quiet, error: _unredacted, status: _recorded, ...identity } = run;
  const summary: RunSummary = {
    ...identity,
    status,
    pages: totals.pages,
    inserted: totals.inserted,
    updated: totals.updated,
    rejected: totals.rejected,
    removed: totals.removed,
    retries: totals.retries,
    records: totals.records,
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
