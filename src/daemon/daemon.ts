// The long-running mode: scheduler, metrics and health endpoints around the sync.
import type { Logger } from 'pino';
import type { Config, OrganizationConfig } from '../config.js';
import type { Clock } from '../lib/days.js';
import { Enforcement } from './enforcement.js';
import { createFreshAsker } from './fresh-http.js';
import { answerProbe } from './http-endpoints.js';
import type { MirrorMetrics } from './metrics.js';
import type { WriterSession } from '../session/writer-session.js';
import type { OrganizationAtStart } from './metrics.js';
import { checkReadiness, type Readiness, withReason, withWalHealth } from './readiness.js';
import { ServingSupervisor } from './serving-supervisor.js';
import { DaemonAllowlist } from './daemon-allowlist.js';
import { ServingFailureLog } from './serving-failures.js';
import { startScheduler } from './scheduler.js';
import { observeExistingSnapshot, publishSnapshot } from './snapshot-publisher.js';
import { createStartupLatch, type Startup } from './startup.js';
import { syncOrganizations } from '../sync/sync-all.js';
import { withProgress } from '../progress/progress-reporter.js';
import { runningProgress } from '../progress/plan-progress.js';
import { ProgressReads } from '../db/read/status-reads.js';
import { SyncHealthReads } from '../db/read/sync-health.js';
import { STALE_AFTER_SECONDS_KEY } from '../db/setting-keys.js';
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
  const { config, mirror, metrics, logger, clock, signal } = options;
  const { names, staleAfterSeconds, startup, wal } = await health(options);
  // The serving thread and the writer run on threads of their own (lookups never wait behind the
  // sync; writes never hold up the main thread). A serving thread that dies is started again
  // (serving-supervisor.ts): the sync goes on without it meanwhile. If the writer dies, the daemon
  // stops and exits 1: every write is gone, and the supervisor's restart (counted, alerted on) is
  // the honest answer; the sync's state survives any stop.
  const partFailed = new AbortController();
  void mirror.deps.writer.failed.then((error) => {
    logger.error({ err: error }, 'the writer thread failed: stopping the daemon (exit 1) for its supervisor to restart it');
    if (!partFailed.signal.aborted) partFailed.abort(error);
  });
  const enforcement = new Enforcement({ config, logger, observer: metrics, clock });
  const allowlist = config.allowlist === undefined ? undefined : new DaemonAllowlist(config.allowlist, { clock, logger, observer: metrics });
  let serving: ServingSupervisor | undefined;
  const readiness = (): Readiness =>
    withReason(withReason(withWalHealth(checkReadiness(mirror.reader, names, clock(), staleAfterSeconds), wal, clock()), allowlist?.readinessReason()), serving?.readinessReason());
  const endpoints = (serving = await startServing(options, { enforcement, allowlist, readiness, startup }));
  const stopping = AbortSignal.any([signal, partFailed.signal]);
  allowlist?.follow({ server: endpoints, writer: mirror.deps.writer, enforcement, signal: stopping });
  // Before the writer thread ends for the wait: a table write after it would start it again.
  const lastWrites = async (): Promise<void> => {
    await allowlist?.mirror(mirror.deps.writer).catch((error: unknown) => logger.error({ err: error }, 'the allowlist table was not updated; trying again after the next run'));
  };
  try {
    // The zone and the files as the mirror holds them now, before the first run: a restart serves at once.
    await enforcement.refresh(endpoints, { atStart: true, signal: stopping });
    const scheduler = startScheduler({
      schedule: config.schedule,
      jitterSeconds: config.jitterSeconds,
      logger,
      signal: stopping,
      run: (runSignal) => scheduledRun(options, { startup, wal, lastWrites, refresh: () => enforcement.refresh(endpoints, { signal: runSignal }) }, runSignal),
      // The writer thread ends after each run (scheduledRun): started again just before the next tick, the run does not wait for it.
      prepare: () => mirror.deps.writer.resume(),
    });
    await scheduler.stopped;
  } finally {
    allowlist?.stop();
    await endpoints?.close();
    await enforcement.close();
  }
  if (partFailed.signal.aborted) throw partFailed.signal.reason;
}

/** The serving thread (probes, lookups, feeds, the DNS primary), when a port asks for one. */
async function startServing(
  options: DaemonOptions,
  parts: { enforcement: Enforcement; allowlist: DaemonAllowlist | undefined; readiness: () => Readiness; startup: () => Startup },
): Promise<ServingSupervisor | undefined> {
  const { config, mirror, metrics, logger } = options;
  if (config.httpPort === undefined && config.dns === undefined) return undefined;
  const { enforcement, allowlist, readiness, startup } = parts;
  const failures = new ServingFailureLog(logger, metrics);
  return ServingSupervisor.start({
    host: config.httpHost,
    port: config.httpPort,
    dbPath: config.dbPath,
    organizations: options.organizations.map((organization) => organization.name),
    clock: options.clock,
    enforcement: enforcement.threadData(),
    allowlist: allowlist?.state.list,
    onEnforcementEvent: (event) => enforcement.event(event),
    onFailedRequest: (failure) => failures.report(failure),
    token: config.httpToken,
    answerProbe: (method, path) => answerProbe({ registry: metrics.registry, readiness, startup }, method, path),
    onLookups: (batch) => metrics.lookupsAnswered(batch),
    askFresh: createFreshAsker(config, mirror.deps, metrics),
    logger,
    // Replaced by the supervisor's own: it starts the thread again.
    onFailure: () => undefined,
  }, metrics);
}

/**
 * What the health endpoints and /metrics read: how long without a success is stale (recorded for
 * sync_status too), each organization's last success as the file has it, the running runs'
 * progress, the startup latch and the WAL's health.
 */
async function health({ config, mirror, metrics, organizations, logger, clock }: DaemonOptions): Promise<{ names: string[]; staleAfterSeconds: number; startup: () => Startup; wal: WalHealth }> {
  const staleAfterSeconds = 2 * longestScheduleGapSeconds(config.schedule);
  await mirror.deps.writer.call('recordSetting', { key: STALE_AFTER_SECONDS_KEY, value: String(staleAfterSeconds), now: clock().toISOString() });
  const names = organizations.map((organization) => organization.name);
  metrics.startedWith(staleAfterSeconds, organizationsAtStart(new SyncHealthReads(mirror.reader), names, config.reports), clock());
  if (config.snapshotPath !== undefined) observeExistingSnapshot(config.snapshotPath, metrics);
  const progress = new ProgressReads(mirror.reader);
  metrics.observeProgress(() => runningProgress(progress, names, clock()));
  const startup = createStartupLatch(mirror.reader, names, () => logger.info('every organization has synced once: /startupz (the container health) answers 200 from now on'));
  startup(); // a file that already holds a mirror counts at once
  const wal = new WalHealth(config.dbPath, config.walStarvedSeconds);
  metrics.observeWal(wal, clock);
  return { names, staleAfterSeconds, startup, wal };
}

/** What the file says of each configured organization at start: /metrics shows it from the first scrape, whatever restarts came before. */
function organizationsAtStart(reads: SyncHealthReads, names: readonly string[], reports: boolean): OrganizationAtStart[] {
  return names.map((organization) => ({
    organization,
    lastSuccessAt: reads.record(organization).lastSuccessAt,
    firstRunAt: reads.firstRunAt(organization),
    failedInARow: { threats: reads.failedInARow(organization, 'threats'), ...(reports ? { reports: reads.failedInARow(organization, 'reports') } : {}) },
  }));
}

/** One scheduled run: sync, then what follows it (health, WAL checkpoint, snapshot, exports). */
async function scheduledRun(
  { config, mirror, metrics, organizations, logger, clock }: DaemonOptions,
  { startup, wal, lastWrites, refresh }: { startup: () => void; wal: WalHealth; lastWrites: () => Promise<void>; refresh: () => Promise<void> },
  runSignal: AbortSignal,
): Promise<void> {
  // Started before the tick (the scheduler's prepare), or now if the run came sooner (at start, or a tick skipped).
  mirror.deps.writer.resume();
  // A long run (a first sync of a large account) logs its progress every THREAT_MIRROR_PROGRESS_SECONDS.
  const summaries = await withProgress(
    {
      label: 'sync',
      modes: ['incremental'],
      organizations: organizations.map((organization) => organization.name),
      sqlite: mirror.reader,
      clock,
      logger,
      logIntervalMs: config.progressSeconds * 1000,
    },
    () => syncOrganizations(mirror.deps, organizations, { mode: 'incremental' }, runSignal),
    (runs) => runs,
  );
  startup();
  await lastWrites();
  if (config.checkpoints === 'auto') {
    // On the writer thread: the event loop goes on answering probes and signals meanwhile.
    const outcome = await mirror.deps.writer.call('checkpointWal', {});
    wal.record(outcome, clock());
    if (!outcome.complete) logger.debug({ ...outcome, walBytes: wal.walBytes() }, 'WAL checkpoint held off by a reader; trying again after the next run');
  }
  // Nothing writes the mirror until the next run: its thread, connection and page cache are most
  // of what the daemon would hold while it waits (docs/performance.md, "The daemon at idle").
  await mirror.deps.writer.suspend();
  const changed = summaries.some((summary) => summary.inserted + summary.updated + summary.removed > 0);
  if (config.snapshotPath !== undefined && !runSignal.aborted) {
    await publishSnapshot({ dbPath: config.dbPath, snapshotPath: config.snapshotPath, changed, clock, logger, observer: metrics });
  }
  // After every run, also a failed one (its committed pages count); not on the way out.
  if (!runSignal.aborted) await refresh();
}
