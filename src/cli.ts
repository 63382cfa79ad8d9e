#!/usr/bin/env -S node --max-old-space-size=48 --max-semi-space-size=2 --no-parallel-scavenge
// The entry point: parses flags, loads config, hands the command to its runner (src/commands/), owns
// the exit code. Run this file itself, not `node cli.js`: the shebang's V8 flags keep the process
// small and fast. The heap is capped because V8 otherwise lets dead pages pile up to ~200 MB RSS
// at 1M threats; a 2 MB young generation, each thread scavenging on its own thread, is the
// fastest here (docs/performance.md: "What changed later on 2026-11-25"). The runners are loaded
// when chosen, so a writing command's writer thread opens the file while the sync's modules
// load, and a read command loads only what it reads with.
import { realpathSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { type Command, parseCommandLine } from './cli/args.js';
import { helpText } from './cli/help.js';
import { drawsProgressLine } from './progress/terminal-line.js';
import { EXIT_FAILED, EXIT_OK, EXIT_USAGE, type Io } from './commands/io.js';
import { verifyRange } from './commands/verify-range.js';
import { type Config, type Environment, loadConfig, loadDatabasePath, registerSecretsOf } from './config.js';
import { loadAllowlist } from './config/allowlist.js';
import { loadZoneTimers } from './config/dns.js';
import { addDays, clockStartingAt, dayOf } from './lib/days.js';
import { ConfigError, errorMessage } from './lib/errors.js';
import { packageVersion } from './lib/package-root.js';
import { redact, redactRegistered } from './lib/redact.js';
import { escapeControls } from './lib/terminal-text.js';
import { startWriter } from './session/writer-start.js';

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
    if (command.kind === 'status') return (await import('./commands/status-command.js')).showStatus(command, env, io);
    // The read commands answer as THREAT_MIRROR_ALLOWLIST is now: read here, a bad line exits 2.
    if (command.kind === 'lookup') return await (await import('./commands/lookup-command.js')).runLookup(command, env, io, loadAllowlist(env)?.list);
    if (command.kind === 'export') {
      const { runExportCommand } = await import('./commands/export-runner.js');
      return await runExportCommand(command, loadDatabasePath(env), io, loadZoneTimers(env), loadAllowlist(env)?.list);
    }
    if (command.kind === 'snapshot') return await (await import('./commands/snapshot-command.js')).runSnapshot(command, loadDatabasePath(env), io);
    config = loadConfig(env);
    assertCommandFitsConfig(command, config);
  } catch (error) {
    if (error instanceof ConfigError) {
      io.stderr(`threat-mirror: ${error.message}\n`);
      return EXIT_USAGE;
    }
    throw error;
  }
  // Every other command writes. Its writer thread starts now and opens (and migrates) the file
  // while this thread loads the sync; a failed start is reported once the command has its log.
  const start = startWriter(config, clockStartingAt(config.fixedNow)().toISOString());
  if (command.kind === 'verify') return (await import('./commands/verify-command.js')).runVerify(command, config, io, start);
  return (await import('./commands/sync-command.js')).runSync(command, config, io, start);
}

function assertCommandFitsConfig(command: Command, config: Config): void {
  if ('organization' in command && command.organization !== undefined) {
    const names = config.organizations.map((organization) => organization.name);
    if (!names.includes(command.organization)) {
      throw new ConfigError(`--org: "${command.organization}" is not a configured organization (configured: ${names.join(', ')})`);
    }
  }
  const today = dayOf(clockStartingAt(config.fixedNow)());
  if (command.kind === 'backfill') {
    if (command.from > today) throw new ConfigError(`--from ${command.from} is after today (${today}, UTC)`);
    if (command.to !== undefined && command.to > today) throw new ConfigError(`--to ${command.to} is after today (${today}, UTC)`);
  }
  if (command.kind === 'verify') {
    const range = verifyRange(command, config, today);
    const closedOnly = `verify checks closed days only, the last is ${addDays(today, -1)} (UTC)`;
    if (range.to >= today) throw new ConfigError(`--to ${range.to}: ${closedOnly}`);
    // Without --to the range ends yesterday: a --from after it is the flag to name, not a --to nobody gave.
    if (range.from > range.to) throw new ConfigError(command.to === undefined ? `--from ${range.from}: ${closedOnly}` : `--from ${range.from} is after --to ${range.to}`);
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
