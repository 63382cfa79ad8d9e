// What a writing command opens, in order, and closes in reverse: the writer lock, the writer
// thread (which opens and migrates the file: the only writable connection), the main thread's
// read-only connection, and the API client's options.
import { mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import type { Logger } from 'pino';
import { RequestBudgets } from '../api/request-budget.js';
import type { ApiObserver } from '../api/retry.js';
import type { Config } from '../config.js';
import { openDatabaseReadOnly } from '../db/open-database.js';
import { MirrorReads } from '../db/read/mirror-reads.js';
import { LOOKBACK_DAYS_KEY, RECONCILE_DAYS_KEY } from '../db/setting-keys.js';
import type { Database } from '../db/sqlite.js';
import { WriterClient } from '../db/writer/writer-client.js';
import { acquireWriterLock } from '../db/writer-lock.js';
import { type Clock, systemClock } from '../lib/days.js';
import { type Releaser, releaseAll } from '../lib/release-all.js';
import { assertWritable, unwritableFolderError } from '../lib/writable-path.js';
import type { SyncDeps, SyncObserver } from '../sync/run-contract.js';
import { ServiceNotices } from './service-notices.js';

export interface WriterSession {
  readonly deps: SyncDeps;
  /** The main thread's read-only connection: progress, readiness, what the sync reads. */
  readonly reader: Database;
  /** Waits for the pages handed to the writer, then closes the reader, the writer thread and the lock. */
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
export async function openWriterSession(options: WriterSessionOptions): Promise<WriterSession> {
  const { config, logger, clock } = options;
  try {
    mkdirSync(dirname(resolve(config.dbPath)), { recursive: true });
  } catch (error) {
    throw unwritableFolderError(config.dbPath, error) ?? error;
  }
  assertWritable(config.dbPath);
  const lock = acquireWriterLock(config.dbPath);
  // Released in reverse order of acquisition, also when a later step fails, each whatever the others do.
  const releasers: Releaser[] = [() => lock.release()];
  try {
    const writer = new WriterClient({
      dbPath: config.dbPath,
      maxPageBytes: config.maxResponseBytes,
      autoCheckpoint: config.checkpoints === 'auto',
      now: clock().toISOString(),
    });
    releasers.push(() => writer.close());
    const started = await writer.ready;
    if (started.abandonedRuns > 0) logger.warn({ runs: started.abandonedRuns }, 'marked runs of a process that stopped mid-way as interrupted; their plans resume now');
    if (started.backfilled > 0) logger.info({ threats: started.backfilled }, 'derived lookup columns and change_seq for threats written by an earlier version');
    // Readers see in sync_status how far back each run re-scans (only those days can show
    // removals), and how old a day's last walk may be before it counts as overdue.
    const now = clock().toISOString();
    await Promise.all([
      writer.call('recordSetting', { key: LOOKBACK_DAYS_KEY, value: String(config.lookbackDays), now }),
      writer.call('recordSetting', { key: RECONCILE_DAYS_KEY, value: String(config.reconcileDays), now }),
    ]);
    // Closed before the writer: its last close then finds no other connection and leaves the
    // file in rollback mode for read-only mounts (writer-connection.ts).
    const reader = openDatabaseReadOnly(config.dbPath);
    releasers.push(() => reader.close());
    return { deps: syncDepsFor(writer, new MirrorReads(reader.sqlite), options), reader: reader.sqlite, close: () => releaseAll(releasers) };
  } catch (error) {
    await releaseAll(releasers);
    throw error;
  }
}

/** What the engine is given: the writer, the reads, the clock, the log, its settings and the API client's options, read from the config. */
function syncDepsFor(writer: WriterClient, reads: MirrorReads, { config, logger, clock, apiObserver, syncObserver }: WriterSessionOptions): SyncDeps {
  return {
    writer,
    reads,
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
      notices: new ServiceNotices({ writer, logger, clock, observer: apiObserver }),
    },
  };
}

/** The clock the config asks for: THREAT_MIRROR_NOW fixes where time starts, and it still moves. */
export function clockFor(config: Pick<Config, 'fixedNow'>): Clock {
  if (config.fixedNow === undefined) return systemClock;
  const startMs = config.fixedNow.getTime();
  const origin = performance.now();
  return () => new Date(startMs + (performance.now() - origin));
}
