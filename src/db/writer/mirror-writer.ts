// The writer thread's side of every write: the mirror's one writable connection, the write
// statements prepared on it (../sql/), and an answer for each kind of call (protocol.ts). Pages
// wait for their group commit (commit-queue.ts); every other call commits at once, in its own
// transaction, before pages still waiting: the sync sends none that must follow a page it has not
// seen committed.
import { randomUUID } from 'node:crypto';
import { FEED_ID_KEY } from '../setting-keys.js';
import { buildDeferredIndexes, deferLookupIndexes } from '../sql/deferred-indexes.js';
import { prepareWriteStatements, type WriteStatements } from '../sql/statements.js';
import type { DeriveLookupFields } from '../sql/threat-rows.js';
import type { Database } from '../sqlite.js';
import { CommitQueue, epochMs, type QueuedPage } from './commit-queue.js';
import { PageWriter, type PageOutcome } from './page-writer.js';
import type { CallInput, CallResult, WriterCallKind, WriterClosed, WriterRequest, WriterStart } from './protocol.js';
import { ReportPages } from './report-pages.js';
import { upgradeLookupRules } from './lookup-rules-upgrade.js';
import { applyScope } from './scope-change.js';
import { configureOrganizations } from './configured-organizations.js';
import { checkpointWithoutWaiting, foldWalWithoutWaiting, type WalCheckpoint } from './wal-checkpoint.js';
import { closeWriterConnection } from './writer-connection.js';
import { WriteStamps } from './write-stamps.js';

/** Every call answered at once, each in a transaction of its own. */
type Handlers = { readonly [K in Exclude<WriterCallKind, 'page' | 'checkpointWal'>]: (input: CallInput<K>) => CallResult<K> };

/** How a call ends: its answer, or the error the caller gets. */
export type Answer = (id: number, outcome: { readonly result: unknown } | { readonly error: Error }) => void;

/**
 * Records committed since the WAL was last folded into the file after which the writer folds it
 * while pages wait for a commit (a few MB of WAL): the close, which the run waits for, then folds
 * only the rest. Without idle time (a fast service) no fold happens here, and SQLite's automatic
 * checkpoint every ~40 MB does it (writer-pragmas.ts).
 */
const FOLD_AFTER_RECORDS = 2_000;

/**
 * A first backfill's lookup indexes are built early, at a moment the writer waits for pages, once
 * it has been writing this long and busy at most BUSY_SHARE_TO_BUILD_EARLY of it: the service is
 * the bottleneck, so keeping the indexes row by row from then on costs no wall time, the build is
 * small, and lookups use the indexes for the rest of the backfill instead of scanning. With a fast
 * service the writer is busy and they wait for the end. (20,000 threats at 25 ms: the build at the
 * end took ~55 ms after the last answer; measured.)
 */
const BUILD_EARLY_AFTER_MS = 1_000;
const BUSY_SHARE_TO_BUILD_EARLY = 0.3;

export class MirrorWriter {
  readonly #sqlite: Database;
  readonly #autoCheckpoint: boolean;
  readonly #statements: WriteStatements;
  readonly #stamps: WriteStamps;
  readonly #pages: PageWriter;
  readonly #handlers: Handlers;
  readonly #queue: CommitQueue<PageOutcome[]>;
  readonly #answer: Answer;
  /** Lookup indexes a first backfill left to build (sql/deferred-indexes.ts). */
  #deferred = 0;
  #unfolded = 0;
  #firstCommitAt: number | undefined;
  #busyMs = 0;

  constructor(sqlite: Database, options: { readonly autoCheckpoint: boolean; readonly answer: Answer; readonly stampsAfterMs?: number | undefined }) {
    this.#sqlite = sqlite;
    this.#stamps = new WriteStamps(options.stampsAfterMs);
    this.#autoCheckpoint = options.autoCheckpoint;
    this.#answer = options.answer;
    this.#statements = prepareWriteStatements(sqlite);
    this.#pages = new PageWriter(sqlite, { statements: this.#statements, stamps: this.#stamps });
    this.#handlers = this.#handlersOf(new ReportPages(this.#statements.reports, this.#statements.rejected, this.#statements.runs));
    // Pages wait for others and commit together, each with its own cursor (see CommitQueue).
    this.#queue = new CommitQueue((batch) => this.#commit(batch), {
      answer: (batch, outcomes) => batch.forEach((entry, index) => this.#answer(entry.id, outcomeOf(outcomes[index]))),
      whileWaiting: () => this.#whileWaiting(),
    });
  }

  /**
   * Before any call: the change feed's counter goes on from at least this start's time (ThreatRows
   * startFeedAt), the feed gets an id if it has none (a file built anew, or restored from a
   * replica: restored-file.ts forgets its primary's), runs a dead process left marked running are marked interrupted, rows from
   * before the lookup columns existed get theirs (and a place in the change feed: this writer's
   * counter then goes on from theirs), rows derived under older lookup rules are derived again
   * (lookup-rules-upgrade.ts), and an empty mirror's first backfill defers its lookup
   * indexes to the next checkpoint or the close. Not when a replicator does the checkpoints: a
   * daemon would then build them only at its exit.
   */
  async start(now: string): Promise<Omit<WriterStart, 'walSwitch'>> {
    this.#statements.threats.startFeedAt(Date.parse(now) * 1000);
    const { settings } = this.#statements;
    if (settings.value(FEED_ID_KEY) === undefined) this.#inTransaction(() => settings.record(FEED_ID_KEY, randomUUID(), now));
    const abandonedRuns = this.#inTransaction(() => this.#statements.runs.markAbandoned(now));
    const derive = async (): Promise<DeriveLookupFields> => (await import('../../url/lookup-fields.js')).deriveLookupFields;
    const backfilled = await this.#statements.threats.backfillLookups(derive);
    const lookupRules = (await upgradeLookupRules(this.#statements, (write) => this.#inTransaction(write), derive, now)) ?? null;
    this.#deferred = this.#autoCheckpoint ? deferLookupIndexes(this.#sqlite, now) : 0;
    return { abandonedRuns, backfilled, lookupRules, deferredIndexes: this.#deferred };
  }

  /** Takes one call, and answers it (a page once its group commit is done; a close once the connection is closed). */
  take(request: WriterRequest): void {
    if (request.kind === 'page') return this.#queue.add({ id: request.id, input: request.input, sentAt: request.sentAt });
    try {
      if (request.kind === 'close') return this.#answer(request.id, { result: this.close() });
      if (request.kind === 'checkpointWal') return this.#answer(request.id, { result: this.checkpointWal() });
      const handler = this.#handlers[request.kind] as (input: unknown) => unknown;
      this.#answer(request.id, { result: this.#inTransaction(() => handler(request.input)) });
    } catch (error) {
      this.#answer(request.id, { error: error instanceof Error ? error : new Error(String(error)) });
    }
  }

  /** After the pages sent before it, on this thread: the main thread never waits for it. */
  checkpointWal(): WalCheckpoint {
    this.#flush();
    return checkpointWithoutWaiting(this.#sqlite);
  }

  /** Lets the pages sent before it commit, builds what was deferred, and closes the connection. */
  close(): WriterClosed {
    this.#flush();
    closeWriterConnection(this.#sqlite, { autoCheckpoint: this.#autoCheckpoint });
    return { lastStampMs: this.#stamps.lastMs };
  }

  #handlersOf(reports: ReportPages): Handlers {
    const { cursors, plans, runs, settings, ledger, reconcile } = this.#statements;
    const stamp = (now: string): string => this.#stamps.next(now);
    return {
      conclusion: (conclusion) => this.#pages.conclude(conclusion),
      carriedConclusion: (conclusion) => this.#pages.concludeCarried(conclusion),
      openWindow: (window) => cursors.add(window),
      addWindows: ({ windows }) => plans.addWindows(windows),
      startRun: (run) => runs.start(run),
      finishRun: (end) => runs.finish(end),
      createPlan: (plan) => plans.create(plan),
      extendPlan: ({ plan, rangeEnd }) => plans.extend(plan, rangeEnd),
      finishPlan: ({ planId, completeThrough, now }) => {
        plans.delete({ planIds: [planId] });
        if (completeThrough !== null) plans.advanceCompleteThrough(completeThrough.organization, completeThrough.day, now);
      },
      deletePlans: (selection) => plans.delete(selection),
      recordSetting: ({ key, value, now }) => settings.record(key, value, now),
      reportPage: ({ now, ...page }) => reports.write(page, stamp(now)),
      finishReportWalk: ({ now, ...walk }) => reports.finishWalk(walk, stamp(now)),
      disableReports: ({ now, ...disabled }) => reports.disable(disabled, now),
      linkReportThreats: ({ organization }) => this.#statements.reports.linkThreats(organization),
      recordObservedSize: (size) => ledger.recordObservedSize(size),
      recordReconcileCycle: ({ organization, at }) => reconcile.recordCycleCompleted(organization, at),
      applyScope: (scope) => applyScope(this.#statements.scopes, plans, scope),
      configureOrganizations: (configured) => configureOrganizations(this.#statements.scopes, configured),
      mirrorAllowlist: ({ list, now }) => this.#statements.allowlist.mirror(list, now),
    };
  }

  /** BEGIN IMMEDIATE: a replicator (Litestream) writes to the file too; wait for it, never fail on it. */
  #inTransaction<T>(write: () => T): T {
    return this.#sqlite.transaction(write).immediate();
  }

  #commit(batch: readonly QueuedPage[]): PageOutcome[] {
    const started = epochMs();
    this.#firstCommitAt ??= started;
    for (const entry of batch) this.#unfolded += entry.input.threats.length;
    const outcomes = this.#pages.writeBatch(batch.map((entry) => entry.input));
    this.#busyMs += epochMs() - started;
    return outcomes;
  }

  #whileWaiting(): void {
    if (this.#deferred > 0 && this.#firstCommitAt !== undefined) {
      const writingMs = epochMs() - this.#firstCommitAt;
      if (writingMs >= BUILD_EARLY_AFTER_MS && this.#busyMs <= BUSY_SHARE_TO_BUILD_EARLY * writingMs) this.#buildDeferred();
    }
    if (!this.#autoCheckpoint || this.#unfolded < FOLD_AFTER_RECORDS) return;
    this.#unfolded = 0;
    foldWalWithoutWaiting(this.#sqlite);
  }

  /** The pages sent before commit, and a first backfill's lookup indexes are built: a WAL checkpoint comes between runs, the close at the end. */
  #flush(): void {
    this.#queue.flush();
    if (this.#deferred > 0) this.#buildDeferred();
  }

  #buildDeferred(): void {
    buildDeferredIndexes(this.#sqlite);
    this.#deferred = 0;
  }
}

function outcomeOf(outcome: PageOutcome | undefined): { result: unknown } | { error: Error } {
  return outcome?.error ? { error: outcome.error } : { result: outcome?.result };
}
