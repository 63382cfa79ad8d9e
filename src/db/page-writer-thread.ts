// The page-writer thread: writes pages on its own connection, so the main thread goes on fetching
// and parsing while SQLite works (each threat costs several B-tree writes; see PageWriter).
import { parentPort, workerData } from 'node:worker_threads';
import { Database } from './sqlite.js';
import { type PageInput, PageWriter, type WindowConclusion } from './page-writer.js';
import { checkpointWithoutWaiting, foldWalWithoutWaiting } from './wal-checkpoint.js';
import { applyWriterPragmas } from './writer-pragmas.js';
import { CommitQueue, epochMs } from './commit-queue.js';
import { buildDeferredIndexes, deferLookupIndexes } from './deferred-indexes.js';

export type WriterRequest =
  | { readonly id: number; readonly input: PageInput; readonly sentAt: number }
  | { readonly id: number; readonly window: WindowToRecord }
  | { readonly id: number; readonly conclusion: WindowConclusion }
  | { readonly id: number; readonly checkpoint: true }
  | { readonly id: number; readonly close: true };

/** A new window of a plan, recorded in order with the pages around it. */
export interface WindowToRecord {
  readonly planId: number;
  readonly windowStart: string;
  readonly windowEnd: string;
}

export interface WriterThreadData {
  readonly dbPath: string;
  /** False when a replicator (Litestream) does the checkpoints: see THREAT_MIRROR_CHECKPOINTS. */
  readonly autoCheckpoint: boolean;
}

export type WriterResponse = { readonly id: number; readonly result?: unknown; readonly error?: { message: string; code?: string } };

/** What the thread did before it took pages: how many old rows it gave lookup columns, how many indexes it deferred. */
export interface WriterStart {
  readonly backfilled: number;
  /** Lookup indexes left to build at the end (the mirror was empty: see deferred-indexes.ts). */
  readonly deferredIndexes: number;
}

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
 * service the writer is busy and they wait for the end, as before. (20,000 threats at 25 ms: the
 * build at the end took ~55 ms after the last answer; measured.)
 */
const BUILD_EARLY_AFTER_MS = 1_000;
const BUSY_SHARE_TO_BUILD_EARLY = 0.3;

/** id 0 answers the start: ready (a WriterStart), or why the thread could not open the database. */
const port = parentPort;
if (port) {
  // Plain better-sqlite3, no drizzle: this thread's isolate loads only what writing pages needs.
  let sqlite: Database;
  let writer: PageWriter;
  let deferred = 0;
  let autoCheckpoint = true;
  try {
    const data = workerData as WriterThreadData;
    sqlite = new Database(data.dbPath);
    autoCheckpoint = data.autoCheckpoint;
    applyWriterPragmas(sqlite, { autoCheckpoint });
    writer = new PageWriter(sqlite);
    // Rows from before the lookup columns existed get theirs (and a place in the change feed)
    // before any page: this writer's change_seq counter then goes on from theirs.
    const backfilled = writer.backfillLookups();
    // An empty mirror's first backfill builds its lookup indexes at the next checkpoint or close.
    // Not when a replicator does the checkpoints: a daemon would then build them only at its exit.
    deferred = data.autoCheckpoint ? deferLookupIndexes(sqlite, new Date().toISOString()) : 0;
    const start: WriterStart = { backfilled, deferredIndexes: deferred };
    port.postMessage({ id: 0, result: start } satisfies WriterResponse);
  } catch (error) {
    port.postMessage({ id: 0, error: { message: (error as Error).message } } satisfies WriterResponse);
    throw error;
  }
  let unfolded = 0;
  let firstCommitAt: number | undefined;
  let busyMs = 0;
  // Pages wait for others and commit together, each with its own cursor (see CommitQueue).
  const queue = new CommitQueue((batch) => {
    const started = epochMs();
    firstCommitAt ??= started;
    for (const entry of batch) unfolded += entry.input.threats.length;
    const outcomes = writer.writeBatch(batch.map((entry) => entry.input));
    busyMs += epochMs() - started;
    return outcomes;
  }, {
    answer: (batch, outcomes) => {
      batch.forEach((entry, index) => {
        const outcome = outcomes[index];
        if (!outcome?.error) {
          port.postMessage({ id: entry.id, result: outcome?.result } satisfies WriterResponse);
          return;
        }
        const code = (outcome.error as { code?: unknown }).code;
        port.postMessage({ id: entry.id, error: { message: outcome.error.message, ...(typeof code === 'string' ? { code } : {}) } } satisfies WriterResponse);
      });
    },
    whileWaiting: () => {
      if (deferred > 0 && firstCommitAt !== undefined) {
        const writingMs = epochMs() - firstCommitAt;
        if (writingMs >= BUILD_EARLY_AFTER_MS && busyMs <= BUSY_SHARE_TO_BUILD_EARLY * writingMs) {
          buildDeferredIndexes(sqlite);
          deferred = 0;
        }
      }
      if (!autoCheckpoint || unfolded < FOLD_AFTER_RECORDS) return;
      unfolded = 0;
      foldWalWithoutWaiting(sqlite);
    },
  });
  // Before a checkpoint or the close, the pages sent before it commit, and the lookup indexes of a
  // first backfill are built: a checkpoint comes between runs, and the close at the end.
  const flush = (): void => {
    queue.flush();
    if (deferred > 0) {
      buildDeferredIndexes(sqlite);
      deferred = 0;
    }
  };
  port.on('message', (request: WriterRequest) => {
    if ('close' in request) {
      flush();
      sqlite.close();
      port.postMessage({ id: request.id } satisfies WriterResponse);
      port.close();
      return;
    }
    if ('checkpoint' in request) {
      // After the pages sent before it, on this thread: the main thread never waits for it.
      flush();
      port.postMessage({ id: request.id, result: checkpointWithoutWaiting(sqlite) } satisfies WriterResponse);
      return;
    }
    if ('conclusion' in request) {
      // At once, like a new window: its window's last page has committed (the sync waited for
      // it), and the pages queued meanwhile belong to other windows.
      try {
        port.postMessage({ id: request.id, result: writer.conclude(request.conclusion) } satisfies WriterResponse);
      } catch (error) {
        const code = (error as { code?: unknown }).code;
        port.postMessage({ id: request.id, error: { message: (error as Error).message, ...(typeof code === 'string' ? { code } : {}) } } satisfies WriterResponse);
      }
      return;
    }
    if ('window' in request) {
      // At once, in its own transaction: the pages queued before it belong to windows recorded
      // earlier, and this window's pages arrive after it.
      try {
        writer.addWindow(request.window);
        port.postMessage({ id: request.id } satisfies WriterResponse);
      } catch (error) {
        port.postMessage({ id: request.id, error: { message: (error as Error).message } } satisfies WriterResponse);
      }
      return;
    }
    queue.add(request);
  });
}
