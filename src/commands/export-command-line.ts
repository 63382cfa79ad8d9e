// `threat-mirror export`: the command line's side of the export writers in src/export/.
import type { Command } from '../cli/args.js';
import { refusalOfDatabaseFile } from '../db/database-files.js';
import type { Allowlist } from '../allowlist/allowlist-entries.js';
import type { ZoneTimers } from '../lib/rpz-zone.js';
import { errorMessage } from '../lib/errors.js';
import { databaseExists, EXIT_FAILED, EXIT_OK, EXIT_USAGE, type Io } from './io.js';

/** `allowlist`: THREAT_MIRROR_ALLOWLIST as read now; what it allows is left out (and counted). */
export async function runExportCommand(command: Extract<Command, { kind: 'export' }>, dbPath: string, io: Io, timers: ZoneTimers, allowlist?: Allowlist): Promise<number> {
  if (!databaseExists(dbPath, io)) return EXIT_USAGE;
  const refusal = command.out === undefined ? undefined : refusalOfDatabaseFile('--out', command.out, [], dbPath);
  if (refusal !== undefined) {
    io.stderr(`threat-mirror: ${refusal}\n`);
    return EXIT_USAGE;
  }
  // Loaded here only: the export writers are no part of a sync.
  const { mirrorKnowsOrganization, runExport } = await import('../export/export-command.js');
  if (command.organization !== undefined && !mirrorKnowsOrganization(dbPath, command.organization)) {
    io.stderr(`threat-mirror: --org: the mirror holds nothing for organization "${command.organization}"\n`);
    return EXIT_USAGE;
  }
  try {
    await runExport(dbPath, { ...command, timers }, { stdout: process.stdout, stderr: io.stderr }, allowlist);
    return EXIT_OK;
  } catch (error) {
    io.stderr(`threat-mirror: export failed: ${errorMessage(error)}\n`);
    return EXIT_FAILED;
  }
}
