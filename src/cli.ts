#!/usr/bin/env -S node --max-old-space-size=48 --max-semi-space-size=1
// The entry point: parses flags, loads config, picks the mode, owns exit codes and signals.
// The shebang caps V8's heap: the working set is a few pages (~30 MB after GC), but V8 otherwise
// lets dead pages pile up to ~200 MB RSS at 1M threats before collecting. Capped (and the page-
// writer thread too, see PageWriterWorker), the peak stays under 150 MB at no cost in speed
// (measured, see README). Run this file itself, not `node cli.js`.
import { existsSync, realpathSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Logger } from 'pino';
import { type Command, parseCommandLine } from './cli/args.js';
import { type Config, type Environment, loadConfig, loadDatabasePath, type OrganizationConfig, registerSecretsOf } from './config.js';
import { openDatabaseReadOnly } from './db/open-database.js';
import { WriterLockError } from './db/writer-lock.js';
import { addDays, type Clock, dayOf } from './lib/days.js';
import { ConfigError, errorMessage } from './lib/errors.js';
import { helpText } from './cli/help.js';
import { createLogger } from './lib/logger.js';
import type { MirrorMetrics } from './daemon/metrics.js';
import { clockFor, type Mirror, openMirror } from './session/writer-session.js';
import { packageVersion } from './lib/package-root.js';
import { redact } from './lib/redact.js';
import { formatFileSizes, formatServiceNotices, formatStatus, readFileSizes, readServiceNotices, readStatus } from './commands/status.js';
import { syncOrganizations } from './sync/sync-all.js';
import type { RunSummary, SyncRequest } from './sync/run-contract.js';
import { formatDrift, verifyOrganization } from './commands/verify.js';
import { UnwritablePathError } from './lib/writable-path.js';

export const EXIT_OK = 0;
export const EXIT_FAILED = 1;
export const EXIT_USAGE = 2;

/** How long a graceful stop may take before the process exits anyway. */
const FORCED_EXIT_AFTER_MS = 9_000;

export interface Io {
  readonly stdout: (text: string) => void;
  readonly stderr: (text: string) => void;
}

const processIo: Io = {
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
};

export async function main(argv: readonly string[], env: Environment, unredactedIo: Io = processIo): Promise<number> {
  // Known before anything can fail, so that even a message about a bad variable is redacted.
  registerSecretsOf(env);
  const io = redactingIo(unredactedIo);
  let command: Command;
  let config: Config;
  try {
    command = parseCommandLine(argv);
    if (command.kind === 'help') {
      io.stdout(helpText(packageVersion()));
      return EXIT_OK;
    }
    if (command.kind === 'version') {
      io.stdout(`${packageVersion()}\n`);
      return EXIT_OK;
    }
    if (command.kind === 'status') return showStatus(command, loadDatabasePath(env), io);
    if (command.kind === 'lookup') return runLookup(command, loadDatabasePath(env), io);
    if (command.kind === 'export') return runExportCommand(command, loadDatabasePath(env), io);
    if (command.kind === 'snapshot') return await runSnapshot(command, loadDatabasePath(env), io);
    config = loadConfig(env);
    assertCommandFitsConfig(command, config);
  } catch (error) {
    if (error instanceof ConfigError) {
      io.stderr(`threat-mirror: ${error.message}\n`);
      return EXIT_USAGE;
    }
    throw error;
  }
  if (command.kind === 'verify') return runVerify(command, config, io);
  return runSync(command, config, io);
}

function assertCommandFitsConfig(command: Command, config: Config): void {
  if ('organization' in command && command.organization !== undefined) {
    const names = config.organizations.map((organization) => organization.name);
    if (!names.includes(command.organization)) {
      throw new ConfigError(`--org: "${command.organization}" is not a configured organization (configured: ${names.join(', ')})`);
    }
  }
  const today = dayOf(clockFor(config)());
  if (command.kind === 'backfill') {
    if (command.from > today) throw new ConfigError(`--from ${command.from} is after today (${today}, UTC)`);
    if (command.to !== undefined && command.to > today) throw new ConfigError(`--to ${command.to} is after today (${today}, UTC)`);
  }
  if (command.kind === 'verify') {
    const range = verifyRange(command, config, today);
    if (range.to >= today) throw new ConfigError(`--to ${range.to}: verify checks closed days only, the last is ${addDays(today, -1)} (UTC)`);
    if (range.from > range.to) throw new ConfigError(`--from ${range.from} is after --to ${range.to}`);
  }
}

/** Default: the last THREAT_MIRROR_INITIAL_DAYS closed days. */
function verifyRange(command: Extract<Command, { kind: 'verify' }>, config: Config, today: string): { from: string; to: string } {
  const to = command.to ?? addDays(today, -1);
  return { from: command.from ?? addDays(to, -(config.initialDays - 1)), to };
}

async function runLookup(command: Extract<Command, { kind: 'lookup' }>, dbPath: string, io: Io): Promise<number> {
  if (!existsSync(dbPath)) {
    io.stderr(`threat-mirror: THREAT_MIRROR_DB: no database at ${dbPath}; run a sync first or point THREAT_MIRROR_DB at the mirror\n`);
    return EXIT_USAGE;
  }
  // Loaded here only: normalizing needs the Public Suffix List, which a sync's main thread does not.
  const { formatLookup, lookupValues, ThreatLookup } = await import('./commands/lookup.js');
  const opened = openDatabaseReadOnly(dbPath);
  try {
    // The same answer as GET /v1/lookup; --json adds same-host threats that do not cover a URL, as context.
    const document = await lookupValues(new ThreatLookup(opened.sqlite), command.values, { organization: command.organization, sameHost: command.json });
    io.stdout(command.json ? `${JSON.stringify(document, null, 2)}\n` : formatLookup(document));
    return document.results.some((result) => result.blocked) ? EXIT_OK : EXIT_FAILED;
  } finally {
    opened.sqlite.close();
  }
}

async function runExportCommand(command: Extract<Command, { kind: 'export' }>, dbPath: string, io: Io): Promise<number> {
  if (!existsSync(dbPath)) {
    io.stderr(`threat-mirror: THREAT_MIRROR_DB: no database at ${dbPath}; run a sync first or point THREAT_MIRROR_DB at the mirror\n`);
    return EXIT_USAGE;
  }
  // Loaded here only: the export writers are no part of a sync.
  const { mirrorKnowsOrganization, runExport } = await import('./export/export-command.js');
  if (command.organization !== undefined && !mirrorKnowsOrganization(dbPath, command.organization)) {
    io.stderr(`threat-mirror: --org: the mirror holds nothing for organization "${command.organization}"\n`);
    return EXIT_USAGE;
  }
  try {
    await runExport(dbPath, command, { stdout: process.stdout, stderr: io.stderr });
    return EXIT_OK;
  } catch (error) {
    io.stderr(`threat-mirror: export failed: ${errorMessage(error)}\n`);
    return EXIT_FAILED;
  }
}

async function runSnapshot(command: Extract<Command, { kind: 'snapshot' }>, dbPath: string, io: Io): Promise<number> {
  if (!existsSync(dbPath)) {
    io.stderr(`threat-mirror: THREAT_MIRROR_DB: no database at ${dbPath}; run a sync first or point THREAT_MIRROR_DB at the mirror\n`);
    return EXIT_USAGE;
  }
  const { writeSnapshot, manifestPathFor } = await import('./db/snapshot.js');
  try {
    const manifest = writeSnapshot(dbPath, command.out, new Date().toISOString());
    io.stdout(`snapshot ${command.out}: ${manifest.bytes} bytes, sha256 ${manifest.sha256}, max change_seq ${manifest.maxChangeSeq ?? '(none)'}; manifest ${manifestPathFor(command.out)}\n`);
    return EXIT_OK;
  } catch (error) {
    io.stderr(`threat-mirror: snapshot of ${dbPath} to ${command.out} failed, nothing was replaced: ${errorMessage(error)}\n`);
    return EXIT_FAILED;
  }
}

async function runVerify(command: Extract<Command, { kind: 'verify' }>, config: Config, io: Io): Promise<number> {
  const clock = clockFor(config);
  const { from, to } = verifyRange(command, config, dayOf(clock()));
  return withWriter(config, io, async (mirror, organizations, signal) => {
    const results = await Promise.all(organizations(command.organization).map((organization) => verifyOrganization(mirror.deps, organization, from, to, signal)));
    io.stdout(formatDrift(results));
    const failed = results.some((result) => result.summary.status === 'failed' || result.drift.some((drift) => !drift.repaired));
    return failed ? EXIT_FAILED : EXIT_OK;
  });
}

type Organizations = (only: string | undefined) => readonly OrganizationConfig[];

/**
 * Runs `work` as the database's one writer: logger, signal handling, writer lock, store; closes
 * them in reverse order whatever happens. Exit 1 when another process holds the database.
 */
async function withWriter(
  config: Config,
  io: Io,
  work: (mirror: Mirror, organizations: Organizations, signal: AbortSignal, context: { logger: Logger; clock: Clock }) => Promise<number>,
  metrics?: MirrorMetrics,
): Promise<number> {
  const { logger, flush } = createLogger(config.logLevel);
  if (config.insecureHttp) {
    logger.warn({ apiUrl: config.apiUrl }, 'THREAT_MIRROR_ALLOW_INSECURE_HTTP=1: the API key travels unencrypted over plain HTTP to a host that is not loopback');
  }
  const clock = clockFor(config);
  const shutdown = new AbortController();
  const removeSignalHandlers = installSignalHandlers(shutdown, logger, flush);
  let mirror: Mirror;
  try {
    mirror = await openMirror({ config, logger, clock, apiObserver: metrics, syncObserver: metrics });
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

async function runSync(command: Extract<Command, { kind: 'once' | 'backfill' | 'daemon' }>, config: Config, io: Io): Promise<number> {
  if (command.kind === 'daemon') {
    // Loaded for the daemon only: a one-shot run serves no /metrics, and importing prom-client
    // is a good part of its start-up.
    const [{ createMetrics }, { runDaemon }] = await Promise.all([import('./daemon/metrics.js'), import('./daemon/daemon.js')]);
    const metrics = createMetrics();
    return withWriter(
      config,
      io,
      async (mirror, organizations, signal, { logger, clock }) => {
        await runDaemon({ config, mirror, metrics, organizations: organizations(undefined), logger, clock, signal });
        return EXIT_OK;
      },
      metrics,
    );
  }
  return withWriter(config, io, async (mirror, organizations, signal, { clock }) => {
    const selected = organizations('organization' in command ? command.organization : undefined);
    const request: SyncRequest =
      command.kind === 'backfill' ? { mode: 'backfill', from: command.from, to: command.to ?? dayOf(clock()) } : { mode: 'incremental' };
    const summaries = await syncOrganizations(mirror.deps, selected, request, signal);
    reportFailures(summaries, io);
    return summaries.some((summary) => summary.status === 'failed') ? EXIT_FAILED : EXIT_OK;
  });
}

function showStatus(command: Extract<Command, { kind: 'status' }>, dbPath: string, io: Io): number {
  if (!existsSync(dbPath)) {
    io.stderr(`threat-mirror: no database at ${dbPath} yet; run a sync first (or set THREAT_MIRROR_DB)\n`);
    return EXIT_FAILED;
  }
  const opened = openDatabaseReadOnly(dbPath);
  try {
    const statuses = readStatus(opened.sqlite, command.organization);
    const notices = readServiceNotices(opened.sqlite);
    const files = readFileSizes(dbPath);
    io.stdout(
      command.json
        ? `${JSON.stringify({ database: dbPath, files, organizations: statuses, serviceNotices: notices }, null, 2)}\n`
        : `${formatStatus(statuses)}${formatServiceNotices(notices)}${formatFileSizes(files)}`,
    );
    return EXIT_OK;
  } finally {
    opened.sqlite.close();
  }
}

/** Everything the CLI prints passes the one redaction point (log lines do in the logger). */
function redactingIo(io: Io): Io {
  return { stdout: (text) => io.stdout(redact(text)), stderr: (text) => io.stderr(redact(text)) };
}

/** Logs already carry each failure; stderr repeats them briefly for a person at a terminal. */
function reportFailures(summaries: readonly RunSummary[], io: Io): void {
  for (const summary of summaries) {
    if (summary.status === 'failed') io.stderr(`threat-mirror: organization "${summary.organization}" failed: ${summary.error}\n`);
  }
}

/** First signal: stop gracefully. Second: exit at once. Either way, no more than FORCED_EXIT_AFTER_MS. */
function installSignalHandlers(shutdown: AbortController, logger: { warn: (message: string) => void }, flush: () => void): () => void {
  const onSignal = (signal: NodeJS.Signals): void => {
    if (shutdown.signal.aborted) {
      logger.warn(`${signal} again: exiting at once`);
      flush();
      process.exit(signal === 'SIGINT' ? 130 : 143);
    }
    logger.warn(`${signal}: stopping once the pages already fetched are committed; send it again to exit at once`);
    shutdown.abort(new Error(`stopped by ${signal}`));
    setTimeout(() => {
      logger.warn(`graceful stop took longer than ${FORCED_EXIT_AFTER_MS} ms: exiting`);
      flush();
      process.exit(EXIT_FAILED);
    }, FORCED_EXIT_AFTER_MS).unref();
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
  return () => {
    process.off('SIGTERM', onSignal);
    process.off('SIGINT', onSignal);
  };
}

function isEntryPoint(): boolean {
  const entry = process.argv[1];
  if (entry === undefined) return false;
  try {
    return realpathSync(entry) === realpathSync(fileURLToPath(import.meta.url));
  } catch {
    return false;
  }
}

if (isEntryPoint()) {
  main(process.argv.slice(2), process.env).then(
    // stdout to a pipe is asynchronous: exiting at once cut a large `lookup --json` short (at 214 KB).
    (code) => process.stdout.write('', () => process.exit(code)),
    (error: unknown) => {
      process.stderr.write(redact(`threat-mirror: unexpected error: ${errorMessage(error)}\n`));
      process.exit(EXIT_FAILED);
    },
  );
}
