// The long-running mode: scheduler, metrics and health endpoints around the sync.
import type { Logger } from 'pino';
import type { Config, OrganizationConfig } from '../config.js';
import type { Clock } from '../lib/days.js';
import { Enforcement } from './enforcement.js';
import { startHttpServer } from './http-server-worker.js';
import type { MirrorMetrics } from './metrics.js';
import type { WriterSession } from '../session/writer-session.js';
import { checkReadiness, withAllowlistHealth, withWalHealth } from './readiness.js';
import { DaemonAllowlist } from './daemon-allowlist.js';
import { startScheduler } from './scheduler.js';
import { publishSnapshot } from './snapshot-publisher.js';
import { createStartupLatch } from './startup.js';
import { syncOrganizations } from '../sync/sync-all.js';
import { withProgress } from '../commands/progress-reporter.js';
import { runningProgress } from '../commands/progress.js';
import { ProgressReads } from '../db/status-reads.js';
import { WalHealth } from './wal-health.js';
import { longestScheduleGapSeconds } from '../lib/schedule.js';

export interface DaemonOptions {
  readonly config: Config;
  readonly mirror: WriterSession;
  readonly metrics: MirrorMetrics;
  readonly organizations: readonly OrganizationConfig[];
  readonly logger: Logger;
  readonly clock: Clock;
  readonly signal: AbortSignal;
}

/** Runs until the signal aborts; resolves once every part has stopped. */
export async function runDaemon(options: DaemonOptions): Promise<void> {
  const { config, mirror, metrics, organizations, logger, clock, signal } = options;
  const staleAfterSeconds = 2 * longestScheduleGapSeconds(config.schedule);
  mirror.deps.store.recordSetting('stale_after_seconds', String(staleAfterSeconds), clock().toISOString());
  const names = organizations.map((organization) => organization.name);
  const lastRuns = checkReadiness(mirror.deps.store.sqlite, names, clock(), staleAfterSeconds).organizations;
  metrics.startedWith(staleAfterSeconds, lastRuns.map((state) => ({ organization: state.organization, at: state.lastSuccessAt })));
  const progress = new ProgressReads(mirror.deps.store.sqlite);
  metrics.observeProgress(() => runningProgress(progress, names, clock()));
  const startup = createStartupLatch(
    mirror.deps.store.sqlite,
    organizations.map((organization) => organization.name),
    () => logger.info('every organization has synced once: /startupz (the container health) answers 200 from now on'),
  );
  startup(); // a file that already holds a mirror counts at once
  const wal = new WalHealth(config.dbPath, config.walStarvedSeconds);
  metrics.observeWal(wal, clock);
  // The HTTP server runs on a thread of its own (lookups never wait behind the sync). If that thread
  // dies, the daemon stops and exits 1: its probes and lookups are gone, and the supervisor's
  // restart (counted, alerted on) is the honest answer; the sync's state survives any stop.
  const httpFailure = new AbortController();
  const enforcement = new Enforcement({ config, logger, metrics });
  const allowlist = config.allowlist === undefined ? undefined : new DaemonAllowlist(config.allowlist, { clock, logger, observer: metrics });
  const endpoints =
    config.httpPort === undefined && config.dns === undefined
      ? undefined
      : await startHttpServer({
          host: config.httpHost,
          port: config.httpPort,
          dbPath: config.dbPath,
          enforcement: enforcement.threadData(),
          allowlist: allowlist?.state.list,
          onEnforcementEvent: (event) => enforcement.event(event),
          token: config.httpToken,
          registry: metrics.registry,
          onLookups: (batch) => metrics.lookupsAnswered(batch),
          logger,
          onFailure: (error) => {
            logger.error({ err: error }, 'the HTTP server of THREAT_MIRROR_HTTP_PORT failed: stopping the daemon (exit 1) for its supervisor to restart it');
            httpFailure.abort(error);
          },
          readiness: () =>
            withAllowlistHealth(
              withWalHealth(checkReadiness(mirror.deps.store.sqlite, names, clock(), staleAfterSeconds), wal, clock()),
              allowlist?.readinessReason(),
            ),
          startup,
        });
  const stopping = AbortSignal.any([signal, httpFailure.signal]);
  // Each new version of the allowlist: lookups and feeds at once, then the index, the zone and the files.
  allowlist?.onChange((list) => endpoints?.allowlist(list));
  allowlist?.onChange((list) => enforcement.allowlistChanged(list, endpoints, stopping));
  // Followed from now on: a change during the start's refresh is applied right after it.
  allowlist?.start();
  try {
    // The zone and the files as the mirror holds them now, before the first run: a restart serves at once.
    await enforcement.refresh(endpoints, { atStart: true, signal: stopping });
    const scheduler = startScheduler({
      schedule: config.schedule,
      jitterSeconds: config.jitterSeconds,
      logger,
      signal: stopping,
      run: (runSignal) => scheduledRun(options, { startup, wal, refresh: () => enforcement.refresh(endpoints, { signal: runSignal }) }, runSignal),
    });
    await scheduler.stopped;
  } finally {
    allowlist?.stop();
    await endpoints?.close();
    enforcement.close();
  }
  if (httpFailure.signal.aborted) throw httpFailure.signal.reason;
}

/** One scheduled run: sync, then what follows it (health, WAL checkpoint, snapshot, exports). */
async function scheduledRun(
  { config, mirror, organizations, logger, clock }: DaemonOptions,
  { startup, wal, refresh }: { startup: () => void; wal: WalHealth; refresh: () => Promise<void> },
  runSignal: AbortSignal,
): Promise<void> {
  // A long run (a first sync of a large account) logs its progress every THREAT_MIRROR_PROGRESS_SECONDS.
  const summaries = await withProgress(
    {
      label: 'sync',
      modes: ['incremental'],
      organizations: organizations.map((organization) => organization.name),
      sqlite: mirror.deps.store.sqlite,
      clock,
      logger,
      logIntervalMs: config.progressSeconds * 1000,
    },
    () => syncOrganizations(mirror.deps, organizations, { mode: 'incremental' }, runSignal),
    (runs) => runs,
  );
  startup();
  if (config.checkpoints === 'auto') {
    // On the writer thread: the event loop goes on answering probes and signals meanwhile.
    const outcome = await mirror.deps.store.checkpointWal();
    wal.record(outcome, clock());
    if (!outcome.complete) logger.debug({ ...outcome, walBytes: wal.walBytes() }, 'WAL checkpoint held off by a reader; trying again after the next run');
  }
  const changed = summaries.some((summary) => summary.inserted + summary.updated + summary.removed > 0);
  if (config.snapshotPath !== undefined && !runSignal.aborted) {
    await publishSnapshot({ dbPath: config.dbPath, snapshotPath: config.snapshotPath, changed, clock, logger });
  }
  // After every run, also a failed one (its committed pages count); not on the way out.
  if (!runSignal.aborted) await refresh();
}
