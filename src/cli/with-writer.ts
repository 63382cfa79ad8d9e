// The process as the database's one writer: what `--once`, `--backfill`, the daemon and `verify` share.
import type { Logger } from 'pino';
import { EXIT_FAILED, type Io } from '../commands/io.js';
import type { Config, OrganizationConfig } from '../config.js';
import { WriterLockError } from '../db/writer-lock.js';
import type { Clock } from '../lib/days.js';
import { errorMessage } from '../lib/errors.js';
import { createLogger } from '../lib/logger.js';
import { UnwritablePathError } from '../lib/writable-path.js';
import type { MirrorMetrics } from '../daemon/metrics.js';
import { clockFor, openWriterSession, type WriterSession } from '../session/writer-session.js';
import { installSignalHandlers } from './signals.js';

/** The configured organizations, or only the one --org names. */
export type Organizations = (only: string | undefined) => readonly OrganizationConfig[];

export type WriterWork = (mirror: WriterSession, organizations: Organizations, signal: AbortSignal, context: { logger: Logger; clock: Clock }) => Promise<number>;

/**
 * Runs `work` as the database's one writer: logger, signal handling, writer lock, store; closes
 * them in reverse order whatever happens. Exit 1 when another process holds the database.
 */
export async function withWriter(config: Config, io: Io, work: WriterWork, metrics?: MirrorMetrics): Promise<number> {
  const { logger, flush } = createLogger(config.logLevel);
  if (config.insecureHttp) {
    logger.warn({ apiUrl: config.apiUrl }, 'THREAT_MIRROR_ALLOW_INSECURE_HTTP=1: the API key travels unencrypted over plain HTTP to a host that is not loopback');
  }
  const clock = clockFor(config);
  const shutdown = new AbortController();
  const removeSignalHandlers = installSignalHandlers(shutdown, logger, flush);
  let mirror: WriterSession;
  try {
    mirror = await openWriterSession({ config, logger, clock, apiObserver: metrics, syncObserver: metrics });
  } catch (error) {
    removeSignalHandlers();
    const message = error instanceof WriterLockError || error instanceof UnwritablePathError ? error.message : `cannot open ${config.dbPath}: ${errorMessage(error)}`;
    logger.error(message);
    flush();
    io.stderr(`threat-mirror: ${message}\n`);
    return EXIT_FAILED;
  }
  const organizations: Organizations = (only) =>
    only === undefined ? config.organizations : config.organizations.filter((organization) => organization.name === only);
  try {
    return await work(mirror, organizations, shutdown.signal, { logger, clock });
  } finally {
    await mirror.close();
    removeSignalHandlers();
    logger.info('stopped');
    flush();
  }
}
