// The main thread's handle on the file: one object composed of the modules that each own the SQL
// of one concern (run-state.ts, plans.ts, day-ledger.ts, settings.ts, report-writer.ts, …), plus
// the page sink. Every write here is a single synchronous BEGIN IMMEDIATE transaction.
import type { DayDigest } from './content-hash.js';
import { DayLedger, type RecordedDay } from './day-ledger.js';
import { MirrorContents } from './mirror-contents.js';
import type { OpenedDatabase } from './open-database.js';
import type { PageInput, PageResult, WindowConclusion } from './page-writer.js';
import type { PageSink } from './page-writer-worker.js';
import { type Plan, PlanStore, type PlanWindow } from './plans.js';
import { ReconcileLedger } from './reconcile-ledger.js';
import { ReportWriter } from './report-writer.js';
import { type RunStream, RunStateWriter, type SyncMode } from './run-state.js';
import type { RunStatus } from './schema.js';
import { SettingsWriter } from './settings.js';
import type { LookupFields } from '../url/lookup-fields.js';
import type { WalCheckpoint } from './wal-checkpoint.js';
import { immediately } from './write-transaction.js';

export type { PageCounts, PageResult, RemovalCandidate } from './page-writer.js';
export type { Plan, PlanWindow } from './plans.js';
export type { SyncMode } from './run-state.js';

/** A page as the sync hands it over: the store gives it its write stamp. */
export type CommitPageInput = Omit<PageInput, 'stamp' | 'lookups'> & { readonly now: string };

/** A window's conclusion as the sync hands it over: the store gives it its write stamp. */
export type ConcludeWindowInput = Omit<WindowConclusion, 'stamp' | 'lookups'> & { readonly now: string };

export class MirrorStore {
  readonly #opened: OpenedDatabase;
  readonly #pages: PageSink;
  readonly #runs: RunStateWriter;
  readonly #plans: PlanStore;
  readonly #ledger: DayLedger;
  readonly #settings: SettingsWriter;
  readonly #contents: MirrorContents;
  #lastStampMs = 0;
  /**
   * The lookup columns' derivation, loaded at the first page rather than at start-up: the Public
   * Suffix List's ~15 ms of compiling then overlaps the requests in flight.
   */
  #derive: ((type: string, content: string) => LookupFields) | undefined;
  #deriving: Promise<{ deriveLookupFields: (type: string, content: string) => LookupFields }> | undefined;

  /** `pages` writes the pages of threats (a thread of its own in production). */
  constructor(opened: OpenedDatabase, pages: PageSink) {
    this.#opened = opened;
    this.#pages = pages;
    this.#runs = new RunStateWriter(opened.sqlite);
    this.#plans = new PlanStore(opened);
    this.#ledger = new DayLedger(opened.sqlite);
    this.#settings = new SettingsWriter(opened.sqlite, opened.db);
    this.#contents = new MirrorContents(opened.sqlite);
    this.reportWriter = new ReportWriter(opened.sqlite, this.#runs);
    this.reconcile = new ReconcileLedger(opened.sqlite, this.#ledger);
  }

  /** Which days are due for reconciliation, and when a cycle completed. */
  readonly reconcile: ReconcileLedger;

  /** The reports stream's writes (GET /organization/reports). */
  readonly reportWriter: ReportWriter;

  get sqlite(): OpenedDatabase['sqlite'] {
    return this.#opened.sqlite;
  }

  // Runs (run-state.ts: the SQL the page-writer thread's counts share).

  /** A run still marked running when the writer starts belonged to a process that died. */
  markAbandonedRuns(now: string): number {
    return immediately(this.sqlite, () => this.#runs.markAbandoned(now));
  }

  startRun(organization: string, mode: SyncMode, rangeStart: string, rangeEnd: string, now: string, stream: RunStream = 'threats'): number {
    return immediately(this.sqlite, () => this.#runs.start(organization, stream, mode, rangeStart, rangeEnd, now));
  }

  finishRun(runId: number, status: Exclude<RunStatus, 'running'>, error: string | null, now: string): void {
    immediately(this.sqlite, () => this.#runs.finish(runId, status, error, now));
  }

  // Plans, their windows' cursors and the checkpoint (plans.ts).

  completeThrough(organization: string): string | null {
    return this.#plans.completeThrough(organization);
  }

  /** Moves the checkpoint to `day` unless it is already there or later: it never goes back. */
  advanceCompleteThrough(organization: string, day: string, now: string): void {
    this.#plans.advanceCompleteThrough(organization, day, now);
  }

  /** The unfinished plan of this organization and mode, the oldest first. */
  findOpenPlan(organization: string, mode: SyncMode): Plan | undefined {
    return this.#plans.findOpenPlan(organization, mode);
  }

  /** Every unfinished plan of this organization and mode, the oldest first. */
  openPlans(organization: string, mode: SyncMode): Plan[] {
    return this.#plans.openPlans(organization, mode);
  }

  createPlan(organization: string, mode: SyncMode, rangeStart: string, rangeEnd: string, now: string): Plan {
    return this.#plans.createPlan(organization, mode, rangeStart, rangeEnd, now);
  }

  /** A day has begun since the plan was made: it reaches the new day too, and its windows walked before their last day ended are walked again. */
  extendPlan(plan: Plan, rangeEnd: string): Plan {
    return this.#plans.extendPlan(plan, rangeEnd);
  }

  /** Records a window at once, on this thread (a reconciliation plans all its windows before it walks them). */
  addWindow(planId: number, windowStart: string, windowEnd: string): PlanWindow {
    return this.#plans.addWindow(planId, windowStart, windowEnd);
  }

  /**
   * A new window, recorded by the writer thread in order with the pages: before any page of it
   * commits, and after every window opened before it, so a killed run leaves a prefix of the
   * plan's windows and the next one plans on after them. Returns at once: recorded here, on the
   * main thread, it waited for the writer's lock while a group commit ran, and every window's
   * fetching with it (0.5-0.8 s a run at 200,000 threats and no latency; measured).
   */
  openWindow(planId: number, windowStart: string, windowEnd: string): { window: PlanWindow; recorded: Promise<void> } {
    const recorded = this.#pages.addWindow({ planId, windowStart, windowEnd });
    return { window: { planId, windowStart, windowEnd, nextPage: null, completedAt: null, lastId: null, startedAt: null }, recorded };
  }

  planWindows(planId: number): PlanWindow[] {
    return this.#plans.planWindows(planId);
  }

  deleteOpenPlans(organization: string, mode: SyncMode): void {
    this.#plans.deleteOpenPlans(organization, mode);
  }

  /** Deletes a finished plan and moves the checkpoint in one transaction: a crash keeps both or neither. */
  finishPlan(planId: number, advance: { organization: string; day: string } | null, now: string): void {
    this.#plans.finishPlan(planId, advance, now);
  }

  deletePlan(planId: number): void {
    this.#plans.deletePlan(planId);
  }

  // Pages of threats (the page sink: the page-writer thread in production).

  /**
   * One page and the checkpoint after it, in one transaction: a crash keeps both or neither.
   * The last page of a window also records each day of the window as complete.
   */
  async commitPage(input: CommitPageInput): Promise<PageResult> {
    const { now, ...page } = input;
    const stamp = this.strictlyLaterStamp(now);
    // Pages handed over while it loads wait for it in the order they came; later ones do not wait.
    const derive = this.#derive ?? (await this.#loadDerive());
    // The lookup columns are derived here, on the main thread, which waits on the network, rather
    // than by the writer thread, the bottleneck when the service answers fast: a 1,000,000-threat
    // backfill at no latency, median ~20.1 s against ~21.0 s over four alternating pairs
    // (measured; docs/performance.md).
    const lookups = page.threats.map((threat) => derive(threat.type, threat.content));
    return this.#pages.write({ ...page, stamp, lookups });
  }

  /**
   * What the sync found out about a window's removal candidates (its last page's result listed
   * them): confirmed removals marked, threats still listed written, the window completed or sent
   * back to its first page, in one transaction.
   */
  async concludeWindow(input: ConcludeWindowInput): Promise<PageResult> {
    const { now, ...conclusion } = input;
    const stamp = this.strictlyLaterStamp(now);
    const derive = this.#derive ?? (await this.#loadDerive());
    const lookups = conclusion.found.map((threat) => derive(threat.type, threat.content));
    return this.#pages.conclude({ ...conclusion, stamp, lookups });
  }

  async #loadDerive(): Promise<(type: string, content: string) => LookupFields> {
    this.#derive = (await (this.#deriving ??= import('../url/lookup-fields.js'))).deriveLookupFields;
    return this.#derive;
  }

  /**
   * Each page gets a stamp later than the one before, so `first_seen_at = stamp` marks exactly
   * the rows this page inserted, even when two pages commit within one millisecond.
   */
  strictlyLaterStamp(now: string): string {
    const ms = Math.max(Date.parse(now), this.#lastStampMs + 1);
    this.#lastStampMs = ms;
    return new Date(ms).toISOString();
  }

  /**
   * Between runs, fold the WAL back into the file, on the writer thread: the main thread only
   * awaits the answer. A reader holding an old snapshot keeps it from completing (see
   * checkpointWithoutWaiting); the outcome says so, and the next run tries again.
   */
  checkpointWal(): Promise<WalCheckpoint> {
    return this.#pages.checkpoint();
  }

  // Settings (settings.ts), the ledger (day-ledger.ts) and what the file holds (mirror-contents.ts).

  recordSetting(key: string, value: string, now: string): void {
    this.#settings.record(key, value, now);
  }

  /** Per day, the digest of the organization's current threats (not removed) between two days. */
  dayDigests(organization: string, from: string, to: string): Map<string, DayDigest> {
    return this.#ledger.currentDigests(organization, from, to);
  }

  /** The ledger's days between two days: records and content hash recorded when each was walked. */
  ledgerDays(organization: string, from: string, to: string): Map<string, RecordedDay> {
    return this.#ledger.recordedDays(organization, from, to);
  }

  hasNoReports(organization: string): boolean {
    return this.#contents.hasNoReports(organization);
  }

  /** True when the organization has no threats at all in the file. */
  hasNoThreats(organization: string): boolean {
    return this.#contents.hasNoThreats(organization);
  }
}
