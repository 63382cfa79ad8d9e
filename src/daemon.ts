// The long-running mode: scheduler, metrics and health endpoints around the sync.
import cron from 'node-cron';
import type { Logger } from 'pino';
import type { Config, OrganizationConfig } from './config.js';
import type { Clock } from './days.js';
import { startHttpEndpoints } from './http-endpoints.js';
import type { LookupHandler } from './lookup-http.js';
import type { MirrorMetrics } from './metrics.js';
import type { Mirror } from './mirror.js';
import { checkReadiness } from './readiness.js';
import { startScheduler } from './scheduler.js';
import { syncOrganizations } from './sync/sync-all.js';

export interface DaemonOptions {
  readonly config: Config;
  readonly mirror: Mirror;
  readonly metrics: MirrorMetrics;
  readonly organizations: readonly OrganizationConfig[];
  readonly logger: Logger;
  readonly clock: Clock;
  readonly signal: AbortSignal;
}

/** Runs until the signal aborts; resolves once every part has stopped. */
export async function runDaemon(options: DaemonOptions): Promise<void> {
  const { config, mirror, metrics, organizations, logger, clock, signal } = options;
  const staleAfterSeconds = 2 * schedulePeriodSeconds(config.schedule);
  mirror.deps.store.recordSetting('stale_after_seconds', String(staleAfterSeconds), clock().toISOString());
  const lookup = config.httpPort === undefined ? undefined : await openLookup(config.dbPath, logger);
  const endpoints =
    config.httpPort === undefined
      ? undefined
      : await startHttpEndpoints({
          host: config.httpHost,
          port: config.httpPort,
          registry: metrics.registry,
          logger,
          lookup: lookup?.handler,
          readiness: () =>
            checkReadiness(
              mirror.deps.store.sqlite,
              organizations.map((organization) => organization.name),
              clock(),
              staleAfterSeconds,
            ),
        });
  try {
    const scheduler = startScheduler({
      schedule: config.schedule,
      jitterSeconds: config.jitterSeconds,
      logger,
      signal,
      run: async (runSignal) => {
        await syncOrganizations(mirror.deps, organizations, { mode: 'incremental' }, runSignal);
        mirror.deps.store.checkpointWal();
      },
    });
    await scheduler.stopped;
  } finally {
    await endpoints?.close();
    lookup?.close();
  }
}

/**
 * /v1/lookup's own read-only connection: WAL readers never block the page writer, and its reads
 * never wait on the main connection's statements. Loaded only when served (the Public Suffix List).
 */
async function openLookup(dbPath: string, logger: Logger): Promise<{ handler: LookupHandler; close(): void }> {
  const [{ openDatabaseReadOnly }, { ThreatLookup }, { createLookupHandler }] = await Promise.all([
    import('./db/open-database.js'),
    import('./lookup.js'),
    import('./lookup-http.js'),
  ]);
  const opened = openDatabaseReadOnly(dbPath);
  const handler = createLookupHandler(new ThreatLookup(opened.sqlite), (error) => logger.error({ err: error }, 'lookup failed'));
  return { handler, close: () => opened.sqlite.close() };
}

/** The gap between two runs of the schedule: "stale" means two of them passed without a success. */
export function schedulePeriodSeconds(schedule: string): number {
  const task = cron.createTask(schedule, () => undefined, { timezone: 'Etc/UTC' });
  try {
    const [first, second] = task.getNextRuns(2);
    if (!first || !second) return 600;
    return Math.max(1, Math.round((second.getTime() - first.getTime()) / 1000));
  } finally {
    void task.destroy();
  }
}
