// The process as the database's one writer: what `--once`, `--backfill`, the daemon and `verify` share.
import type { Logger } from 'pino';
import { EXIT_FAILED, type Io } from './io.js';
import { type Config, type OrganizationConfig, undocumentedAssetTypes } from '../config.js';
import { WriterLockError } from '../db/writer-lock.js';
import { type Clock, clockStartingAt } from '../lib/days.js';
import { errorMessage } from '../lib/errors.js';
import { createLogger } from '../lib/logger.js';
import { UnwritablePathError } from '../db/writable-path.js';
import type { MirrorMetrics } from '../daemon/metrics.js';
import { RestoreError, type RestoreOutcome } from '../session/replica-restore.js';
import { openWriterSession, type WriterSession } from '../session/writer-session.js';
import type { WriterStart } from '../session/writer-start.js';
import { installSignalHandlers } from '../lib/signals.js';
import type { ProgressReporterOptions } from '../progress/progress-reporter.js';
import type { TerminalLine } from '../progress/terminal-line.js';

/** Names configured with the same key, in groups of two or more. */
function organizationsSharingAKey(organizations: readonly OrganizationConfig[]): string[][] {
  const byKey = new Map<string, string[]>();
  for (const organization of organizations) byKey.set(organization.apiKey.reveal(), [...(byKey.get(organization.apiKey.reveal()) ?? []), organization.name]);
  return [...byKey.values()].filter((names) => names.length > 1);
}

/** The configured organizations, or only the one --org names. */
export type Organizations = (only: string | undefined) => readonly OrganizationConfig[];

export interface WriterContext {
  readonly logger: Logger;
  readonly clock: Clock;
  /** How a command's runs report their progress: on the terminal line, else in the log every THREAT_MIRROR_PROGRESS_SECONDS. */
  readonly progress: (label: string, modes: readonly string[], organizations: readonly OrganizationConfig[]) => ProgressReporterOptions;
}

export type WriterWork = (mirror: WriterSession, organizations: Organizations, signal: AbortSignal, context: WriterContext) => Promise<number>;

export interface WriterOptions {
  /** The daemon's: the sync and the API client report to it. */
  readonly metrics?: MirrorMetrics | undefined;
  /** The progress line on the terminal, erased before each log line so they never share a line. */
  readonly line?: TerminalLine | undefined;
}

/**
 * Runs `work` as the database's one writer: logger, signal handling, the writer `start` began
 * (lock and thread), the session; closes them in reverse order whatever happens. Exit 1 when
 * another process holds the database or the file cannot be opened.
 */
export async function withWriter(config: Config, io: Io, start: WriterStart, work: WriterWork, { metrics, line }: WriterOptions = {}): Promise<number> {
  const { logger, flush, drain } = createLogger(config.logLevel, { beforeWrite: line && (() => line.clear()) });
  warnAtStart(config, logger);
  const clock = clockStartingAt(config.fixedNow);
  const shutdown = new AbortController();
  const removeSignalHandlers = installSignalHandlers(shutdown, logger, flush);
  let mirror: WriterSession;
  try {
    const started = await start;
    if ('error' in started) throw started.error;
    logRestore(started.restore, logger);
    mirror = await openWriterSession(started, { config, logger, clock, apiObserver: metrics, syncObserver: metrics });
  } catch (error) {
    removeSignalHandlers();
    const known = error instanceof WriterLockError || error instanceof UnwritablePathError || error instanceof RestoreError;
    const message = known ? error.message : `cannot open ${config.dbPath}: ${errorMessage(error)}`;
    logger.error(message);
    await drain();
    io.stderr(`threat-mirror: ${message}\n`);
    return EXIT_FAILED;
  }
  const organizations: Organizations = (only) =>
    only === undefined ? config.organizations : config.organizations.filter((organization) => organization.name === only);
  try {
    const progress: WriterContext['progress'] = (label, modes, selected) => ({
      label,
      modes,
      organizations: selected.map((organization) => organization.name),
      sqlite: mirror.reader,
      clock,
      logger,
      line,
      logIntervalMs: config.progressSeconds * 1000,
    });
    return await work(mirror, organizations, shutdown.signal, { logger, clock, progress });
  } finally {
    await mirror.close();
    removeSignalHandlers();
    logger.info('stopped');
    await drain();
  }
}

/** What THREAT_MIRROR_RESTORE_FROM did for a missing file: restored (the first run then costs a few requests), or nothing there yet. */
function logRestore(restore: RestoreOutcome | undefined, logger: Logger): void {
  if (restore?.restored === true) logger.info({ from: restore.from, bytes: restore.bytes, ms: restore.ms }, 'restored the database from its replica; the runs go on from its checkpoints');
  else if (restore !== undefined) logger.warn({ from: restore.from, litestream: restore.reason }, 'no replica to restore the database from yet: starting empty, walking the history from the service');
}

/** What the configuration allows but an operator should hear about, once at start. */
function warnAtStart(config: Config, logger: Logger): void {
  if (config.insecureHttp) {
    logger.warn({ apiUrl: config.apiUrl }, 'THREAT_MIRROR_ALLOW_INSECURE_HTTP=1: the API key travels unencrypted over plain HTTP to a host that is not loopback');
  }
  for (const { name, assetTypes, assetTypesVariable } of config.organizations) {
    const undocumented = undocumentedAssetTypes(assetTypes);
    if (undocumented.length > 0) {
      logger.warn({ organization: name, assetTypes: undocumented }, `${assetTypesVariable}: ${undocumented.join(', ')} not among the asset types the service's interface lists; kept (the service adds platforms), check the spelling`);
    }
  }
  for (const names of organizationsSharingAKey(config.organizations)) {
    logger.warn(
      { organizations: names },
      `organizations ${names.join(', ')} use the same API key: the service answers each the same, so each holds every threat the key can see, and --org, per-organization exports and lookups do not tell them apart (docs/configuration.md: "Organization keys and user keys")`,
    );
  }
}
