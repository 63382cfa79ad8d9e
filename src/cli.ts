#!/usr/bin/env -S node --max-old-space-size=48 --max-semi-space-size=2 --no-parallel-scavenge
// The entry point: parses flags, loads config, hands the command to its runner (src/commands/), owns the exit code.
// The shebang caps V8's heap: the working set is a few pages (~30 MB after GC), but V8 otherwise
// lets dead pages pile up to ~200 MB RSS at 1M threats before collecting. Capped (and the page-
// writer thread too, see PageWriterWorker), the peak stays under 150 MB (measured, see README).
// Its young generation is 2 MB, not 1: at 1 MB the main thread scavenged every few pages (481
// times for 200,000 threats). Every thread (V8 flags are per process) scavenges on its own
// thread, not in parallel on helper threads, which on two cores beside the writer thread and the
// service cost more CPU than they saved. 1,000,000 threats at no latency, medians of 3-6 runs:
// 19.3 s before, 19.0 s with 2 MB alone, 18.6 s with both (docs/performance.md). Not
// --single-threaded-gc, as fast here: with it, as with --no-parallel-marking and
// --no-parallel-compaction, the 48 MB heap ran out on Node 22 with four 4 MB pages in flight (the
// large-records test). Run this file itself, not `node cli.js`.
import { realpathSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { type Command, parseCommandLine } from './cli/args.js';
import { helpText } from './cli/help.js';
import { drawsProgressLine } from './commands/terminal-line.js';
import { runExportCommand } from './commands/export-runner.js';
import { EXIT_FAILED, EXIT_OK, EXIT_USAGE, type Io } from './commands/io.js';
import { runLookup } from './commands/lookup-command.js';
import { runSnapshot } from './commands/snapshot-command.js';
import { showStatus } from './commands/status-command.js';
import { runSync } from './commands/sync-command.js';
import { runVerify, verifyRange } from './commands/verify-command.js';
import { type Config, type Environment, loadConfig, loadDatabasePath, registerSecretsOf } from './config.js';
import { loadZoneTimers } from './dns/dns-config.js';
import { loadAllowlist } from './allowlist/allowlist-config.js';
import { addDays, dayOf } from './lib/days.js';
import { ConfigError, errorMessage } from './lib/errors.js';
import { packageVersion } from './lib/package-root.js';
import { redact, redactRegistered } from './lib/redact.js';
import { escapeControls } from './lib/terminal-text.js';
import { clockFor } from './session/writer-session.js';

/**
 * Everything the CLI prints passes the one redaction point (log lines do in the logger), then has
 * its control characters made visible (src/lib/terminal-text.ts). stdout shows the mirror's data
 * (lookup, status, verify): only our keys are taken out there, never part of a stored content.
 * Exports write to stdout directly, byte for byte. The progress line alone writes its own control
 * sequences (redraw, erase), around text it has escaped (terminal-line.ts).
 */
function ioFor(env: Environment): Io {
  return {
    stdout: (text) => process.stdout.write(escapeControls(redactRegistered(text))),
    stderr: (text) => process.stderr.write(escapeControls(redact(text))),
    terminal: drawsProgressLine(env, process.stderr)
      ? { columns: () => process.stderr.columns || 80, write: (text) => process.stderr.write(redact(text)) }
      : undefined,
  };
}

/** Runs one command line; resolves to the process's exit code. */
async function main(argv: readonly string[], env: Environment): Promise<number> {
  const io = ioFor(env);
  // Known before anything can fail, so that even a message about a bad variable is redacted.
  registerSecretsOf(env);
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
    // The read commands answer as THREAT_MIRROR_ALLOWLIST is now: read here, a bad line exits 2.
    if (command.kind === 'lookup') return runLookup(command, loadDatabasePath(env), io, loadAllowlist(env)?.list);
    if (command.kind === 'export') return runExportCommand(command, loadDatabasePath(env), io, loadZoneTimers(env), loadAllowlist(env)?.list);
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
      process.stderr.write(escapeControls(redact(`threat-mirror: unexpected error: ${errorMessage(error)}\n`)));
      process.exit(EXIT_FAILED);
    },
  );
}
