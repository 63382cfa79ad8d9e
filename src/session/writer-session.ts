// Wires the writer's parts together: lock, database, store, API options. Closed in reverse order.
import { mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import type { Logger } from 'pino';
import { RequestBudgets } from '../api/request-budget.js';
import type { ApiObserver } from '../api/retry.js';
import type { Config } from '../config.js';
import { MirrorStore } from '../db/mirror-store.js';
import { openDatabase } from '../db/open-database.js';
import { type PageSink, PageWriterWorker } from '../db/page-writer-worker.js';
import { acquireWriterLock } from '../db/writer-lock.js';
import { type Clock, systemClock } from '../lib/days.js';
import { ServiceNotices } from './service-notices.js';
import type { SyncDeps, SyncObserver } from '../sync/run-contract.js';
import { assertWritable, unwritableFolderError } from '../lib/writable-path.js';
import { type Releaser, releaseAll } from '../lib/release-all.js';

export interface WriterSession {
  readonly deps: SyncDeps;
  /** Waits for the pages handed to the writer, then closes the writer thread, the database and the lock. */
  close(): Promise<void>;
}

export interface WriterSessionOptions {
  readonly config: Config;
  readonly logger: Logger;
  readonly clock: Clock;
  readonly apiObserver?: ApiObserver | undefined;
  readonly syncObserver?: SyncObserver | undefined;
}

/** Takes the writer lock before touching the file, so a second writer never migrates or writes. */
export async function openWriterSession({ config, logger, clock, apiObserver, syncObserver }: WriterSessionOptions): Promise<WriterSession> {
  try {
    mkdirSync(dirname(resolve(config.dbPath)), { recursive: true });
  } catch (error) {
    throw unwritableFolderError(config.dbPath, error) ?? error;
  }
  assertWritable(config.dbPath);
  const lock = acquireWriterLock(config.dbPath);
  // Released in reverse order of acquisition, also when a later step fails, each whatever the others do.
  const releasers: Releaser[] = [() => lock.release()];
  const release = (): Promise<void> => releaseAll(releasers);
  try {
    // With a replicator, no connection checkpoints. Otherwise the main connection's commits may
    // run SQLite's automatic checkpoint once the WAL passes ~40 MB: PASSIVE, it never waits for a
    // reader. Turning it off there too let a backfill of 4 MB pages outrun the writer thread and
    // exhaust the 48 MB heap under load (measured); the between-run checkpoints are the thread's.
    const opened = openDatabase(config.dbPath, { autoCheckpoint: config.checkpoints === 'auto' });
    releasers.push(() => opened.close());
    const abandoned = new MirrorStore(opened, noPages).markAbandonedRuns(clock().toISOString());
    if (abandoned > 0) logger.warn({ runs: abandoned }, 'marked runs of a process that stopped mid-way as interrupted; their plans resume now');
    // Not waited for: the thread starts (~130 ms here) while the first pages are fetched.
    const pages = new PageWriterWorker(config.dbPath, config.maxResponseBytes, config.checkpoints === 'auto');
    releasers.push(() => pages.close());
    pages.ready.then(
      ({ backfilled }) => {
        if (backfilled > 0) logger.info({ threats: backfilled }, 'derived lookup columns and change_seq for threats written by an earlier version');
      },
      () => undefined, // the first page's write fails with the reason
    );
    const store = new MirrorStore(opened, pages);
    // Readers see in sync_status how far back each run re-scans: only those days can show removals.
    store.recordSetting('lookback_days', String(config.lookbackDays), clock().toISOString());
    // And how old a day's last walk may be before sync_status counts it overdue.
    store.recordSetting('reconcile_days', String(config.reconcileDays), clock().toISOString());
    const deps = syncDepsFor(config, store, { logger, clock, apiObserver, syncObserver });
    return { deps, close: release };
  } catch (error) {
    await release();
    throw error;
  }
}

/** What the engine is given: the store, the clock, the log, its settings and the API client's options, read from the config. */
function syncDepsFor(config: Config, store: MirrorStore, { logger, clock, apiObserver, syncObserver }: Omit<WriterSessionOptions, 'config'>): SyncDeps {
  return {
    store,
    clock,
    logger,
    observer: syncObserver,
    settings: {
      initialDays: config.initialDays,
      lookbackDays: config.lookbackDays,
      concurrency: config.concurrency,
      mirrorReports: config.reports,
      reportsRecentDays: config.reportsRecentDays,
      reconcileDays: config.reconcileDays,
      reconcileMaxRequests: config.reconcileMaxRequests,
    },
    api: {
      apiUrl: config.apiUrl,
      timeoutMs: config.requestTimeoutMs,
      maxResponseBytes: config.maxResponseBytes,
      retry: { maxRetries: config.maxRetries, minDelayMs: config.retryMinMs, maxDelayMs: config.retryMaxMs, maxRetryAfterMs: config.retryAfterMaxMs },
      budgets: new RequestBudgets({ concurrency: config.concurrency, maxRequestsPerSecond: config.maxRequestsPerSecond }),
      logger,
      observer: apiObserver,
      notices: new ServiceNotices(store, logger, clock, apiObserver),
    },
  };
}

/** For the start-up bookkeeping that runs before the writer thread exists: it writes no pages. */
const noPages: PageSink = {
  write: () => Promise.reject(new Error('no page writer yet')),
  addWindow: () => Promise.reject(new Error('no page writer yet')),
  conclude: () => Promise.reject(new Error('no page writer yet')),
  checkpoint: () => Promise.reject(new Error('no page writer yet')),
  close: () => Promise.resolve(),
};

/** The clock the config asks for: THREAT_MIRROR_NOW fixes where time starts, and it still moves. */
export function clockFor(config: Pick<Config, 'fixedNow'>): Clock {
  if (config.fixedNow === undefined) return systemClock;
  const startMs = config.fixedNow.getTime();
  const origin = performance.now();
  return () => new Date(startMs + (performance.now() - origin));
}
