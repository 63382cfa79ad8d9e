#!/usr/bin/env -S node --max-old-space-size=48 --max-semi-space-size=2 --no-parallel-scavenge
// The entry point: parses flags, reads the environment once into the command's configuration,
// hands both to the command's file (src/commands/), owns the exit code. Run this file itself, not
// `node cli.js`: the shebang's V8 flags keep the process small and fast. The heap is capped
// because V8 otherwise lets dead pages pile up to ~200 MB RSS at 1M threats; a 2 MB young
// generation, each thread scavenging on its own thread, is the fastest here (docs/performance.md:
// "What changed later on 2026-11-25"). A command's file is loaded when chosen, so a writing
// command's writer thread opens the file while the sync's modules load, and a read command loads
// only what it reads with.
import { realpathSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseCommandLine } from './cli/args.js';
import { assertCommandFitsConfig } from './cli/command-checks.js';
import { helpText } from './cli/help.js';
import type { SyncCommand, VerifyCommand } from './commands/command.js';
import { EXIT_FAILED, EXIT_OK, EXIT_USAGE, type Io } from './commands/io.js';
import { type Config, type Environment, loadConfig, loadDatabasePath, loadExportConfig, loadLookupConfig, loadStatusConfig, registerSecretsOf } from './config.js';
import { drawsProgressLine } from './progress/terminal-line.js';
import { clockStartingAt } from './lib/days.js';
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
  let command: SyncCommand | VerifyCommand;
  let config: Config;
  try {
    const parsed = parseCommandLine(argv);
    if (parsed.kind === 'help') {
      io.stdout(helpText(packageVersion()));
      return EXIT_OK;
    }
    if (parsed.kind === 'version') {
      io.stdout(`${packageVersion()}\n`);
      return EXIT_OK;
    }
    // The environment is read here, once, into the command's configuration (config.ts). A read
    // command reads only its own variables (the allowlist as it is now: a bad line exits 2).
    if (parsed.kind === 'status') return await (await import('./commands/status.js')).showStatus(parsed, loadStatusConfig(env), io);
    if (parsed.kind === 'lookup') return await (await import('./commands/lookup.js')).runLookup(parsed, loadLookupConfig(env, parsed.fresh), io);
    if (parsed.kind === 'export') return await (await import('./commands/export.js')).runExport(parsed, loadExportConfig(env), io);
    if (parsed.kind === 'snapshot') return await (await import('./commands/snapshot.js')).runSnapshot(parsed, { dbPath: loadDatabasePath(env) }, io);
    config = loadConfig(env);
    command = assertCommandFitsConfig(parsed, config);
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
  if (command.kind === 'verify') return (await import('./commands/verify.js')).runVerify(command, config, io, start);
  return (await import('./commands/sync.js')).runSync(command, config, io, start);
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
