// Shows a command's runs as they go: a redrawn line on a terminal (a few times a second) or a
// `progress` log record every THREAT_MIRROR_PROGRESS_SECONDS, and a summary when they end. The
// numbers are read from the file (commands/progress.ts), as `status` reads them.
import type { Logger } from 'pino';
import { formatDuration, type PlanProgress, percentOf, runningProgress } from './plan-progress.js';
import { ProgressReads } from '../db/read/status-reads.js';
import type { Database } from '../db/sqlite.js';
import type { Clock } from '../lib/days.js';
import { daysBetween } from '../lib/days.js';
import { errorMessage } from '../lib/errors.js';
import type { RunSummary } from '../sync/run-contract.js';
import type { TerminalLine } from './terminal-line.js';

/** "At most a few times a second": a person reads no faster, and each redraw reads the file. */
const LINE_INTERVAL_MS = 250;

export interface ProgressReporterOptions {
  /** What the runs are, for the line: backfill, sync, verify. */
  readonly label: string;
  /** The run modes the command starts (its reconciliation runs are left out of a --once line). */
  readonly modes: readonly string[];
  readonly organizations: readonly string[];
  readonly sqlite: Database;
  readonly clock: Clock;
  readonly logger: Logger;
  /** Draw on this line; without one, log a record every `logIntervalMs`. */
  readonly line?: TerminalLine | undefined;
  readonly logIntervalMs: number;
}

/** The numbers of every organization of the command together. */
export interface ProgressTotals {
  readonly organizationsDone: number;
  readonly organizationsTotal: number;
  readonly daysDone: number;
  readonly daysTotal: number;
  readonly fraction: number;
  readonly threats: number;
  readonly requests: number;
  readonly requestsPerSecond: number | null;
  readonly etaSeconds: number | null;
}

export class ProgressReporter {
  readonly #options: ProgressReporterOptions;
  readonly #reads: ProgressReads;
  readonly #started: Date;
  /** Each organization's last progress seen: kept once its run ends, so totals never go back. */
  readonly #seen = new Map<string, PlanProgress>();
  readonly #finished = new Set<string>();
  #timer: NodeJS.Timeout | undefined;
  #lastText = '';
  #records = 0;
  /** The largest fraction reported: the pages of open windows are estimated, and an estimate never moves the line back. */
  #fraction = 0;

  constructor(options: ProgressReporterOptions) {
    this.#options = options;
    this.#reads = new ProgressReads(options.sqlite);
    this.#started = options.clock();
  }

  start(): void {
    const { line, logIntervalMs } = this.#options;
    const tick = line ? () => this.#draw(line) : () => this.#log(false);
    this.#timer = setInterval(() => {
      try {
        tick();
      } catch (error) {
        // Progress is a courtesy: a read that fails must not fail the run it describes.
        this.#options.logger.debug({ error: errorMessage(error) }, 'progress could not be read');
      }
    }, line ? LINE_INTERVAL_MS : logIntervalMs);
    this.#timer.unref();
    if (line) line.draw(`${this.#options.label}: starting ${this.#options.organizations.length} organization${this.#options.organizations.length === 1 ? '' : 's'}…`);
  }

  /**
   * Stops the updates and leaves the summary: a line on the terminal, a last record in the log if
   * any was written. Never throws: a summary that cannot be read must not hide how the runs ended.
   */
  finish(summaries: readonly RunSummary[]): void {
    clearInterval(this.#timer);
    try {
      this.#summarize(summaries);
    } catch (error) {
      this.#options.line?.clear();
      this.#options.logger.debug({ error: errorMessage(error) }, 'progress could not be read');
    }
  }

  #summarize(summaries: readonly RunSummary[]): void {
    const { line, label } = this.#options;
    for (const summary of summaries) this.#summarized(summary);
    const totals = this.totals();
    const seconds = (this.#options.clock().getTime() - this.#started.getTime()) / 1000;
    if (line) {
      const failed = summaries.filter((summary) => summary.status !== 'succeeded' && summary.status !== 'skipped').length;
      const outcome = failed === 0 ? 'finished' : `ended with ${failed} run${failed === 1 ? '' : 's'} not succeeded`;
      line.finish(
        `threat-mirror: ${label} ${outcome} in ${formatDuration(seconds)}: ${totals.organizationsDone}/${totals.organizationsTotal} organizations, ` +
          `${totals.daysDone}/${totals.daysTotal} days, ${totals.threats.toLocaleString('en-US')} threats, ${totals.requests.toLocaleString('en-US')} requests` +
          (seconds > 0 ? ` (${(totals.requests / seconds).toFixed(1)}/s)` : ''),
      );
    } else if (this.#records > 0) {
      this.#log(true);
    }
  }

  /** The numbers now: reads the running runs, and notices those that ended since. */
  totals(): ProgressTotals {
    const now = this.#options.clock();
    const running = runningProgress(this.#reads, this.#options.organizations, now, this.#options.modes);
    for (const progress of running) if (!this.#finished.has(progress.organization)) this.#seen.set(progress.organization, progress);
    for (const progress of this.#seen.values()) {
      if (this.#finished.has(progress.organization) || running.some((other) => other.runId === progress.runId) || progress.runId === null) continue;
      const run = this.#reads.run(progress.runId);
      if (run !== undefined && run.status !== 'running') this.#ended(progress, run.status, run.pages + run.retries);
    }
    const all = [...this.#seen.values()];
    const unfinished = all.filter((progress) => !this.#finished.has(progress.organization));
    const daysDone = sum(all, (progress) => progress.daysDone);
    const daysTotal = sum(all, (progress) => progress.daysTotal);
    const requests = sum(all, (progress) => progress.requests ?? 0);
    const elapsedSeconds = (now.getTime() - this.#started.getTime()) / 1000;
    const etas = unfinished.map((progress) => progress.etaSeconds);
    return {
      organizationsDone: this.#finished.size,
      organizationsTotal: this.#options.organizations.length,
      daysDone,
      daysTotal,
      fraction: (this.#fraction = Math.max(this.#fraction, daysTotal === 0 ? 0 : Math.min(sum(all, (progress) => progress.daysWalked), daysTotal) / daysTotal)),
      threats: sum(all, (progress) => progress.threats),
      requests,
      requestsPerSecond: elapsedSeconds > 0 && requests > 0 ? Math.round((requests / elapsedSeconds) * 10) / 10 : null,
      // Organizations run side by side: done when the slowest is; unknown while any has no pace yet.
      etaSeconds: unfinished.length === 0 ? 0 : etas.some((eta) => eta === null) ? null : Math.max(...(etas as number[])),
    };
  }

  /** A run that ended keeps its last numbers (its plan is gone from the file); a success counts every day. */
  #ended(progress: PlanProgress, status: string, requests: number): void {
    this.#finished.add(progress.organization);
    const succeeded = status === 'succeeded';
    this.#seen.set(progress.organization, {
      ...progress,
      daysDone: succeeded ? progress.daysTotal : progress.daysDone,
      daysWalked: succeeded ? progress.daysTotal : progress.daysWalked,
      fraction: succeeded ? 1 : progress.fraction,
      percent: succeeded ? 100 : progress.percent,
      requests: Math.max(requests, progress.requests ?? 0),
      requestsPerSecond: null,
      etaSeconds: null,
    });
  }

  /** A run's summary has the last word on its numbers (it may have ended before any read saw it). */
  #summarized(summary: RunSummary): void {
    if (summary.stream !== 'threats' || !this.#options.modes.includes(summary.mode)) return;
    const seen = this.#seen.get(summary.organization);
    const days = daysBetween(summary.rangeStart, summary.rangeEnd);
    const progress: PlanProgress = seen ?? {
      organization: summary.organization,
      mode: summary.mode,
      state: 'running',
      runId: summary.runId,
      rangeStart: summary.rangeStart,
      rangeEnd: summary.rangeEnd,
      daysDone: 0,
      daysWalked: 0,
      daysTotal: days,
      fraction: 0,
      percent: 0,
      threats: 0,
      requests: 0,
      startedAt: null,
      requestsPerSecond: null,
      etaSeconds: null,
    };
    this.#finished.delete(summary.organization);
    this.#ended({ ...progress, threats: Math.max(progress.threats, summary.records) }, summary.status, summary.pages + summary.retries);
  }

  /** `backfill 23%: 28/120 days, 0/2 orgs done, 6,790 threats, 143.2 req/s, ETA 3s`: short enough for 80 columns. */
  #draw(line: TerminalLine): void {
    const totals = this.totals();
    const parts = [
      `${this.#options.label} ${Math.floor(totals.fraction * 100)}%: ${totals.daysDone}/${totals.daysTotal} days`,
      `${totals.organizationsDone}/${totals.organizationsTotal} orgs done`,
      `${totals.threats.toLocaleString('en-US')} threats`,
    ];
    if (totals.requestsPerSecond !== null) parts.push(`${totals.requestsPerSecond.toFixed(1)} req/s`);
    if (totals.etaSeconds !== null && totals.organizationsDone < totals.organizationsTotal) parts.push(`ETA ${formatDuration(totals.etaSeconds)}`);
    const text = parts.join(', ');
    if (text === this.#lastText) return;
    this.#lastText = text;
    line.draw(text);
  }

  #log(done: boolean): void {
    const totals = this.totals();
    if (totals.daysTotal === 0 && !done) return;
    this.#records += 1;
    const { fraction, ...numbers } = totals;
    const runs = [...this.#seen.values()].map(({ organization, mode, daysDone, daysTotal, percent, threats, requests, requestsPerSecond, etaSeconds }) => ({
      organization,
      mode,
      daysDone,
      daysTotal,
      percent,
      threats,
      requests,
      requestsPerSecond,
      etaSeconds,
    }));
    this.#options.logger.info({ ...numbers, percent: percentOf(fraction), runs, ...(done ? { done: true } : {}) }, 'progress');
  }
}

function sum<T>(items: readonly T[], value: (item: T) => number): number {
  return items.reduce((total, item) => total + value(item), 0);
}

/** Runs `work` (the command's runs) with their progress shown, and ends it with the summaries it returns. */
export async function withProgress<T>(options: ProgressReporterOptions, work: () => Promise<T>, summariesOf: (result: T) => readonly RunSummary[]): Promise<T> {
  const reporter = new ProgressReporter(options);
  reporter.start();
  let summaries: readonly RunSummary[] = [];
  try {
    const result = await work();
    summaries = summariesOf(result);
    return result;
  } finally {
    reporter.finish(summaries);
  }
}
