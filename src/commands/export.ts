// `threat-mirror export --format F [--org NAME] [--out FILE] [--rules]`: reads the mirror
// read-only, writes the export to stdout or atomically to FILE, and sums up on stderr what it
// holds and what it left out. The export writers (src/export/) are loaded when this file is.
import { resolve } from 'node:path';
import { matcherFor } from '../allowlist/allow-matcher.js';
import type { ExportConfig } from '../config.js';
import { refusalOfDatabaseFile } from '../db/database-files.js';
import { openDatabaseReadOnly } from '../db/open-database.js';
import { buildExport } from '../export/build-export.js';
import { ThreatSnapshot } from '../export/current-threats.js';
import { withSmallPageCache } from '../db/page-cache.js';
import { writeExportFile, writeExportStream } from '../export/write-export.js';
import { errorMessage } from '../lib/errors.js';
import type { ExportCommand } from './command.js';
import { organizationProblem } from '../db/read/answered-organizations.js';
import { databaseExists, EXIT_FAILED, EXIT_OK, EXIT_USAGE, type Io } from './io.js';

export async function runExport(command: ExportCommand, config: ExportConfig, io: Io): Promise<number> {
  const { dbPath } = config;
  if (!databaseExists(dbPath, io)) return EXIT_USAGE;
  const refusal = command.out === undefined ? undefined : refusalOfDatabaseFile('--out', command.out, [], dbPath);
  if (refusal !== undefined) {
    io.stderr(`threat-mirror: ${refusal}\n`);
    return EXIT_USAGE;
  }
  const problem = command.organization === undefined ? undefined : exportProblem(dbPath, command.organization);
  if (problem !== undefined) {
    io.stderr(`threat-mirror: --org: ${problem}\n`);
    return EXIT_USAGE;
  }
  try {
    await writeExport(command, config, io);
    return EXIT_OK;
  } catch (error) {
    io.stderr(`threat-mirror: export failed: ${errorMessage(error)}\n`);
    return EXIT_FAILED;
  }
}

/** Why the mirror cannot export this organization: an unknown name is a mistake, not an empty list; a retired one answers nothing. */
function exportProblem(dbPath: string, organization: string): string | undefined {
  const opened = openDatabaseReadOnly(dbPath);
  try {
    return organizationProblem(opened.sqlite, organization);
  } finally {
    opened.sqlite.close(); // a reader never checkpoints (opened.close() would)
  }
}

/** Byte for byte to stdout (no redaction, no escaping: the list is the output), or atomically to --out. */
async function writeExport(command: ExportCommand, { dbPath, allowlist, zoneTimers }: ExportConfig, io: Io): Promise<void> {
  const opened = openDatabaseReadOnly(dbPath);
  // Every row is read once, in order: a large page cache buys nothing here.
  withSmallPageCache(opened.sqlite);
  const snapshot = new ThreatSnapshot(opened.sqlite, command.organization, matcherFor(allowlist?.entries));
  try {
    // The command has the machine to itself: record formats use a second thread (parallel-render.ts).
    const built = await buildExport(snapshot, { ...command, timers: zoneTimers, twoThreads: { dbPath } });
    try {
      if (command.out === undefined) {
        await writeExportStream(process.stdout, built);
        io.stderr(`threat-mirror export: ${built.summary()}\n`);
        return;
      }
      const result = await writeExportFile(resolve(command.out), built);
      io.stderr(`threat-mirror export: ${built.summary()}; ${result.written ? 'written to' : 'unchanged:'} ${command.out}\n`);
    } finally {
      built.close();
    }
  } finally {
    snapshot.close();
    opened.sqlite.close(); // a reader never checkpoints (opened.close() would)
  }
}
